#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "i18n.h"

struct store {
	sqlite3 *db;
	char *path;
};

/* Migrations: entry i brings the schema from version i to i+1.  Never edit
 * a released entry; append a new one. */
static const char *const migrations[] = {
	"CREATE TABLE tasks ("
	"  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  id TEXT NOT NULL UNIQUE,"
	"  text TEXT NOT NULL,"
	"  repo TEXT NOT NULL,"
	"  agent TEXT NOT NULL,"
	"  base TEXT, branch TEXT NOT NULL, head TEXT,"
	"  status TEXT NOT NULL,"
	"  error TEXT,"
	"  created REAL NOT NULL,"
	"  updated REAL NOT NULL,"
	"  cancel_requested INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX tasks_status ON tasks(status, seq);"
	"CREATE TABLE steps ("
	"  task_seq INTEGER NOT NULL REFERENCES tasks(seq),"
	"  n INTEGER NOT NULL,"
	"  at REAL NOT NULL,"
	"  status TEXT NOT NULL,"
	"  PRIMARY KEY (task_seq, n));",
	/* 2: the review gate. */
	"ALTER TABLE tasks ADD COLUMN round INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE tasks ADD COLUMN summary TEXT;"
	"ALTER TABLE tasks ADD COLUMN pr_url TEXT;"
	"ALTER TABLE tasks ADD COLUMN pushed TEXT;"
	"ALTER TABLE tasks ADD COLUMN reviewed_head TEXT;"
	"ALTER TABLE tasks ADD COLUMN sandbox_kept INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN pending TEXT;"
	"CREATE TABLE rounds ("
	"  task_seq INTEGER NOT NULL REFERENCES tasks(seq),"
	"  n INTEGER NOT NULL,"
	"  from_commit TEXT, head TEXT, gate TEXT,"
	"  started REAL NOT NULL, ended REAL NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (task_seq, n));"
	"CREATE TABLE decisions ("
	"  task_seq INTEGER NOT NULL REFERENCES tasks(seq),"
	"  n INTEGER NOT NULL,"
	"  round INTEGER NOT NULL,"
	"  action TEXT NOT NULL,"
	"  notes TEXT,"
	"  actor TEXT NOT NULL,"
	"  at REAL NOT NULL,"
	"  PRIMARY KEY (task_seq, n));",
};
#define NMIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int db_err(struct store *s, struct err *e, const char *what)
{
	return err_set(e, _("store %s: %s: %s"), s->path, what, sqlite3_errmsg(s->db));
}

