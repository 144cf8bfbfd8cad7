/* scheduler: runs queued tasks, up to `workers` at once, first in first
 * out, in one event loop.  Only one process owns the scheduler (a flock on
 * <data>/scheduler.lock); other processes add and cancel tasks through the
 * store and the owner picks them up promptly, and so the decisions that
 * push, which the owner carries out with its credentials (decide.h). */
#ifndef PADDOCK_SCHEDULER_H
#define PADDOCK_SCHEDULER_H

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include "config.h"
#include "err.h"
#include "logger.h"
#include "store.h"

struct sandbox_backend;
struct sandbox_options;

struct scheduler;

struct scheduler_opts {
	int until_idle;        /* return when nothing is queued or active */
	struct logger *log;    /* serve's output (logger.h): one line per
	                          transition, its notices and errors; NULL:
	                          errors on stderr only */
	/* If set, called from the loop on SIGHUP (else SIGHUP is left as it
	 * is). */
	void (*on_hup)(void *arg);
	void *hup_arg;
	/* If set, called once the scheduler is open, before its loop: the
	 * place to start threads (the HTTP API's), after the checks that
	 * fork (child.h: no copy of a threaded process).  -1 with e set
	 * stops scheduler_run with that error. */
	int (*on_open)(void *arg, struct err *e);
	void *open_arg;
};

/* Takes the owner lock; fails with a message when another process holds it. */
int scheduler_lock(const char *data_dir, int *fd_out, struct err *e);

/* Whether a process holds the owner lock now: 1 with who (if not NULL,
 * n bytes) set to its role and pid as the lock file says them ("serve
 * 12", "dashboard 34": decide_owner_text shows them), 0 when none does. */
int scheduler_owner(const char *data_dir, char *who, size_t n);
/* What the lock file says runs the scheduler s: "dashboard" from
 * scheduler_open, "serve" from scheduler_run. */
void scheduler_role(struct scheduler *s, const char *role);

/* The endpoint-pause policy: the oldest queued task in st that may start
 * at unix time now, one whose agent (in cfg) uses no endpoint with an
 * active pause (an agent that cfg does not know, or one without an
 * endpoint, is never held back), and whose repo the review limit
 * (max-at-review, reminder.h) does not hold back.  Returns 1 and fills *t, 0 when none may
 * start.  blocked_until, if not NULL, gets the earliest end of a pause
 * that held a queued task back (0: none held back). */
int scheduler_next_startable(struct store *st, const struct config *cfg, double now,
                             struct task_row *t, double *blocked_until, struct err *e);
/* The sandbox backend cfg names ([sandbox] backend), set up with cfg's
 * [sandbox] options and checked (its preflight), or NULL with a message
 * that says what is missing. */
const struct sandbox_backend *scheduler_backend(const struct config *cfg, const char *data_dir,
                                               struct err *e);
/* The options cfg gives the sandbox backend (its [sandbox] section; user
 * mode when this process is not root). */
void scheduler_sandbox_options(const struct config *cfg, const char *data_dir,
                               struct sandbox_options *o);
/* The scheduler as a part of another event loop (the dashboard hosts it):
 * open takes the lock, marks tasks left active by a dead owner as lost,
 * runs the janitor and blocks SIGCHLD (reaped through a signalfd among its
 * fds).  log (borrowed, may be NULL) gets one line per transition and
 * what the scheduler says.  The scheduler owns nothing of the caller's. */
int scheduler_open(struct scheduler **out, const struct config *cfg, const char *data_dir,
                   struct logger *log, struct err *e);
/* Uses cfg from now on (a configuration read again: agents, repos,
 * workers, limits for the tasks it starts next); what runs keeps what it
 * started with.  The caller keeps the old config alive while s is open:
 * work in flight may point into it.  The sandbox backend stays the one
 * chosen at open. */
void scheduler_set_config(struct scheduler *s, const struct config *cfg);
/* Fills out (at most max) with the fds to poll for input; returns how many. */
size_t scheduler_pollfds(struct scheduler *s, struct pollfd *out, size_t max);
/* Handles what poll reported in fds (n may be 0), reaps children, and at
 * most every 200 ms looks at the store: starts queued tasks and requested
 * rounds, acts on cancels and decisions.  Never blocks: poll with a
 * timeout of 200 ms or less. */
void scheduler_step(struct scheduler *s, const struct pollfd *fds, size_t n);
/* 1 when nothing is queued, running or waiting (kept gates do not count). */
int scheduler_idle(struct scheduler *s);
/* Tasks being worked on now. */
int scheduler_busy(struct scheduler *s);
/* Stops the supervisors (their first rounds are queued again, later
 * rounds go back to review, kept gates are torn down), restores the
 * signal mask, releases the lock; frees s. */
void scheduler_close(struct scheduler *s);

/* Runs until SIGINT, SIGQUIT or SIGTERM (or idle, with until_idle). */
int scheduler_run(const struct config *cfg, const char *data_dir,
                  const struct scheduler_opts *o, struct err *e);

#endif
