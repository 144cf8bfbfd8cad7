/* runner: the host's client of a sandbox session (runner.h). */
#include "autoconfig.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "runner_stream.h"
#include "runner_link.h"
#include "sanitize.h"

struct run {
	uint32_t id;
	runner_output_fn *output;
	runner_output_fn *errors;   /* RP_RUN_STDERR: its STDERR frames */
	void *arg;
	int apart;            /* RP_RUN_STDERR */
	uint64_t err_next;    /* the offset the next STDERR must have */
	uint64_t next;        /* the offset the next OUTPUT must have */
	uint64_t cap;         /* limits.output (0: none) */
	int ended, refused;
	uint64_t in_sent, in_taken;   /* STDIN bytes sent, and TAKEN */
	/* A WATCH under way: until its replay starts (an empty OUTPUT at the
	 * offset asked), output still in flight continues the old stream at
	 * stale; the replay sends it again. */
	int watching, replaying;
	uint64_t stale;
	struct runner_end end;
	char why[256];        /* a refused run: the runner's message */
};

/* The one file on its way in or out. */
struct xfer {
	uint32_t id;          /* 0: none */
	int get, fd;
	uint64_t max, size, done;
	int announced, finished, failed;
	unsigned mode;
	char why[256];
};

struct runner {
	int fd;               /* -1 while the connection is lost */
	enum runner_fault fault;
	char msg[ERR_MAX];    /* the fault's message, for every later call */
	int pid1;
	uint32_t next_id;
	struct rp_buf in;     /* whole frames from the runner */
	struct rl link;       /* what goes out, and the session's counts */
	/* runner_set_resume: a new connection comes where wake polls. */
	int wake;
	runner_resume_fn *resume;
	void *resume_arg;
	double resume_seconds;
	double lost_at;       /* clock_mono() when the connection broke; 0 */
	double asked;         /* when resume was last called */
	char lost_why[128];   /* how the connection broke */
	int greeted;          /* the runner's HELLO came */
	int lost;             /* the session failed for a connection that stayed lost */
	struct run *runs;
	size_t nruns;
	struct xfer x;
	uint64_t ping_sent, pong_got;
	double send_seconds;  /* runner_set_send_timeout */
	int watch_failed;     /* the WATCH under way was refused */
	/* The gateway streams (runner_gateway): the bridge's folder and
	 * ports, NULL and 0 while not told. */
	struct rs_set gw;
	char *bridge_dir;
	int *ports;
	size_t nports;
};

