#include "autoconfig.h"
#include "store.h"

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "paths.h"
#include "store_int.h"


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
	/* 3: the egress gateway: budget, usage, session, failure reason,
	 * egress records, endpoint pauses. */
	"ALTER TABLE tasks ADD COLUMN budget REAL;"
	"ALTER TABLE tasks ADD COLUMN tokens_in INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN tokens_out INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN tokens_cache_read INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN tokens_cache_write INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN cost REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN priced INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE tasks ADD COLUMN session TEXT;"
	"ALTER TABLE tasks ADD COLUMN reason TEXT;"
	"CREATE TABLE egress ("
	"  id INTEGER PRIMARY KEY,"
	"  task_id TEXT NOT NULL,"
	"  round INTEGER NOT NULL,"
	"  time REAL NOT NULL,"
	"  step TEXT, kind TEXT, endpoint TEXT, host TEXT, port INTEGER,"
	"  method TEXT, path TEXT, status INTEGER,"
	"  up INTEGER NOT NULL DEFAULT 0, down INTEGER NOT NULL DEFAULT 0,"
	"  ms REAL NOT NULL DEFAULT 0,"
	"  verdict TEXT, reason TEXT);"
	"CREATE INDEX egress_task ON egress(task_id, id);"
	"CREATE TABLE pauses ("
	"  endpoint TEXT PRIMARY KEY,"
	"  until REAL NOT NULL,"
	"  status INTEGER,"
	"  task_id TEXT,"
	"  time REAL NOT NULL);",
	/* 4: the webhook queue (webhook.h).  next_at NULL with delivered_at
	 * NULL: given up. */
	"CREATE TABLE webhooks ("
	"  id INTEGER PRIMARY KEY,"
	"  task_id TEXT NOT NULL,"
	"  event TEXT NOT NULL,"
	"  delivery TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  created REAL NOT NULL,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  next_at REAL,"
	"  last_error TEXT,"
	"  delivered_at REAL);"
	"CREATE INDEX webhooks_due ON webhooks(next_at) WHERE next_at IS NOT NULL;"
	"CREATE INDEX webhooks_task ON webhooks(task_id, id);",
	/* 5: recovery: attempts of a first round, the last later round that
	 * failed (the task went back to review with the one before), and
	 * follow-ups of finished tasks. */
	"ALTER TABLE tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN failed_round INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN failed_head TEXT;"
	"ALTER TABLE tasks ADD COLUMN failed_why TEXT;"
	"ALTER TABLE tasks ADD COLUMN follow_of TEXT;"
	"UPDATE tasks SET attempts = 1 WHERE status != 'queued';",
	/* 6: a large history (issue 14): what changed lately, the requests
	 * for changes the scheduler waits on, and the tasks of each status,
	 * without a scan.  The counts are kept by triggers, so no writer can
	 * forget them. */
	"CREATE INDEX tasks_updated ON tasks(updated);"
	"CREATE INDEX tasks_pending ON tasks(seq) WHERE pending IS NOT NULL;"
	"CREATE INDEX tasks_kept ON tasks(seq) WHERE sandbox_kept != 0;"
	"CREATE TABLE task_counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO task_counts SELECT status, COUNT(*) FROM tasks GROUP BY status;"
	"CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN"
	"  INSERT INTO task_counts VALUES (NEW.status, 1)"
	"    ON CONFLICT (status) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER task_counts_update AFTER UPDATE OF status ON tasks"
	"  WHEN OLD.status != NEW.status BEGIN"
	"  UPDATE task_counts SET n = n - 1 WHERE status = OLD.status;"
	"  INSERT INTO task_counts VALUES (NEW.status, 1)"
	"    ON CONFLICT (status) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN"
	"  UPDATE task_counts SET n = n - 1 WHERE status = OLD.status;"
	"END;",
	/* 7: the API's integrations (issue 15): where each step falls in the
	 * log and its round (event streams replay both in the order they
	 * happened), a task's callback and metadata, idempotent requests, and
	 * each webhook delivery attempt. */
	"ALTER TABLE steps ADD COLUMN log_off INTEGER;"
	"ALTER TABLE steps ADD COLUMN round INTEGER;"
	"ALTER TABLE tasks ADD COLUMN callback_url TEXT;"
	"ALTER TABLE tasks ADD COLUMN metadata TEXT;"
	"CREATE TABLE idempotency ("
	"  key TEXT NOT NULL,"
	"  actor TEXT NOT NULL,"
	"  route TEXT NOT NULL,"
	"  fingerprint TEXT NOT NULL,"
	"  status INTEGER NOT NULL,"
	"  body TEXT NOT NULL,"
	"  location TEXT,"
	"  created REAL NOT NULL,"
	"  PRIMARY KEY (key, actor, route));"
	"CREATE INDEX idempotency_created ON idempotency(created);"
	"ALTER TABLE webhooks ADD COLUMN url TEXT;"
	"CREATE TABLE webhook_attempts ("
	"  webhook_id INTEGER NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  at REAL NOT NULL,"
	"  status INTEGER NOT NULL DEFAULT 0,"
	"  error TEXT,"
	"  PRIMARY KEY (webhook_id, n));",
	/* 8: review drafts (issue 16): a reviewer's comments on lines of a
	 * task's diff, kept until they go out with a request for changes or
	 * the draft is discarded.  n only grows, so that a send removes just
	 * the comments it sent. */
	"CREATE TABLE review_comments ("
	"  task_seq INTEGER NOT NULL REFERENCES tasks(seq),"
	"  n INTEGER NOT NULL,"
	"  round INTEGER NOT NULL,"
	"  path TEXT NOT NULL,"
	"  line INTEGER NOT NULL,"
	"  old INTEGER NOT NULL DEFAULT 0,"
	"  text TEXT NOT NULL,"
	"  comment TEXT NOT NULL,"
	"  created REAL NOT NULL,"
	"  PRIMARY KEY (task_seq, n));",
	/* 9: recipes and workflows (issue 17): a task's own inputs (its
	 * recipe, base ref, test command, timeout), its test mode and
	 * approval mode, its fix loop, its output contract, the group of a
	 * best-of-N run and a confirmation of its estimated cost; what kind
	 * of round each round was. */
	"ALTER TABLE tasks ADD COLUMN recipe TEXT;"
	"ALTER TABLE tasks ADD COLUMN inputs TEXT;"
	"ALTER TABLE tasks ADD COLUMN base_ref TEXT;"
	"ALTER TABLE tasks ADD COLUMN test_cmd TEXT;"
	"ALTER TABLE tasks ADD COLUMN timeout REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN dry_run INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN approval TEXT;"
	"ALTER TABLE tasks ADD COLUMN fix_rounds INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE tasks ADD COLUMN contract TEXT;"
	"ALTER TABLE tasks ADD COLUMN group_id TEXT;"
	"ALTER TABLE tasks ADD COLUMN confirm TEXT;"
	"ALTER TABLE tasks ADD COLUMN estimate REAL NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN dry_run_record TEXT;"
	"ALTER TABLE rounds ADD COLUMN kind TEXT;"
	"CREATE INDEX tasks_group ON tasks(group_id) WHERE group_id IS NOT NULL;"
	"CREATE TABLE task_groups ("
	"  id TEXT PRIMARY KEY,"
	"  text TEXT NOT NULL,"
	"  created REAL NOT NULL,"
	"  chosen TEXT);",
	/* 10: GitHub as a front door (issue 18, store_github.h): a task's
	 * issue and pull request, what GitHub sent (each event, with its
	 * verdict), the reviews and comments already acted on, the rounds
	 * asked for from GitHub, and the ETags of conditional requests. */
	"CREATE TABLE github_links ("
	"  task_id TEXT PRIMARY KEY,"
	"  gh_repo TEXT NOT NULL,"
	"  issue INTEGER,"
	"  issue_comment INTEGER,"
	"  issue_comment_body TEXT,"
	"  pr INTEGER,"
	"  pr_state TEXT,"
	"  pr_head TEXT,"
	"  checks TEXT,"
	"  branch_deleted INTEGER NOT NULL DEFAULT 0,"
	"  updated REAL NOT NULL);"
	"CREATE UNIQUE INDEX github_links_issue ON github_links(gh_repo, issue) "
	"  WHERE issue IS NOT NULL;"
	"CREATE TABLE github_events ("
	"  id INTEGER PRIMARY KEY,"
	"  time REAL NOT NULL,"
	"  source TEXT NOT NULL,"
	"  event TEXT NOT NULL,"
	"  delivery TEXT,"
	"  actor TEXT,"
	"  gh_repo TEXT,"
	"  number INTEGER,"
	"  verdict TEXT NOT NULL,"
	"  detail TEXT,"
	"  task_id TEXT);"
	"CREATE INDEX github_events_delivery ON github_events(delivery) "
	"  WHERE delivery IS NOT NULL;"
	"CREATE TABLE github_seen ("
	"  gh_repo TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  gh_id INTEGER NOT NULL,"
	"  task_id TEXT,"
	"  PRIMARY KEY (gh_repo, kind, gh_id));"
	"CREATE TABLE github_asks ("
	"  task_id TEXT NOT NULL,"
	"  round INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  gh_id INTEGER NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  actor TEXT,"
	"  answered INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (task_id, round));"
	"CREATE TABLE github_etags ("
	"  url TEXT PRIMARY KEY,"
	"  etag TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  link TEXT);"
	"CREATE TABLE github_backoff ("
	"  api TEXT PRIMARY KEY,"
	"  until REAL NOT NULL,"
	"  why TEXT);",
};
#define NMIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

/* The folder of the database file (malloc'd). */
static char *store_dir(const struct store *s)
{
	const char *slash = strrchr(s->path, '/');
	return !slash ? xstrdup(".")
	       : xstrndup(s->path, slash == s->path ? 1 : (size_t)(slash - s->path));
}

/* SQLite's "disk I/O error" or "unable to open database file" leaves a
 * person guessing: when the data directory is the cause (read-only, full,
 * not writable), say so and what to do.  SQLite rolls the change back, so
 * what was stored before stays.  Returns 1 when it set e. */
static int os_err(struct store *s, struct err *e)
{
	if (!s->db)
		return 0;
	int code = sqlite3_errcode(s->db) & 0xff;
	/* The OS error is kept from the last I/O failure: only these codes
	 * come with a fresh one. */
	int sys = code == SQLITE_IOERR || code == SQLITE_CANTOPEN || code == SQLITE_FULL
	          ? sqlite3_system_errno(s->db) : 0;
	char *dir = store_dir(s);
	/* SQLite falls back to opening read-only, so its errno may be that
	 * fallback's (ENOENT for the -wal file): look at the directory too. */
	int io = code == SQLITE_IOERR || code == SQLITE_CANTOPEN || code == SQLITE_READONLY;
	struct statvfs vfs;
	int ro = io && statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
	int denied = 0;
	if (io && !ro && access(dir, W_OK) < 0)
		denied = errno == EACCES;
	else if (io && !ro && access(s->path, W_OK) < 0)
		denied = errno == EACCES;
	int set = 1;
	if (code == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT)
		err_set(e, _("no space left on the device of the data directory %s; free some "
		             "space there and try again (nothing stored was lost)"), dir);
	else if (ro || sys == EROFS)
		err_set(e, _("the data directory %s is read-only; make it writable, or set "
		             "PADDOCK_HOME to another directory"), dir);
	else if (sys == EACCES || sys == EPERM || denied)
		err_set(e, _("the data directory %s or its store cannot be written (permission "
		             "denied); let this user write there, or set PADDOCK_HOME to another "
		             "directory"), dir);
	else
		set = 0;
	free(dir);
	return set;
}

