#include "autoconfig.h"
#include "scheduler.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "cgroup.h"
#include "child.h"
#include "clock.h"
#include "decide.h"
#include "fsx.h"
#include "autogate.h"
#include "frontdoor.h"
#include "gate.h"
#include "gateway.h"
#include "gitlib.h"
#include "i18n.h"
#include "mirror.h"
#include "move.h"
#include "paths.h"
#include "privsep.h"
#include "reminder.h"
#include "report.h"
#include "sanitize.h"
#include "sandbox.h"
#include "store.h"
#include "template.h"
#include "supervisor.h"
#include "webhook.h"

/* How often the owner looks at the store for tasks added and cancelled
 * by other processes. */
#define POLL_MS 200
#define MAINTAIN_S 300             /* between looks at the mirrors' packs */
/* After SIGTERM, a supervisor gets this long to stop before SIGKILL. */
#define KILL_GRACE 10.0

struct worker {
	pid_t pid;
	int fd;                    /* report pipe, read end */
	char id[TASK_ID_LEN + 1];
	struct buf in;             /* partial report line */
	int finished;              /* a final report (done/fail/cancelled) arrived */
	double term_sent;          /* monotonic time of SIGTERM, 0 if none */
	int cmd;                   /* command pipe to the supervisor, write end */
	int at_gate;               /* its sandbox waits at review: no worker slot */
	int round;                 /* the round it runs */
	int fix_origin;            /* the round whose tests the fix loop's rounds
	                              try to fix, while they run; else 0 */
};

struct scheduler {
	const struct config *cfg;
	char *data_dir;
	struct logger *log;        /* serve's output (logger.h), or NULL */
	struct store *st;
	struct worker *w;
	size_t nw;
	int sfd;                   /* signalfd for SIGCHLD */
	int wfd;                   /* store_watch: another process wrote */
	uint64_t seen;             /* store_data_version at the last look */
	sigset_t oldmask;
	int lockfd;
	double last_poll;
	double next_prune;         /* when the template janitor runs next */
	double next_maintain;      /* when the mirrors are looked at next */
	double next_reminders;     /* when the gates are looked at next (reminder.h) */
	struct reconcile *reconcile; /* the thread reconciling dead pushes */
	pthread_t reconcile_thread;
	struct reconcile *autogate;  /* the thread deciding auto gates */
	struct autogate_look gates;  /* what its looks keep (autogate.h) */
	pthread_t autogate_thread;
	struct reconcile *prs;     /* the thread trying failed pull requests */
	pthread_t prs_thread;
	struct reconcile *decisions; /* the thread carrying out recorded
	                              decisions (decide.h) */
	pthread_t decisions_thread;
	char role[16];             /* "serve" or "dashboard": what the lock
	                              file says runs the scheduler */
	int waiting;               /* requests for changes waiting for a worker */
	int stopping;              /* shutting down: tasks stopped are
	                              interrupted, not failed */
	struct webhook *wh;        /* the webhook sender (webhook.h) */
	struct mover mv;           /* every move of a task (move.h) */
	const struct sandbox_backend *be; /* makes the sandboxes (sandbox.h) */
	struct frontdoor *door;    /* kubernetes: the pods' front door */
};
#define sched scheduler

int scheduler_lock(const char *data_dir, int *fd_out, struct err *e)
{
	char *path = paths_scheduler_lock(data_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_errno(e, _("cannot open %s"), path);
		free(path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		err_set(e, _("another paddock process (pid %s) is running the scheduler for %s; "
		             "tasks you add are picked up by it"), *pid ? pid : "?", data_dir);
		close(fd);
		free(path);
		return -1;
	}
	/* Beside the flock, an OFD lock that others can ask about without
	 * taking it (scheduler_owner). */
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		/* Then waiting deciders do not see this owner. */
	}
	char pid[32];
	/* The pid, then the role (scheduler_role): the first line alone is
	 * what older paddocks read. */
	int n = snprintf(pid, sizeof pid, "%ld\ndashboard\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) < 0) {
		/* The pid is only for the message above. */
	}
	free(path);
	*fd_out = fd;
	return 0;
}

int scheduler_owner(const char *data_dir, char *who, size_t n)
{
	char *path = paths_scheduler_lock(data_dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0)
		return 0;
	/* Asked, not taken (the owner's OFD lock, scheduler_lock): a lock
	 * taken here even for a moment would refuse a serve starting then. */
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	if (held && who && n) {
		char buf[64] = "";
		ssize_t r = pread(fd, buf, sizeof buf - 1, 0);
		buf[r > 0 ? r : 0] = '\0';
		char *nl = strchr(buf, '\n');
		const char *role = "dashboard";
		if (nl) {
			*nl = '\0';
			if (!strncmp(nl + 1, "serve\n", 6))
				role = "serve";
		}
		snprintf(who, n, "%s %s", role, *buf ? buf : "?");
	}
	close(fd);
	return held;
}

void scheduler_role(struct scheduler *s, const char *role)
{
	snprintf(s->role, sizeof s->role, "%s", role);
	char line[64];
	int n = snprintf(line, sizeof line, "%ld\n%s\n", (long)getpid(), role);
	if (ftruncate(s->lockfd, 0) < 0 || pwrite(s->lockfd, line, (size_t)n, 0) < 0) {
		/* Only for the messages of those waiting for it. */
	}
}

static void progress(struct sched *s, const char *id, const char *what, const char *detail)
{
	move_progress(&s->mv, id, what, detail);
}

/* An error the scheduler met ("paddock: MSG" on stderr as text); id, if
 * any, is the task it was about (a JSON line's task). */
static void complain(struct sched *s, const char *id, const char *msg)
{
	logger_event(s->log, LOGGER_ERROR, id, NULL, "error", "paddock: %s", msg);
}

/* A move of the scheduler's (move.h); one it cannot make is said. */
static void transition(struct sched *s, const char *id, enum task_status to,
                       const char *error)
{
	struct err e = {{0}};
	if (move_task(&s->mv, id, to, error, &e) < 0)
		complain(s, id, e.msg);
}

