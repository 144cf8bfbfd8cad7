/* store: the SQLite history (one database file in the data directory).
 *
 * WAL mode, a schema version with migrations, every state change in one
 * transaction.  Several processes may open the same store: the scheduler
 * owner, CLI verbs, dashboards.  A struct store is not shared between
 * processes (open it again after fork). */
#ifndef PADDOCK_STORE_H
#define PADDOCK_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "task.h"

struct store;

struct task_step {
	double at;                 /* seconds since the task was queued */
	enum task_status status;
};

/* One task row.  Strings are owned by the struct; free with
 * task_row_free. */
struct task_row {
	char id[TASK_ID_LEN + 1];
	char *text;
	char *repo;
	char *agent;
	char *base;                /* base commit (hex) once known, else NULL */
	char *branch;              /* "paddock/<id>" */
	char *head;                /* imported tip commit once known, else NULL */
	enum task_status status;
	char *error;               /* "<step>: <why>" on the first line, which is
	                              the whole story for a person; detail such as
	                              the tail of the test output may follow on
	                              further lines.  NULL when none. */
	double created;            /* unix time (seconds, fractional) */
	double updated;
	int cancel_requested;
	struct task_step *steps;
	size_t nsteps;
	/* The gate (schema 2). */
	int round;                 /* 1, then +1 for each request for changes */
	char *summary;             /* the agent's summary of its latest round */
	char *pr_url;              /* the pull request, once opened */
	char *pushed;              /* the commit last pushed to the remote */
	char *reviewed_head;       /* head when changes were last requested */
	int sandbox_kept;          /* the gate sandbox is alive */
	char *pending;             /* "request-changes" waiting for the
	                              scheduler, else NULL */
};

/* One round of a task: the agent's work from `from` to `head`. */
struct task_round {
	int n;
	char *from;                /* the base, or the previous round's head */
	char *head;                /* NULL when the round ended without work */
	char *gate;                /* the gate summary, JSON text (gate.h) */
	double started, ended;     /* unix time; ended 0 while it runs */
};

/* One reviewer decision. */
struct task_decision {
	int round;
	char *action;              /* approve, request-changes, push, reject,
	                              override, cancel */
	char *notes;               /* NULL when none */
	char *actor;               /* the user name */
	double at;                 /* unix time */
};

void task_rounds_free(struct task_round *r, size_t n);
void task_decisions_free(struct task_decision *d, size_t n);

void task_row_free(struct task_row *t);
void task_rows_free(struct task_row *t, size_t n);

int store_open(struct store **out, const char *path, struct err *e);
void store_close(struct store *s);
/* Current schema version (after migrations). */
int store_schema_version(struct store *s);

/* Inserts a queued task with a fresh id (written to id_out); its branch is
 * branch_prefix followed by the id ("paddock/" when NULL). */
int store_task_add(struct store *s, const char *repo, const char *agent,
                   const char *text, const char *branch_prefix,
                   char id_out[TASK_ID_LEN + 1], struct err *e);
/* Finds a task by id or unique id prefix.  Returns 0 and fills *t, or -1
 * with a message (no such task / ambiguous prefix). */
int store_task_get(struct store *s, const char *id, struct task_row *t, struct err *e);
/* All tasks, oldest first (status < 0: any status). */
int store_task_list(struct store *s, int status, struct task_row **out, size_t *n,
                    struct err *e);
/* The oldest queued task, if any: returns 1 and fills *t, 0 when none. */
int store_task_next_queued(struct store *s, struct task_row *t, struct err *e);

/* Moves a task to `to` in one transaction, appending a step stamped with
 * seconds since queued.  Fails (and changes nothing) when the task is not
 * in a state from which `to` is allowed.  error may be NULL. */
int store_task_transition(struct store *s, const char *id, enum task_status to,
                          const char *error, struct err *e);
/* Records base commit / imported head. */
int store_task_set_base(struct store *s, const char *id, const char *base, struct err *e);
int store_task_set_head(struct store *s, const char *id, const char *head, struct err *e);
/* Cancel, recorded as a decision of actor: a queued task (or one at
 * review) becomes cancelled at once (returns 1); an active
 * task gets cancel_requested set for the scheduler owner (returns 2).
 * A terminal task is refused with a message naming its status. */
int store_task_cancel(struct store *s, const char *id, const char *actor, struct err *e);
/* Sets a text column of the task: "summary", "pr_url", "pushed",
 * "reviewed_head", "pending", "error" (value NULL clears it). */
int store_task_set(struct store *s, const char *id, const char *column, const char *value,
                   struct err *e);
int store_task_set_sandbox_kept(struct store *s, const char *id, int kept, struct err *e);
/* No sandbox survives its scheduler: clears sandbox_kept everywhere. */
int store_forget_sandboxes(struct store *s, struct err *e);
/* Starts round n (from = where it starts), or updates its head and gate
 * when it exists (head and gate may be NULL to leave them). */
int store_round_begin(struct store *s, const char *id, int n, const char *from,
                      struct err *e);
int store_round_end(struct store *s, const char *id, int n, const char *head,
                    const char *gate, struct err *e);
int store_rounds(struct store *s, const char *id, struct task_round **out, size_t *n,
                 struct err *e);
/* Records a decision (for the task's current round). */
int store_decision_add(struct store *s, const char *id, const char *action,
                       const char *notes, const char *actor, struct err *e);
int store_decisions(struct store *s, const char *id, struct task_decision **out,
                    size_t *n, struct err *e);
/* Request for changes, in one transaction: the task must be at review and
 * have nothing pending; records the decision, sets pending and
 * reviewed_head.  Refused with the task's state otherwise. */
int store_task_request_changes(struct store *s, const char *id, const char *notes,
                               const char *actor, struct err *e);
/* The scheduler starts a requested round: review -> running, round + 1,
 * pending cleared, round n+1 begun from the current head. */
int store_task_resume(struct store *s, const char *id, int *round_out, struct err *e);
/* Marks every active task but those pushing as lost (start-up of the
 * scheduler owner).
 * Returns the number of tasks marked, or -1. */
int store_mark_active_lost(struct store *s, const char *why, struct err *e);

#endif
