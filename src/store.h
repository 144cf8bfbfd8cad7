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
};

void task_row_free(struct task_row *t);
void task_rows_free(struct task_row *t, size_t n);

int store_open(struct store **out, const char *path, struct err *e);
void store_close(struct store *s);
/* Current schema version (after migrations). */
int store_schema_version(struct store *s);

/* Inserts a queued task with a fresh id (written to id_out). */
int store_task_add(struct store *s, const char *repo, const char *agent,
                   const char *text, char id_out[TASK_ID_LEN + 1], struct err *e);
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
/* Cancel: a queued task becomes cancelled at once (returns 1); an active
 * task gets cancel_requested set for the scheduler owner (returns 2).
 * A terminal task is refused with a message naming its status. */
int store_task_cancel(struct store *s, const char *id, struct err *e);
/* Marks every active task as lost (start-up of the scheduler owner).
 * Returns the number of tasks marked, or -1. */
int store_mark_active_lost(struct store *s, const char *why, struct err *e);

#endif