/* The process of an active task stopped before it ended the task:
 * planned when paddock itself is stopping.  Nothing reviewed is lost: a
 * later round goes back to review with the round before, a first round
 * is queued again (store_task_interrupted). */
static void interrupted(struct sched *s, const char *id, int planned, const char *why)
{
	struct err e = {{0}};
	if (move_interrupted(&s->mv, id, planned, why, NULL, &e) < 0)
		complain(s, id, e.msg);
}

/* Round N > 1 failed: the task goes back to review with round N - 1,
 * round N's failure on the gate. */
static void round_failed(struct sched *s, const char *id, const char *why)
{
	struct err e = {{0}};
	char *detail = xasprintf(_("the round failed; back at the round before: %s"), why);
	if (move_rollback_round(&s->mv, id, why, detail, &e) < 0) {
		complain(s, id, e.msg);
		transition(s, id, TASK_FAILED, why);
	}
	free(detail);
}

/* pause {"endpoint":E,"until":T,"status":N}: the endpoint asked to slow
 * down; no task whose agent uses it starts before T. */
static void on_pause(struct sched *s, struct worker *w, const char *json)
{
	struct err e = {{0}};
	json_error_t je;
	json_t *j = json_loads(json, 0, &je);
	const char *ep = json_string_value(json_object_get(j, "endpoint"));
	json_t *until = json_object_get(j, "until");
	json_t *status = json_object_get(j, "status");
	if (!ep || !*ep || !json_is_number(until)) {
		logger_event(s->log, LOGGER_WARNING, w->id, NULL, "report.ignored", "paddock: %s: %s",
		             w->id, _("a pause report without an endpoint and an end was ignored"));
	} else if (store_pause_set(s->st, ep, json_number_value(until),
	                           json_is_integer(status) ? (int)json_integer_value(status) : 0,
	                           w->id, &e) < 0) {
		complain(s, w->id, e.msg);
	} else {
		char when[32];
		time_t t = (time_t)json_number_value(until);
		struct tm tm;
		strftime(when, sizeof when, "%H:%M:%S", localtime_r(&t, &tm));
		char *detail = json_is_integer(status)
			? xasprintf(_("%s is paused until %s (HTTP %d)"), ep, when,
			            (int)json_integer_value(status))
			: xasprintf(_("%s is paused until %s"), ep, when);
		progress(s, w->id, "paused", detail);
		free(detail);
	}
	json_decref(j);
}

/* ---- the report lines (report.h), one handler each ---- */

/* A report's error: it may quote what the supervisor read from the
 * sandbox, so it goes through the sanitizer. */
static void say(struct sched *s, struct err *e, const char *id)
{
	char *m = sanitize_quote_str(e->msg);
	logger_event(s->log, LOGGER_ERROR, id, NULL, "report.error", "paddock: %s: %s", id, m);
	free(m);
}

static void on_status(struct sched *s, struct worker *w, const char *arg)
{
	int st = task_status_parse(arg);
	if (st >= 0)
		transition(s, w->id, (enum task_status)st, NULL);
}

static void on_base(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	if (store_task_set_base(s->st, w->id, arg, &e) < 0 ||
	    store_round_begin(s->st, w->id, 1, arg, &e) < 0)
		say(s, &e, w->id);
}

static void on_head(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	if (store_task_set_head(s->st, w->id, arg, &e) < 0 ||
	    store_round_end(s->st, w->id, w->round, arg, NULL, &e) < 0)
		say(s, &e, w->id);
}

static void set_column(struct sched *s, struct worker *w, const char *column, const char *v)
{
	struct err e = {{0}};
	if (store_task_set(s->st, w->id, column, v, &e) < 0)
		say(s, &e, w->id);
}

static void on_summary(struct sched *s, struct worker *w, const char *arg)
{
	set_column(s, w, "summary", arg);
}

static void on_session(struct sched *s, struct worker *w, const char *arg)
{
	set_column(s, w, "session", arg);
}

static void on_reason(struct sched *s, struct worker *w, const char *arg)
{
	set_column(s, w, "reason", arg);
}

static void on_gate(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	if (store_round_end(s->st, w->id, w->round, NULL, arg, &e) < 0)
		say(s, &e, w->id);
}

static void on_egress(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	if (store_egress_add(s->st, w->id, w->round, arg, &e) < 0)
		say(s, &e, w->id);
}

static void on_usage(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	struct task_usage u;
	if (store_usage_parse(arg, &u, &e) < 0 || store_task_set_usage(s->st, w->id, &u, &e) < 0)
		say(s, &e, w->id);
}

static void on_done(struct sched *s, struct worker *w, const char *arg)
{
	(void)arg;
	struct err e = {{0}};
	w->finished = 1;
	w->fix_origin = 0;
	/* A cancel that arrived while the last step finished still counts:
	 * the task does not open a gate. */
	struct task_row t;
	int cancel = 0;
	if (store_task_get(s->st, w->id, &t, &e) == 0) {
		cancel = t.cancel_requested;
		task_row_free(&t);
	}
	transition(s, w->id, cancel ? TASK_CANCELLED : TASK_REVIEW,
	           cancel ? _("cancelled while it ran") : NULL);
}

static void on_nochange(struct sched *s, struct worker *w, const char *arg)
{
	(void)arg;
	w->finished = 1;
	transition(s, w->id, TASK_DONE, NULL);
}

/* fix N: the round's verified tests failed; round N tries to fix them. */
static void on_fix(struct sched *s, struct worker *w, const char *arg)
{
	struct err e = {{0}};
	int n = atoi(arg);
	if (move_fix_round(&s->mv, w->id, n, &e) < 0) {
		say(s, &e, w->id);
		return;
	}
	if (!w->fix_origin)
		w->fix_origin = w->round;
	w->round = n;
}

static void on_kept(struct sched *s, struct worker *w, const char *arg)
{
	(void)arg;
	struct err e = {{0}};
	w->at_gate = 1;
	if (store_task_set_sandbox_kept(s->st, w->id, 1, &e) < 0)
		say(s, &e, w->id);
	/* A kept gate is no work in progress: its place goes to the next
	 * task now, not at the next tick. */
	s->last_poll = 0;
}