static int exec(struct store *s, const char *sql, struct err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(e, _("store %s: %s"), s->path, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int user_version(struct store *s)
{
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int migrate(struct store *s, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	int v = user_version(s);
	if (v < 0) {
		db_err(s, e, "schema version");
		goto fail;
	}
	if (v > NMIGRATIONS) {
		err_set(e, _("store %s has schema version %d, newer than this paddock "
		             "understands (%d); use a newer paddock"), s->path, v, NMIGRATIONS);
		goto fail;
	}
	for (; v < NMIGRATIONS; v++) {
		if (exec(s, migrations[v], e) < 0)
			goto fail;
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
		if (exec(s, sql, e) < 0)
			goto fail;
	}
	return exec(s, "COMMIT", e);
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int store_open(struct store **out, const char *path, struct err *e)
{
	struct store *s = xcalloc(1, sizeof *s);
	s->path = xstrdup(path);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		err_set(e, _("cannot open the store %s: %s"), path,
		        s->db ? sqlite3_errmsg(s->db) : "out of memory");
		store_close(s);
		return -1;
	}
	/* Other processes (CLI verbs, dashboards) write too: wait for them. */
	sqlite3_busy_timeout(s->db, 10000);
	if (exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	            "PRAGMA foreign_keys = ON;", e) < 0 || migrate(s, e) < 0) {
		store_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int store_schema_version(struct store *s)
{
	return user_version(s);
}

void task_row_free(struct task_row *t)
{
	if (!t)
		return;
	free(t->text);
	free(t->repo);
	free(t->agent);
	free(t->base);
	free(t->branch);
	free(t->head);
	free(t->error);
	free(t->steps);
	free(t->summary);
	free(t->pr_url);
	free(t->pushed);
	free(t->reviewed_head);
	free(t->pending);
	memset(t, 0, sizeof *t);
}

void task_rows_free(struct task_row *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		task_row_free(&t[i]);
	free(t);
}

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	return v ? xstrdup((const char *)v) : NULL;
}

#define TASK_COLS "seq, id, text, repo, agent, base, branch, head, status, error, " \
                  "created, updated, cancel_requested, round, summary, pr_url, pushed, " \
                  "reviewed_head, sandbox_kept, pending"

static int load_steps(struct store *s, sqlite3_int64 seq, struct task_row *t, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT at, status FROM steps WHERE task_seq = ? "
	                       "ORDER BY n", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "steps");
	sqlite3_bind_int64(st, 1, seq);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (t->nsteps == cap) {
			cap = cap ? cap * 2 : 8;
			t->steps = xrealloc(t->steps, cap * sizeof *t->steps);
		}
		int status = task_status_parse((const char *)sqlite3_column_text(st, 1));
		t->steps[t->nsteps].at = sqlite3_column_double(st, 0);
		t->steps[t->nsteps].status = status < 0 ? TASK_LOST : (enum task_status)status;
		t->nsteps++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int row_fill(struct store *s, sqlite3_stmt *st, struct task_row *t, struct err *e)
{
	memset(t, 0, sizeof *t);
	sqlite3_int64 seq = sqlite3_column_int64(st, 0);
	const unsigned char *id = sqlite3_column_text(st, 1);
	snprintf(t->id, sizeof t->id, "%s", id ? (const char *)id : "");
	t->text = col_str(st, 2);
	t->repo = col_str(st, 3);
	t->agent = col_str(st, 4);
	t->base = col_str(st, 5);
	t->branch = col_str(st, 6);
	t->head = col_str(st, 7);
	int status = task_status_parse((const char *)sqlite3_column_text(st, 8));
	t->status = status < 0 ? TASK_LOST : (enum task_status)status;
	t->error = col_str(st, 9);
	t->created = sqlite3_column_double(st, 10);
	t->updated = sqlite3_column_double(st, 11);
	t->cancel_requested = sqlite3_column_int(st, 12);
	t->round = sqlite3_column_int(st, 13);
	t->summary = col_str(st, 14);
	t->pr_url = col_str(st, 15);
	t->pushed = col_str(st, 16);
	t->reviewed_head = col_str(st, 17);
	t->sandbox_kept = sqlite3_column_int(st, 18);
	t->pending = col_str(st, 19);
	return load_steps(s, seq, t, e);
}

static int add_step(struct store *s, const char *id, double at, enum task_status to,
                    struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO steps (task_seq, n, at, status) "
	        "SELECT seq, (SELECT COUNT(*) FROM steps WHERE task_seq = tasks.seq), ?, ? "
	        "FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "steps");
	sqlite3_bind_double(st, 1, at);
	sqlite3_bind_text(st, 2, task_status_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "steps");
	sqlite3_finalize(st);
	return rc;
}

int store_task_add(struct store *s, const char *repo, const char *agent, const char *text,
                   const char *branch_prefix, char id_out[TASK_ID_LEN + 1], struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO tasks (id, text, repo, agent, branch, status, created, updated) "
	        "VALUES (?, ?, ?, ?, ?, 'queued', ?, ?)", -1, &st, NULL) != SQLITE_OK) {
		db_err(s, e, "add");
		goto fail;
	}
	double t = now();
	/* A collision of two random ids is astronomically rare; the UNIQUE
	 * constraint turns it into a retry, never a reused id. */
	for (int tries = 0;; tries++) {
		char id[TASK_ID_LEN + 1];
		task_id_new(id);
		char branch[256];
		snprintf(branch, sizeof branch, "%s%s", branch_prefix ? branch_prefix : "paddock/",
		         id);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, repo, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, agent, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, branch, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 6, t);
		sqlite3_bind_double(st, 7, t);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			memcpy(id_out, id, sizeof id);
			break;
		}
		if (rc != SQLITE_CONSTRAINT || tries > 8) {
			db_err(s, e, "add");
			sqlite3_finalize(st);
			goto fail;
		}
	}
	sqlite3_finalize(st);
	if (add_step(s, id_out, 0, TASK_QUEUED, e) < 0)
		goto fail;
	return exec(s, "COMMIT", e);
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int store_task_get(struct store *s, const char *id, struct task_row *t, struct err *e)
{
	if (!task_id_valid(id, 1))
		return err_set(e, _("'%s' is not a task id (ids look like %s); "
		                    "'paddock list' shows them"), id, "k3x9m2qa7d");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " TASK_COLS " FROM tasks WHERE id >= ? AND "
	                       "id < ? ORDER BY id LIMIT 2", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "get");
	/* A prefix matches ids in [prefix, prefix + '~'): '~' sorts after the
	 * whole id alphabet. */
	char hi[TASK_ID_LEN + 2];
	snprintf(hi, sizeof hi, "%s~", id);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hi, -1, SQLITE_STATIC);
	int rc = -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err_set(e, _("no task %s; 'paddock list' shows the tasks"), id);
	} else {
		char first[TASK_ID_LEN + 1];
		snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(st, 1));
		rc = row_fill(s, st, t, e);
		if (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
			err_set(e, _("task id prefix %s is ambiguous (%s, %s, ...); type more of it"),
			        id, first, (const char *)sqlite3_column_text(st, 1));
			task_row_free(t);
			rc = -1;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int store_task_list(struct store *s, int status, struct task_row **out, size_t *n,
                    struct err *e)
{
	sqlite3_stmt *st;
	const char *sql = status < 0
		? "SELECT " TASK_COLS " FROM tasks ORDER BY seq"
		: "SELECT " TASK_COLS " FROM tasks WHERE status = ? ORDER BY seq";
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "list");
	if (status >= 0)
		sqlite3_bind_text(st, 1, task_status_name((enum task_status)status), -1,
		                  SQLITE_STATIC);
	struct task_row *rows = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			rows = xrealloc(rows, cap * sizeof *rows);
		}
		if (row_fill(s, st, &rows[cnt], e) < 0) {
			rc = -1;
			break;
		}
		cnt++;
	}
	sqlite3_finalize(st);
	if (rc < 0) {
		task_rows_free(rows, cnt);
		return -1;
	}
	*out = rows;
	*n = cnt;
	return 0;
}