static int fail(struct runner *r, enum runner_fault f, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Ends the session: the first fault's message stays for every later call. */
static int fail(struct runner *r, enum runner_fault f, struct err *e, const char *fmt, ...)
{
	if (r->fault == RUNNER_OK) {
		char what[ERR_MAX / 2];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		r->fault = f;
		snprintf(r->msg, sizeof r->msg, "%s: %s",
		         f == RUNNER_LIED ? _("the sandbox's runner broke the protocol") :
		         f == RUNNER_STALLED ? _("the sandbox's runner stopped answering") :
		         _("the sandbox's runner is gone"), what);
	}
	return err_set(e, "%s", r->msg);
}

static int failed(struct runner *r, struct err *e)
{
	return r->fault == RUNNER_OK ? 0 : err_set(e, "%s", r->msg);
}

enum runner_fault runner_fault(const struct runner *r)
{
	return r->fault;
}

void runner_set_send_timeout(struct runner *r, double seconds)
{
	r->send_seconds = seconds;
}

int runner_pid1(const struct runner *r)
{
	return r->pid1;
}

int runner_fd(const struct runner *r)
{
	return r->fd;
}

void runner_set_resume(struct runner *r, int wake_fd, double seconds, runner_resume_fn *fn,
                       void *arg)
{
	r->wake = wake_fd;
	r->resume = fn;
	r->resume_arg = arg;
	r->resume_seconds = seconds;
	rl_keep(&r->link);
}

int runner_lost(const struct runner *r)
{
	return r->lost;
}

unsigned runner_resumes(const struct runner *r)
{
	return r->link.resumes;
}

static struct run *run_find(struct runner *r, uint32_t id)
{
	for (size_t i = 0; i < r->nruns; i++)
		if (r->runs[i].id == id)
			return &r->runs[i];
	return NULL;
}

/* The runner's text, made safe to quote in a message. */
static void quote(char *dst, size_t size, const char *text)
{
	char *q = sanitize_quote_str(text ? text : "");
	snprintf(dst, size, "%s", q);
	free(q);
}

static int on_output(struct runner *r, const struct rp_msg *m, struct err *e)
{
	struct run *run = run_find(r, m->id);
	if (!run || (run->ended && !run->watching))
		return fail(r, RUNNER_LIED, e, _("output for run %u, which is not running"),
		            (unsigned)m->id);
	if (run->watching && !run->replaying) {
		if (m->len == 0 && m->offset == run->next) {
			run->replaying = 1;
			return 0;
		}
		if (m->offset != run->stale || (run->cap && m->len > run->cap - run->stale))
			return fail(r, RUNNER_LIED, e,
			            _("output of run %u at offset %llu, expected %llu"),
			            (unsigned)m->id, (unsigned long long)m->offset,
			            (unsigned long long)run->stale);
		run->stale += m->len;
		return 0;
	}
	if (m->offset != run->next)
		return fail(r, RUNNER_LIED, e, _("output of run %u at offset %llu, expected %llu"),
		            (unsigned)m->id, (unsigned long long)m->offset,
		            (unsigned long long)run->next);
	if (run->cap && (m->len > run->cap || m->offset > run->cap - m->len ||
	                 run->err_next > run->cap - m->len - m->offset))
		return fail(r, RUNNER_LIED, e, _("output of run %u past its limit of %llu bytes"),
		            (unsigned)m->id, (unsigned long long)run->cap);
	run->next += m->len;
	if (run->output && m->len)
		run->output(run->arg, m->id, m->offset, (const char *)m->data, m->len);
	return 0;
}

/* A run's standard error apart (RP_RUN_STDERR): a stream of its own,
 * within the output limit together with the output. */
static int on_stderr(struct runner *r, const struct rp_msg *m, struct err *e)
{
	struct run *run = run_find(r, m->id);
	if (!run || run->ended || !run->apart)
		return fail(r, RUNNER_LIED, e,
		            _("standard error for run %u, which does not send it apart"),
		            (unsigned)m->id);
	if (m->offset != run->err_next)
		return fail(r, RUNNER_LIED, e,
		            _("standard error of run %u at offset %llu, expected %llu"),
		            (unsigned)m->id, (unsigned long long)m->offset,
		            (unsigned long long)run->err_next);
	uint64_t out = run->stale > run->next ? run->stale : run->next;
	if (run->cap && (m->len > run->cap || out + m->offset > run->cap - m->len))
		return fail(r, RUNNER_LIED, e, _("output of run %u past its limit of %llu bytes"),
		            (unsigned)m->id, (unsigned long long)run->cap);
	run->err_next += m->len;
	if (run->errors && m->len)
		run->errors(run->arg, m->id, m->offset, (const char *)m->data, m->len);
	return 0;
}

static int on_end(struct runner *r, const struct rp_msg *m, struct err *e)
{
	struct run *run = run_find(r, m->id);
	if (!run || run->ended)
		return fail(r, RUNNER_LIED, e, _("an end for run %u, which is not running"),
		            (unsigned)m->id);
	if (m->size != (run->watching && !run->replaying ? run->stale : run->next))
		return fail(r, RUNNER_LIED, e,
		            _("run %u ended after %llu bytes of output, but %llu were sent"),
		            (unsigned)m->id, (unsigned long long)m->size,
		            (unsigned long long)run->next);
	run->ended = 1;
	run->end.how = (enum rp_end)m->how;
	run->end.code = (int)m->code;
	run->end.hit = m->hit;
	run->end.output = m->size;
	snprintf(run->end.message, sizeof run->end.message, "%s", m->text ? m->text : "");
	return 0;
}

static int on_fail(struct runner *r, const struct rp_msg *m, struct err *e)
{
	struct run *run = run_find(r, m->id);
	if (r->x.id && r->x.id == m->id && !r->x.finished) {
		r->x.failed = 1;
		quote(r->x.why, sizeof r->x.why, m->text);
		return 0;
	}
	if (!run)
		return fail(r, RUNNER_LIED, e, _("a refusal for request %u, which was never made"),
		            (unsigned)m->id);
	if (run->watching) {
		r->watch_failed = 1;
		quote(run->why, sizeof run->why, m->text);
	} else if (!run->ended) {
		/* The run itself was refused (a kill that raced its end is not). */
		run->refused = 1;
		run->ended = 1;
		quote(run->why, sizeof run->why, m->text);
	}
	return 0;
}

static int on_file(struct runner *r, const struct rp_msg *m, struct err *e)
{
	struct xfer *x = &r->x;
	if (!x->id || x->id != m->id || x->finished || x->failed)
		return fail(r, RUNNER_LIED, e, _("file data for request %u, which is not open"),
		            (unsigned)m->id);
	switch (m->type) {
	case RP_FILE_PUT:
		if (!x->get || x->announced)
			break;
		if (m->size > x->max)
			return fail(r, RUNNER_LIED, e,
			            _("a file of %llu bytes announced where at most %llu were asked for"),
			            (unsigned long long)m->size, (unsigned long long)x->max);
		x->announced = 1;
		x->size = m->size;
		x->mode = m->mode & 07777;
		return 0;
	case RP_FILE_DATA:
		if (!x->get || !x->announced)
			break;
		if (m->offset != x->done || m->len > x->size - x->done)
			return fail(r, RUNNER_LIED, e,
			            _("file data at offset %llu (%zu bytes) of a file announced as %llu bytes"),
			            (unsigned long long)m->offset, m->len, (unsigned long long)x->size);
		for (size_t off = 0; off < m->len;) {
			ssize_t n = write(x->fd, m->data + off, m->len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return err_errno(e, _("cannot write the file copied out of the sandbox"));
			off += (size_t)n;
		}
		x->done += m->len;
		return 0;
	case RP_FILE_DONE:
		if (x->get && (!x->announced || x->done != x->size || m->size != x->size))
			return fail(r, RUNNER_LIED, e,
			            _("a file ended after %llu of %llu bytes"),
			            (unsigned long long)x->done, (unsigned long long)x->size);
		if (!x->get && (x->done != x->size || m->size != x->size))
			break;
		x->finished = 1;
		return 0;
	default:
		break;
	}
	return fail(r, RUNNER_LIED, e, _("an unexpected %s frame"), rp_type_name(m->type));
}

/* ---- gateway streams ---- */

void runner_gateway(struct runner *r, const char *bridge_dir, const int *ports, size_t nports)
{
	free(r->bridge_dir);
	free(r->ports);
	r->bridge_dir = bridge_dir ? xstrdup(bridge_dir) : NULL;
	r->ports = nports ? xmalloc(nports * sizeof *ports) : NULL;
	if (nports)
		memcpy(r->ports, ports, nports * sizeof *ports);
	r->nports = nports;
}

size_t runner_streams(const struct runner *r)
{
	return r->gw.n;
}

size_t runner_pollfds(struct runner *r, struct pollfd *pfd)
{
	pfd[0] = (struct pollfd){ r->fd, POLLIN | (rl_pending(&r->link) ? POLLOUT : 0), 0 };
	pfd[1] = (struct pollfd){ r->resume ? r->wake : -1, POLLIN, 0 };
	return 2 + rs_pollfds(&r->gw, pfd + 2, 1);
}

/* A connection to the gateway's bridge socket for port: the socket, or -1
 * with *err (why the stream is refused). */
static int gateway_connect(struct runner *r, uint32_t port, int *err)
{
	int given = 0;
	for (size_t i = 0; i < r->nports; i++)
		given |= r->ports[i] == (int)port;
	if (!r->bridge_dir || !given) {
		*err = ECONNREFUSED;
		return -1;
	}
	if (rs_full(&r->gw)) {
		*err = EMFILE;
		return -1;
	}
	char *path = xasprintf("%s/%u", r->bridge_dir, (unsigned)port);
	struct sockaddr_un sa;
	struct err ue = {{0}};
	int dirfd = -1, fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	*err = errno;
	if (fd >= 0 && (fsx_unix_addr(path, &sa, &dirfd, &ue) < 0 ||
	                connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)) {
		*err = ue.msg[0] ? ENAMETOOLONG : errno;
		close(fd);
		fd = -1;
	}
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	return fd;
}

/* OPEN, DATA, ACK or SHUT: the streams' own checks, worded. */
static int on_stream(struct runner *r, const struct rp_msg *m, struct err *e)
{
	enum rs_lie lie = RS_OK;
	if (m->type == RP_OPEN && (lie = rs_open_check(&r->gw, m)) == RS_OK) {
		int err = 0, fd = gateway_connect(r, m->port, &err);
		lie = rs_opened(&r->gw, m, fd, err, &r->link.out);
	} else if (m->type != RP_OPEN) {
		lie = rs_frame(&r->gw, m, &r->link.out);
	}
	unsigned id = (unsigned)m->id;
	switch (lie) {
	case RS_OK:
		return 0;
	case RS_REOPEN:
		return fail(r, RUNNER_LIED, e, _("gateway stream %u opened after a later one"), id);
	case RS_AFTER_END:
		return fail(r, RUNNER_LIED, e, _("data on gateway stream %u after its end"), id);
	case RS_WINDOW:
		return fail(r, RUNNER_LIED, e,
		            _("data on gateway stream %u past its window of %u bytes"), id,
		            (unsigned)RP_STREAM_WINDOW);
	case RS_ACK:
		return fail(r, RUNNER_LIED, e,
		            _("an acknowledgement on gateway stream %u of bytes never sent"), id);
	default:
		return fail(r, RUNNER_LIED, e, _("a %s frame for gateway stream %u, which was never "
		                                 "opened"), rp_type_name(m->type), id);
	}
}

/* One frame from the runner. */
static int dispatch(struct runner *r, const struct rp_msg *m, struct err *e)
{
	switch (m->type) {
	case RP_OUTPUT:
		return on_output(r, m, e);
	case RP_STDERR:
		return on_stderr(r, m, e);
	case RP_END:
		return on_end(r, m, e);
	case RP_FAIL:
		return on_fail(r, m, e);
	case RP_FILE_PUT:
	case RP_FILE_DATA:
	case RP_FILE_DONE:
		return on_file(r, m, e);
	case RP_TAKEN: {
		struct run *run = run_find(r, m->id);
		if (!run || m->offset < run->in_taken || m->offset > run->in_sent)
			return fail(r, RUNNER_LIED, e,
			            _("input taken up to %llu for run %u, which was sent %llu bytes"),
			            (unsigned long long)m->offset, (unsigned)m->id,
			            (unsigned long long)(run ? run->in_sent : 0));
		run->in_taken = m->offset;
		return 0;
	}
	case RP_OPEN:
	case RP_DATA:
	case RP_ACK:
	case RP_SHUT:
		return on_stream(r, m, e);
	case RP_PONG:
		if (m->token <= r->pong_got || m->token > r->ping_sent)
			return fail(r, RUNNER_LIED, e, _("an answer to a ping never sent"));
		r->pong_got = m->token;
		return 0;
	default:
		return fail(r, RUNNER_LIED, e, _("an unexpected %s frame"), rp_type_name(m->type));
	}
}

/* Handles every whole frame in r->in. */
static int parse(struct runner *r, struct err *e)
{
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(r->in.data, r->in.len, &type, &body, &blen);
		if (fl < 0)
			return fail(r, RUNNER_LIED, e, _("a malformed frame header"));
		if (fl == 0)
			return 0;
		struct rp_msg m;
		if (rp_decode(type, body, blen, &m) < 0) {
			if (!rp_type_name(type))
				return fail(r, RUNNER_LIED, e, _("a frame of unknown type %u"),
				            (unsigned)type);
			return fail(r, RUNNER_LIED, e, _("a malformed %s frame"), rp_type_name(type));
		}
		int rc = dispatch(r, &m, e);
		rp_msg_clear(&m);
		if (rc < 0)
			return -1;
		rp_buf_consume(&r->in, (size_t)fl);
	}
}

static int ms_left(double deadline);

/* Why the link refused what came (runner_link.h). */
static const char *link_why(enum rl_err le)
{
	switch (le) {
	case RL_BAD_ACK:
		return _("it acknowledged bytes of the session that were never sent");
	case RL_BAD_RESUME:
		return _("it resumed the session from a count paddock does not hold");
	case RL_NO_RESUME:
		return _("a resumed connection did not start with RESUME");
	case RL_STRAY_RESUME:
		return _("a RESUME on a connection that did not resume");
	case RL_BAD_FRAME:
		return _("a malformed RECEIVED or RESUME frame");
	default:
		return strerror(ENOMEM);
	}
}

/* The failure of a session whose connection broke and did not come back. */
static int lost_for(struct runner *r, struct err *e)
{
	r->lost = r->fault == RUNNER_OK;
	return fail(r, RUNNER_DIED, e,
	            _("the connection to the pod was lost for %.0f s, and a resume may take "
	              "at most %.0f s"), clock_mono() - r->lost_at, r->resume_seconds);
}

/* The connection broke: a session that may resume (runner_set_resume)
 * waits for its next one; any other is over. */
static int lost(struct runner *r, struct err *e, const char *why)
{
	if (!r->resume)
		return fail(r, RUNNER_DIED, e, "%s", why);
	close(r->fd);
	r->fd = -1;
	snprintf(r->lost_why, sizeof r->lost_why, "%s", why);
	r->asked = 0;   /* ask at once: the runner may be gone for good */
	if (!r->lost_at)
		r->lost_at = clock_mono();
	return 1;
}

/* The runner's next connection, if one came: the one before (broken, or
 * half-open and not known to be) is dropped, and the session resumes on
 * this one once the runner's RESUME came. */
static int take_resume(struct runner *r, struct err *e)
{
	int fd = r->resume(r->resume_arg);
	r->asked = clock_mono();
	if (fd == RUNNER_RESUME_GONE && r->fd < 0 && r->lost_at) {
		r->lost = r->fault == RUNNER_OK;
		return fail(r, RUNNER_DIED, e, _("the connection to the pod was lost for %.0f s (%s), "
		                                 "and the pod ended"),
		            clock_mono() - r->lost_at, r->lost_why);
	}
	if (fd < 0)
		return 1;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (!r->lost_at)
		r->lost_at = clock_mono();
	if (rl_reconnect(&r->link) < 0)
		abort();
	return 1;
}

/* Waits up to ms (-1: no limit) for the channel to be readable, or
 * writable too while the link has bytes to write, or (a session that may
 * resume) for a new connection; reads, writes and handles what came.  1
 * when something happened, 0 when ms passed, -1 on failure. */
static int pump_ms(struct runner *r, int ms, struct err *e)
{
	if (failed(r, e))
		return -1;
	if (r->lost_at) {
		int lm = ms_left(r->lost_at + r->resume_seconds);
		if (lm == 0)
			return lost_for(r, e);
		if (ms < 0 || lm < ms)
			ms = lm;
		/* Without a connection, asked again each second. */
		if (r->fd < 0) {
			double left = r->asked + RUNNER_RESUME_ASK_S - clock_mono();
			if (left <= 0)
				return take_resume(r, e);
			int am = (int)(left * 1000.0) + 1;
			if (ms < 0 || am < ms)
				ms = am;
		}
	}
	/* The channel, the resume hook's descriptor, then the gateway
	 * streams' sockets (runner_gateway). */
	struct pollfd p[RUNNER_POLLFDS_MAX];
	size_t np = runner_pollfds(r, p);
	int n = poll(p, np, ms);
	if (n < 0 && errno == EINTR)
		return 1;
	if (n < 0)
		return fail(r, RUNNER_DIED, e, "%s", strerror(errno));
	if (n == 0 && r->lost_at && ms_left(r->lost_at + r->resume_seconds) == 0)
		return lost_for(r, e);
	if (n == 0)
		return r->lost_at && r->fd < 0 && clock_mono() >= r->asked + RUNNER_RESUME_ASK_S ?
		       take_resume(r, e) : 0;
	if (p[1].revents)
		return take_resume(r, e);
	if ((p[0].revents & POLLOUT) && rl_write(&r->link, r->fd) < 0)
		return lost(r, e, strerror(errno));
	if (np > 2)
		rs_step(&r->gw, p + 2, &r->link.out);
	if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
		/* At most one frame's worth buffered: a header past the
		 * maximum fails in parse() before its body is read. */
		unsigned char buf[65536];
		ssize_t got = read(r->fd, buf, sizeof buf);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			return 1;
		if (got < 0)
			return lost(r, e, strerror(errno));
		if (got == 0)
			return lost(r, e, _("the channel closed"));
		enum rl_err le = rl_feed(&r->link, buf, (size_t)got, &r->in);
		if (le != RL_OK)
			return fail(r, RUNNER_LIED, e, "%s", link_why(le));
		if (!r->link.awaiting)
			r->lost_at = 0;
		if (r->greeted && parse(r, e) < 0)
			return -1;
	}
	return 1;
}

