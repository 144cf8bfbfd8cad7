/* decide: the decisions that push (approve, push, a group's pick) made by a
 * person, carried out by the process that runs the scheduler (serve, or a
 * dashboard that hosts it) with that process's credentials (issue 36).
 *
 * The deciding process records the decision (store_action_add, with its
 * actor) and watches it: the scheduler takes it (store_action_take), runs
 * gate_approve, gate_push or group_pick as the decision's actor, and ends
 * it with what happened (its lines, its error, the exit status the CLI
 * gives).  A decision stays recorded when its watcher goes away, and a
 * scheduler that died while carrying one out leaves it to the next owner
 * (store_action_requeue), which finishes a push left half way through
 * gate_recover_push first.  With no scheduler running, a process that holds
 * the credentials (decide_can_push) carries the decision out itself, as
 * before.  Every function here may block on the network or the store. */
#ifndef PADDOCK_DECIDE_H
#define PADDOCK_DECIDE_H

#include "buf.h"
#include "config.h"
#include "err.h"
#include "gate.h"
#include "store.h"

/* Whether this process holds what pushing to repo r and opening its pull
 * request take: a token (config_repo_token) for an http(s) push URL, an
 * SSH key or agent for ssh, nothing for a path or file://; the GitHub
 * token (config_repo_github_token) when r opens pull requests.  1 when it
 * does; 0 with what is missing appended to why (if not NULL). */
int decide_can_push(const struct repo_conf *r, struct buf *why);

/* Whether the decision action on task t pushes anything (approve and push
 * of a task with work that is not a dry run and may be pushed; a pick
 * always may). */
int decide_pushes(const struct task_row *t, const char *action);

/* Whether this process may carry action on task out itself when no
 * scheduler runs: it holds the credentials (decide_can_push), or nothing
 * is pushed, or the task cannot be read (the gate's call says why).  When
 * not, why (if not NULL) says what it lacks. */
int decide_local(const struct gate_ctx *g, const char *action, const char *task,
                 struct buf *why);

/* Checks that action ("approve", "push") may be made on task id now (at
 * review, nothing pending, no finding that blocks it, no decision of the
 * task waiting to be carried out): 0, or -1 with e saying why, as the gate
 * itself would refuse. */
int decide_check(const struct gate_ctx *g, const char *id, const char *action,
                 struct err *e);

/* Carries out action a, taken by this process (store_action_take), with
 * g's configuration and store and this process's credentials, as a's
 * actor, and ends it in the store (store_action_end).  The lines of what
 * happened are appended to out.  -1 only when the store fails. */
int decide_carry_out(const struct gate_ctx *g, const struct store_action *a, struct buf *out,
                     struct err *e);

/* Takes and carries out pending actions, one after another, until none is
 * left, as process by ("serve 12": its role and pid, as the scheduler's
 * lock says them).  What happened is appended to out. */
int decide_run_pending(const struct gate_ctx *g, const char *by, struct buf *out,
                       struct err *e);

/* "serve (pid 12)" or "a dashboard (pid 12)" for a scheduler's owner as
 * the lock (scheduler_owner) or an action's by says it; newly allocated. */
char *decide_owner_text(const char *by);

/* What a watcher of an action has said so far (decide_watch_init). */
struct decide_watch {
	long long id;
	int said_owner;            /* 0 nothing, 1 none runs, 2 one runs */
	int said_taken, said_pushing, said_pushed, said_pr;
	int looked;                /* the task was read once: pushed0 is set */
	char pushed0[48];          /* where the task was pushed to before */
};
/* Starts a watch of a decision on task, read before the decision is
 * recorded (so that a push made at once is told); set w->id after. */
void decide_watch_init(struct decide_watch *w, struct store *st, const char *task);
/* One look at action w->id and its task: appends the progress lines not
 * said yet to lines (waiting for the scheduler, owner being who runs it
 * now or NULL for none; taken by whom; pushing; pushed SHA to BRANCH; the
 * pull request opened or failed).  1 when the action has ended (a filled:
 * store_action_free it), 0 when not yet, -1 when the store fails. */
int decide_watch_step(struct decide_watch *w, struct store *st, const char *owner,
                      struct buf *lines, struct store_action *a, struct err *e);

/* Records a person's decision action ("approve", "push", or "pick" of
 * task in group target) by g->actor for the scheduler, after the checks
 * (decide_check; for a pick, no decision of the task waits), and starts
 * w's watch of it (decide_watch_init, w->id set): 0, or -1 with e. */
int decide_record(const struct gate_ctx *g, const char *action, const char *task,
                  const char *target, const char *notes, struct decide_watch *w,
                  struct err *e);

#endif