static int db_err(struct store *s, struct err *e, const char *what)
{
	if (os_err(s, e))
		return -1;
	/* Busy past the busy timeout: another process holds the store; a
	 * retry may well succeed (the API answers 503). */
	int code = sqlite3_errcode(s->db);
	return err_kind_set(e, code == SQLITE_BUSY || code == SQLITE_LOCKED ? ERR_UNAVAILABLE
	                                                                    : ERR_INTERNAL,
	                    _("store %s: %s: %s"), s->path, what, sqlite3_errmsg(s->db));
}

static int exec(struct store *s, const char *sql, struct err *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		if (!os_err(s, e))
			err_kind_set(e, rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? ERR_UNAVAILABLE
			                                                         : ERR_INTERNAL,
			             _("store %s: %s"), s->path, msg ? msg : "?");
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
		if (!os_err(s, e))
			err_set(e, _("cannot open the store %s: %s"), path,
			        s->db ? sqlite3_errmsg(s->db) : "out of memory");
		store_close(s);
		return -1;
	}
	/* Other processes (CLI verbs, dashboards) write too: wait for them. */
	sqlite3_busy_timeout(s->db, 10000);
	/* Two processes opening a new store at once (serve, and an add right
	 * after it) race to switch it to WAL, and SQLite answers the loser
	 * SQLITE_BUSY without waiting (its busy handler would deadlock there):
	 * try again for as long as the busy timeout. */
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	for (int tries = 0;; tries++) {
		if (exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		            "PRAGMA foreign_keys = ON;", e) == 0 && migrate(s, e) == 0)
			break;
		int code = sqlite3_errcode(s->db) & 0xff;
		if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || tries >= 500) {
			store_close(s);
			return -1;
		}
		memset(e, 0, sizeof *e);
		nanosleep(&pause, NULL);
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->steps);
	sqlite3_finalize(s->dv);
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
	free(t->callback_url);
	free(t->metadata);
	free(t->summary);
	free(t->pr_url);
	free(t->pushed);
	free(t->reviewed_head);
	free(t->pending);
	free(t->session);
	free(t->reason);
	free(t->failed_head);
	free(t->failed_why);
	free(t->follow_of);
	free(t->recipe);
	free(t->inputs);
	free(t->base_ref);
	free(t->test_cmd);
	free(t->approval);
	free(t->contract);
	free(t->group_id);
	free(t->confirm);
	free(t->dry_run_record);
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

char *store_col_str(sqlite3_stmt *st, int i)
{
	return col_str(st, i);
}

int store_exec(struct store *s, const char *sql, struct err *e)
{
	return exec(s, sql, e);
}

int store_db_err(struct store *s, struct err *e, const char *what)
{
	return db_err(s, e, what);
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	sqlite3_int64 v = sqlite3_column_int64(st, i);
	return v < 0 ? 0 : (uint64_t)v;
}

#define TASK_COLS "seq, id, text, repo, agent, base, branch, head, status, error, " \
                  "created, updated, cancel_requested, round, summary, pr_url, pushed, " \
                  "reviewed_head, sandbox_kept, pending, budget, tokens_in, tokens_out, " \
                  "tokens_cache_read, tokens_cache_write, requests, cost, priced, session, " \
                  "reason, attempts, failed_round, failed_head, failed_why, follow_of, " \
                  "callback_url, metadata, recipe, inputs, base_ref, test_cmd, timeout, " \
                  "dry_run, approval, fix_rounds, contract, group_id, confirm, estimate, " \
                  "dry_run_record"

static int load_steps(struct store *s, sqlite3_int64 seq, struct task_row *t, struct err *e)
{
	if (!s->steps && sqlite3_prepare_v2(s->db, "SELECT at, status, log_off, round FROM "
	                                    "steps WHERE task_seq = ? ORDER BY n", -1, &s->steps,
	                                    NULL) != SQLITE_OK)
		return db_err(s, e, "steps");
	sqlite3_stmt *st = s->steps;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, seq);
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (t->nsteps == cap) {
			cap = cap ? cap * 2 : 8;
			t->steps = xrealloc(t->steps, cap * sizeof *t->steps);
		}
		int status = task_status_parse((const char *)sqlite3_column_text(st, 1));
		struct task_step *sp = &t->steps[t->nsteps];
		sp->at = sqlite3_column_double(st, 0);
		sp->time = t->created + sp->at;
		sp->status = status < 0 ? TASK_LOST : (enum task_status)status;
		/* Never before the step before it: the log only grows. */
		long long before = t->nsteps ? sp[-1].log_off : 0;
		sp->log_known = sqlite3_column_type(st, 2) != SQLITE_NULL;
		sp->log_off = !sp->log_known ? before : sqlite3_column_int64(st, 2);
		if (sp->log_off < before)
			sp->log_off = before;
		sp->round = sqlite3_column_int(st, 3);
		t->nsteps++;
	}
	sqlite3_reset(st);
	return 0;
}

static int row_fill_steps(struct store *s, sqlite3_stmt *st, struct task_row *t, int steps,
                          struct err *e)
{
	memset(t, 0, sizeof *t);
	sqlite3_int64 seq = sqlite3_column_int64(st, 0);
	t->seq = seq;
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
	t->budget = sqlite3_column_type(st, 20) == SQLITE_NULL ? -1 :
	            sqlite3_column_double(st, 20);
	t->usage.in = col_u64(st, 21);
	t->usage.out = col_u64(st, 22);
	t->usage.cache_read = col_u64(st, 23);
	t->usage.cache_write = col_u64(st, 24);
	t->usage.requests = col_u64(st, 25);
	t->usage.cost = sqlite3_column_double(st, 26);
	t->usage.priced = sqlite3_column_int(st, 27);
	t->session = col_str(st, 28);
	t->reason = col_str(st, 29);
	t->attempts = sqlite3_column_int(st, 30);
	t->failed_round = sqlite3_column_int(st, 31);
	t->failed_head = col_str(st, 32);
	t->failed_why = col_str(st, 33);
	t->follow_of = col_str(st, 34);
	t->callback_url = col_str(st, 35);
	t->metadata = col_str(st, 36);
	t->recipe = col_str(st, 37);
	t->inputs = col_str(st, 38);
	t->base_ref = col_str(st, 39);
	t->test_cmd = col_str(st, 40);
	t->timeout = sqlite3_column_double(st, 41);
	t->dry_run = sqlite3_column_int(st, 42);
	t->approval = col_str(st, 43);
	t->fix_rounds = sqlite3_column_int(st, 44);
	t->contract = col_str(st, 45);
	t->group_id = col_str(st, 46);
	t->confirm = col_str(st, 47);
	t->estimate = sqlite3_column_double(st, 48);
	t->dry_run_record = col_str(st, 49);
	return steps ? load_steps(s, seq, t, e) : 0;
}

static int row_fill(struct store *s, sqlite3_stmt *st, struct task_row *t, struct err *e)
{
	return row_fill_steps(s, st, t, 1, e);
}

static int add_step(struct store *s, const char *id, double at, enum task_status to,
                    struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO steps (task_seq, n, at, status, log_off, round) "
	        "SELECT seq, (SELECT COUNT(*) FROM steps WHERE task_seq = tasks.seq), ?, ?, ?, "
	        "round FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "steps");
	/* Where the step falls in the log is settled after the commit
	 * (store_steps_settle); only the first step is known now: no log
	 * comes before the task. */
	sqlite3_bind_double(st, 1, at);
	sqlite3_bind_text(st, 2, task_status_name(to), -1, SQLITE_STATIC);
	if (to == TASK_QUEUED && at == 0)
		sqlite3_bind_int64(st, 3, 0);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "steps");
	sqlite3_finalize(st);
	return rc;
}

int store_steps_settle(struct store *s, const char *id, struct err *e)
{
	/* After the move's commit: every log line an event stream sent
	 * before it saw the step is in the log by now, so the step goes after
	 * them for late readers too. */
	char *dir = store_dir(s);
	char *log = paths_task_log(dir, id);
	struct stat sb;
	long long off = stat(log, &sb) == 0 ? (long long)sb.st_size : 0;
	free(log);
	free(dir);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE steps SET log_off = ? WHERE log_off IS NULL AND "
	                       "task_seq = (SELECT seq FROM tasks WHERE id = ?)", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "steps");
	sqlite3_bind_int64(st, 1, off);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "steps");
	sqlite3_finalize(st);
	return rc;
}

int store_task_add(struct store *s, const char *repo, const char *agent, const char *text,
                   const char *branch_prefix, char id_out[TASK_ID_LEN + 1], struct err *e)
{
	return store_task_add_budget(s, repo, agent, text, branch_prefix, -1, id_out, e);
}

/* Inside a transaction: inserts the task and its first step. */
static int add_locked(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      struct err *e);

int store_task_add_budget(struct store *s, const char *repo, const char *agent,
                          const char *text, const char *branch_prefix, double budget,
                          char id_out[TASK_ID_LEN + 1], struct err *e)
{
	struct task_new n = { .repo = repo, .agent = agent, .text = text,
	                      .branch_prefix = branch_prefix, .budget = budget };
	return store_task_create(s, &n, id_out, NULL, e);
}

static int queued_count(struct store *s, size_t *out, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT n FROM task_counts WHERE status = 'queued'", -1,
	                       &st, NULL) != SQLITE_OK)
		return db_err(s, e, "count");
	*out = sqlite3_step(st) == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

int store_task_create(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      size_t *queued, struct err *e)
{
	/* IMMEDIATE: the write lock first, so the count below cannot go stale
	 * before the insert. */
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	int rc = 0;
	if (n->max_queued) {
		size_t q = 0;
		rc = queued_count(s, &q, e);
		if (rc == 0 && q >= n->max_queued) {
			if (queued)
				*queued = q;
			rc = -2;
		}
	}
	if (rc == 0)
		rc = add_locked(s, n, id_out, e);
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	return exec(s, "COMMIT", e);
}

static int add_locked(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO tasks (id, text, repo, agent, branch, status, created, updated, "
	        "budget, callback_url, metadata, recipe, inputs, base_ref, test_cmd, timeout, "
	        "dry_run, approval, fix_rounds, contract, group_id, confirm, estimate) "
	        "VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	        -1, &st, NULL) != SQLITE_OK) {
		db_err(s, e, "add");
		goto fail;
	}
	double t = clock_wall();
	/* A collision of two random ids is astronomically rare; the UNIQUE
	 * constraint turns it into a retry, never a reused id. */
	for (int tries = 0;; tries++) {
		char id[TASK_ID_LEN + 1];
		task_id_new(id);
		char branch[256];
		snprintf(branch, sizeof branch, "%s%s", n->branch_prefix ? n->branch_prefix
		         : "paddock/", id);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, n->text, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, n->repo, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, n->agent, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, branch, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 6, t);
		sqlite3_bind_double(st, 7, t);
		if (n->budget < 0)
			sqlite3_bind_null(st, 8);
		else
			sqlite3_bind_double(st, 8, n->budget);
		sqlite3_bind_text(st, 9, n->callback_url, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 10, n->metadata, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 11, n->recipe, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 12, n->inputs, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 13, n->base_ref, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 14, n->test_cmd, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 15, n->timeout > 0 ? n->timeout : 0);
		sqlite3_bind_int(st, 16, n->dry_run != 0);
		sqlite3_bind_text(st, 17, n->approval, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 18, n->fix_rounds_set ? n->fix_rounds : -1);
		sqlite3_bind_text(st, 19, n->contract, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 20, n->group_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 21, n->confirm ? "needed" : NULL, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 22, n->estimate);
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
	return 0;
fail:
	return -1;
}

