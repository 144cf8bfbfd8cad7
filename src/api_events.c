/* api_events.c: GET /tasks/{id}/events, a task's steps, log lines and
 * decisions as server-sent events, and GET /events, the instance's audit
 * trail, each live or resumed from a Last-Event-ID (api_int.h). */
#include "autoconfig.h"
#include "api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "clock.h"
#include "gate.h"
#include "paths.h"
#include "sanitize.h"
#include "store_audit.h"
#include "task.h"
#include "taskjson.h"

#define SSE_PING_S 15.0
#define SSE_SETTLE_S 5.0   /* the longest a step's place in the log is waited for */
#define SSE_AUDIT_BATCH 256 /* audit events read at a time */

/* ---- events (server-sent) ---- */

/* The stream is one sequence: the task's steps and its log lines, in the
 * order they happened (a step's log_off says how much of the log came
 * before it), each review's gate right after its status, and its
 * decisions (refusals too): a decision goes out right before the first
 * step made after it, or as soon as it is seen when no step followed it
 * yet (after the log lines read by then).  A position in it is (steps
 * sent, log bytes sent, decisions sent), and the id of every event is the
 * position after it, "STEPS.LOGBYTES.DECISIONS", with ".r" after a
 * review's status while its gate is still to come: resuming from any id
 * gives exactly what followed.  An id of two parts (before decisions were
 * events) counts as sent the decisions made up to its last step.
 *
 * GET /events (global) is the audit trail (store_audit.h) after the
 * position, the id of its last event sent. */
struct sse {
	struct api *a;
	struct store *st;
	int global;                /* GET /events: the audit trail */
	long long seq;             /* global: the last audit event sent */
	char id[TASK_ID_LEN + 1];
	size_t nsteps;             /* steps sent */
	off_t logoff;              /* log bytes sent */
	size_t ndec;               /* decisions sent */
	int gate_due;              /* a review's status went out, its gate not */
	int sock;                  /* the client's socket: its hang-up ends us */
	int watch;                 /* inotify: the store's folder, the task's */
	int task_watched;
	struct buf out;
	size_t out_off;
	int ended;
	double last;
	double retry_at;           /* monotonic: look again then (0: on news) */
	/* The log read ahead: bytes [chunk_at, chunk_at + chunk_len). */
	int logfd;
	off_t limit;               /* the log's size before the store was read;
	                              -1: none */
	off_t chunk_at;
	size_t chunk_len;
	char chunk[65536];
};

static void sse_event(struct sse *s, const char *type, json_t *data)
{
	char *txt = api_scrub_paths(s->a, json_dumps(data, JSON_COMPACT | TASKJSON_DUMP));
	json_decref(data);
	/* The end has an id of its own: resuming from it gets 204, nothing
	 * more to follow. */
	const char *mark = s->gate_due ? ".r" : strcmp(type, "end") == 0 ? ".e" : "";
	if (s->global)
		buf_printf(&s->out, "id: %lld\nevent: %s\ndata: %s\n\n", s->seq, type,
		           txt ? txt : "{}");
	else
		buf_printf(&s->out, "id: %zu.%lld.%zu%s\nevent: %s\ndata: %s\n\n", s->nsteps,
		           (long long)s->logoff, s->ndec, mark, type, txt ? txt : "{}");
	free(txt);
}

/* The decisions not sent yet that were made by `before` (unix time; the
 * time of the step about to go out, or INFINITY: all). */
static void sse_decisions(struct sse *s, const struct task_decision *d, size_t nd,
                          double before)
{
	while (s->ndec < nd && d[s->ndec].at <= before) {
		json_t *j = audit_decision_json(s->id, &d[s->ndec]);
		s->ndec++;
		sse_event(s, "decision", j);
	}
}

/* The gate of the review that step n (1-based) was: that round's. */
static void sse_gate(struct sse *s, const struct task_row *t, size_t n)
{
	struct err e = {{0}};
	int round = n && t->steps[n - 1].round ? t->steps[n - 1].round : t->round;
	json_t *g = gate_summary_json_round(s->st, t, round, &e);
	s->gate_due = 0;
	sse_event(s, "gate", json_pack("{s:s,s:i,s:o}", "id", t->id, "round", round,
	                               "gate", g ? g : json_null()));
}

