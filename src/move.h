/* move: the one writer of a task's status.
 *
 * Every change of a task's status goes through this module.  The store
 * makes the move in one transaction: it checks the move against the one
 * table of allowed moves (task_transition_allowed, task.c) and records the
 * step that the API's events and `paddock show` read.  Then move tells
 * what follows every move: a progress line on serve's output (when the
 * mover has one; its logger's event is the new status) and the webhook
 * for the new status (webhook.h), once.
 * The store's compound moves (a start, a resume, a cancel, an interrupted
 * task, a failed later round) have a function here each, so that nobody
 * else calls a store function that changes a status. */
#ifndef PADDOCK_MOVE_H
#define PADDOCK_MOVE_H

#include "config.h"
#include "err.h"
#include "logger.h"
#include "store.h"
#include "task.h"

/* Who moves: borrowed, for as long as the mover is used. */
struct mover {
	const struct config *cfg;  /* NULL: no webhook (the configuration could
	                              not be read); move_interrupted needs it */
	struct store *st;
	struct logger *log;    /* serve's output (logger.h), or NULL: no
	                          progress lines, errors on stderr */
};

/* Moves task id to `to`; why (or NULL) becomes its error text.  -1 with
 * e set when the move is not allowed from where the task is. */
int move_task(const struct mover *m, const char *id, enum task_status to, const char *why,
              struct err *e);

/* queued -> preparing, one more attempt (store_task_start); detail is the
 * progress line's (the repo). */
int move_start(const struct mover *m, const char *id, const char *detail, struct err *e);

/* review -> running for the requested round (store_task_resume). */
int move_resume(const struct mover *m, const char *id, int *round_out, struct err *e);

/* testing -> running for fix round n (store_task_fix_round). */
int move_fix_round(const struct mover *m, const char *id, int n, struct err *e);

/* A cancel by actor (store_task_cancel): 1 when the task was cancelled at
 * once, 2 when its supervisor is asked to stop (the scheduler ends it). */
int move_cancel(const struct mover *m, const char *id, const char *actor, struct err *e);

/* The process of an active task stopped before it ended the task
 * (store_task_interrupted); *to is where the task went. */
int move_interrupted(const struct mover *m, const char *id, int planned, const char *why,
                     enum task_status *to, struct err *e);

/* A later round failed: back at review with the round before
 * (store_task_rollback_round); detail is the progress line's. */
int move_rollback_round(const struct mover *m, const char *id, const char *why,
                        const char *detail, struct err *e);

/* A request for changes from the task's pull request
 * (store_task_reopen_changes): a done task goes back to review with the
 * changes pending (a progress line; no webhook, as no gate opens). */
int move_reopen(const struct mover *m, const char *id, const char *notes, const char *actor,
                struct err *e);
/* A progress line that is not a move ("paused"). */
void move_progress(const struct mover *m, const char *id, const char *what,
                   const char *detail);

#endif