/* Milliseconds left until deadline (-1: none; 0: passed). */
static int ms_left(double deadline)
{
	if (deadline <= 0)
		return -1;
	double left = deadline - clock_mono();
	return left <= 0 ? 0 : (int)(left * 1000.0) + 1;
}

/* pump_ms until deadline: a deadline that passes is a stall (or, while
 * the connection is lost, that loss). */
static int pump(struct runner *r, double deadline, struct err *e)
{
	int ms = ms_left(deadline);
	int rc = ms == 0 ? 0 : pump_ms(r, ms, e);
	if (rc == 0 && r->lost_at)
		return lost_for(r, e);
	if (rc == 0)
		return fail(r, RUNNER_STALLED, e, _("no answer in time"));
	return rc < 0 ? -1 : 0;
}

/* Queues a frame and writes it all (reading what comes meanwhile); with
 * RL_HOLD_MAX bytes held, first waits for the runner to acknowledge some. */
static int send_msg(struct runner *r, const struct rp_msg *m, double deadline, struct err *e)
{
	if (failed(r, e))
		return -1;
	int own = deadline <= 0;
	if (own)
		deadline = clock_mono() + r->send_seconds;
	unsigned resumes = r->link.resumes;
	/* A loss is bounded by its own time, not a send's; a send's own
	 * time starts again on the resumed connection. */
	for (int queued = 0;;) {
		if (!queued && rl_held(&r->link) < RL_HOLD_MAX) {
			if (rl_send(&r->link, m) < 0)
				return err_set(e, _("a request to the sandbox's runner is too large: %s"),
				               strerror(errno));
			queued = 1;
		}
		if (queued && !rl_pending(&r->link) && r->fd >= 0 && !r->link.awaiting)
			return 0;
		if (pump(r, r->lost_at ? 0 : deadline, e) < 0)
			return -1;
		if (own && r->link.resumes != resumes && !r->lost_at) {
			resumes = r->link.resumes;
			deadline = clock_mono() + r->send_seconds;
		}
	}
}