int store_task_next_queued(struct store *s, struct task_row *t, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " TASK_COLS " FROM tasks WHERE status = "
	                       "'queued' ORDER BY seq LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "next");
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		rc = row_fill(s, st, t, e) < 0 ? -1 : 1;
	sqlite3_finalize(st);
	return rc;
}

/* Reads status and created of one task inside the current transaction. */
static int read_status(struct store *s, const char *id, enum task_status *status,
                       double *created, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT status, created FROM tasks WHERE id = ?", -1,
	                       &st, NULL) != SQLITE_OK)
		return db_err(s, e, "status");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		int v = task_status_parse((const char *)sqlite3_column_text(st, 0));
		*status = v < 0 ? TASK_LOST : (enum task_status)v;
		*created = sqlite3_column_double(st, 1);
		rc = 0;
	} else {
		err_set(e, _("no task %s"), id);
	}
	sqlite3_finalize(st);
	return rc;
}

static int transition_locked(struct store *s, const char *id, enum task_status to,
                             const char *error, struct err *e)
{
	enum task_status from;
	double created;
	if (read_status(s, id, &from, &created, e) < 0)
		return -1;
	if (!task_transition_allowed(from, to))
		return err_set(e, _("task %s is %s; it cannot become %s"), id,
		               task_status_name(from), task_status_name(to));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET status = ?, updated = ?, "
	                       "error = COALESCE(?, error) WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "transition");
	sqlite3_bind_text(st, 1, task_status_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, now());
	if (error)
		sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "transition");
	sqlite3_finalize(st);
	/* Milliseconds are enough for a person. */
	double at = (double)(long long)((now() - created) * 1000 + 0.5) / 1000;
	if (rc == 0)
		rc = add_step(s, id, at < 0 ? 0 : at, to, e);
	return rc;
}

