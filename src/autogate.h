/* autogate: the approval modes that act at the gate without a person
 * (config.h's enum approval_mode; a task's mode is task_row.approval).
 *
 * When a task of mode auto or auto-push reaches review, the scheduler
 * asks autogate_due and, off its loop, autogate_run: the round must have
 * passing tests verified on a clean checkout, its output contract held
 * (it reached review) and no policy finding above warn (a block finding
 * not overridden).  Then auto approves (gate_approve: push, pull request,
 * done) and auto-push pushes the branch (gate_push: the task waits at
 * review for a person's approve, which opens the pull request).  Both
 * are recorded as decisions of AUTOGATE_ACTOR, so the webhook and `paddock
 * show` say who decided.  When a condition fails, or the push does, the
 * task waits at review as under review, with a decision "hold" of
 * AUTOGATE_ACTOR whose notes say why; a round is looked at once.  A
 * member of a best-of-N group always waits: a person picks one member
 * (group.h), and acting on each would push (and open a pull request for)
 * every member that passes.  So does a reviewer's round (paddock shell
 * --keep): a person made it at the gate. */
#ifndef PADDOCK_AUTOGATE_H
#define PADDOCK_AUTOGATE_H

#include "buf.h"
#include "gate.h"
#include "store.h"

#define AUTOGATE_ACTOR "paddock (auto)"

/* 1 when t is at review, of mode auto or auto-push, and its round has no
 * decision of AUTOGATE_ACTOR yet; 0 otherwise; -1 when the store fails. */
int autogate_due(struct store *st, const struct task_row *t, struct err *e);
/* What the scheduler's looks (autogate_due_ids) keep between them;
 * zeroed before the first. */
struct autogate_look {
	uint64_t version;          /* store_data_version before the last look */
	int none;                  /* that look found no task due */
};
/* The tasks autogate_due finds due, for the scheduler's look on each
 * tick and in scheduler_idle: their ids into *ids (malloc'd, free it;
 * NULL when none; ids may be NULL to only count them).  The store reads
 * only the tasks of mode auto or auto-push, or with a pull request, whose
 * round AUTOGATE_ACTOR has not decided, from their index: a look costs
 * the same on a history of any size (issue 14).  When look's last look
 * found none and the store has not changed since, it asks the store
 * nothing: the answer is the same.  Returns how many, or -1 (e set). */
long autogate_due_ids(struct store *st, struct autogate_look *look,
                      char (**ids)[TASK_ID_LEN + 1], struct err *e);
/* Why the round may not go on without a person ("; "-separated sentences,
 * translated, into why): 1 when it may (why empty), 0 when not. */
int autogate_conditions(struct store *st, const struct task_row *t, struct buf *why,
                        struct err *e);
/* Looks at task id (g->actor is ignored: AUTOGATE_ACTOR decides) and acts
 * as the header says; what happened is appended to out.  0 when done
 * (acted or held), -1 when the store fails. */
int autogate_run(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e);

#endif
