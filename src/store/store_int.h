/* store_int: what the store's own files share; nothing outside the store
 * includes it.  store.c opens the database and keeps the schema, its
 * migrations and these helpers; each other file holds one concern:
 * store_tasks.c (tasks, their steps and queries), store_rounds.c (rounds,
 * decisions, requests for changes, recovery), store_reports.c (the
 * gateway's usage and egress reports, endpoint pauses), store_webhook.c
 * (the webhook queue, idempotent requests), store_drafts.c (review
 * drafts), store_groups.c (best-of-N groups), store_actions.c (decisions
 * recorded for the scheduler), store_github.c (the GitHub tables),
 * store_audit.c (the audit trail), store_reminder.c (reminders of gates
 * nobody looks at).  The public API is store.h, store_github.h,
 * store_audit.h and store_reminder.h. */
#ifndef PADDOCK_STORE_INT_H
#define PADDOCK_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>
#include "err.h"
#include "store.h"

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *steps;       /* a task's steps: prepared once, as every
	                              listed row reads them */
	sqlite3_stmt *dv;          /* PRAGMA data_version */
	uint64_t query_steps;      /* store_task_query_steps */
};

/* ---- store.c: what every file of the store uses ---- */

/* Column i as a malloc'd string, NULL for NULL. */
char *store_col_str(sqlite3_stmt *st, int i);
/* Column i as a count: negative values read as 0. */
uint64_t store_col_u64(sqlite3_stmt *st, int i);
/* Binds v as text (copied), or NULL when v is NULL. */
void store_bind_text_or_null(sqlite3_stmt *st, int i, const char *v);
/* Runs sql; -1 with e set (the data directory's trouble said plainly). */
int store_exec(struct store *s, const char *sql, struct err *e);
/* Sets e from the connection's last error about `what`; returns -1. */
int store_db_err(struct store *s, struct err *e, const char *what);
/* The folder of the database file (malloc'd). */
char *store_dir(const struct store *s);

/* A kind of row a query gives, for store_rows. */
struct store_row_type {
	size_t size;               /* of one element */
	/* Reads the row st is at into elem (zeroed); arg is store_rows's. */
	void (*fill)(sqlite3_stmt *st, void *elem, void *arg);
	/* Frees what fill put in elem (not elem itself); NULL: nothing. */
	void (*clear)(void *elem);
	const char *what;          /* what the error says the rows were */
};
/* Steps st (prepared, its values bound) to its end, each row filled by
 * type->fill into a new element of a malloc'd array: *out, *n elements.
 * The last step is checked: SQLITE_DONE returns 0; anything else (busy,
 * interrupted, corrupt) returns -1 with e set, *out NULL and *n 0 (the
 * rows read so far cleared and freed), never a short list.  The caller
 * finalizes or resets st. */
int store_rows(struct store *s, sqlite3_stmt *st, const struct store_row_type *type,
               void *arg, void **out, size_t *n, struct err *e);
/* store_rows of a query about task id (its one parameter), prepared and
 * finalized here. */
int store_rows_of_task(struct store *s, const char *sql, const char *id,
                       const struct store_row_type *type, void **out, size_t *n,
                       struct err *e);
/* Begins a write transaction: BEGIN IMMEDIATE, the write lock first, so
 * that what it reads cannot go stale before it writes.  -1 with e set. */
int store_tx_begin(struct store *s, struct err *e);
/* Ends the transaction store_tx_begin began, with what its work returned:
 * rc < 0 rolls it back and returns rc (e as the work set it); else it
 * commits and returns rc, or rolls back and returns -1 (e set) when the
 * commit fails. */
int store_tx_end(struct store *s, int rc, struct err *e);

/* ---- store_reminder.c ---- */

/* A column of a task's row (TASK_COLS, FROM tasks): the reminders sent
 * for the gate it waits at now, the one its last step opened; NULL when
 * none, or when it is not at review (task_row.reminders). */
#define STORE_REMINDERS_COL \
	"(SELECT r.sent FROM reminders r WHERE r.task_seq = tasks.seq AND " \
	"tasks.status = 'review' AND r.since = (SELECT s.at FROM steps s WHERE " \
	"s.task_seq = tasks.seq ORDER BY s.n DESC LIMIT 1))"

/* ---- store_tasks.c: what the other files' changes to a task use ---- */

/* Inside a transaction: inserts the task and its first step. */
int store_task_insert(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      struct err *e);
/* How many tasks are queued, from the counts the triggers keep. */
int store_queued_count(struct store *s, size_t *out, struct err *e);
/* Records the step to `to`, `at` seconds after the task was queued. */
int store_step_add(struct store *s, const char *id, double at, enum task_status to,
                   struct err *e);
/* Inside a transaction: moves task id to `to` (checked against task.c's
 * table), error kept unless NULL, and records the step. */
int store_transition_locked(struct store *s, const char *id, enum task_status to,
                            const char *error, struct err *e);
/* Runs one UPDATE with the task id bound last; binds: text values (NULL
 * binds NULL) then ints. */
int store_task_update(struct store *s, const char *sql, const char *id, struct err *e,
                      int ntext, const char *const *texts, int nint, const int *ints);

#endif