int store_task_get(struct store *s, const char *id, struct task_row *t, struct err *e)
{
	if (!task_id_valid(id, 1))
		return err_kind_set(e, ERR_INVALID, _("'%s' is not a task id (ids look like %s); "
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
		err_kind_set(e, ERR_NOT_FOUND, _("no task %s; 'paddock list' shows the tasks"), id);
	} else {
		char first[TASK_ID_LEN + 1];
		snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(st, 1));
		rc = row_fill(s, st, t, e);
		if (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
			/* Not found: no one task has the prefix. */
			err_kind_set(e, ERR_NOT_FOUND, _("task id prefix %s is ambiguous (%s, %s, "
			             "...); type more of it"), id, first,
			             (const char *)sqlite3_column_text(st, 1));
			task_row_free(t);
			rc = -1;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

struct collect {
	struct task_row *rows;
	size_t n, cap;
};

/* Keeps a copy of each row: the row store_task_each lends is moved into
 * the array, so the lender must not free it (see each_sql). */
static int collect_row(const struct task_row *t, void *arg, struct err *e)
{
	(void)e;
	struct collect *c = arg;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->rows = xrealloc(c->rows, c->cap * sizeof *c->rows);
	}
	c->rows[c->n++] = *t;
	return 0;
}

static unsigned query_mask(const struct task_query *q);

/* The ORDER BY of q's order (after a space). */
static const char *order_sql(const struct task_query *q)
{
#define ENDED_SQL "status IN ('done', 'failed', 'rejected', 'cancelled', 'lost')"
	switch (q->order) {
	case TASK_ORDER_STATUS:
		return "ORDER BY CASE status WHEN 'failed' THEN 0 WHEN 'lost' THEN 1 "
		       "WHEN 'review' THEN 2 WHEN 'pushing' THEN 3 WHEN 'testing' THEN 4 "
		       "WHEN 'running' THEN 5 WHEN 'preparing' THEN 6 WHEN 'queued' THEN 7 "
		       "WHEN 'done' THEN 8 WHEN 'rejected' THEN 9 ELSE 10 END, seq DESC";
	case TASK_ORDER_AGE:
		return "ORDER BY seq DESC";
	case TASK_ORDER_TIME:
		return "ORDER BY " ENDED_SQL ", CASE WHEN " ENDED_SQL " THEN created - updated "
		       "ELSE updated END, seq";
	case TASK_ORDER_REPO:
		return "ORDER BY repo, seq DESC";
	default:
		return q->newest_first ? "ORDER BY seq DESC" : "ORDER BY seq";
	}
#undef ENDED_SQL
}

/* struct task_query.fold_groups: a member of a group is the one whose seq
 * is the least of the members the row conditions select.  In the
 * subquery, names without a table are its own row's (g); tasks is the
 * row asked about. */
static void fold_sql(struct buf *sql, const struct task_query *q)
{
	buf_adds(sql, " AND (group_id IS NULL OR seq = (SELECT MIN(seq) FROM tasks g "
	         "WHERE g.group_id = tasks.group_id");
	unsigned mask = query_mask(q);
	for (int st = 0, n = 0; mask && st < TASK_NSTATUS; st++)
		if (mask & TASK_MASK(st))
			buf_printf(sql, "%s'%s'", n++ ? ", " : " AND status IN (",
			           task_status_name((enum task_status)st));
	if (mask)
		buf_adds(sql, ")");
	if (q->repo)
		buf_adds(sql, " AND repo = ?6");
	if (q->agent)
		buf_adds(sql, " AND agent = ?7");
	if (q->startable)
		buf_adds(sql, " AND confirm IS NOT 'needed'");
	if (q->text && *q->text)
		buf_adds(sql, " AND (id LIKE ?8 ESCAPE '\\' OR text LIKE ?8 ESCAPE '\\' OR "
		         "repo LIKE ?8 ESCAPE '\\' OR agent LIKE ?8 ESCAPE '\\' OR "
		         "error LIKE ?8 ESCAPE '\\')");
	buf_adds(sql, "))");
}

/* The WHERE clause of q for one status (or none: -1, then every status
 * of q's mask), and its binds. */
static void query_sql(struct buf *sql, const struct task_query *q, int status,
                      const char *what)
{
	buf_printf(sql, "SELECT %s FROM tasks WHERE 1", what);
	unsigned mask = status < 0 ? query_mask(q) : 0;
	for (int st = 0, n = 0; mask && st < TASK_NSTATUS; st++)
		if (mask & TASK_MASK(st))
			buf_printf(sql, "%s'%s'", n++ ? ", " : " AND status IN (",
			           task_status_name((enum task_status)st));
	if (mask)
		buf_adds(sql, ")");
	if (q->repo)
		buf_adds(sql, " AND repo = ?6");
	if (q->agent)
		buf_adds(sql, " AND agent = ?7");
	if (q->startable)
		buf_adds(sql, " AND confirm IS NOT 'needed'");
	if (q->group)
		buf_adds(sql, " AND group_id = ?9");
	if (q->text && *q->text)
		buf_adds(sql, " AND (id LIKE ?8 ESCAPE '\\' OR text LIKE ?8 ESCAPE '\\' OR "
		         "repo LIKE ?8 ESCAPE '\\' OR agent LIKE ?8 ESCAPE '\\' OR "
		         "error LIKE ?8 ESCAPE '\\')");
	if (q->fold_groups)
		fold_sql(sql, q);
	/* The few pending requests come from their partial index: the
	 * status's (every task at review) is kept out with a unary +. */
	if (status >= 0)
		buf_adds(sql, q->pending ? " AND +status = ?1" : " AND status = ?1");
	if (q->pending)
		buf_adds(sql, " AND pending IS NOT NULL");
	if (q->since > 0)
		buf_adds(sql, " AND created >= ?2");
	if (q->changed_after > 0)
		buf_adds(sql, " AND updated > ?3");
	if (q->after > 0)
		buf_adds(sql, " AND seq > ?4");
	if (q->before > 0)
		buf_adds(sql, " AND seq < ?5");
}

/* Prepares SELECT what ... tail for q and status, its values bound;
 * -1 when SQLite refused it. */
static int query_prepare(struct store *s, const struct task_query *q, int status,
                         const char *what, const char *tail, sqlite3_stmt **out)
{
	struct buf sql = {0};
	query_sql(&sql, q, status, what);
	buf_adds(&sql, tail);
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(s->db, sql.data, -1, &st, NULL);
	buf_free(&sql);
	if (prc != SQLITE_OK)
		return -1;
	if (status >= 0)
		sqlite3_bind_text(st, 1, task_status_name((enum task_status)status), -1,
		                  SQLITE_STATIC);
	sqlite3_bind_double(st, 2, q->since);
	sqlite3_bind_double(st, 3, q->changed_after);
	sqlite3_bind_int64(st, 4, q->after);
	sqlite3_bind_int64(st, 5, q->before);
	sqlite3_bind_text(st, 6, q->repo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, q->agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, q->group, -1, SQLITE_STATIC);
	if (q->text && *q->text) {
		/* Contains: %text%, its own % _ and \ taken literally. */
		struct buf pat = {0};
		buf_addc(&pat, '%');
		for (const char *c = q->text; *c; c++) {
			if (*c == '%' || *c == '_' || *c == '\\')
				buf_addc(&pat, '\\');
			buf_addc(&pat, *c);
		}
		buf_addc(&pat, '%');
		sqlite3_bind_text(st, 8, pat.data, -1, SQLITE_TRANSIENT);
		buf_free(&pat);
	}
	*out = st;
	return 0;
}

/* One SQL query: no status condition, or status's.  fn gets each row;
 * collect_row takes it over, any other fn only looks. */
static int each_sql(struct store *s, const struct task_query *q, int status, int merged,
                    task_each_fn fn, void *arg, struct err *e)
{
	char tail[512];
	/* A merge takes each status's first limit + offset and skips after. */
	size_t skip = merged ? 0 : q->offset;
	size_t lim = q->limit ? q->limit + (q->offset - skip) : 0;
	int len = snprintf(tail, sizeof tail, " %s", order_sql(q));
	if (lim || skip)
		snprintf(tail + len, sizeof tail - (size_t)len, " LIMIT %lld OFFSET %zu",
		         lim ? (long long)lim : -1LL, skip);
	sqlite3_stmt *st;
	if (query_prepare(s, q, status, TASK_COLS, tail, &st) < 0)
		return db_err(s, e, "list");
	int rc = 0, step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct task_row t;
		if (row_fill_steps(s, st, &t, !q->no_steps, e) < 0) {
			task_row_free(&t);
			rc = -1;
			break;
		}
		int r = fn(&t, arg, e);
		if (fn != collect_row)
			task_row_free(&t);
		if (r) {
			rc = r < 0 ? -1 : 0;
			break;
		}
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = db_err(s, e, "list");
	sqlite3_finalize(st);
	return rc;
}

static unsigned query_mask(const struct task_query *q)
{
	unsigned all = (1u << TASK_NSTATUS) - 1, m = q->status_mask & all;
	return m == all ? 0 : m;
}

static int by_seq_asc(const void *a, const void *b)
{
	long long x = ((const struct task_row *)a)->seq, y = ((const struct task_row *)b)->seq;
	return x < y ? -1 : x > y;
}

static int by_seq_desc(const void *a, const void *b)
{
	return by_seq_asc(b, a);
}

/* The rows of several statuses: one indexed query each, merged in q's
 * order and cut to its limit.  (A single query with status IN (...) and
 * ORDER BY seq scans the whole table when few tasks match, such as the
 * active ones among 100,000 ended.) */
static int query_merged(struct store *s, const struct task_query *q, unsigned mask,
                        struct collect *c, struct err *e)
{
	for (int st = 0; st < TASK_NSTATUS; st++)
		if ((mask & TASK_MASK(st)) && each_sql(s, q, st, 1, collect_row, c, e) < 0)
			return -1;
	if (c->n > 1)
		qsort(c->rows, c->n, sizeof *c->rows, q->newest_first ? by_seq_desc : by_seq_asc);
	size_t skip = q->offset < c->n ? q->offset : c->n;
	if (skip) {
		for (size_t i = 0; i < skip; i++)
			task_row_free(&c->rows[i]);
		memmove(c->rows, c->rows + skip, (c->n - skip) * sizeof *c->rows);
		c->n -= skip;
	}
	while (q->limit && c->n > q->limit)
		task_row_free(&c->rows[--c->n]);
	return 0;
}

static int single_status(unsigned mask)
{
	return !(mask & (mask - 1));
}

int store_task_each(struct store *s, const struct task_query *q, task_each_fn fn,
                    void *arg, struct err *e)
{
	unsigned mask = query_mask(q);
	if (single_status(mask) || q->order != TASK_ORDER_QUEUED)
		return each_sql(s, q, single_status(mask) && mask ? __builtin_ctz(mask) : -1, 0, fn,
		                arg, e);
	struct collect c = {0};
	int rc = query_merged(s, q, mask, &c, e);
	for (size_t i = 0; rc == 0 && i < c.n; i++) {
		int r = fn(&c.rows[i], arg, e);
		if (r)
			rc = r < 0 ? -1 : 1;
	}
	task_rows_free(c.rows, c.n);
	return rc < 0 ? -1 : 0;
}

int store_task_query(struct store *s, const struct task_query *q, struct task_row **out,
                     size_t *n, struct err *e)
{
	struct collect c = {0};
	unsigned mask = query_mask(q);
	/* Another order is one sort of every status asked for. */
	int rc = single_status(mask) || q->order != TASK_ORDER_QUEUED
	         ? each_sql(s, q, single_status(mask) && mask ? __builtin_ctz(mask) : -1, 0,
	                    collect_row, &c, e)
	         : query_merged(s, q, mask, &c, e);
	if (rc < 0) {
		task_rows_free(c.rows, c.n);
		return -1;
	}
	*out = c.rows;
	*n = c.n;
	return 0;
}

int store_task_count(struct store *s, const struct task_query *q, size_t *n, struct err *e)
{
	unsigned mask = query_mask(q);
	*n = 0;
	if (!q->pending && q->since <= 0 && q->changed_after <= 0 && q->after <= 0 &&
	    q->before <= 0 && !q->repo && !q->agent && !(q->text && *q->text) &&
	    !q->startable && !q->group && !q->fold_groups) {
		/* Statuses alone: the counts the triggers keep. */
		size_t c[TASK_NSTATUS];
		if (store_task_counts(s, c, e) < 0)
			return -1;
		for (int st = 0; st < TASK_NSTATUS; st++)
			*n += !mask || (mask & TASK_MASK(st)) ? c[st] : 0;
		return 0;
	}
	for (int status = mask ? 0 : -1; status < TASK_NSTATUS; status++) {
		if (status >= 0 && !(mask & TASK_MASK(status)))
			continue;
		sqlite3_stmt *st;
		if (query_prepare(s, q, status, "COUNT(*)", "", &st) < 0)
			return db_err(s, e, "count");
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_finalize(st);
			return db_err(s, e, "count");
		}
		*n += (size_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (status < 0)
			break;
	}
	return 0;
}

int store_task_order(struct store *s, const struct task_query *q, struct task_key **out,
                     size_t *n, struct err *e)
{
	char tail[512];
	snprintf(tail, sizeof tail, " %s", order_sql(q));
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (query_prepare(s, q, -1, "seq, status", tail, &st) < 0)
		return db_err(s, e, "order");
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		int v = task_status_parse((const char *)sqlite3_column_text(st, 1));
		(*out)[*n].seq = sqlite3_column_int64(st, 0);
		(*out)[(*n)++].status = v < 0 ? TASK_LOST : (enum task_status)v;
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return db_err(s, e, "order");
	}
	return 0;
}

int store_task_rows(struct store *s, const long long *seqs, size_t n, int no_steps,
                    struct task_row **out, size_t *nout, struct err *e)
{
	*out = NULL;
	*nout = 0;
	if (!n)
		return 0;
	struct buf sql = {0};
	buf_adds(&sql, "SELECT " TASK_COLS " FROM tasks WHERE seq IN (");
	for (size_t i = 0; i < n; i++)
		buf_printf(&sql, "%s%lld", i ? ", " : "", seqs[i]);
	buf_adds(&sql, ")");
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(s->db, sql.data, -1, &st, NULL);
	buf_free(&sql);
	if (prc != SQLITE_OK)
		return db_err(s, e, "list");
	/* Each row at its seq's place; a task gone since leaves none. */
	struct task_row *rows = xcalloc(n, sizeof *rows);
	char *have = xcalloc(n, 1);
	int rc = 0, step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct task_row t;
		if (row_fill_steps(s, st, &t, !no_steps, e) < 0) {
			task_row_free(&t);
			rc = -1;
			break;
		}
		size_t i = 0;
		while (i < n && (have[i] || seqs[i] != t.seq))
			i++;
		if (i < n) {
			rows[i] = t;
			have[i] = 1;
		} else {
			task_row_free(&t);
		}
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = db_err(s, e, "list");
	sqlite3_finalize(st);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (have[i] && rc == 0)
			rows[k++] = rows[i];
		else if (have[i])
			task_row_free(&rows[i]);
	}
	free(have);
	if (rc < 0) {
		free(rows);
		return -1;
	}
	*out = rows;
	*nout = k;
	return 0;
}