/* The next whole line of the log at s->logoff: its length (with the
 * newline) in *len and a pointer to it, or NULL when none is complete.  A
 * line longer than the chunk comes in pieces of the chunk's size. */
static const char *sse_line(struct sse *s, size_t *len)
{
	if (s->logfd < 0)
		return NULL;
	for (int fresh = 0;; fresh = 1) {
		if (s->logoff >= s->chunk_at && s->logoff < s->chunk_at + (off_t)s->chunk_len) {
			size_t at = (size_t)(s->logoff - s->chunk_at), left = s->chunk_len - at;
			/* What was read ahead past the limit is not there yet. */
			if (s->limit >= 0 && s->logoff + (off_t)left > s->limit)
				left = s->limit > s->logoff ? (size_t)(s->limit - s->logoff) : 0;
			const char *p = s->chunk + at, *nl = memchr(p, '\n', left);
			if (nl) {
				*len = (size_t)(nl - p) + 1;
				return p;
			}
			if (at == 0 && left == sizeof s->chunk) {
				*len = left;
				return p;
			}
		}
		if (fresh)
			return NULL;
		/* Only what the log held before the store was read (sse_poll). */
		size_t want = sizeof s->chunk;
		if (s->limit >= 0 && s->logoff + (off_t)want > s->limit)
			want = s->limit > s->logoff ? (size_t)(s->limit - s->logoff) : 0;
		ssize_t n = want ? pread(s->logfd, s->chunk, want, s->logoff) : 0;
		s->chunk_at = s->logoff;
		s->chunk_len = n > 0 ? (size_t)n : 0;
	}
}

static void sse_open_log(struct sse *s)
{
	if (s->logfd >= 0)
		return;
	char *path = paths_task_log(s->a->data_dir, s->id);
	s->logfd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	s->chunk_len = 0;
}

/* Sends what happened since the last look, in order. */
static void sse_poll(struct sse *s)
{
	struct err e = {{0}};
	struct task_row t;
	/* The log's size first, then the store: a line sent now was written
	 * before every step this look does not see yet, so such a step, made
	 * later, comes after it for late readers too (store_steps_settle). */
	sse_open_log(s);
	struct stat sb;
	s->limit = s->logfd >= 0 && fstat(s->logfd, &sb) == 0 ? sb.st_size : 0;
	s->chunk_len = 0;  /* the log may have grown: read it afresh */
	/* The task before its decisions: every decision made before a step
	 * this look sees is then seen too (a push's decision and its move
	 * back to review, committed between the two reads, would otherwise
	 * send the review first, and a late reader would see them the other
	 * way round); one made after the task was read goes out at the next
	 * look, after those steps, as it would for a late reader. */
	struct task_decision *d = NULL;
	size_t nd = 0;
	if (store_task_get(s->st, s->id, &t, &e) < 0) {
		sse_event(s, "error", json_pack("{s:s}", "error", e.msg));
		s->ended = 1;
		return;
	}
	if (store_decisions(s->st, s->id, &d, &nd, &e) < 0) {
		task_row_free(&t);
		task_decisions_free(d, nd);
		sse_event(s, "error", json_pack("{s:s}", "error", e.msg));
		s->ended = 1;
		return;
	}
	if (s->gate_due)
		sse_gate(s, &t, s->nsteps);
	for (;;) {
		size_t len = 0;
		int step = s->nsteps < t.nsteps;
		/* A step whose place in the log is not settled yet (its mover
		 * settles it right after the commit) holds everything back: what
		 * comes next depends on it.  One never settled (its mover died)
		 * takes the step before it's place, as for a late reader. */
		if (step && !t.steps[s->nsteps].log_known &&
		    clock_wall() - t.steps[s->nsteps].time < SSE_SETTLE_S) {
			s->retry_at = clock_mono() + 0.1;
			break;
		}
		/* The lines up to a settled step's place are in the log, read or
		 * not when the store was: they come before it. */
		off_t seen = s->limit;
		if (step && t.steps[s->nsteps].log_off > s->limit)
			s->limit = t.steps[s->nsteps].log_off;
		const char *line = sse_line(s, &len);
		s->limit = seen;
		/* A line whole when the step was made came before it. */
		if (step && (!line || s->logoff + (off_t)len > t.steps[s->nsteps].log_off)) {
			const struct task_step *st = &t.steps[s->nsteps];
			sse_decisions(s, d, nd, st->time);
			s->nsteps++;
			s->gate_due = st->status == TASK_REVIEW;
			sse_event(s, "status", json_pack("{s:s,s:s,s:f,s:i,s:o}", "id", t.id, "status",
			                                 task_status_name(st->status), "at",
			                                 (double)(long long)(st->time * 1000 + 0.5) / 1000,
			                                 "round", st->round ? st->round : t.round,
			                                 "error", st->status == TASK_FAILED && t.error
			                                 ? json_string(t.error) : json_null()));
			if (s->gate_due)
				sse_gate(s, &t, s->nsteps);
			continue;
		}
		if (!line) {
			/* Caught up: what was decided since goes out now. */
			sse_decisions(s, d, nd, INFINITY);
			break;
		}
		size_t text = len && line[len - 1] == '\n' ? len - 1 : len;
		json_t *l = sanitize_json_string(line, text);
		s->logoff += (off_t)len;
		sse_event(s, "log", json_pack("{s:o}", "line", l));
	}
	if (task_status_is_terminal(t.status) && s->nsteps >= t.nsteps) {
		sse_event(s, "end", json_pack("{s:s,s:s}", "id", t.id, "status",
		                              task_status_name(t.status)));
		s->ended = 1;
	}
	task_row_free(&t);
	task_decisions_free(d, nd);
}