int store_task_transition(struct store *s, const char *id, enum task_status to,
                          const char *error, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	if (transition_locked(s, id, to, error, e) < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

static int set_col(struct store *s, const char *sql, const char *id, const char *v,
                   struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "update");
	sqlite3_bind_text(st, 1, v, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "update");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_set(e, _("no task %s"), id);
	return rc;
}

int store_task_set_base(struct store *s, const char *id, const char *base, struct err *e)
{
	return set_col(s, "UPDATE tasks SET base = ? WHERE id = ?", id, base, e);
}

int store_task_set_head(struct store *s, const char *id, const char *head, struct err *e)
{
	return set_col(s, "UPDATE tasks SET head = ? WHERE id = ?", id, head, e);
}

static int decision_insert(struct store *s, const char *id, const char *action,
                           const char *notes, const char *actor, struct err *e);

int store_task_cancel(struct store *s, const char *id, const char *actor, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	enum task_status from;
	double created;
	int rc = -1;
	if (read_status(s, id, &from, &created, e) < 0)
		goto out;
	if (from == TASK_QUEUED || from == TASK_REVIEW) {
		/* No process works on it: cancel at once. */
		rc = transition_locked(s, id, TASK_CANCELLED, from == TASK_QUEUED ?
		                       _("cancelled before it started") :
		                       _("cancelled at review"), e) < 0 ? -1 : 1;
	} else if (from == TASK_PUSHING) {
		err_set(e, _("task %s is being pushed; it cannot be cancelled now (it goes back "
		             "to review or to done in a moment)"), id);
	} else if (task_status_is_active(from)) {
		/* The scheduler owner stops the supervisor and records the end. */
		rc = set_col(s, "UPDATE tasks SET cancel_requested = (? IS NOT NULL) "
		             "WHERE id = ?", id, "1", e) < 0 ? -1 : 2;
	} else {
		err_set(e, _("task %s is already %s; there is nothing to cancel"), id,
		        task_status_name(from));
	}
out:
	if (rc > 0 && decision_insert(s, id, "cancel", NULL, actor, e) < 0)
		rc = -1;
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e) < 0 ? -1 : rc;
}

int store_mark_active_lost(struct store *s, const char *why, struct err *e)
{
	struct task_row *rows;
	size_t n;
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	if (store_task_list(s, -1, &rows, &n, e) < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	int count = 0;
	for (size_t i = 0; i < n; i++) {
		/* Pushes run in the process that decided (gate.h); the
		 * scheduler recovers those whose pusher died. */
		if (!task_status_is_active(rows[i].status) || rows[i].status == TASK_PUSHING)
			continue;
		char *msg = xasprintf("%s: %s", task_status_name(rows[i].status), why);
		int rc = transition_locked(s, rows[i].id, TASK_LOST, msg, e);
		free(msg);
		if (rc < 0) {
			task_rows_free(rows, n);
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		count++;
	}
	task_rows_free(rows, n);
	return exec(s, "COMMIT", e) < 0 ? -1 : count;
}

static int allowed_column(const char *c)
{
	static const char *const cols[] = { "summary", "pr_url", "pushed", "reviewed_head",
	                                    "pending", "error", NULL };
	for (size_t i = 0; cols[i]; i++)
		if (!strcmp(cols[i], c))
			return 1;
	return 0;
}

int store_task_set(struct store *s, const char *id, const char *column, const char *value,
                   struct err *e)
{
	if (!allowed_column(column))
		return err_set(e, "store: no column %s", column);
	char *sql = xasprintf("UPDATE tasks SET %s = ? WHERE id = ?", column);
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		free(sql);
		return db_err(s, e, "update");
	}
	free(sql);
	if (value)
		sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_err(s, e, "update");
	else if (sqlite3_changes(s->db) == 0)
		rc = err_set(e, _("no task %s"), id);
	sqlite3_finalize(st);
	return rc;
}

int store_task_set_sandbox_kept(struct store *s, const char *id, int kept, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET sandbox_kept = ? WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "update");
	sqlite3_bind_int(st, 1, kept);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "update");
	sqlite3_finalize(st);
	return rc;
}

int store_forget_sandboxes(struct store *s, struct err *e)
{
	return exec(s, "UPDATE tasks SET sandbox_kept = 0 WHERE sandbox_kept != 0", e);
}

int store_round_begin(struct store *s, const char *id, int n, const char *from, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT OR IGNORE INTO rounds (task_seq, n, from_commit, started) "
	        "SELECT seq, ?, ?, ? FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "rounds");
	sqlite3_bind_int(st, 1, n);
	if (from)
		sqlite3_bind_text(st, 2, from, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_double(st, 3, now());
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

int store_round_end(struct store *s, const char *id, int n, const char *head,
                    const char *gate, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "UPDATE rounds SET head = COALESCE(?, head), gate = COALESCE(?, gate), ended = ? "
	        "WHERE n = ? AND task_seq = (SELECT seq FROM tasks WHERE id = ?)", -1, &st,
	        NULL) != SQLITE_OK)
		return db_err(s, e, "rounds");
	if (head)
		sqlite3_bind_text(st, 1, head, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 1);
	if (gate)
		sqlite3_bind_text(st, 2, gate, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_double(st, 3, now());
	sqlite3_bind_int(st, 4, n);
	sqlite3_bind_text(st, 5, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

void task_rounds_free(struct task_round *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].from);
		free(r[i].head);
		free(r[i].gate);
	}
	free(r);
}