static void on_released(struct sched *s, struct worker *w, const char *arg)
{
	(void)arg;
	struct err e = {{0}};
	w->at_gate = 0;
	if (store_task_set_sandbox_kept(s->st, w->id, 0, &e) < 0)
		say(s, &e, w->id);
}

static void on_fail(struct sched *s, struct worker *w, const char *arg)
{
	w->finished = 1;
	if (s->stopping)
		interrupted(s, w->id, 1, _("paddock was stopped while the task ran"));
	else if (w->round > 1 && w->fix_origin != 1)
		/* A fix round goes back past the fix loop (rollback_round);
		 * the first round's fails the task. */
		round_failed(s, w->id, arg);
	else
		transition(s, w->id, TASK_FAILED, arg);
}

static void on_cancelled(struct sched *s, struct worker *w, const char *arg)
{
	(void)arg;
	w->finished = 1;
	if (s->stopping)
		interrupted(s, w->id, 1, _("paddock was stopped while the task ran"));
	else
		transition(s, w->id, TASK_CANCELLED, _("cancelled while it ran"));
}

/* Generated from REPORT_INFO: a verb without its on_<verb> does not
 * compile. */
static void (*const on_report[REPORT_N])(struct sched *, struct worker *, const char *) = {
#define REPORT_HANDLER(ID, name, arg, doc) [REPORT_##ID] = on_##name,
	REPORT_INFO(REPORT_HANDLER)
#undef REPORT_HANDLER
};

static void handle_line(struct sched *s, struct worker *w, char *line)
{
	enum report_verb v;
	const char *arg;
	if (report_parse(line, &v, &arg) < 0) {
		logger_event(s->log, LOGGER_WARNING, w->id, NULL, "report.ignored", "paddock: %s: %s",
		             w->id, _("a report line that is not in the protocol was ignored"));
		return;
	}
	on_report[v](s, w, arg);
}

/* Returns 1 after reading data, 0 when nothing is there now, -1 at the
 * end of the pipe (then closed). */
static int worker_read(struct sched *s, struct worker *w)
{
	char tmp[4096];
	ssize_t n = read(w->fd, tmp, sizeof tmp);
	if (n <= 0) {
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return 0;
		close(w->fd);
		w->fd = -1;
		return -1;
	}
	buf_add(&w->in, tmp, (size_t)n);
	char *nl;
	while (w->in.len && (nl = memchr(w->in.data, '\n', w->in.len))) {
		*nl = '\0';
		char *line = xstrdup(w->in.data);
		size_t used = (size_t)(nl - w->in.data) + 1;
		memmove(w->in.data, w->in.data + used, w->in.len - used);
		w->in.len -= used;
		w->in.data[w->in.len] = '\0';
		handle_line(s, w, line);
		free(line);
	}
	return 1;
}

static void worker_reap(struct sched *s, size_t i, int status)
{
	struct worker *w = &s->w[i];
	/* The supervisor is gone: read what it wrote, without waiting on a
	 * pipe that something else might still hold open. */
	while (w->fd >= 0 && worker_read(s, w) > 0)
		;
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	if (!w->finished) {
		char why[128];
		if (WIFSIGNALED(status))
			snprintf(why, sizeof why, _("the task's supervisor was killed by signal %d"),
			         WTERMSIG(status));
		else
			snprintf(why, sizeof why, _("the task's supervisor exited with status %d "
			                            "without a result"), WEXITSTATUS(status));
		struct task_row t;
		struct err e = {{0}};
		if (s->stopping) {
			interrupted(s, w->id, 1, _("paddock was stopped while the task ran"));
		} else if (store_task_get(s->st, w->id, &t, &e) == 0) {
			if (t.cancel_requested)
				transition(s, w->id, TASK_CANCELLED, _("cancelled while it ran"));
			else if (task_status_is_active(t.status) && t.status != TASK_PUSHING)
				/* Killed from outside: the task is tried again
				 * (or goes back to its last review), as after
				 * a crash of paddock itself. */
				interrupted(s, w->id, 0, why);
			task_row_free(&t);
		}
		/* Its cgroups outlive it (their lock is free now). */
		if (!s->stopping)
			s->be->janitor();
	}
	if (w->at_gate) {
		struct err e = {{0}};
		store_task_set_sandbox_kept(s->st, w->id, 0, &e);
	}
	if (w->cmd >= 0)
		close(w->cmd);
	buf_free(&w->in);
	s->w[i] = s->w[--s->nw];
	/* A worker is free: the queue is looked at in this step, not at the
	 * next tick (up to 200 ms later). */
	s->last_poll = 0;
}

static void on_supervisor_exit(pid_t pid, int status, void *owner)
{
	struct sched *s = owner;
	for (size_t i = 0; i < s->nw; i++) {
		if (s->w[i].pid == pid) {
			worker_reap(s, i, status);
			return;
		}
	}
}