int store_task_glance(struct store *s, long long seq, struct task_glance *g, struct err *e)
{
	memset(g, 0, sizeof *g);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT (SELECT at FROM steps WHERE task_seq = ?1 AND status = 'preparing' "
	        "ORDER BY n LIMIT 1) + created, r.started, r.n IS NOT NULL AND "
	        "(r.head IS NULL OR r.head = r.from_commit) FROM tasks LEFT JOIN "
	        "(SELECT * FROM rounds WHERE task_seq = ?1 ORDER BY n DESC LIMIT 1) r "
	        "WHERE seq = ?1", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "glance");
	sqlite3_bind_int64(st, 1, seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		g->started = sqlite3_column_double(st, 0);
		g->round_started = sqlite3_column_double(st, 1);
		g->round_unchanged = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : db_err(s, e, "glance");
}

int store_task_counts(struct store *s, size_t counts[TASK_NSTATUS], struct err *e)
{
	memset(counts, 0, TASK_NSTATUS * sizeof *counts);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT status, n FROM task_counts", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "count");
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int v = task_status_parse((const char *)sqlite3_column_text(st, 0));
		counts[v < 0 ? TASK_LOST : v] += (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? 0 : db_err(s, e, "count");
}

uint64_t store_data_version(struct store *s)
{
	/* data_version moves with other connections' commits, the change
	 * count with this one's: their sum moves when either does. */
	uint64_t v = (uint64_t)sqlite3_total_changes64(s->db);
	if (!s->dv && sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &s->dv,
	                                 NULL) != SQLITE_OK)
		return v;
	if (sqlite3_step(s->dv) == SQLITE_ROW)
		v += (uint64_t)sqlite3_column_int64(s->dv, 0);
	sqlite3_reset(s->dv);
	return v;
}

int store_watch(struct store *s, struct err *e)
{
	/* The folder, not the files: the -wal file comes and goes with
	 * checkpoints, and a watch on it would go with it. */
	char *dir = store_dir(s);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, dir, IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
	                                IN_CREATE) < 0) {
		err_errno(e, _("cannot watch %s"), dir);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(dir);
	return fd;
}

int store_watch_changed(struct store *s, int fd)
{
	/* Events of the data folder: only the database and its -wal. */
	const char *slash = strrchr(s->path, '/');
	const char *base = slash ? slash + 1 : s->path;
	size_t bl = strlen(base);
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->len && !strncmp(ev->name, base, bl))
				changed = 1;
			p += sizeof *ev + ev->len;
		}
	}
	return changed;
}

int store_task_list(struct store *s, int status, struct task_row **out, size_t *n,
                    struct err *e)
{
	struct task_query q = { .status_mask = status < 0 ? 0 : TASK_MASK(status) };
	return store_task_query(s, &q, out, n, e);
}

int store_task_next_queued(struct store *s, struct task_row *t, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " TASK_COLS " FROM tasks WHERE status = "
	                       "'queued' AND confirm IS NOT 'needed' ORDER BY seq LIMIT 1", -1, &st, NULL) != SQLITE_OK)
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
		err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
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
		return err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; it cannot become %s"), id,
		                    task_status_label(from), task_status_label(to));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET status = ?, updated = ?, "
	                       "error = COALESCE(?, error) WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "transition");
	sqlite3_bind_text(st, 1, task_status_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, clock_wall());
	if (error)
		sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "transition");
	sqlite3_finalize(st);
	/* Milliseconds are enough for a person. */
	double at = (double)(long long)((clock_wall() - created) * 1000 + 0.5) / 1000;
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
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
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
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is being pushed; it cannot be cancelled "
		             "now (it goes back to review or to done in a moment)"), id);
	} else if (task_status_is_active(from)) {
		/* The scheduler owner stops the supervisor and records the end. */
		rc = set_col(s, "UPDATE tasks SET cancel_requested = (? IS NOT NULL) "
		             "WHERE id = ?", id, "1", e) < 0 ? -1 : 2;
	} else {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is already %s; there is nothing to "
		             "cancel"), id, task_status_label(from));
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

/* Runs one UPDATE with the task id bound last; binds: text values (NULL
 * binds NULL) then ints. */
static int update_task(struct store *s, const char *sql, const char *id, struct err *e,
                       int ntext, const char *const *texts, int nint, const int *ints)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "update");
	int k = 1;
	for (int i = 0; i < ntext; i++, k++)
		if (texts[i])
			sqlite3_bind_text(st, k, texts[i], -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, k);
	for (int i = 0; i < nint; i++, k++)
		sqlite3_bind_int(st, k, ints[i]);
	sqlite3_bind_text(st, k, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "update");
	sqlite3_finalize(st);
	return rc;
}

/* The summary in a gate summary's JSON, or NULL. */
static char *gate_summary_text(const char *gate)
{
	json_t *g = gate ? json_loads(gate, 0, NULL) : NULL;
	const char *v = json_string_value(json_object_get(g, "summary"));
	char *out = v ? xstrdup(v) : NULL;
	json_decref(g);
	return out;
}

/* 1 when round n of r[0..nr) was made by the fix loop. */
static int round_is_fix(const struct task_round *r, size_t nr, int n)
{
	for (size_t i = 0; i < nr; i++)
		if (r[i].n == n)
			return r[i].kind && !strcmp(r[i].kind, "fix");
	return 0;
}

/* The round a task at round `round` goes back to when that round does not
 * reach review: the one before, or before the fix loop's rounds and the
 * round whose tests they tried to fix, which never reached review either;
 * 0 when that is none (the first round's fix loop). */
static int rollback_target(const struct task_round *r, size_t nr, int round)
{
	int to = round - 1;
	while (to >= 1 && round_is_fix(r, nr, to + 1))
		to--;
	return to;
}

/* Inside a transaction: round t->round (> 1) did not reach review; the
 * task goes back to review with the round before (rollback_target), which
 * did. */
static int rollback_locked(struct store *s, const struct task_row *t, const char *why,
                           struct err *e)
{
	struct task_round *r;
	size_t n;
	if (store_rounds(s, t->id, &r, &n, e) < 0)
		return -1;
	int to = rollback_target(r, n, t->round);
	const struct task_round *prev = NULL, *cur = NULL;
	for (size_t i = 0; i < n; i++) {
		if (r[i].n == to)
			prev = &r[i];
		if (r[i].n == t->round)
			cur = &r[i];
	}
	int rc = -1;
	if (!prev || !prev->head) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s: round %d has no work to go back to"),
		             t->id, to);
		goto out;
	}
	char *summary = gate_summary_text(prev->gate);
	const char *texts[] = { prev->head, summary ? summary : t->summary,
	                        cur ? cur->head : NULL, why };
	const int ints[] = { to, to + 1 };
	rc = update_task(s, "UPDATE tasks SET head = ?, summary = ?, failed_head = ?, "
	                 "failed_why = ?, round = ?, failed_round = ?, pending = NULL, "
	                 "error = NULL, reason = NULL, sandbox_kept = 0, cancel_requested = 0 "
	                 "WHERE id = ?", t->id, e, 4, texts, 2, ints);
	free(summary);
	/* The round starts afresh when changes are requested again. */
	if (rc == 0) {
		const int nr[] = { to };
		rc = update_task(s, "DELETE FROM rounds WHERE n > ? AND task_seq = "
		                 "(SELECT seq FROM tasks WHERE id = ?)", t->id, e, 0, NULL, 1, nr);
	}
	if (rc == 0)
		rc = transition_locked(s, t->id, TASK_REVIEW, NULL, e);