void task_decisions_free(struct task_decision *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].action);
		free(d[i].notes);
		free(d[i].actor);
	}
	free(d);
}

int store_rounds(struct store *s, const char *id, struct task_round **out, size_t *n,
                 struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT n, from_commit, head, gate, started, ended FROM rounds WHERE task_seq = "
	        "(SELECT seq FROM tasks WHERE id = ?) ORDER BY n", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "rounds");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	struct task_round *v = NULL;
	size_t cnt = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = xrealloc(v, (cnt + 1) * sizeof *v);
		v[cnt].n = sqlite3_column_int(st, 0);
		v[cnt].from = col_str(st, 1);
		v[cnt].head = col_str(st, 2);
		v[cnt].gate = col_str(st, 3);
		v[cnt].started = sqlite3_column_double(st, 4);
		v[cnt].ended = sqlite3_column_double(st, 5);
		cnt++;
	}
	sqlite3_finalize(st);
	*out = v;
	*n = cnt;
	return 0;
}

static int decision_insert(struct store *s, const char *id, const char *action,
                           const char *notes, const char *actor, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO decisions (task_seq, n, round, action, notes, actor, at) "
	        "SELECT seq, (SELECT COUNT(*) FROM decisions WHERE task_seq = tasks.seq), round, "
	        "?, ?, ?, ? FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "decisions");
	sqlite3_bind_text(st, 1, action, -1, SQLITE_STATIC);
	if (notes)
		sqlite3_bind_text(st, 2, notes, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_text(st, 3, actor, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 4, now());
	sqlite3_bind_text(st, 5, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "decisions");
	sqlite3_finalize(st);
	return rc;
}

int store_decision_add(struct store *s, const char *id, const char *action,
                       const char *notes, const char *actor, struct err *e)
{
	return decision_insert(s, id, action, notes, actor, e);
}

int store_decisions(struct store *s, const char *id, struct task_decision **out, size_t *n,
                    struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT round, action, notes, actor, at FROM decisions WHERE task_seq = "
	        "(SELECT seq FROM tasks WHERE id = ?) ORDER BY n", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "decisions");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	struct task_decision *v = NULL;
	size_t cnt = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = xrealloc(v, (cnt + 1) * sizeof *v);
		v[cnt].round = sqlite3_column_int(st, 0);
		v[cnt].action = col_str(st, 1);
		v[cnt].notes = col_str(st, 2);
		v[cnt].actor = col_str(st, 3);
		v[cnt].at = sqlite3_column_double(st, 4);
		cnt++;
	}
	sqlite3_finalize(st);
	*out = v;
	*n = cnt;
	return 0;
}

int store_task_request_changes(struct store *s, const char *id, const char *notes,
                               const char *actor, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status != TASK_REVIEW)
		err_set(e, _("task %s is %s; changes can be requested only at review"), t.id,
		        task_status_name(t.status));
	else if (t.pending)
		err_set(e, _("task %s already has changes requested; they start when the "
		             "scheduler picks them up"), t.id);
	else if (decision_insert(s, t.id, "request-changes", notes, actor, e) == 0 &&
	         store_task_set(s, t.id, "pending", "request-changes", e) == 0 &&
	         store_task_set(s, t.id, "reviewed_head", t.head, e) == 0)
		rc = 0;
	task_row_free(&t);
out:
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_task_resume(struct store *s, const char *id, int *round_out, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (!t.pending) {
		err_set(e, _("task %s has no changes requested"), t.id);
	} else if (transition_locked(s, t.id, TASK_RUNNING, NULL, e) == 0) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET round = round + 1, pending = NULL, "
		                       "error = NULL WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
			db_err(s, e, "resume");
		} else {
			sqlite3_bind_text(st, 1, t.id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) != SQLITE_DONE)
				db_err(s, e, "resume");
			else if (store_round_begin(s, t.id, t.round + 1, t.head, e) == 0) {
				*round_out = t.round + 1;
				rc = 0;
			}
			sqlite3_finalize(st);
		}
	}
	task_row_free(&t);
out:
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}