/* Forks the supervisor of task t (round `resume`, or a new task when 0). */
static int spawn(struct sched *s, struct task_row *t, int resume, int round)
{
	int p[2], c[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(c, O_CLOEXEC) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	/* A new program (supervisor.h), which dies with the scheduler:
	 * nothing of a task may outlive paddock.  Of this process it gets
	 * its two pipes only: a dashboard's pipes held open there would
	 * never see their end, and its store and terminal are none of a
	 * task's business. */
	struct supervisor_spec sp = { .kind = SUPERVISOR_TASK, .cfg = s->cfg,
	                              .data_dir = s->data_dir, .task_id = t->id,
	                              .resume = resume, .report_fd = p[1], .cmd_fd = c[0] };
	struct child ch = { .flags = CHILD_DIE_WITH_PARENT,
	                    .on_exit = on_supervisor_exit, .owner = s };
	struct err e = {{0}};
	if (supervisor_start(&ch, &sp, &e) < 0) {
		complain(s, t->id, e.msg);
		close(p[0]);
		close(p[1]);
		close(c[0]);
		close(c[1]);
		return -1;
	}
	pid_t pid = ch.pid;
	close(p[1]);
	close(c[0]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	s->w = xrealloc(s->w, (s->nw + 1) * sizeof *s->w);
	struct worker *w = &s->w[s->nw++];
	memset(w, 0, sizeof *w);
	w->pid = pid;
	w->fd = p[0];
	w->cmd = c[1];
	w->round = round;
	memcpy(w->id, t->id, sizeof w->id);
	return 0;
}

int scheduler_next_startable(struct store *st, const struct config *cfg, double now,
                             struct task_row *t, double *blocked_until, struct err *e)
{
	if (blocked_until)
		*blocked_until = 0;
	struct pause_row *p;
	size_t np;
	if (store_pauses_active(st, now, &p, &np, e) < 0)
		return -1;
	/* The review limit (reminder.h): nothing asked while none is set. */
	struct reminder_gates g = {0};
	int limit = cfg && reminder_limit_on(cfg);
	if (limit && reminder_count(st, &g, e) < 0) {
		store_pauses_free(p, np);
		return -1;
	}
	if (np == 0 && !limit) {
		store_pauses_free(p, np);
		return store_task_next_queued(st, t, e);
	}
	struct task_row *rows;
	size_t n;
	if (store_task_list(st, TASK_QUEUED, &rows, &n, e) < 0) {
		store_pauses_free(p, np);
		reminder_gates_free(&g);
		return -1;
	}
	int found = 0;
	for (size_t i = 0; i < n && !found; i++) {
		if (rows[i].confirm && !strcmp(rows[i].confirm, "needed"))
			continue;
		struct reminder_hold h;
		if (limit && reminder_hold_of(cfg, &g, rows[i].repo, &h))
			continue;
		const struct agent_conf *a = cfg ? config_find_agent(cfg, rows[i].agent) : NULL;
		const struct pause_row *held = NULL;
		for (size_t k = 0; a && a->endpoint && k < np; k++)
			if (!strcmp(p[k].endpoint, a->endpoint))
				held = &p[k];
		if (!held) {
			*t = rows[i];
			memset(&rows[i], 0, sizeof rows[i]);
			found = 1;
		} else if (blocked_until && (*blocked_until == 0 || held->until < *blocked_until)) {
			*blocked_until = held->until;
		}
	}
	task_rows_free(rows, n);
	store_pauses_free(p, np);
	reminder_gates_free(&g);
	return found;
}

static int start_one(struct sched *s)
{
	struct task_row t;
	struct err e = {{0}};
	/* Tasks whose endpoint is paused wait; the next look (every
	 * POLL_MS) starts them once the pause is over. */
	int rc = scheduler_next_startable(s->st, s->cfg, clock_wall(), &t, NULL, &e);
	if (rc <= 0) {
		if (rc < 0)
			complain(s, NULL, e.msg);
		return 0;
	}
	if (move_start(&s->mv, t.id, t.repo, &e) < 0) {
		/* Cancelled by another process in the meantime. */
		task_row_free(&t);
		return 1;
	}
	t.attempts++;              /* as store_task_start counted it */
	if (spawn(s, &t, 0, 1) < 0) {
		store_task_set(s->st, t.id, "reason", "preparing", &e);
		transition(s, t.id, TASK_FAILED, "preparing: cannot start a supervisor");
	}
	task_row_free(&t);
	return 1;
}

static struct worker *worker_of(struct sched *s, const char *id)
{
	for (size_t i = 0; i < s->nw; i++)
		if (!strcmp(s->w[i].id, id))
			return &s->w[i];
	return NULL;
}

static int busy_workers(struct sched *s)
{
	int n = 0;
	for (size_t i = 0; i < s->nw; i++)
		n += !s->w[i].at_gate;
	return n;
}

/* Writes the notes of the latest request for changes where the round's
 * supervisor reads them: <task dir>/notes-<round>. */
static int write_notes(struct sched *s, const char *id, int round, struct err *e)
{
	struct task_decision *d;
	size_t n;
	if (store_decisions(s->st, id, &d, &n, e) < 0)
		return -1;
	const char *notes = "";
	for (size_t i = n; i-- > 0;)
		if (!strcmp(d[i].action, "request-changes")) {
			notes = d[i].notes ? d[i].notes : "";
			break;
		}
	/* The round's last attempt failed or was interrupted: the agent
	 * hears why, with the notes. */
	struct task_row t;
	struct buf text = {0};
	if (store_task_get(s->st, id, &t, e) == 0) {
		if (t.failed_round == round && t.failed_why)
			buf_printf(&text, _("Your last attempt at this round did not reach review: "
			                    "%s\n\nThe reviewer's notes:\n\n"), t.failed_why);
		task_row_free(&t);
	}
	buf_adds(&text, notes);
	char *dir = paths_task_dir(s->data_dir, id);
	char *path = paths_task_notes(s->data_dir, id, round);
	int rc = fsx_mkdir_p(dir, 0700, e) == 0 ?
		fsx_write_file(path, text.data ? text.data : "", text.len, 0600, e) : -1;
	buf_free(&text);
	free(dir);
	free(path);
	task_decisions_free(d, n);
	return rc;
}

/* Requests for changes: the task's kept sandbox continues, or a new one is
 * rebuilt at the task's head when it is gone.  Returns how many wait. */
static int start_requested(struct sched *s)
{
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	int waiting = 0;
	/* Only the pending ones: a partial index finds them among any
	 * number of tasks at review. */
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW), .pending = 1,
	                        .no_steps = 1 };
	if (store_task_query(s->st, &q, &rows, &n, &e) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct task_row *t = &rows[i];
		if (!t->pending)
			continue;
		struct worker *w = worker_of(s, t->id);
		if (w && !w->at_gate)
			continue;  /* still finishing its last round */
		/* A new round is running work: it waits for a free worker. */
		if (busy_workers(s) >= s->cfg->workers) {
			waiting++;
			continue;
		}
		int round;
		if (write_notes(s, t->id, t->round + 1, &e) < 0 ||
		    move_resume(&s->mv, t->id, &round, &e) < 0) {
			complain(s, t->id, e.msg);
			continue;
		}
		if (w) {
			char cmd[32];
			int len = snprintf(cmd, sizeof cmd, "resume %d\n", round);
			w->at_gate = 0;
			w->round = round;
			w->fix_origin = 0;
			w->finished = 0;
			if (fsx_write_all(w->cmd, cmd, (size_t)len) < 0)
				kill(w->pid, SIGTERM);
		} else {
			struct task_row fresh;
			if (store_task_get(s->st, t->id, &fresh, &e) == 0) {
				if (spawn(s, &fresh, round, round) < 0)
					transition(s, t->id, TASK_FAILED,
					           "running: cannot start a supervisor");
				task_row_free(&fresh);
			}
		}
	}
	task_rows_free(rows, n);
	return waiting;
}

