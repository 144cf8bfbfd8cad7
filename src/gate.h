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
