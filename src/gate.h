/* gate: the review gate's actions, the engine calls behind `paddock
 * approve|push|reject|request-changes|override` (and the dashboard's keys).
 *
 * Each action checks the task's state and refuses with a message that
 * names the state and what can be done; each decision is recorded with the
 * round, notes, actor and time.  approve and push run here, in the calling
 * process (a dashboard runs them off its loop); a request for changes is
 * recorded for the scheduler, which continues the agent in the task's kept
 * sandbox (or a rebuilt one). */
#ifndef PADDOCK_GATE_H
#define PADDOCK_GATE_H

#include <jansson.h>
#include "buf.h"
#include "config.h"
#include "err.h"
#include "store.h"

struct gate_ctx {
	const struct config *cfg;
	const char *data_dir;
	struct store *st;
	const char *actor;         /* who decides (gate_actor() by default) */
};

/* Takes the task's push lock (held while a process pushes it): an fd to
 * close when done, or -1 when another push holds it. */
int gate_push_lock(const char *data_dir, const char *id, struct err *e);
/* 1 when no process pushes the task now. */
int gate_push_lock_free(const char *data_dir, const char *id);

/* A task left pushing by a process that died (its push lock is free):
 * asks the remote where the branch is.  At the task's head: the push is
 * recorded and what it was for finishes (an approve: the pull request,
 * the decision, done; a push: the decision, back at review).  Anywhere
 * else, or when the remote cannot be asked: back at review with "the
 * push did not complete" as the task's error.  What happened is appended
 * to out.  0 with nothing done when the task is not pushing or its push
 * is alive.  Blocks on the network. */
int gate_recover_push(const struct gate_ctx *g, const char *id, struct buf *out,
                      struct err *e);
/* The user name of this process (for decisions). */
const char *gate_actor(void);

/* Pushes the branch, opens the pull request when the repo has one
 * configured, and ends the task as done.  What happened is appended to
 * out (one line per fact: pushed, pull request URL or its failure). */
int gate_approve(const struct gate_ctx *g, const char *id, const char *notes,
                 struct buf *out, struct err *e);
/* Pushes the branch now; the task stays at review. */
int gate_push(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e);
/* Ends the task without pushing; the branch stays in the mirror. */
int gate_reject(const struct gate_ctx *g, const char *id, const char *notes, struct err *e);
/* Cancels the task (store_task_cancel: 1 cancelled, 2 requested), after
 * recovering a push left by a dead process (gate_recover_push). */
int gate_cancel(const struct gate_ctx *g, const char *id, struct err *e);
/* Queues a follow-up of a finished task (store_task_follow_up) with notes
 * (non-empty) as its prompt; the new id goes to id_out. */
int gate_follow_up(const struct gate_ctx *g, const char *id, const char *notes,
                   char id_out[TASK_ID_LEN + 1], struct err *e);
/* The notes of the task's last request for changes (free them), for
 * sending them again after the round they asked for did not reach
 * review; NULL with a message when there are none. */
char *gate_last_notes(struct store *st, const char *id, struct err *e);
/* Sends the task back to its agent with notes (non-empty). */
int gate_request_changes(const struct gate_ctx *g, const char *id, const char *notes,
                         struct err *e);
/* Overrides a block finding of the current round by name. */
int gate_override(const struct gate_ctx *g, const char *id, const char *finding,
                  const char *notes, struct err *e);

/* The gate summary of the task's latest round, with "overridden" set on
 * findings overridden in that round; NULL (and no error) when there is
 * none.  New reference. */
json_t *gate_summary(struct store *st, const struct task_row *t, struct err *e);
/* When the tests' verified result (a clean checkout of the head) and the
 * agent's own run disagree, a sentence that says which way, in lines of
 * at most 60 columns (translated, static); else NULL.  summary may be
 * NULL. */
const char *gate_mismatch(json_t *summary);
/* Names of block findings not overridden, ", "-separated (empty: none). */
void gate_blocking(json_t *summary, struct buf *out);

#endif