static int wait_pong(struct runner *r, double deadline, struct err *e)
{
	uint64_t token = ++r->ping_sent;
	struct rp_msg m = { .type = RP_PING, .token = token };
	if (send_msg(r, &m, deadline, e) < 0)
		return -1;
	while (r->pong_got < token)
		if (pump(r, deadline, e) < 0)
			return -1;
	return 0;
}

static int hello(struct runner *r, double deadline, struct err *e)
{
	struct rp_msg m = { .type = RP_HELLO, .version = RP_VERSION };
	if (rl_send(&r->link, &m) < 0)
		abort();
	/* Nothing past the answer is handled before its version is known:
	 * pump_ms leaves the frames in r->in until greeted. */
	for (;;) {
		uint16_t type;
		const unsigned char *body;
		size_t blen;
		long fl = rp_frame(r->in.data, r->in.len, &type, &body, &blen);
		if (fl < 0)
			return fail(r, RUNNER_LIED, e, _("a malformed frame header"));
		if (fl > 0) {
			struct rp_msg h;
			if (type != RP_HELLO || rp_decode(type, body, blen, &h) < 0)
				return fail(r, RUNNER_LIED, e, _("no greeting"));
			rp_buf_consume(&r->in, (size_t)fl);
			if (h.version != RP_VERSION)
				return fail(r, RUNNER_LIED, e,
				            _("it speaks protocol version %u, paddock speaks %u"),
				            (unsigned)h.version, (unsigned)RP_VERSION);
			r->pid1 = (h.flags & RP_HELLO_PID1) != 0;
			rp_msg_clear(&h);
			r->greeted = 1;
			return parse(r, e);
		}
		int ms = ms_left(deadline);
		int rc = ms == 0 ? 0 : pump_ms(r, ms, e);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return fail(r, RUNNER_STALLED, e, _("no greeting in time"));
	}
}