/* A task decided at the gate (done, rejected, cancelled) no longer needs
 * its sandbox. */
static void release_decided(struct sched *s)
{
	for (size_t i = 0; i < s->nw; i++) {
		struct worker *w = &s->w[i];
		if (!w->at_gate || w->cmd < 0)
			continue;
		struct task_row t;
		struct err e = {{0}};
		if (store_task_get(s->st, w->id, &t, &e) < 0)
			continue;
		if (t.status != TASK_REVIEW && t.status != TASK_PUSHING) {
			(void)fsx_write_all(w->cmd, "teardown\n", 9);
			close(w->cmd);
			w->cmd = -1;
		}
		task_row_free(&t);
	}
}

static void check_cancels(struct sched *s)
{
	double now = clock_mono();
	for (size_t i = 0; i < s->nw; i++) {
		struct worker *w = &s->w[i];
		if (w->term_sent) {
			if (now - w->term_sent > KILL_GRACE)
				kill(w->pid, SIGKILL);
			continue;
		}
		struct task_row t;
		struct err e = {{0}};
		if (store_task_get(s->st, w->id, &t, &e) < 0)
			continue;
		if (t.cancel_requested) {
			progress(s, w->id, "cancelling", NULL);
			kill(w->pid, SIGTERM);
			w->term_sent = now;
		}
		task_row_free(&t);
	}
}

static int queued_count(struct sched *s)
{
	/* A task waiting for a person's confirmation is not work to do; nor
	 * is one the review limit holds (reminder.h). */
	struct task_query q = { .status_mask = TASK_MASK(TASK_QUEUED), .startable = 1 };
	size_t n = 0;
	struct err e = {{0}};
	store_task_count(s->st, &q, &n, &e);
	long held = n ? reminder_held(s->st, s->cfg, &e) : 0;
	return (int)n - (held > 0 ? (int)held : 0);
}

/* The reconciler's work: the ids to look at, its own store connection
 * (SQLite connections are per thread; a forked child could not open the
 * store its parent has open). */
struct reconcile {
	const struct config *cfg;
	char *data_dir;
	char (*ids)[TASK_ID_LEN + 1];
	size_t n;
	struct logger *log;
	/* What is done with each id: gate_recover_push, autogate_run; with
	 * no ids, decide_run_pending as process `by` once. */
	int (*fn)(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e);
	char by[48];
	const char *event;         /* its lines' word in a JSON log */
	atomic_int done;
};

static void *reconcile_run(void *arg)
{
	struct reconcile *rc = arg;
	struct store *st;
	struct err e = {{0}};
	char *db = paths_db(rc->data_dir);
	if (store_open(&st, db, &e) == 0) {
		struct gate_ctx g = gate_ctx_of(rc->cfg, rc->data_dir, st, NULL);
		for (size_t i = 0; i < (rc->fn ? rc->n : 1); i++) {
			struct buf out = {0};
			/* What happened is in the task (pushed, its error). */
			int frc = rc->fn ? rc->fn(&g, rc->ids[i], &out, &e)
			                 : decide_run_pending(&g, rc->by, &out, &e);
			if (frc == 0 && out.len &&
			    rc->log) {
				/* Lines that may quote the remote or the task. */
				struct buf clean = {0};
				sanitize_visible(out.data, out.len, SANITIZE_KEEP_NEWLINE, &clean,
				                 NULL);
				logger_lines(rc->log, LOGGER_INFO, rc->fn ? rc->ids[i] : NULL, NULL,
				             rc->event, clean.data);
				buf_free(&clean);
			}
			buf_free(&out);
		}
		store_close(st);
	}
	free(db);
	atomic_store(&rc->done, 1);
	return NULL;
}

static void reconcile_free(struct reconcile *rc)
{
	free(rc->data_dir);
	free(rc->ids);
	free(rc);
}

static void reconcile_join(struct sched *s)
{
	if (s->reconcile) {
		pthread_join(s->reconcile_thread, NULL);
		reconcile_free(s->reconcile);
		s->reconcile = NULL;
	}
	if (s->autogate) {
		pthread_join(s->autogate_thread, NULL);
		reconcile_free(s->autogate);
		s->autogate = NULL;
	}
	if (s->prs) {
		pthread_join(s->prs_thread, NULL);
		reconcile_free(s->prs);
		s->prs = NULL;
	}
	if (s->decisions) {
		pthread_join(s->decisions_thread, NULL);
		reconcile_free(s->decisions);
		s->decisions = NULL;
	}
}

/* Starts rc (its ids set) on its own thread; 0, or -1 (rc freed). */
static int reconcile_start(struct sched *s, struct reconcile *rc, pthread_t *thread)
{
	rc->cfg = s->cfg;
	rc->data_dir = xstrdup(s->data_dir);
	rc->log = s->log;
	atomic_init(&rc->done, 0);
	if (pthread_create(thread, NULL, reconcile_run, rc) != 0) {
		reconcile_free(rc);
		return -1;
	}
	return 0;
}

/* Gates of approval auto and auto-push (autogate.h), decided in a
 * thread: a push asks the network, and the loop must not wait for it. */