/* GET /events: the audit events after s->seq, in order. */
static void sse_poll_global(struct sse *s)
{
	struct err e = {{0}};
	for (;;) {
		struct audit_event *ev;
		size_t n;
		if (store_audit_after(s->st, s->seq, SSE_AUDIT_BATCH, &ev, &n, &e) < 0) {
			sse_event(s, "error", json_pack("{s:s}", "error", e.msg));
			s->ended = 1;
			return;
		}
		for (size_t i = 0; i < n; i++) {
			s->seq = ev[i].id;
			sse_event(s, ev[i].kind, audit_event_json(&ev[i], 0));
		}
		audit_events_free(ev, n);
		if (n < SSE_AUDIT_BATCH)
			return;
	}
}

/* Waits for the store or the task's log to change, the client to go, the
 * server to stop, or the ping to be due: nothing is read while nothing
 * happens.  0 to look again, -1 when the client went. */
static int sse_wait(struct sse *s)
{
	if (!s->global && !s->task_watched && s->watch >= 0) {
		/* The task's folder comes with its first run. */
		char *dir = paths_task_dir(s->a->data_dir, s->id);
		s->task_watched = inotify_add_watch(s->watch, dir, IN_MODIFY | IN_CREATE |
		                                    IN_MOVED_TO) >= 0;
		free(dir);
	}
	double left = SSE_PING_S - (clock_mono() - s->last);
	struct pollfd p[3] = {
		{ .fd = s->watch, .events = POLLIN },
		{ .fd = s->sock, .events = POLLRDHUP },
		{ .fd = s->a->stop_fd, .events = POLLIN },
	};
	/* Without inotify, a look every second. */
	int ms = s->watch < 0 ? 1000 : left > 0 ? (int)(left * 1000) + 1 : 0;
	if (s->retry_at > 0) {
		double r = s->retry_at - clock_mono();
		int rms = r > 0 ? (int)(r * 1000) + 1 : 0;
		if (rms < ms)
			ms = rms;
		s->retry_at = 0;
	}
	int n = poll(p, 3, ms);
	if (n > 0 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return -1;
	if (n > 0 && (p[0].revents & POLLIN)) {
		char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		while (read(s->watch, buf, sizeof buf) > 0)
			;
	}
	return 0;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse *s = cls;
	(void)pos;
	for (;;) {
		if (s->out.len > s->out_off) {
			size_t n = s->out.len - s->out_off;
			if (n > max)
				n = max;
			memcpy(buf, s->out.data + s->out_off, n);
			s->out_off += n;
			if (s->out_off == s->out.len) {
				buf_reset(&s->out);
				s->out_off = 0;
			}
			s->last = clock_mono();
			return (ssize_t)n;
		}
		if (s->ended || s->a->stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->global)
			sse_poll_global(s);
		else
			sse_poll(s);
		if (s->out.len)
			continue;
		if (clock_mono() - s->last >= SSE_PING_S) {
			buf_adds(&s->out, ": ping\n\n");
			continue;
		}
		if (sse_wait(s) < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void sse_free(void *cls)
{
	struct sse *s = cls;
	store_close(s->st);
	if (s->watch >= 0)
		close(s->watch);
	if (s->logfd >= 0)
		close(s->logfd);
	buf_free(&s->out);
	free(s);
}

/* Whether (k, o, review) is a position this server's stream of t passes
 * through (see struct sse): the ids it sent, and no others. */
static int sse_position_valid(struct sse *s, const struct task_row *t, size_t k, off_t o,
                              int mark)
{
	if (k > t->nsteps || (mark == 'r' && (k == 0 || t->steps[k - 1].status != TASK_REVIEW)))
		return 0;
	if (mark == 'e' && (k != t->nsteps || !task_status_is_terminal(t->status)))
		return 0;
	sse_open_log(s);
	struct stat sb;
	off_t size = s->logfd >= 0 && fstat(s->logfd, &sb) == 0 ? sb.st_size : 0;
	if (o > size)
		return 0;
	if (o > 0) {
		/* After a whole line, or a piece of one longer than a chunk. */
		size_t back = o > (off_t)sizeof s->chunk ? sizeof s->chunk : (size_t)o;
		ssize_t n = pread(s->logfd, s->chunk, back, o - (off_t)back);
		s->chunk_len = 0;
		if (n != (ssize_t)back || (s->chunk[back - 1] != '\n' &&
		    (back < sizeof s->chunk || memchr(s->chunk, '\n', back))))
			return 0;
	}
	/* The step after k would have gone out before the line that ends at o;
	 * the line after o would have gone out before step k. */
	if (k < t->nsteps && o > 0 && t->steps[k].log_off < o)
		return 0;
	if (k > 0) {
		off_t keep = s->logoff;
		size_t len;
		s->limit = -1;
		s->logoff = o;
		const char *line = sse_line(s, &len);
		s->logoff = keep;
		if (line && o + (off_t)len <= t->steps[k - 1].log_off)
			return 0;
	}
	return 1;
}

/* The 200 whose body is s's stream (s is the response's now). */
static enum MHD_Result sse_start(struct sse *s, struct MHD_Connection *c)
{
	s->last = clock_mono();
	buf_adds(&s->out, "retry: 2000\n\n");
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	                                                           sse_read, s, sse_free);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	/* A follower is quiet by nature: the ping keeps it, not the timeout. */
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)0);
	return api_answer(c, 200, r);
}

/* Reads an id of a task's stream: "S.L", "S.L.M", "S.L.D" or "S.L.D.M",
 * M one of r (a gate due), e (the end), g (earlier versions' plain form),
 * *three set when D is there.  1 when it has that form. */
static int sse_id_parse(const char *id, unsigned long long *ns, unsigned long long *lo,
                        unsigned long long *nd, int *three, char *mark)
{
	unsigned long long v[3];
	int parts = 0;
	const char *p = id;
	*mark = 0;
	*nd = 0;
	for (;;) {
		if (*p >= '0' && *p <= '9' && parts < 3) {
			char *end;
			errno = 0;
			v[parts++] = strtoull(p, &end, 10);
			if (errno || end - p > 20)
				return 0;
			p = end;
		} else if (parts >= 2 && (*p == 'r' || *p == 'e' || *p == 'g') && !p[1]) {
			*mark = *p == 'g' ? 0 : *p;
			break;
		} else {
			return 0;
		}
		if (!*p)
			break;
		if (*p++ != '.' || !*p)
			return 0;
	}
	if (parts < 2 || v[0] > (1u << 30) || v[1] > (1ull << 62) ||
	    (parts == 3 && v[2] > (1u << 30)))
		return 0;
	*ns = v[0];
	*lo = v[1];
	*three = parts == 3;
	if (*three)
		*nd = v[2];
	return 1;
}

/* How many of the n decisions were made by `at`. */
static size_t sse_decisions_before(const struct task_decision *d, size_t n, double at)
{
	size_t k = 0;
	while (k < n && d[k].at <= at)
		k++;
	return k;
}

enum MHD_Result api_events_get(struct api *a, struct MHD_Connection *c,
                                  const struct task_row *t)
{
	struct sse *s = xcalloc(1, sizeof *s);
	struct err e = {{0}};
	s->a = a;
	s->logfd = -1;
	memcpy(s->id, t->id, sizeof s->id);
	s->st = api_open_store(a, &e);
	if (!s->st) {
		free(s);
		return api_send_err(c, &e, NULL);
	}
	s->watch = store_watch(s->st, &e);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->sock = ci ? ci->connect_fd : -1;
	/* Resuming from the last event the client saw (struct sse). */
	const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	if (!last)
		last = api_query(c, "last_event_id");
	if (last) {
		unsigned long long ns, lo, nd;
		char g = 0;
		int three = 0, valid = sse_id_parse(last, &ns, &lo, &nd, &three, &g);
		struct task_decision *d = NULL;
		size_t ndec = 0;
		struct err de = {{0}};
		if (valid && store_decisions(s->st, t->id, &d, &ndec, &de) < 0) {
			sse_free(s);
			return api_send_err(c, &de, NULL);
		}
		/* A two-part id: the decisions made up to its last step were sent
		 * (or were before its time). */
		if (valid && !three)
			nd = sse_decisions_before(d, ndec, ns && ns <= t->nsteps ? t->steps[ns - 1].time
			                                                          : -INFINITY);
		task_decisions_free(d, ndec);
		if (!valid || nd > ndec ||
		    !sse_position_valid(s, t, (size_t)ns, (off_t)lo, g)) {
			sse_free(s);
			return api_send_error(c, 400, "bad_field", NULL, "Last-Event-ID '%.40s' is not one "
			                  "this server sent for task %s", last, t->id);
		}
		if (g == 'e' && nd == ndec) {
			/* After the end: nothing follows, and 204 tells an EventSource
			 * to stop reconnecting.  (Decisions made after the end, a
			 * refusal say, follow it, and a new end.) */
			sse_free(s);
			struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
			                                                         MHD_RESPMEM_PERSISTENT);
			return api_answer(c, 204, r);
		}
		s->nsteps = (size_t)ns;
		s->logoff = (off_t)lo;
		s->ndec = (size_t)nd;
		s->gate_due = g == 'r';
	}
	return sse_start(s, c);
}