struct runner *runner_open(int fd, double deadline, struct err *e)
{
	struct runner *r = xcalloc(1, sizeof *r);
	r->fd = fd;
	r->wake = -1;
	rl_init(&r->link, 0, 1);
	r->next_id = 1;
	r->send_seconds = RUNNER_SEND_SECONDS;
	rs_init(&r->gw, RUNNER_STREAMS_MAX, 0);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (hello(r, deadline, e) < 0) {
		runner_close(r);
		return NULL;
	}
	return r;
}

void runner_close(struct runner *r)
{
	if (!r)
		return;
	if (r->fd >= 0 && r->greeted && r->fault == RUNNER_OK && !r->link.awaiting) {
		/* The end, said: a runner that may resume would otherwise
		 * take the close for a broken connection.  Best effort: one
		 * write, then the close (a runner that missed it gives up
		 * once its resume time passed). */
		struct rp_msg bye = { .type = RP_BYE };
		if (rl_send(&r->link, &bye) == 0)
			(void)rl_write(&r->link, r->fd);
		shutdown(r->fd, SHUT_WR);
	}
	if (r->fd >= 0)
		close(r->fd);
	rp_buf_free(&r->in);
	rs_free(&r->gw);
	free(r->bridge_dir);
	free(r->ports);
	rl_free(&r->link);
	free(r->runs);
	free(r);
}