static void auto_gates(struct sched *s)
{
	if (s->autogate) {
		if (!atomic_load(&s->autogate->done))
			return;
		pthread_join(s->autogate_thread, NULL);
		reconcile_free(s->autogate);
		s->autogate = NULL;
	}
	struct err e = {{0}};
	char (*ids)[TASK_ID_LEN + 1];
	long n = autogate_due_ids(s->st, &s->gates, &ids, &e);
	if (n <= 0)
		return;
	struct reconcile *rc = xcalloc(1, sizeof *rc);
	rc->fn = autogate_run;
	rc->event = "gate.auto";
	rc->ids = ids;
	rc->n = (size_t)n;
	if (reconcile_start(s, rc, &s->autogate_thread) == 0)
		s->autogate = rc;
}

/* Pull requests that failed to open, tried again when their back-off
 * is over (gate_pr_scheduled), in a thread: GitHub may be slow. */
static void pr_retries(struct sched *s)
{
	if (s->prs) {
		if (!atomic_load(&s->prs->done))
			return;
		pthread_join(s->prs_thread, NULL);
		reconcile_free(s->prs);
		s->prs = NULL;
	}
	char (*ids)[TASK_ID_LEN + 1];
	size_t n;
	double next;
	struct err e = {{0}};
	if (store_task_pr_due(s->st, clock_wall(), &ids, &n, &next, &e) < 0 || !n) {
		free(ids);
		return;
	}
	struct reconcile *rc = xcalloc(1, sizeof *rc);
	rc->fn = gate_pr_scheduled;
	rc->event = "pull-request.retry";
	rc->ids = ids;
	rc->n = n;
	if (reconcile_start(s, rc, &s->prs_thread) == 0)
		s->prs = rc;
}

/* Decisions recorded by people for the scheduler (approve, push, a
 * group's pick: decide.h), carried out in a thread with this process's
 * credentials: a push asks the network. */
static void recorded_decisions(struct sched *s)
{
	if (s->decisions) {
		if (!atomic_load(&s->decisions->done))
			return;
		pthread_join(s->decisions_thread, NULL);
		reconcile_free(s->decisions);
		s->decisions = NULL;
	}
	size_t n = 0;
	struct err e = {{0}};
	if (store_action_pending(s->st, &n, &e) < 0 || !n)
		return;
	struct reconcile *rc = xcalloc(1, sizeof *rc);
	snprintf(rc->by, sizeof rc->by, "%s %ld", s->role, (long)getpid());
	rc->event = "decision";
	if (reconcile_start(s, rc, &s->decisions_thread) == 0)
		s->decisions = rc;
}

/* A task left at pushing by a process that died is reconciled with the
 * remote (gate_recover_push) in a thread: it asks the network, and the
 * loop (perhaps a dashboard's) must not wait for it. */
static void recover_pushing(struct sched *s)
{
	if (s->reconcile) {
		if (!atomic_load(&s->reconcile->done))
			return;
		reconcile_join(s);
	}
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	if (store_task_list(s->st, TASK_PUSHING, &rows, &n, &e) < 0)
		return;
	struct reconcile *rc = xcalloc(1, sizeof *rc);
	for (size_t i = 0; i < n; i++) {
		if (!gate_push_lock_free(s->data_dir, rows[i].id))
			continue;
		rc->ids = xrealloc(rc->ids, (rc->n + 1) * sizeof *rc->ids);
		memcpy(rc->ids[rc->n++], rows[i].id, TASK_ID_LEN + 1);
	}
	task_rows_free(rows, n);
	if (!rc->n) {
		free(rc);
		return;
	}
	rc->fn = gate_recover_push;
	rc->event = "push.recovered";
	if (reconcile_start(s, rc, &s->reconcile_thread) == 0)
		s->reconcile = rc;
}

static int pending_count(struct sched *s)
{
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW), .pending = 1 };
	size_t n = 0;
	struct err e = {{0}};
	store_task_count(s->st, &q, &n, &e);
	return (int)n;
}

static void handle_signals(struct sched *s)
{
	struct signalfd_siginfo si;
	while (read(s->sfd, &si, sizeof si) == sizeof si)
		;
	/* Each ended child goes to its owner: the supervisors to
	 * on_supervisor_exit, a hosting dashboard's jobs to the dashboard. */
	child_reap();
}

/* On shutdown the supervisors are asked to stop (SIGTERM: each tears its
 * sandbox down), then killed after a grace period; their tasks are
 * interrupted (store_task_interrupted): queued again or back at review,
 * never silently dropped. */