out:
	task_rounds_free(r, n);
	return rc;
}

int store_task_rollback_round(struct store *s, const char *id, const char *why,
                              struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) == 0) {
		if (t.round < 2 || !task_status_is_active(t.status) || t.status == TASK_PUSHING)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s in round %d; it has no "
			             "earlier round to go back to"), t.id, task_status_label(t.status),
			             t.round);
		else
			rc = rollback_locked(s, &t, why, e);
		task_row_free(&t);
	}
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_task_follow_up(struct store *s, const char *parent, const char *text,
                         size_t max_queued, char id_out[TASK_ID_LEN + 1], struct err *e)
{
	struct task_row p;
	if (store_task_get(s, parent, &p, e) < 0)
		return -1;
	int rc = -1;
	if (p.status != TASK_DONE && p.status != TASK_FAILED && p.status != TASK_REJECTED) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; only a finished task (done, "
		             "failed or rejected) can be followed up%s"), p.id,
		             task_status_label(p.status),
		             p.status == TASK_REVIEW ? _(": request changes instead") : "");
		goto out;
	}
	/* The branch name without the id: the follow-up's work goes on the
	 * same branch, after the parent's. */
	const char *base = p.head ? p.head : p.base;
	if (!base) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s never got a base commit; add a new task "
		             "instead"), p.id);
		goto out;
	}
	char prefix[256];
	size_t bl = strlen(p.branch), il = strlen(p.id);
	snprintf(prefix, sizeof prefix, "%.*s", bl >= il && !strcmp(p.branch + bl - il, p.id) ?
	         (int)(bl - il) : 0, p.branch);
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		goto out;
	/* The queue's limit counted in the insert's transaction, as by
	 * store_task_create. */
	size_t queued = 0;
	if (max_queued && (queued_count(s, &queued, e) < 0 || queued >= max_queued)) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		if (queued >= max_queued)
			rc = -2;
		goto out;
	}
	const char *texts[] = { p.id, base, p.branch, p.session, p.pr_url, p.pushed };
	/* Its webhooks go where the parent's went, with the same metadata. */
	struct task_new n = { .repo = p.repo, .agent = p.agent, .text = text,
	                      .branch_prefix = *prefix ? prefix : NULL, .budget = p.budget,
	                      .callback_url = p.callback_url, .metadata = p.metadata };
	if (add_locked(s, &n, id_out, e) < 0 ||
	    update_task(s, "UPDATE tasks SET follow_of = ?, base = ?, branch = ?, session = ?, "
	                "pr_url = ?, pushed = ? WHERE id = ?", id_out, e, 6, texts, 0,
	                NULL) < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	rc = exec(s, "COMMIT", e);
out:
	task_row_free(&p);
	return rc;
}

int store_task_start(struct store *s, const char *id, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	int rc = transition_locked(s, id, TASK_PREPARING, NULL, e);
	/* A task queued again starts without its last run's error. */
	if (rc == 0)
		rc = update_task(s, "UPDATE tasks SET attempts = attempts + 1, error = NULL, "
		                 "reason = NULL WHERE id = ?", id, e, 0, NULL, 0, NULL);
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

/* Inside a transaction: what becomes of one active task whose process
 * stopped (see store_task_interrupted). */
/* Inside a transaction: *yes 1 when task t is in the first round's fix
 * loop (no round reached review yet); the task is then set back to round
 * 1, its fix rounds gone, to start again as a first round does. */
static int first_round_fix(struct store *s, const struct task_row *t, int *yes, struct err *e)
{
	struct task_round *r;
	size_t n;
	*yes = 0;
	if (store_rounds(s, t->id, &r, &n, e) < 0)
		return -1;
	*yes = round_is_fix(r, n, t->round) && rollback_target(r, n, t->round) == 0;
	task_rounds_free(r, n);
	if (!*yes)
		return 0;
	const int one[] = { 1 };
	if (update_task(s, "DELETE FROM rounds WHERE n > ? AND task_seq = "
	                "(SELECT seq FROM tasks WHERE id = ?)", t->id, e, 0, NULL, 1, one) < 0)
		return -1;
	return update_task(s, "UPDATE tasks SET round = ? WHERE id = ?", t->id, e, 0, NULL, 1,
	                   one);
}

static int interrupted_locked(struct store *s, const struct task_row *t, int planned,
                              int max_attempts, const char *why, enum task_status *to,
                              struct err *e)
{
	const char *step = task_status_name(t->status);
	char *msg;
	int rc;
	if (t->cancel_requested) {
		*to = TASK_CANCELLED;
		return transition_locked(s, t->id, TASK_CANCELLED, _("cancelled while it ran"), e);
	}
	int fix_of_first = 0;
	if (t->round > 1 && first_round_fix(s, t, &fix_of_first, e) < 0)
		return -1;
	if (t->round > 1 && !fix_of_first) {
		*to = TASK_REVIEW;
		msg = xasprintf(_("%s: round %d was interrupted (%s); the task is back at review "
		                  "with round %d's work, and the notes can be sent again"),
		                step, t->round, why, t->round - 1);
		rc = rollback_locked(s, t, msg, e);
		free(msg);
		if (rc == 0)
			return 0;
		/* No reviewed work to go back to: nothing can be recovered. */
		*to = TASK_LOST;
		msg = xasprintf("%s: %s", step, why);
		rc = transition_locked(s, t->id, TASK_LOST, msg, e);
		free(msg);
		return rc;
	}
	/* A planned stop does not use up an attempt. */
	int attempts = planned && t->attempts > 0 ? t->attempts - 1 : t->attempts;
	if (!planned && max_attempts > 0 && attempts >= max_attempts) {
		*to = TASK_FAILED;
		msg = xasprintf(_("%s: %s; the task was tried %d times (paddock.max-attempts = %d), "
		                  "every time interrupted"), step, why, attempts, max_attempts);
		rc = transition_locked(s, t->id, TASK_FAILED, msg, e);
		free(msg);
		const char *texts[] = { "crashed" };
		return rc < 0 ? -1 : update_task(s, "UPDATE tasks SET reason = ? WHERE id = ?",
		                                 t->id, e, 1, texts, 0, NULL);
	}
	*to = TASK_QUEUED;
	msg = xasprintf(_("%s: %s; queued again (attempt %d of %d)"), step, why, attempts + 1,
	                max_attempts);
	const int ints[] = { attempts };
	rc = update_task(s, "UPDATE tasks SET attempts = ?, sandbox_kept = 0 WHERE id = ?", t->id,
	                 e, 0, NULL, 1, ints);
	if (rc == 0)
		rc = transition_locked(s, t->id, TASK_QUEUED, msg, e);
	free(msg);
	return rc;
}

int store_task_interrupted(struct store *s, const char *id, int planned, int max_attempts,
                           const char *why, enum task_status *to, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	enum task_status dummy;
	if (store_task_get(s, id, &t, e) == 0) {
		if (!task_status_is_active(t.status) || t.status == TASK_PUSHING)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s, not interrupted"), t.id,
			             task_status_label(t.status));
		else
			rc = interrupted_locked(s, &t, planned, max_attempts, why, to ? to : &dummy, e);
		task_row_free(&t);
	}
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_recover_active(struct store *s, int max_attempts, const char *why,
                         struct store_recovery *out, struct err *e)
{
	struct task_row *rows;
	size_t n;
	memset(out, 0, sizeof *out);
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_query q = { .status_mask = TASK_MASK_ACTIVE };
	if (store_task_query(s, &q, &rows, &n, e) < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		/* Pushes run in the process that decided (gate.h); whoever
		 * touches a task whose pusher died reconciles it. */
		if (!task_status_is_active(rows[i].status) || rows[i].status == TASK_PUSHING)
			continue;
		enum task_status to;
		if (interrupted_locked(s, &rows[i], 0, max_attempts, why, &to, e) < 0) {
			task_rows_free(rows, n);
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		switch (to) {
		case TASK_QUEUED: out->queued++; break;
		case TASK_REVIEW: out->review++; break;
		case TASK_FAILED: out->failed++; break;
		case TASK_CANCELLED: out->cancelled++; break;
		default: out->lost++; break;
		}
	}
	task_rows_free(rows, n);
	return exec(s, "COMMIT", e);
}

static int allowed_column(const char *c)
{
	static const char *const cols[] = { "summary", "pr_url", "pushed", "reviewed_head",
	                                    "pending", "error", "session", "reason",
	                                    "dry_run_record", NULL };
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
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
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
	sqlite3_bind_double(st, 3, clock_wall());
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
	sqlite3_bind_double(st, 3, clock_wall());
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
		free(r[i].kind);
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

/* The rows a query about task id (its one parameter) gives, into a new
 * array of elements of size sz, each filled by fill. */
static int rows_of_task(struct store *s, const char *sql, const char *id, size_t sz,
                        void (*fill)(sqlite3_stmt *st, void *elem), void **out, size_t *n,
                        const char *what, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, what);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	char *v = NULL;
	size_t cnt = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = xrealloc(v, (cnt + 1) * sz);
		fill(st, v + cnt * sz);
		cnt++;
	}
	sqlite3_finalize(st);
	*out = v;
	*n = cnt;
	return 0;
}

static void round_fill(sqlite3_stmt *st, void *elem)
{
	struct task_round *r = elem;
	r->n = sqlite3_column_int(st, 0);
	r->from = col_str(st, 1);
	r->head = col_str(st, 2);
	r->gate = col_str(st, 3);
	r->started = sqlite3_column_double(st, 4);
	r->ended = sqlite3_column_double(st, 5);
	r->kind = col_str(st, 6);
}

int store_rounds(struct store *s, const char *id, struct task_round **out, size_t *n,
                 struct err *e)
{
	void *v;
	int rc = rows_of_task(s, "SELECT n, from_commit, head, gate, started, ended, kind FROM rounds "
	                      "WHERE task_seq = (SELECT seq FROM tasks WHERE id = ?) ORDER BY n",
	                      id, sizeof **out, round_fill, &v, n, "rounds", e);
	*out = v;
	return rc;
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
	sqlite3_bind_double(st, 4, clock_wall());
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

static void decision_fill(sqlite3_stmt *st, void *elem)
{
	struct task_decision *d = elem;
	d->round = sqlite3_column_int(st, 0);
	d->action = col_str(st, 1);
	d->notes = col_str(st, 2);
	d->actor = col_str(st, 3);
	d->at = sqlite3_column_double(st, 4);
}

int store_decisions(struct store *s, const char *id, struct task_decision **out, size_t *n,
                    struct err *e)
{
	void *v;
	int rc = rows_of_task(s, "SELECT round, action, notes, actor, at FROM decisions "
	                      "WHERE task_seq = (SELECT seq FROM tasks WHERE id = ?) ORDER BY n",
	                      id, sizeof **out, decision_fill, &v, n, "decisions", e);
	*out = v;
	return rc;
}

int store_history(struct store *s, const char *id, struct task_history *h, struct err *e)
{
	memset(h, 0, sizeof *h);
	if (store_rounds(s, id, &h->rounds, &h->nrounds, e) < 0 ||
	    store_decisions(s, id, &h->decisions, &h->ndecisions, e) < 0) {
		task_history_free(h);
		return -1;
	}
	/* Decisions without a round row come from before rounds were kept. */
	h->last = h->nrounds ? h->rounds[h->nrounds - 1].n : h->ndecisions ? 1 : 0;
	return 0;
}

void task_history_free(struct task_history *h)
{
	task_rounds_free(h->rounds, h->nrounds);
	task_decisions_free(h->decisions, h->ndecisions);
	memset(h, 0, sizeof *h);
}

char *task_history_round_text(const struct task_history *h, int n)
{
	const struct task_round *rn = NULL;
	for (size_t i = 0; i < h->nrounds; i++)
		if (h->rounds[i].n == n)
			rn = &h->rounds[i];
	/* A reviewer's round (paddock shell --keep) says so. */
	if (rn && rn->head && rn->kind && !strcmp(rn->kind, "reviewer"))
		return xasprintf(_("%d  %.12s..%.12s  (reviewer's shell)"), n,
		                 rn->from ? rn->from : "?", rn->head);
	if (rn && rn->head)
		return xasprintf("%d  %.12s..%.12s", n, rn->from ? rn->from : "?", rn->head);
	if (rn && !rn->ended)
		return xasprintf(_("%d  (running)"), n);
	return xasprintf(_("%d  (no work)"), n);
}

char *task_decision_text(const struct task_decision *d)
{
	char when[64];
	time_t at = (time_t)d->at;
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&at, &tm));
	return xasprintf(_("%s  %s by %s"), when, d->action, d->actor);
}