static uint32_t new_id(struct runner *r)
{
	uint32_t id = r->next_id++;
	if (r->next_id == 0)
		r->next_id = 1;
	return id;
}

uint32_t runner_start(struct runner *r, const struct runner_cmd *cmd, struct err *e)
{
	if (failed(r, e))
		return 0;
	struct rp_msg m = {
		.type = RP_RUN, .id = new_id(r), .flags = cmd->flags, .limits = cmd->limits,
		.rows = (uint16_t)cmd->rows, .cols = (uint16_t)cmd->cols,
		.text = (char *)(cmd->cwd ? cmd->cwd : ""),
		.argv = (char **)cmd->argv, .env = (char **)cmd->env,
	};
	if (!cmd->argv || !cmd->argv[0]) {
		err_set(e, _("a command for the sandbox's runner needs a program"));
		return 0;
	}
	r->runs = xrealloc(r->runs, (r->nruns + 1) * sizeof *r->runs);
	struct run *run = &r->runs[r->nruns++];
	memset(run, 0, sizeof *run);
	run->id = m.id;
	run->output = cmd->output;
	run->errors = cmd->errors;
	run->apart = (cmd->flags & RP_RUN_STDERR) && !(cmd->flags & RP_RUN_PTY);
	run->arg = cmd->arg;
	run->cap = cmd->limits.output;
	if (send_msg(r, &m, 0, e) < 0)
		return 0;
	return m.id;
}