static void shutdown_workers(struct sched *s)
{
	s->stopping = 1;
	for (size_t i = 0; i < s->nw; i++)
		kill(s->w[i].pid, SIGTERM);
	double deadline = clock_mono() + KILL_GRACE;
	int killed = 0;
	while (s->nw) {
		if (!killed && clock_mono() > deadline) {
			for (size_t i = 0; i < s->nw; i++)
				kill(s->w[i].pid, SIGKILL);
			killed = 1;
		}
		struct pollfd *pfd = xcalloc(s->nw + 1, sizeof *pfd);
		pfd[0].fd = s->sfd;
		pfd[0].events = POLLIN;
		for (size_t i = 0; i < s->nw; i++) {
			pfd[i + 1].fd = s->w[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		size_t nw = s->nw;
		if (poll(pfd, nw + 1, 100) > 0) {
			for (size_t i = 0; i < nw; i++)
				if (pfd[i + 1].revents && s->w[i].fd >= 0)
					worker_read(s, &s->w[i]);
		}
		free(pfd);
		handle_signals(s);
	}
	/* A supervisor killed before it finished leaves its cgroups (and,
	 * with the bridge, its socket folder). */
	s->be->janitor();
	gateway_janitor();
}

void scheduler_sandbox_options(const struct config *cfg, const char *data_dir,
                               struct sandbox_options *o)
{
	int user = geteuid() != 0;
	/* Only bwrap sandboxes use cgroups: a delegated one is not
	 * prepared (cgroup_delegated may move processes) for the others. */
	int bwrap = !strcmp(cfg->sandbox_backend, "bwrap");
	*o = (struct sandbox_options){ .uid = cfg->sandbox_uid, .gid = cfg->sandbox_gid,
	                               .unsafe_no_isolation = cfg->sandbox_unsafe,
	                               .user_mode = user,
	                               .cgroups = !user || (bwrap && cgroup_delegated(NULL, NULL)),
	                               .kube = &cfg->kube, .data_dir = data_dir,
	                               .keep_seconds = cfg->gate_timeout };
}

const struct sandbox_backend *scheduler_backend(const struct config *cfg, const char *data_dir,
                                               struct err *e)
{
	struct sandbox_options o;
	/* serve with paddock.user: root mode's sandboxes, made by the root
	 * helper's keepers (privsep.h). */
	if (privsep_active()) {
		const struct sandbox_backend *be = sandbox_backend_privsep();
		return be->preflight(e) < 0 ? NULL : be;
	}
	/* User mode: a delegated scope from the systemd user manager where
	 * there is one, for cgroups; without, rlimits (doctor says so). */
	if (geteuid() != 0 && !strcmp(cfg->sandbox_backend, "bwrap") &&
	    !cgroup_delegated(NULL, NULL))
		cgroup_systemd_scope(NULL);
	scheduler_sandbox_options(cfg, data_dir, &o);
	const struct sandbox_backend *be = sandbox_backend_find(cfg->sandbox_backend, &o, e);
	if (!be || be->preflight(e) < 0)
		return NULL;
	return be;
}

int scheduler_open(struct scheduler **out, const struct config *cfg, const char *data_dir,
                   struct logger *log, struct err *e)
{
	int lockfd;
	const struct sandbox_backend *be = scheduler_backend(cfg, data_dir, e);
	if (!be)
		return err_prefix(e, _("cannot run tasks"));
	/* Before any thread (gitlib.h); each supervisor, a program of its
	 * own, initializes its own. */
	gitlib_init();
	if (scheduler_lock(data_dir, &lockfd, e) < 0)
		return -1;
	/* Two pipes a worker, with hundreds of workers (pods elsewhere). */
	fsx_nofile_raise(0);
	struct sched *s = xcalloc(1, sizeof *s);
	s->cfg = cfg;
	s->be = be;
	s->data_dir = xstrdup(data_dir);
	s->log = log;
	s->lockfd = lockfd;
	snprintf(s->role, sizeof s->role, "dashboard");
	s->sfd = -1;
	s->wfd = -1;
	char *db = paths_db(data_dir);
	int rc = store_open(&s->st, db, e);
	free(db);
	if (rc < 0) {
		close(lockfd);
		free(s->data_dir);
		free(s);
		return -1;
	}
	s->mv = (struct mover){ .cfg = cfg, .st = s->st, .log = log };
	/* Whatever a dead owner left active is recovered: its sandboxes are
	 * gone with its processes (the janitor removes their cgroups), its
	 * first rounds run again, its later rounds go back to review. */
	struct store_recovery rec;
	if (store_recover_active(s->st, cfg->max_attempts,
	                         _("paddock stopped while the task ran"), &rec, e) < 0)
		complain(s, NULL, e->msg);
	else if (rec.queued + rec.review + rec.failed + rec.cancelled + rec.lost)
		logger_event(log, LOGGER_INFO, NULL, NULL, "recovered", _("recovered the tasks a stopped paddock left: %d queued again, "
		                    "%d back at review, %d failed after too many attempts, "
		                    "%d cancelled, %d lost\n"),
		        rec.queued, rec.review, rec.failed, rec.cancelled, rec.lost);
	/* Decisions a dead owner was carrying out: taken again (decide.h
	 * settles a push it left half way first). */
	size_t requeued = 0;
	if (store_action_requeue(s->st, &requeued, e) < 0)
		complain(s, NULL, e->msg);
	else if (requeued)
		logger_event(log, LOGGER_INFO, NULL, NULL, "recovered", _("%zu recorded decisions a stopped paddock was carrying out "
		                    "are carried out again\n"), requeued);
	be->janitor();
	gateway_janitor();
	/* Imports and template builds run in this owner's supervisors, and
	 * none runs yet: their leftovers are a dead owner's. */
	mirror_janitor(data_dir);
	template_janitor(data_dir);
	if (store_forget_sandboxes(s->st, e) < 0)
		complain(s, NULL, e->msg);

	/* Children are reaped from the loop, through a signalfd. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
	s->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	/* A task queued or cancelled from the CLI, the API's threads or a
	 * dashboard wakes the loop at once (without inotify: the tick). */
	struct err we = {{0}};
	s->wfd = store_watch(s->st, &we);
	if (webhook_open(&s->wh, cfg, s->st, log, e) < 0)
		complain(s, NULL, e->msg);
	/* The pods dial in; a thread of its own, after every check that
	 * forks. */
	if (cfg->sandbox_backend && !strcmp(cfg->sandbox_backend, "kubernetes") &&
	    frontdoor_start_config(cfg, data_dir, &s->door, e) < 0) {
		scheduler_close(s);
		return err_prefix(e, _("cannot run tasks"));
	}
	*out = s;
	return 0;
}

void scheduler_set_config(struct scheduler *s, const struct config *cfg)
{
	s->cfg = cfg;
	s->mv.cfg = cfg;
}

size_t scheduler_pollfds(struct scheduler *s, struct pollfd *out, size_t max)
{
	size_t n = 0;
	if (n < max) {
		out[n].fd = s->sfd;
		out[n].events = POLLIN;
		out[n].revents = 0;
		n++;
	}
	if (n < max && s->wfd >= 0) {
		out[n].fd = s->wfd;
		out[n].events = POLLIN;
		out[n].revents = 0;
		n++;
	}
	for (size_t i = 0; i < s->nw && n < max; i++) {
		out[n].fd = s->w[i].fd;
		out[n].events = POLLIN;
		out[n].revents = 0;
		n++;
	}
	n += webhook_pollfds(s->wh, out + n, max - n);
	return n;
}

static void on_prune_exit(pid_t pid, int status, void *owner)
{
	(void)pid, (void)status, (void)owner;
}

void scheduler_step(struct scheduler *s, const struct pollfd *fds, size_t n)
{
	/* Reports first, then children: a supervisor's last lines are read
	 * before it is reaped. */
	int woke = 0;
	for (size_t k = 0; k < n; k++) {
		if (fds[k].revents && fds[k].fd == s->wfd && s->wfd >= 0)
			woke |= store_watch_changed(s->st, s->wfd);
		if (!fds[k].revents || fds[k].fd == s->sfd || fds[k].fd == s->wfd)
			continue;
		for (size_t i = 0; i < s->nw; i++)
			if (s->w[i].fd == fds[k].fd && s->w[i].fd >= 0)
				worker_read(s, &s->w[i]);
	}
	handle_signals(s);
	double now = clock_mono();
	/* The store changed (someone else's write: ours move data_version
	 * too, but find nothing new to do): look now, not at the tick. */
	if (woke) {
		uint64_t v = store_data_version(s->st);
		if (v != s->seen)
			s->last_poll = 0;
		s->seen = v;
	}
	if (now - s->last_poll >= POLL_MS / 1000.0) {
		s->last_poll = now;
		s->waiting = start_requested(s);
		while (busy_workers(s) < s->cfg->workers && start_one(s))
			;
		check_cancels(s);
		release_decided(s);
		recover_pushing(s);
		auto_gates(s);
		pr_retries(s);
		recorded_decisions(s);
	}
	if (now >= s->next_reminders) {
		s->next_reminders = now + reminder_period(s->cfg);
		struct err e = {{0}};
		if (reminder_tick(&s->mv, clock_wall(), &e) < 0)
			logger_event(s->log, LOGGER_ERROR, NULL, NULL, "reminder.error", "paddock: %s",
			             e.msg);
	}
	if (s->cfg->template_max_age > 0 && now >= s->next_prune) {
		/* Hourly, in a child: removing a large template must not hold
		 * the loop (or the dashboard that hosts it); the reaper in
		 * handle_signals collects it. */
		s->next_prune = now + 3600;
		/* None of the loop's locks, pipes or sockets. */
		struct supervisor_spec sp = { .kind = SUPERVISOR_PRUNE, .cfg = s->cfg,
		                              .data_dir = s->data_dir,
		                              .max_age = s->cfg->template_max_age };
		struct child ch = { .on_exit = on_prune_exit };
		struct err e = {{0}};
		if (supervisor_start(&ch, &sp, &e) < 0)
			complain(s, NULL, e.msg);
	}
	if (now >= s->next_maintain) {
		/* Every few minutes, in a child that dies with this process
		 * (the janitor removes a lock it leaves): the mirrors' packs
		 * and loose refs, one more with each import. */
		s->next_maintain = now + MAINTAIN_S;
		struct supervisor_spec sp = { .kind = SUPERVISOR_MAINTAIN, .cfg = s->cfg,
		                              .data_dir = s->data_dir };
		struct child ch = { .flags = CHILD_DIE_WITH_PARENT, .on_exit = on_prune_exit };
		struct err e = {{0}};
		if (supervisor_start(&ch, &sp, &e) < 0)
			complain(s, NULL, e.msg);
	}
	webhook_pump(s->wh, fds, n, clock_wall());
}

static int actions_pending(struct sched *s)
{
	size_t n = 0;
	struct err e = {{0}};
	store_action_pending(s->st, &n, &e);
	return n > 0;
}

int scheduler_idle(struct scheduler *s)
{
	/* Sandboxes kept at the gate are not work in progress. */
	return busy_workers(s) == 0 && s->waiting == 0 && queued_count(s) == 0 &&
	       !pending_count(s) && !(s->autogate && !atomic_load(&s->autogate->done)) &&
	       !(s->decisions && !atomic_load(&s->decisions->done)) && !actions_pending(s) &&
	       autogate_due_ids(s->st, &s->gates, NULL, &(struct err){{0}}) <= 0;
}

int scheduler_busy(struct scheduler *s)
{
	return busy_workers(s);
}

void scheduler_close(struct scheduler *s)
{
	if (!s)
		return;
	shutdown_workers(s);
	frontdoor_stop(s->door);
	reconcile_join(s);
	webhook_close(s->wh);
	close(s->sfd);
	if (s->wfd >= 0)
		close(s->wfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	free(s->w);
	store_close(s->st);
	close(s->lockfd);
	free(s->data_dir);
	free(s);
}

int scheduler_run(const struct config *cfg, const char *data_dir,
                  const struct scheduler_opts *o, struct err *e)
{
	struct scheduler *s;
	if (scheduler_open(&s, cfg, data_dir, o->log, e) < 0)
		return -1;
	scheduler_role(s, "serve");
	if (o->on_open && o->on_open(o->open_arg, e) < 0) {
		scheduler_close(s);
		return -1;
	}
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGTERM);
	if (o->on_hup)
		sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &old);
	int tfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	int stop = 0;
	while (!stop) {
		scheduler_step(s, NULL, 0);
		if (o->until_idle && scheduler_idle(s))
			break;
		size_t max = s->nw + 3 + WEBHOOK_MAX_FDS;
		struct pollfd *pfd = xcalloc(max, sizeof *pfd);
		pfd[0].fd = tfd;
		pfd[0].events = POLLIN;
		size_t n = 1 + scheduler_pollfds(s, pfd + 1, max - 1);
		if (poll(pfd, n, POLL_MS) > 0) {
			if (pfd[0].revents) {
				struct signalfd_siginfo si;
				while (read(tfd, &si, sizeof si) == sizeof si) {
					if (si.ssi_signo == SIGHUP)
						o->on_hup(o->hup_arg);
					else
						stop = 1;
				}
			}
			scheduler_step(s, pfd + 1, n - 1);
		}
		free(pfd);
	}
	scheduler_close(s);
	close(tfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}