static int draft_delete(struct store *s, const char *id, long long upto, struct err *e);

int store_task_request_changes(struct store *s, const char *id, const char *notes,
                               const char *actor, struct err *e)
{
	return store_task_request_changes_draft(s, id, notes, actor, 0, e);
}

int store_task_request_changes_draft(struct store *s, const char *id, const char *notes,
                                     const char *actor, long long upto, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status != TASK_REVIEW)
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; changes can be requested only "
		             "at review"), t.id, task_status_label(t.status));
	else if (t.pending)
		err_kind_set(e, ERR_WRONG_STATE, _("task %s already has changes requested; they "
		             "start when the scheduler picks them up"), t.id);
	else if (decision_insert(s, t.id, "request-changes", notes, actor, e) == 0 &&
	         store_task_set(s, t.id, "pending", "request-changes", e) == 0 &&
	         store_task_set(s, t.id, "reviewed_head", t.head, e) == 0 &&
	         (upto <= 0 || draft_delete(s, t.id, upto, e) >= 0))
		rc = 0;
	task_row_free(&t);
out:
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_task_reopen_changes(struct store *s, const char *id, const char *notes,
                              const char *actor, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status == TASK_DONE && (!t.pushed || !t.head || strcmp(t.pushed, t.head) != 0)) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is done, but its last round was not "
		             "pushed; changes can be asked for only on the work its pull request "
		             "holds"), t.id);
	} else if (t.status != TASK_DONE && t.status != TASK_REVIEW) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; changes can be requested only "
		             "at review or on a done task's open pull request"), t.id,
		             task_status_label(t.status));
	} else if (t.pending) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s already has changes requested; they "
		             "start when the scheduler picks them up"), t.id);
	} else {
		rc = 0;
		/* Done is otherwise final: this is its only way back, for a pull
		 * request that is still open and asks for more. */
		if (t.status == TASK_DONE) {
			sqlite3_stmt *st;
			rc = -1;
			if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET status = 'review', updated = ? "
			                       "WHERE id = ? AND status = 'done'", -1, &st,
			                       NULL) == SQLITE_OK) {
				sqlite3_bind_double(st, 1, clock_wall());
				sqlite3_bind_text(st, 2, t.id, -1, SQLITE_STATIC);
				rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "reopen");
				sqlite3_finalize(st);
			} else {
				db_err(s, e, "reopen");
			}
			double at = (double)(long long)((clock_wall() - t.created) * 1000 + 0.5) / 1000;
			if (rc == 0)
				rc = add_step(s, t.id, at < 0 ? 0 : at, TASK_REVIEW, e);
		}
		if (rc == 0 && (decision_insert(s, t.id, "request-changes", notes, actor, e) < 0 ||
		                store_task_set(s, t.id, "pending", "request-changes", e) < 0 ||
		                store_task_set(s, t.id, "reviewed_head", t.head, e) < 0))
			rc = -1;
	}
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
		err_kind_set(e, ERR_WRONG_STATE, _("task %s has no changes requested"), t.id);
	} else {
		/* The round first: the "running" step is the new round's. */
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET round = round + 1, pending = NULL, "
		                       "error = NULL, reason = NULL, failed_round = 0, "
		                       "failed_head = NULL, failed_why = NULL WHERE id = ?", -1, &st,
		                       NULL) != SQLITE_OK) {
			db_err(s, e, "resume");
		} else {
			sqlite3_bind_text(st, 1, t.id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) != SQLITE_DONE)
				db_err(s, e, "resume");
			else if (transition_locked(s, t.id, TASK_RUNNING, NULL, e) == 0 &&
			         store_round_begin(s, t.id, t.round + 1, t.head, e) == 0) {
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

int store_task_fix_round(struct store *s, const char *id, int n, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status != TASK_RUNNING && t.status != TASK_TESTING) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; only a running task gets a fix "
		             "round"), t.id, task_status_label(t.status));
	} else if (n != t.round + 1) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is in round %d; its fix round would be "
		             "%d, not %d"), t.id, t.round, t.round + 1, n);
	} else {
		/* The round first: the "running" step is the new round's. */
		const int ints[] = { n };
		rc = update_task(s, "UPDATE tasks SET round = ?, error = NULL, reason = NULL "
		                 "WHERE id = ?", t.id, e, 0, NULL, 1, ints);
		if (rc == 0 && t.status != TASK_RUNNING)
			rc = transition_locked(s, t.id, TASK_RUNNING, NULL, e);
		if (rc == 0)
			rc = store_round_begin(s, t.id, n, t.head ? t.head : t.base, e);
		if (rc == 0)
			rc = store_round_set_kind(s, t.id, n, "fix", e);
	}
	task_row_free(&t);
out:
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_task_set_budget(struct store *s, const char *id, double budget, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET budget = ? WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "update");
	if (budget < 0)
		sqlite3_bind_null(st, 1);
	else
		sqlite3_bind_double(st, 1, budget);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "update");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

/* SQLite integers are signed: counts beyond 2^63-1 are stored as that. */
static sqlite3_int64 i64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

int store_task_set_usage(struct store *s, const char *id, const struct task_usage *u,
                         struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET tokens_in = ?, tokens_out = ?, "
	                       "tokens_cache_read = ?, tokens_cache_write = ?, requests = ?, "
	                       "cost = ?, priced = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "usage");
	sqlite3_bind_int64(st, 1, i64(u->in));
	sqlite3_bind_int64(st, 2, i64(u->out));
	sqlite3_bind_int64(st, 3, i64(u->cache_read));
	sqlite3_bind_int64(st, 4, i64(u->cache_write));
	sqlite3_bind_int64(st, 5, i64(u->requests));
	sqlite3_bind_double(st, 6, u->cost > 0 ? u->cost : 0);
	sqlite3_bind_int(st, 7, u->priced != 0);
	sqlite3_bind_text(st, 8, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "usage");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

/* ---- reports from the gateway (JSON) ---- */

/* Longest string kept from a report: a host or a path is never longer for
 * a person, and a hostile request cannot grow the store by much. */
#define REPORT_STR_MAX 1024

static json_t *report_parse(const char *what, const char *text, struct err *e)
{
	json_error_t je;
	json_t *j = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		err_set(e, _("%s report is not a JSON object: %s"), what,
		        j ? _("another JSON value") : je.text);
		return NULL;
	}
	return j;
}

/* A number field: 0 when missing or null.  -1 when not a number. */
static int report_num(json_t *o, const char *what, const char *key, double *out,
                      struct err *e)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return err_set(e, _("%s report: \"%s\" is not a number"), what, key);
	*out = json_number_value(v);
	return 0;
}

/* A count: a number, negative ones taken as 0. */
static int report_count(json_t *o, const char *what, const char *key, uint64_t *out,
                        struct err *e)
{
	double d;
	if (report_num(o, what, key, &d, e) < 0)
		return -1;
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		*out = json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	else
		*out = d > 0 ? (d < 1.8e19 ? (uint64_t)d : UINT64_MAX) : 0;
	return 0;
}

/* A string field, cut to REPORT_STR_MAX bytes on a character boundary:
 * NULL when missing or null.  -1 when not a string. */
static int report_str(json_t *o, const char *what, const char *key, char **out,
                      struct err *e)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, _("%s report: \"%s\" is not a string"), what, key);
	const char *str = json_string_value(v);
	size_t n = json_string_length(v);
	if (n > REPORT_STR_MAX) {
		n = REPORT_STR_MAX;
		while (n > 0 && ((unsigned char)str[n] & 0xc0) == 0x80)
			n--;
	}
	/* An embedded NUL (\u0000) ends the text. */
	*out = xstrndup(str, strnlen(str, n));
	return 0;
}

int store_usage_parse(const char *json, struct task_usage *u, struct err *e)
{
	json_t *j = report_parse("usage", json, e);
	if (!j)
		return -1;
	memset(u, 0, sizeof *u);
	u->priced = 1;
	int rc = -1;
	json_t *priced = json_object_get(j, "priced");
	if (report_count(j, "usage", "input", &u->in, e) < 0 ||
	    report_count(j, "usage", "output", &u->out, e) < 0 ||
	    report_count(j, "usage", "cache_read", &u->cache_read, e) < 0 ||
	    report_count(j, "usage", "cache_write", &u->cache_write, e) < 0 ||
	    report_count(j, "usage", "requests", &u->requests, e) < 0 ||
	    report_num(j, "usage", "cost", &u->cost, e) < 0)
		goto out;
	if (priced && !json_is_null(priced) && !json_is_boolean(priced)) {
		err_set(e, _("%s report: \"%s\" is not true or false"), "usage", "priced");
		goto out;
	}
	if (json_is_false(priced))
		u->priced = 0;
	if (!(u->cost >= 0))
		u->cost = 0;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

static void bind_str_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int store_egress_add(struct store *s, const char *id, int round, const char *json,
                     struct err *e)
{
	json_t *j = report_parse("egress", json, e);
	if (!j)
		return -1;
	static const char *const strs[] = { "step", "kind", "endpoint", "host", "method", "path",
	                                    "verdict", "reason" };
	enum { NSTR = sizeof strs / sizeof strs[0] };
	char *v[NSTR] = { 0 };
	double time, port, status, ms;
	uint64_t up, down;
	int rc = -1;
	for (size_t i = 0; i < NSTR; i++)
		if (report_str(j, "egress", strs[i], &v[i], e) < 0)
			goto out;
	if (report_num(j, "egress", "time", &time, e) < 0 ||
	    report_num(j, "egress", "port", &port, e) < 0 ||
	    report_num(j, "egress", "status", &status, e) < 0 ||
	    report_num(j, "egress", "ms", &ms, e) < 0 ||
	    report_count(j, "egress", "up", &up, e) < 0 ||
	    report_count(j, "egress", "down", &down, e) < 0)
		goto out;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO egress (task_id, round, time, step, kind, endpoint, host, port, "
	        "method, path, status, up, down, ms, verdict, reason) "
	        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st,
	        NULL) != SQLITE_OK) {
		db_err(s, e, "egress");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, round);
	sqlite3_bind_double(st, 3, time > 0 ? time : clock_wall());
	for (int i = 0; i < 4; i++)          /* step kind endpoint host */
		bind_str_or_null(st, 4 + i, v[i]);
	sqlite3_bind_int(st, 8, port > 0 && port < 65536 ? (int)port : 0);
	bind_str_or_null(st, 9, v[4]);
	bind_str_or_null(st, 10, v[5]);
	if (status > 0 && status < 1000)
		sqlite3_bind_int(st, 11, (int)status);
	else
		sqlite3_bind_null(st, 11);
	sqlite3_bind_int64(st, 12, i64(up));
	sqlite3_bind_int64(st, 13, i64(down));
	sqlite3_bind_double(st, 14, ms > 0 ? ms : 0);
	bind_str_or_null(st, 15, v[6]);
	bind_str_or_null(st, 16, v[7]);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "egress");
	sqlite3_finalize(st);