int runner_step(struct runner *r, uint32_t id, double deadline, struct err *e)
{
	/* Waits only for the first frames: once some came, what else is
	 * there now, and back to the caller (a sender waiting for room, a
	 * TAKEN, goes on at once rather than at the deadline). */
	for (int waited = 0;; waited = 1) {
		struct run *run = id ? run_find(r, id) : NULL;
		if (run && run->ended)
			return 1;
		/* A gateway stream that never pauses keeps frames coming:
		 * back to the caller at the deadline all the same (its
		 * cancel, its time limit). */
		if (waited && deadline > 0 && clock_mono() >= deadline)
			return 0;
		int ms = waited ? 0 : ms_left(deadline);
		int rc = pump_ms(r, ms < 0 ? 0 : ms, e);
		if (rc <= 0)
			return rc;
	}
}

int runner_wait(struct runner *r, uint32_t id, double deadline, struct runner_end *end,
                struct err *e)
{
	struct run *run = run_find(r, id);
	if (!run)
		return err_set(e, _("no run %u in this sandbox session"), (unsigned)id);
	while (!run->ended) {
		if (pump(r, deadline, e) < 0)
			return -1;
		run = run_find(r, id);
	}
	if (run->refused)
		return err_set(e, _("the sandbox's runner refused to run the command: %s"), run->why);
	if (end)
		*end = run->end;
	return 0;
}

int runner_run(struct runner *r, const struct runner_cmd *cmd, double deadline,
               struct runner_end *end, struct err *e)
{
	uint32_t id = runner_start(r, cmd, e);
	return id ? runner_wait(r, id, deadline, end, e) : -1;
}

int runner_kill(struct runner *r, uint32_t id, int sig, struct err *e)
{
	if (id && !run_find(r, id))
		return err_set(e, _("no run %u in this sandbox session"), (unsigned)id);
	/* The runner refuses anything else; checked here, so that a refusal
	 * can only mean a run that ended meanwhile. */
	if (sig < 1 || sig > 64)
		return err_set(e, _("no signal %d to send to a run in the sandbox"), sig);
	struct rp_msg m = { .type = RP_KILL, .id = id, .sig = (uint32_t)sig };
	return send_msg(r, &m, 0, e);
}

int runner_stdin(struct runner *r, uint32_t id, const void *data, size_t len, struct err *e)
{
	const unsigned char *p = data;
	do {
		size_t n = len < RP_CHUNK ? len : RP_CHUNK;
		struct rp_msg m = { .type = RP_STDIN, .id = id, .data = p, .len = n };
		/* Counted first: while it waits for room to send, the runner's
		 * frames are read, and its TAKEN may cover this frame already. */
		struct run *run = run_find(r, id);
		if (run)
			run->in_sent += n;
		if (send_msg(r, &m, 0, e) < 0)
			return -1;
		p += n;
		len -= n;
	} while (len);
	return 0;
}

size_t runner_stdin_room(struct runner *r, uint32_t id)
{
	struct run *run = run_find(r, id);
	if (!run || run->ended || r->fault != RUNNER_OK)
		return 0;
	uint64_t ahead = run->in_sent - run->in_taken;
	return ahead < RP_STDIN_WINDOW ? (size_t)(RP_STDIN_WINDOW - ahead) : 0;
}