enum MHD_Result api_audit_events_get(struct api *a, struct MHD_Connection *c)
{
	struct sse *s = xcalloc(1, sizeof *s);
	struct err e = {{0}};
	s->a = a;
	s->logfd = -1;
	s->global = 1;
	s->st = api_open_store(a, &e);
	if (!s->st) {
		free(s);
		return api_send_err(c, &e, NULL);
	}
	s->watch = store_watch(s->st, &e);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->sock = ci ? ci->connect_fd : -1;
	/* Resuming: the id of the last event the client saw; without one,
	 * the whole trail from its first event. */
	const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	if (!last)
		last = api_query(c, "last_event_id");
	if (last) {
		long long top = 0;
		char *end;
		errno = 0;
		unsigned long long v = *last >= '0' && *last <= '9' ? strtoull(last, &end, 10) : 0;
		int ok = *last >= '0' && *last <= '9' && !*end && !errno && strlen(last) <= 19;
		if (ok && store_audit_top(s->st, &top, &e) < 0) {
			sse_free(s);
			return api_send_err(c, &e, NULL);
		}
		if (!ok || v > (unsigned long long)top) {
			sse_free(s);
			return api_send_error(c, 400, "bad_field", NULL, "Last-Event-ID '%.40s' is not one "
			                  "this server sent for /events", last);
		}
		s->seq = (long long)v;
	}
	return sse_start(s, c);
}
