/* err: error messages for the user.
 *
 * Engine functions that can fail take a `struct err *` last, return -1 (or
 * NULL) on failure and leave a complete, translated, one-line message in it
 * that says what went wrong and, where possible, what to do.
 *
 * The message has a kind too, set where the error is made, so that a caller
 * that answers for it (the HTTP API's status, the CLI's exit status) need
 * not find out a second time what went wrong. */
#ifndef PADDOCK_ERR_H
#define PADDOCK_ERR_H

#include <stdarg.h>

#define ERR_MAX 2048

enum err_kind {
	ERR_INTERNAL = 0,  /* anything else: the store, a file, a process failed
	                      (the kind of a zeroed struct err and of err_set) */
	ERR_NOT_FOUND,     /* no such thing: no task has the id, or more than one
	                      has the prefix */
	ERR_INVALID,       /* the request itself is wrong: a malformed id, empty
	                      notes, a finding that is not there */
	ERR_WRONG_STATE,   /* the task is not in a state that allows it */
	ERR_BLOCKED,       /* policy findings of the task block it */
	ERR_FORBIDDEN,     /* who asks may not do it: a repo's reviewers or
	                      four-eyes (gate_may_decide), a token's role */
	ERR_CONFLICT,      /* something else stands in the way: another process
	                      pushes the task, no notes to send again, a finding
	                      overridden already */
	ERR_UNAVAILABLE,   /* paddock cannot do it now (the store is busy); try
	                      again later */
	ERR_REMOTE,        /* a push to the repo's remote (or the forge) failed or
	                      could not be made */
	ERR_RUNNER,        /* a sandbox's runner lied, stalled or died (runner.h):
	                      the agent's failure, never paddock's */
	/* A sandbox's pod (kubernetes) that could not run, or ended: */
	ERR_POD_UNSCHEDULABLE, /* no node takes it */
	ERR_POD_IMAGE,     /* its image cannot be pulled */
	ERR_POD_EVICTED,   /* its node evicted it */
	ERR_POD_MEMORY,    /* it was OOM-killed */
};

struct err {
	/* One anonymous member with kind first: the `{{0}}` that callers write
	 * zeroes all of it, without a missing-initializer warning. */
	struct {
		enum err_kind kind;
		char msg[ERR_MAX];
	};
};

/* Sets the message (printf format), kind ERR_INTERNAL.  Always returns -1
 * so callers can write `return err_set(e, ...)`.  e may be NULL. */
int err_set(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int err_setv(struct err *e, const char *fmt, va_list ap);
/* Like err_set, with the kind. */
int err_kind_set(struct err *e, enum err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Gives the message already in e the kind (an error passed on from a lower
 * layer that the caller knows more about).  Returns -1; e may be NULL. */
int err_kind_mark(struct err *e, enum err_kind kind);
/* Like err_set, appending ": strerror(errno)". */
int err_errno(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes the current message with "prefix: "; the kind stays. */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_clear(struct err *e);

#endif