int runner_resize(struct runner *r, uint32_t id, unsigned rows, unsigned cols, struct err *e)
{
	struct rp_msg m = { .type = RP_RESIZE, .id = id, .rows = (uint16_t)rows,
	                    .cols = (uint16_t)cols };
	return send_msg(r, &m, 0, e);
}

int runner_watch(struct runner *r, uint32_t id, uint64_t offset, double deadline,
                 struct err *e)
{
	struct run *run = run_find(r, id);
	if (!run)
		return err_set(e, _("no run %u in this sandbox session"), (unsigned)id);
	if (offset > run->next)
		return err_set(e, _("run %u has no output at offset %llu yet"), (unsigned)id,
		               (unsigned long long)offset);
	uint64_t was = run->next;
	run->stale = was;
	run->next = offset;
	run->watching = 1;
	run->replaying = 0;
	r->watch_failed = 0;
	struct rp_msg m = { .type = RP_WATCH, .id = id, .offset = offset };
	int rc = send_msg(r, &m, deadline, e) < 0 ? -1 : wait_pong(r, deadline, e);
	run = run_find(r, id);
	run->watching = 0;
	if (rc < 0)
		return -1;
	if (r->watch_failed) {
		run->next = run->stale;
		return err_set(e, _("the sandbox's runner no longer holds run %u's output from "
		                    "offset %llu: %s"), (unsigned)id, (unsigned long long)offset,
		               run->why);
	}
	if (!run->replaying || run->next < run->stale)
		return fail(r, RUNNER_LIED, e, _("output of run %u sent again only up to %llu of %llu"),
		            (unsigned)id, (unsigned long long)run->next,
		            (unsigned long long)run->stale);
	return 0;
}

static void xfer_begin(struct runner *r, int get, int fd, uint64_t max)
{
	memset(&r->x, 0, sizeof r->x);
	r->x.id = new_id(r);
	r->x.get = get;
	r->x.fd = fd;
	r->x.max = max;
}

int runner_file_put(struct runner *r, const char *path, unsigned mode, int fd, uint64_t size,
                    double deadline, struct err *e)
{
	if (failed(r, e))
		return -1;
	xfer_begin(r, 0, fd, size);
	r->x.size = size;
	struct rp_msg m = { .type = RP_FILE_PUT, .id = r->x.id, .mode = mode & 07777,
	                    .size = size, .text = (char *)path };
	int rc = send_msg(r, &m, deadline, e);
	unsigned char *buf = xmalloc(RP_CHUNK);
	while (rc == 0 && r->x.done < size) {
		size_t want = size - r->x.done < RP_CHUNK ? (size_t)(size - r->x.done) : RP_CHUNK;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The runner waits for the rest: the session cannot go on. */
			err_set(e, _("cannot read the file for the sandbox (%s): it ended after %llu of "
			             "%llu bytes"), path, (unsigned long long)r->x.done,
			        (unsigned long long)size);
			r->fault = RUNNER_DIED;
			snprintf(r->msg, sizeof r->msg, "%s", e ? e->msg : "");
			rc = -1;
			break;
		}
		struct rp_msg d = { .type = RP_FILE_DATA, .id = r->x.id, .offset = r->x.done,
		                    .data = buf, .len = (size_t)n };
		rc = send_msg(r, &d, deadline, e);
		r->x.done += (uint64_t)n;
	}
	free(buf);
	while (rc == 0 && !r->x.finished && !r->x.failed)
		rc = pump(r, deadline, e);
	if (rc == 0 && r->x.failed)
		rc = err_set(e, _("the sandbox's runner could not write %s: %s"), path, r->x.why);
	r->x.id = 0;
	return rc;
}

int64_t runner_file_get(struct runner *r, const char *path, int fd, uint64_t max,
                        unsigned *mode, double deadline, struct err *e)
{
	if (failed(r, e))
		return -1;
	xfer_begin(r, 1, fd, max);
	struct rp_msg m = { .type = RP_FILE_GET, .id = r->x.id, .size = max,
	                    .text = (char *)path };
	int rc = send_msg(r, &m, deadline, e);
	while (rc == 0 && !r->x.finished && !r->x.failed)
		rc = pump(r, deadline, e);
	if (rc == 0 && r->x.failed)
		rc = err_set(e, _("cannot copy %s out of the sandbox: %s"), path, r->x.why);
	r->x.id = 0;
	if (rc < 0)
		return -1;
	if (mode)
		*mode = r->x.mode;
	return (int64_t)r->x.size;
}

int runner_ping(struct runner *r, double deadline, struct err *e)
{
	return wait_pong(r, deadline, e);
}