out:
	for (size_t i = 0; i < NSTR; i++)
		free(v[i]);
	json_decref(j);
	return rc;
}

int store_egress_list(struct store *s, const char *id, struct egress_row **out, size_t *n,
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT id, round, time, step, kind, endpoint, host, port, method, path, status, "
	        "up, down, ms, verdict, reason FROM egress WHERE task_id = ? ORDER BY id", -1,
	        &st, NULL) != SQLITE_OK)
		return db_err(s, e, "egress");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	struct egress_row *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		struct egress_row *r = &v[cnt++];
		r->id = sqlite3_column_int64(st, 0);
		r->round = sqlite3_column_int(st, 1);
		r->time = sqlite3_column_double(st, 2);
		r->step = col_str(st, 3);
		r->kind = col_str(st, 4);
		r->endpoint = col_str(st, 5);
		r->host = col_str(st, 6);
		r->port = sqlite3_column_int(st, 7);
		r->method = col_str(st, 8);
		r->path = col_str(st, 9);
		r->status = sqlite3_column_int(st, 10);
		r->up = col_u64(st, 11);
		r->down = col_u64(st, 12);
		r->ms = sqlite3_column_double(st, 13);
		r->verdict = col_str(st, 14);
		r->reason = col_str(st, 15);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_egress_free(v, cnt);
		return db_err(s, e, "egress");
	}
	*out = v;
	*n = cnt;
	return 0;
}

void store_egress_free(struct egress_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].step);
		free(r[i].kind);
		free(r[i].endpoint);
		free(r[i].host);
		free(r[i].method);
		free(r[i].path);
		free(r[i].verdict);
		free(r[i].reason);
	}
	free(r);
}

int store_pause_set(struct store *s, const char *endpoint, double until, int status,
                    const char *task_id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO pauses (endpoint, until, status, task_id, time) VALUES (?, ?, ?, ?, ?) "
	        "ON CONFLICT(endpoint) DO UPDATE SET until = excluded.until, "
	        "status = excluded.status, task_id = excluded.task_id, time = excluded.time "
	        "WHERE excluded.until > pauses.until", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "pauses");
	sqlite3_bind_text(st, 1, endpoint, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, until);
	sqlite3_bind_int(st, 3, status);
	bind_str_or_null(st, 4, task_id);
	sqlite3_bind_double(st, 5, clock_wall());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "pauses");
	sqlite3_finalize(st);
	return rc;
}

int store_pauses_active(struct store *s, double at, struct pause_row **out, size_t *n,
                        struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT endpoint, until, status, task_id, time FROM pauses "
	                       "WHERE until > ? ORDER BY until, endpoint", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "pauses");
	sqlite3_bind_double(st, 1, at);
	struct pause_row *v = NULL;
	size_t cnt = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (cnt + 1) * sizeof *v);
		v[cnt].endpoint = col_str(st, 0);
		v[cnt].until = sqlite3_column_double(st, 1);
		v[cnt].status = sqlite3_column_int(st, 2);
		v[cnt].task_id = col_str(st, 3);
		v[cnt].time = sqlite3_column_double(st, 4);
		if (!v[cnt].endpoint)
			v[cnt].endpoint = xstrdup("");
		cnt++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_pauses_free(v, cnt);
		return db_err(s, e, "pauses");
	}
	*out = v;
	*n = cnt;
	return 0;
}

void store_pauses_free(struct pause_row *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].endpoint);
		free(p[i].task_id);
	}
	free(p);
}

int store_egress_count(struct store *s, const char *id, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM egress WHERE task_id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "egress");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_err(s, e, "egress");
	if (rc == 0)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

/* ---- the webhook queue (schema 4) ---- */

int store_webhook_add(struct store *s, const char *task_id, const char *event,
                      const char *delivery, const char *body, const char *url, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO webhooks (task_id, event, delivery, body, created, next_at, url) "
	        "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	bind_str_or_null(st, 7, url);
	double t = clock_wall();
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, event, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, delivery, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, body, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, t);
	sqlite3_bind_double(st, 6, t);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "webhooks");
	sqlite3_finalize(st);
	return rc;
}

#define WEBHOOK_COLS "id, task_id, event, delivery, body, created, attempts, next_at, " \
                     "last_error, delivered_at, url"

static int webhook_rows(struct store *s, sqlite3_stmt *st, struct webhook_row **out,
                        size_t *n, struct err *e)
{
	struct webhook_row *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, cap * sizeof *v);
		}
		struct webhook_row *r = &v[cnt++];
		r->id = sqlite3_column_int64(st, 0);
		r->task_id = col_str(st, 1);
		r->event = col_str(st, 2);
		r->delivery = col_str(st, 3);
		r->body = col_str(st, 4);
		r->created = sqlite3_column_double(st, 5);
		r->attempts = sqlite3_column_int(st, 6);
		r->next_at = sqlite3_column_type(st, 7) == SQLITE_NULL ? 0 :
		             sqlite3_column_double(st, 7);
		r->last_error = col_str(st, 8);
		r->delivered_at = sqlite3_column_type(st, 9) == SQLITE_NULL ? 0 :
		                  sqlite3_column_double(st, 9);
		r->url = col_str(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_webhooks_free(v, cnt);
		return db_err(s, e, "webhooks");
	}
	*out = v;
	*n = cnt;
	return 0;
}

int store_webhook_due(struct store *s, double at, struct webhook_row **out, size_t *n,
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT " WEBHOOK_COLS " FROM webhooks WHERE next_at IS NOT NULL AND next_at <= ? "
	        "AND delivered_at IS NULL ORDER BY next_at, id LIMIT 64", -1, &st,
	        NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	sqlite3_bind_double(st, 1, at);
	return webhook_rows(s, st, out, n, e);
}

int store_webhook_next(struct store *s, double *at, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT MIN(next_at) FROM webhooks WHERE next_at IS NOT NULL "
	        "AND delivered_at IS NULL", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	int rc = sqlite3_step(st);
	*at = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ?
	      sqlite3_column_double(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_err(s, e, "webhooks");
}

/* One try in the delivery's log. */
static int webhook_attempt(struct store *s, long long id, int status, const char *error,
                           struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO webhook_attempts (webhook_id, n, at, status, error) VALUES (?, "
	        "(SELECT COUNT(*) FROM webhook_attempts WHERE webhook_id = ?), ?, ?, ?)", -1, &st,
	        NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_double(st, 3, clock_wall());
	sqlite3_bind_int(st, 4, status);
	bind_str_or_null(st, 5, error);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "webhooks");
	sqlite3_finalize(st);
	return rc;
}

/* One try ended: the delivery's row and its log, in one transaction.
 * delivered: a 2xx; else next_at (<= 0: given up) and error. */
static int webhook_tried(struct store *s, long long id, int delivered, double next_at,
                         const char *error, int status, struct err *e)
{
	sqlite3_stmt *st;
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	int rc = sqlite3_prepare_v2(s->db, delivered
	        ? "UPDATE webhooks SET attempts = attempts + 1, next_at = NULL, delivered_at = ?1 "
	          "WHERE id = ?3"
	        : "UPDATE webhooks SET attempts = attempts + 1, next_at = ?1, last_error = ?2 "
	          "WHERE id = ?3", -1, &st, NULL) == SQLITE_OK ? 0 : db_err(s, e, "webhooks");
	if (rc == 0) {
		if (delivered)
			sqlite3_bind_double(st, 1, clock_wall());
		else if (next_at > 0)
			sqlite3_bind_double(st, 1, next_at);
		else
			sqlite3_bind_null(st, 1);
		if (!delivered)
			bind_str_or_null(st, 2, error);
		sqlite3_bind_int64(st, 3, id);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "webhooks");
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = webhook_attempt(s, id, status, delivered ? NULL : error, e);
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_webhook_done(struct store *s, long long id, int status, struct err *e)
{
	return webhook_tried(s, id, 1, 0, NULL, status, e);
}

int store_webhook_retry(struct store *s, long long id, double next_at, const char *error,
                        int status, struct err *e)
{
	return webhook_tried(s, id, 0, next_at, error, status, e);
}

int store_webhook_attempts(struct store *s, long long id, struct webhook_attempt **out,
                           size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT at, status, error FROM webhook_attempts WHERE "
	                       "webhook_id = ? ORDER BY n", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	sqlite3_bind_int64(st, 1, id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		struct webhook_attempt *a = &(*out)[(*n)++];
		a->at = sqlite3_column_double(st, 0);
		a->status = sqlite3_column_int(st, 1);
		a->error = col_str(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		store_webhook_attempts_free(*out, *n);
		*out = NULL;
		*n = 0;
		return db_err(s, e, "webhooks");
	}
	return 0;
}

void store_webhook_attempts_free(struct webhook_attempt *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].error);
	free(a);
}

int store_webhook_list(struct store *s, const char *task_id, struct webhook_row **out,
                       size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, task_id ?
	        "SELECT " WEBHOOK_COLS " FROM webhooks WHERE task_id = ? ORDER BY id" :
	        "SELECT " WEBHOOK_COLS " FROM webhooks ORDER BY id", -1, &st,
	        NULL) != SQLITE_OK)
		return db_err(s, e, "webhooks");
	if (task_id)
		sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	return webhook_rows(s, st, out, n, e);
}

void store_webhooks_free(struct webhook_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].task_id);
		free(r[i].event);
		free(r[i].delivery);
		free(r[i].body);
		free(r[i].last_error);
		free(r[i].url);
	}
	free(r);
}

/* ---- idempotent requests (schema 7) ---- */

/* How long an answer is replayed, and how long a request may take before
 * its key is taken by a retry (its process died on the way). */
#define IDEM_KEEP (24 * 3600.0)
#define IDEM_STALE 120.0

void store_idem_free(struct idem_answer *a)
{
	free(a->body);
	free(a->location);
	memset(a, 0, sizeof *a);
}

static int idem_lookup(struct store *s, const struct idem_key *k, struct idem_answer *out,
                       double now, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT fingerprint, status, body, location, created FROM "
	                       "idempotency WHERE key = ? AND actor = ? AND route = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "idempotency");
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	int rc = STORE_IDEM_NEW;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *fp = (const char *)sqlite3_column_text(st, 0);
		out->status = sqlite3_column_int(st, 1);
		out->body = col_str(st, 2);
		out->location = col_str(st, 3);
		double created = sqlite3_column_double(st, 4);
		if (!out->status)
			/* Still being answered, or abandoned: taken over below. */
			rc = now - created > IDEM_STALE ? STORE_IDEM_NEW : STORE_IDEM_BUSY;
		else if (fp && strcmp(fp, k->fingerprint) != 0)
			rc = STORE_IDEM_MISMATCH;
		else
			rc = STORE_IDEM_REPLAY;
		if (rc == STORE_IDEM_NEW)
			store_idem_free(out);
	}
	sqlite3_finalize(st);
	return rc;
}

int store_idem_begin(struct store *s, const struct idem_key *k, struct idem_answer *out,
                     struct err *e)
{
	memset(out, 0, sizeof *out);
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	double now = clock_wall();
	sqlite3_stmt *st;
	int rc = -1;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM idempotency WHERE created < ?", -1, &st,
	                       NULL) != SQLITE_OK) {
		db_err(s, e, "idempotency");
		goto out;
	}
	sqlite3_bind_double(st, 1, now - IDEM_KEEP);
	sqlite3_step(st);
	sqlite3_finalize(st);
	rc = idem_lookup(s, k, out, now, e);
	if (rc != STORE_IDEM_NEW)
		goto out;
	/* The key is taken now: a second request with it waits for this one's
	 * answer (STORE_IDEM_BUSY) instead of doing the work again. */
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO idempotency (key, actor, route, "
	                       "fingerprint, status, body, created) VALUES (?, ?, ?, ?, 0, '', ?)",
	                       -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(s, e, "idempotency");
		goto out;
	}
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, k->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_err(s, e, "idempotency");
	sqlite3_finalize(st);
out:
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		store_idem_free(out);
		return -1;
	}
	if (exec(s, "COMMIT", e) < 0) {
		store_idem_free(out);
		return -1;
	}
	return rc;
}

int store_idem_finish(struct store *s, const struct idem_key *k, int status, const char *body,
                      const char *location, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, status
	        ? "UPDATE idempotency SET status = ?4, body = ?5, location = ?6 "
	          "WHERE key = ?1 AND actor = ?2 AND route = ?3"
	        : "DELETE FROM idempotency WHERE key = ?1 AND actor = ?2 AND route = ?3",
	        -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "idempotency");
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	if (status) {
		sqlite3_bind_int(st, 4, status);
		sqlite3_bind_text(st, 5, body ? body : "", -1, SQLITE_STATIC);
		bind_str_or_null(st, 6, location);
	}
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "idempotency");
	sqlite3_finalize(st);
	return rc;
}

/* ---- review drafts (schema 8) ---- */

int store_draft_add(struct store *s, const char *id, const struct review_comment *c,
                    struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO review_comments (task_seq, n, round, path, line, old, text, comment, "
	        "created) SELECT seq, (SELECT COALESCE(MAX(n), 0) + 1 FROM review_comments "
	        "WHERE task_seq = tasks.seq), round, ?, ?, ?, ?, ?, ? FROM tasks WHERE id = ?",
	        -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "review draft");
	sqlite3_bind_text(st, 1, c->path ? c->path : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, c->line);
	sqlite3_bind_int(st, 3, c->old != 0);
	sqlite3_bind_text(st, 4, c->text ? c->text : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, c->comment ? c->comment : "", -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, clock_wall());
	sqlite3_bind_text(st, 7, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "review draft");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

static void draft_fill(sqlite3_stmt *st, void *elem)
{
	struct review_comment *c = elem;
	c->n = sqlite3_column_int64(st, 0);
	c->round = sqlite3_column_int(st, 1);
	c->path = col_str(st, 2);
	c->line = (long)sqlite3_column_int64(st, 3);
	c->old = sqlite3_column_int(st, 4);
	c->text = col_str(st, 5);
	c->comment = col_str(st, 6);
	c->created = sqlite3_column_double(st, 7);
}

int store_draft_list(struct store *s, const char *id, struct review_comment **out, size_t *n,
                     struct err *e)
{
	void *v;
	int rc = rows_of_task(s, "SELECT n, round, path, line, old, text, comment, created "
	                      "FROM review_comments WHERE task_seq = (SELECT seq FROM tasks "
	                      "WHERE id = ?) ORDER BY n", id, sizeof **out, draft_fill, &v, n,
	                      "review draft", e);
	*out = v;
	return rc;
}

void store_draft_free(struct review_comment *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].path);
		free(c[i].text);
		free(c[i].comment);
	}
	free(c);
}

int store_draft_count(struct store *s, const char *id, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM review_comments WHERE task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "review draft");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : db_err(s, e, "review draft");
	if (rc == 0)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

/* Removes the task's comments up to n = upto; how many went, or -1. */
static int draft_delete(struct store *s, const char *id, long long upto, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM review_comments WHERE n <= ? AND task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "review draft");
	sqlite3_bind_int64(st, 1, upto);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db)
	                                         : db_err(s, e, "review draft");
	sqlite3_finalize(st);
	return rc;
}

int store_draft_discard(struct store *s, const char *id, long long upto, struct err *e)
{
	return draft_delete(s, id, upto, e);
}

/* ---- best-of-N groups, confirmation, round kinds (schema 9) ---- */

void task_group_free(struct task_group *g)
{
	if (!g)
		return;
	free(g->text);
	free(g->chosen);
	memset(g, 0, sizeof *g);
}

int store_group_create(struct store *s, const char *text, const struct task_new *ns, size_t n,
                       char id_out[TASK_ID_LEN + 1], char (*ids_out)[TASK_ID_LEN + 1],
                       size_t *queued, struct err *e)
{
	if (n == 0)
		return err_kind_set(e, ERR_INVALID, _("a group needs at least one task"));
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	int rc = 0;
	if (ns[0].max_queued) {
		size_t q = 0;
		rc = queued_count(s, &q, e);
		if (rc == 0 && q + n > ns[0].max_queued) {
			if (queued)
				*queued = q;
			rc = -2;
		}
	}
	sqlite3_stmt *st = NULL;
	if (rc == 0 && sqlite3_prepare_v2(s->db, "INSERT INTO task_groups (id, text, created) "
	                                  "VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		rc = db_err(s, e, "group");
	/* Ids share the tasks' alphabet; the UNIQUE key turns a collision
	 * into another try. */
	for (int tries = 0; rc == 0; tries++) {
		task_id_new(id_out);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, id_out, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 3, clock_wall());
		int step = sqlite3_step(st);
		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_CONSTRAINT || tries > 8)
			rc = db_err(s, e, "group");
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct task_new tn = ns[i];
		tn.group_id = id_out;
		rc = add_locked(s, &tn, ids_out[i], e);
	}
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	return exec(s, "COMMIT", e);
}

int store_group_get(struct store *s, const char *id, struct task_group *g, struct err *e)
{
	memset(g, 0, sizeof *g);
	if (!task_id_valid(id, 1))
		return err_kind_set(e, ERR_INVALID, _("'%s' is not a group id (ids look like %s); "
		                                      "'paddock list' shows each task's group"), id,
		                    "k3x9m2qa7d");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT id, text, created, chosen FROM task_groups "
	                       "WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "group");
	char hi[TASK_ID_LEN + 2];
	snprintf(hi, sizeof hi, "%s~", id);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hi, -1, SQLITE_STATIC);
	int rc = -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err_kind_set(e, ERR_NOT_FOUND, _("no group %s; 'paddock list' shows each task's "
		                                 "group"), id);
	} else {
		snprintf(g->id, sizeof g->id, "%s", (const char *)sqlite3_column_text(st, 0));
		g->text = col_str(st, 1);
		g->created = sqlite3_column_double(st, 2);
		g->chosen = col_str(st, 3);
		rc = 0;
		if (sqlite3_step(st) == SQLITE_ROW) {
			err_kind_set(e, ERR_NOT_FOUND, _("group id prefix %s is ambiguous; type more "
			                                 "of it"), id);
			task_group_free(g);
			rc = -1;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

int store_group_choose(struct store *s, const char *id, const char *task_id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE task_groups SET chosen = ? WHERE id = ? AND "
	                       "chosen IS NULL AND EXISTS (SELECT 1 FROM tasks WHERE id = ? AND "
	                       "group_id = task_groups.id)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "group");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, task_id, -1, SQLITE_STATIC);
	int rc = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_err(s, e, "group");
	else if (sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_CONFLICT, _("group %s has a task picked already, or task %s "
		                                     "is not one of its members"), id, task_id);
	sqlite3_finalize(st);
	return rc;
}

int store_task_confirm(struct store *s, const char *id, const char *actor, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET confirm = 'confirmed', updated = ? "
	                       "WHERE id = ? AND status = 'queued' AND confirm = 'needed'", -1,
	                       &st, NULL) != SQLITE_OK) {
		rc = db_err(s, e, "confirm");
	} else {
		sqlite3_bind_double(st, 1, clock_wall());
		sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_err(s, e, "confirm");
		else if (sqlite3_changes(s->db) == 0)
			rc = err_kind_set(e, ERR_WRONG_STATE, _("task %s does not wait for a confirmation "
			                                     "(only a queued task whose estimated cost "
			                                     "is over its confirm-over does)"), id);
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = decision_insert(s, id, "confirm", NULL, actor, e);
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_round_set_kind(struct store *s, const char *id, int n, const char *kind,
                         struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE rounds SET kind = ? WHERE n = ? AND task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "rounds");
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, n);
	sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

/* The task row's and the round's part of store_task_reviewer_round, in
 * its transaction. */
static int reviewer_round_locked(struct store *s, const char *id, int n, const char *from,
                                 const char *head, const char *gate, const char *summary,
                                 double started, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET round = ?, head = ?, summary = ?, "
	                       "failed_round = 0, failed_head = NULL, failed_why = NULL "
	                       "WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "reviewer round");
	sqlite3_bind_int(st, 1, n);
	sqlite3_bind_text(st, 2, head, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, summary, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "reviewer round");
	sqlite3_finalize(st);
	if (rc < 0)
		return -1;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO rounds (task_seq, n, from_commit, "
	                       "head, gate, started, ended, kind) SELECT seq, ?, ?, ?, ?, ?, ?, "
	                       "'reviewer' FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, "rounds");
	sqlite3_bind_int(st, 1, n);
	sqlite3_bind_text(st, 2, from, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, head, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, gate, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, started);
	sqlite3_bind_double(st, 6, clock_wall());
	sqlite3_bind_text(st, 7, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

int store_task_reviewer_round(struct store *s, const char *id, int n, const char *from,
                              const char *head, const char *gate, const char *summary,
                              double started, struct err *e)
{
	if (exec(s, "BEGIN IMMEDIATE", e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) == 0) {
		if (t.status != TASK_REVIEW || t.pending)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s%s now; a reviewer's round is "
			             "kept only while the task waits at review"), t.id,
			             task_status_label(t.status),
			             t.pending ? _(" with changes requested") : "");
		else if (t.round != n - 1 || !t.head || strcmp(t.head, from) != 0)
			err_kind_set(e, ERR_CONFLICT, _("task %s moved on to round %d while the shell "
			             "ran; the reviewer's round %d would not follow it"), t.id, t.round, n);
		else
			rc = reviewer_round_locked(s, t.id, n, from, head, gate, summary, started, e);
		task_row_free(&t);
	}
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(s, "COMMIT", e);
}

int store_recipe_spend(struct store *s, const char *recipe, double *mean, size_t *n,
                       struct err *e)
{
	*mean = 0;
	*n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*), COALESCE(AVG(cost), 0) FROM tasks WHERE "
	                       "recipe = ? AND status IN ('done', 'failed', 'rejected')", -1, &st,
	                       NULL) != SQLITE_OK)
		return db_err(s, e, "spend");
	sqlite3_bind_text(st, 1, recipe, -1, SQLITE_STATIC);
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*n = (size_t)sqlite3_column_int64(st, 0);
		*mean = sqlite3_column_double(st, 1);
	} else {
		rc = db_err(s, e, "spend");
	}
	sqlite3_finalize(st);
	return rc;
}
