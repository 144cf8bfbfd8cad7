/* store: the store's opening, its schema and migrations, the database's
 * change watch, and the helpers its files share (store_int.h). */
#include "autoconfig.h"
#include "store.h"

#include <errno.h>
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
#include "i18n.h"
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
	/* 11: the scheduler's look at the gates (autogate.h), each tick:
	 * the tasks an approval mode without a person may decide, by status,
	 * so that the look reads those, not every task at review (issue 14).
	 * store_tasks.c's query_sql asks it in the same words. */
	"CREATE INDEX tasks_autogate ON tasks(status, seq) "
	"  WHERE approval IN ('auto', 'auto-push') OR pr_url IS NOT NULL;",
	/* 12: a pull request that failed to open (issue 36): why, when, how
	 * many tries, and when the scheduler tries again; all NULL (0 tries)
	 * when none failed or once it opened. */
	"ALTER TABLE tasks ADD COLUMN pr_error TEXT;"
	"ALTER TABLE tasks ADD COLUMN pr_error_at REAL;"
	"ALTER TABLE tasks ADD COLUMN pr_attempts INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN pr_retry_at REAL;"
	/* The scheduler's look for tries due, each tick (store_task_pr_due):
	 * the few tasks that wait for one, not every task. */
	"CREATE INDEX tasks_pr_retry ON tasks(pr_retry_at) WHERE pr_retry_at IS NOT NULL;",
	/* 13: who queued a task (issue 36, role.h): the token's name through
	 * the API, the Unix user locally; NULL for older tasks and those
	 * GitHub's issues made. */
	"ALTER TABLE tasks ADD COLUMN queued_by TEXT;",
	/* 14: decisions that push (approve, push, group pick) recorded by
	 * whoever decides and carried out by the scheduler with its own
	 * credentials (issue 36, store_actions.c): state pending, running
	 * (by says which process), done or failed; result as the CLI exits
	 * (0, 1); outcome the lines it prints. */
	"CREATE TABLE actions ("
	"  id INTEGER PRIMARY KEY,"
	"  task TEXT NOT NULL,"
	"  action TEXT NOT NULL,"
	"  target TEXT,"
	"  notes TEXT,"
	"  actor TEXT NOT NULL,"
	"  requested REAL NOT NULL,"
	"  state TEXT NOT NULL DEFAULT 'pending',"
	"  by TEXT,"
	"  result INTEGER,"
	"  outcome TEXT,"
	"  error TEXT,"
	"  finished REAL);"
	"CREATE INDEX actions_open ON actions(state) WHERE state IN ('pending', 'running');",
	/* 15: the instance's audit trail (issue 36, store_audit.h): every
	 * decision and refusal of every task, copied by a trigger so that no writer can
	 * forget it, and the tokens' role changes; one sequence, so that
	 * GET /events and `paddock audit` resume and list in the order
	 * things were recorded.  The decisions before it are copied in. */
	"CREATE TABLE audit ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  at REAL NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  actor TEXT NOT NULL,"
	"  task_id TEXT,"
	"  round INTEGER,"
	"  action TEXT,"
	"  notes TEXT,"
	"  token TEXT,"
	"  old_role TEXT,"
	"  new_role TEXT);"
	"INSERT INTO audit (at, kind, actor, task_id, round, action, notes) "
	"  SELECT d.at, 'decision', d.actor, t.id, d.round, d.action, d.notes"
	"  FROM decisions d JOIN tasks t ON t.seq = d.task_seq ORDER BY d.at, d.task_seq, d.n;"
	"CREATE TRIGGER audit_decision AFTER INSERT ON decisions BEGIN"
	"  INSERT INTO audit (at, kind, actor, task_id, round, action, notes)"
	"    VALUES (NEW.at, 'decision', NEW.actor,"
	"            (SELECT id FROM tasks WHERE seq = NEW.task_seq), NEW.round, NEW.action,"
	"            NEW.notes);"
	"END;",
	/* 16: the numbers GET /metrics shows (issue 37, store_metrics.c),
	 * kept by triggers as task_counts is, so that a scrape reads a few
	 * rows instead of tables that only grow (tasks, steps, egress), and
	 * is right whichever process did the work.  metric names a series,
	 * a, b and c its labels' values; counters only grow, but for
	 * 'tasks' (a gauge).  step_seconds counts each step's time in
	 * histogram buckets (b: the bucket's bound, metrics.c's
	 * METRICS_BUCKETS) from the step after it; steps.at counts from the
	 * task's creation.  What was there before is counted once here,
	 * the steps' times and the interrupted attempts aside. */
	"CREATE TABLE metric_counts ("
	"  metric TEXT NOT NULL,"
	"  a TEXT NOT NULL DEFAULT '', b TEXT NOT NULL DEFAULT '', c TEXT NOT NULL DEFAULT '',"
	"  n REAL NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (metric, a, b, c)) WITHOUT ROWID;"
	"INSERT INTO metric_counts (metric, a, b, n)"
	"  SELECT 'tasks', repo, status, COUNT(*) FROM tasks GROUP BY repo, status;"
	"INSERT INTO metric_counts (metric, a, n)"
	"  SELECT 'started', repo, SUM(attempts) FROM tasks GROUP BY repo;"
	"INSERT INTO metric_counts (metric, a, b, n)"
	"  SELECT 'ended', repo, status, COUNT(*) FROM tasks"
	"  WHERE status IN ('done', 'failed', 'rejected', 'cancelled', 'lost')"
	"  GROUP BY repo, status;"
	"INSERT INTO metric_counts (metric, a, b, n)"
	"  SELECT 'failures', repo, COALESCE(reason, 'unknown'), COUNT(*) FROM tasks"
	"  WHERE status = 'failed' GROUP BY repo, COALESCE(reason, 'unknown');"
	"INSERT INTO metric_counts (metric, a, b, c, n)"
	"  SELECT 'tokens', repo, agent, 'input', SUM(tokens_in) FROM tasks GROUP BY repo, agent"
	"  UNION ALL SELECT 'tokens', repo, agent, 'output', SUM(tokens_out) FROM tasks"
	"  GROUP BY repo, agent"
	"  UNION ALL SELECT 'tokens', repo, agent, 'cache_read', SUM(tokens_cache_read) FROM tasks"
	"  GROUP BY repo, agent"
	"  UNION ALL SELECT 'tokens', repo, agent, 'cache_write', SUM(tokens_cache_write)"
	"  FROM tasks GROUP BY repo, agent;"
	"INSERT INTO metric_counts (metric, a, b, n)"
	"  SELECT 'cost', repo, agent, SUM(cost) FROM tasks GROUP BY repo, agent;"
	"INSERT INTO metric_counts (metric, a, n)"
	"  SELECT 'rounds', t.repo, COUNT(*) FROM rounds r JOIN tasks t ON t.seq = r.task_seq"
	"  GROUP BY t.repo;"
	"INSERT INTO metric_counts (metric, a, b, c, n)"
	"  SELECT 'egress', COALESCE(endpoint, ''), COALESCE(kind, ''), COALESCE(verdict, ''),"
	"  COUNT(*) FROM egress WHERE kind IS NOT 'unlisted' GROUP BY 2, 3, 4;"
	"INSERT INTO metric_counts (metric, n)"
	"  SELECT 'webhook_failures', COUNT(*) FROM webhook_attempts"
	"  WHERE error IS NOT NULL OR status NOT BETWEEN 200 AND 299;"
	"CREATE TRIGGER metric_tasks_insert AFTER INSERT ON tasks BEGIN"
	"  INSERT INTO metric_counts (metric, a, b, n) VALUES ('tasks', NEW.repo, NEW.status, 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER metric_tasks_delete AFTER DELETE ON tasks BEGIN"
	"  UPDATE metric_counts SET n = n - 1"
	"    WHERE metric = 'tasks' AND a = OLD.repo AND b = OLD.status AND c = '';"
	"END;"
	"CREATE TRIGGER metric_tasks_move AFTER UPDATE OF status ON tasks"
	"  WHEN OLD.status != NEW.status BEGIN"
	"  UPDATE metric_counts SET n = n - 1"
	"    WHERE metric = 'tasks' AND a = OLD.repo AND b = OLD.status AND c = '';"
	"  INSERT INTO metric_counts (metric, a, b, n) VALUES ('tasks', NEW.repo, NEW.status, 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"  INSERT INTO metric_counts (metric, a, n) SELECT 'started', NEW.repo, 1"
	"    WHERE OLD.status = 'queued' AND NEW.status = 'preparing'"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"  INSERT INTO metric_counts (metric, a, b, n) SELECT 'ended', NEW.repo, NEW.status, 1"
	"    WHERE NEW.status IN ('done', 'failed', 'rejected', 'cancelled', 'lost')"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"  INSERT INTO metric_counts (metric, a, b, n)"
	"    SELECT 'failures', NEW.repo, COALESCE(NEW.reason, 'unknown'), 1"
	"    WHERE NEW.status = 'failed'"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"  INSERT INTO metric_counts (metric, a, b, n) SELECT 'interrupted', NEW.repo, NEW.status, 1"
	"    WHERE OLD.status IN ('preparing', 'running', 'testing')"
	"    AND NEW.status IN ('queued', 'lost')"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	/* A failure's reason set after its move (crashed): the failure moves
	 * to it, in the same transaction. */
	"CREATE TRIGGER metric_failure_reason AFTER UPDATE OF reason ON tasks"
	"  WHEN OLD.status = 'failed' AND NEW.status = 'failed'"
	"  AND OLD.reason IS NOT NEW.reason BEGIN"
	"  UPDATE metric_counts SET n = n - 1 WHERE metric = 'failures' AND a = NEW.repo"
	"    AND b = COALESCE(OLD.reason, 'unknown') AND c = '';"
	"  INSERT INTO metric_counts (metric, a, b, n)"
	"    VALUES ('failures', NEW.repo, COALESCE(NEW.reason, 'unknown'), 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	/* Usage is written as the task's totals so far: the counters take
	 * what grew. */
	"CREATE TRIGGER metric_usage AFTER UPDATE OF tokens_in, tokens_out, tokens_cache_read,"
	"  tokens_cache_write, cost ON tasks BEGIN"
	"  INSERT INTO metric_counts (metric, a, b, c, n)"
	"    SELECT 'tokens', NEW.repo, NEW.agent, 'input', NEW.tokens_in - OLD.tokens_in"
	"    WHERE NEW.tokens_in > OLD.tokens_in"
	"    UNION ALL SELECT 'tokens', NEW.repo, NEW.agent, 'output',"
	"    NEW.tokens_out - OLD.tokens_out WHERE NEW.tokens_out > OLD.tokens_out"
	"    UNION ALL SELECT 'tokens', NEW.repo, NEW.agent, 'cache_read',"
	"    NEW.tokens_cache_read - OLD.tokens_cache_read"
	"    WHERE NEW.tokens_cache_read > OLD.tokens_cache_read"
	"    UNION ALL SELECT 'tokens', NEW.repo, NEW.agent, 'cache_write',"
	"    NEW.tokens_cache_write - OLD.tokens_cache_write"
	"    WHERE NEW.tokens_cache_write > OLD.tokens_cache_write"
	"    UNION ALL SELECT 'cost', NEW.repo, NEW.agent, '', NEW.cost - OLD.cost"
	"    WHERE NEW.cost > OLD.cost"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + excluded.n;"
	"END;"
	"CREATE TRIGGER metric_steps AFTER INSERT ON steps WHEN NEW.n > 0 BEGIN"
	"  INSERT INTO metric_counts (metric, a, b, n)"
	"    SELECT 'step_seconds', p.status, CASE"
	"      WHEN NEW.at - p.at <= 1 THEN '1' WHEN NEW.at - p.at <= 5 THEN '5'"
	"      WHEN NEW.at - p.at <= 15 THEN '15' WHEN NEW.at - p.at <= 30 THEN '30'"
	"      WHEN NEW.at - p.at <= 60 THEN '60' WHEN NEW.at - p.at <= 120 THEN '120'"
	"      WHEN NEW.at - p.at <= 300 THEN '300' WHEN NEW.at - p.at <= 600 THEN '600'"
	"      WHEN NEW.at - p.at <= 1800 THEN '1800' WHEN NEW.at - p.at <= 3600 THEN '3600'"
	"      WHEN NEW.at - p.at <= 7200 THEN '7200' WHEN NEW.at - p.at <= 14400 THEN '14400'"
	"      WHEN NEW.at - p.at <= 28800 THEN '28800' WHEN NEW.at - p.at <= 86400 THEN '86400'"
	"      ELSE '+Inf' END, 1"
	"    FROM steps p WHERE p.task_seq = NEW.task_seq AND p.n = NEW.n - 1"
	"    UNION ALL SELECT 'step_seconds_sum', p.status, '', MAX(NEW.at - p.at, 0)"
	"    FROM steps p WHERE p.task_seq = NEW.task_seq AND p.n = NEW.n - 1"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + excluded.n;"
	"END;"
	/* A round is counted once: the reviewer's round replaces its row. */
	"CREATE TRIGGER metric_rounds BEFORE INSERT ON rounds"
	"  WHEN NOT EXISTS (SELECT 1 FROM rounds WHERE task_seq = NEW.task_seq AND n = NEW.n)"
	"  BEGIN"
	"  INSERT INTO metric_counts (metric, a, n)"
	"    SELECT 'rounds', repo, 1 FROM tasks WHERE seq = NEW.task_seq"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER metric_egress AFTER INSERT ON egress WHEN NEW.kind IS NOT 'unlisted' BEGIN"
	"  INSERT INTO metric_counts (metric, a, b, c, n) VALUES ('egress',"
	"    COALESCE(NEW.endpoint, ''), COALESCE(NEW.kind, ''), COALESCE(NEW.verdict, ''), 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER metric_webhook_failure AFTER INSERT ON webhook_attempts"
	"  WHEN NEW.error IS NOT NULL OR NEW.status NOT BETWEEN 200 AND 299 BEGIN"
	"  INSERT INTO metric_counts (metric, n) VALUES ('webhook_failures', 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;"
	"CREATE TRIGGER metric_github_wait AFTER INSERT ON github_backoff BEGIN"
	"  INSERT INTO metric_counts (metric, a, n) VALUES ('github_waits', NEW.api, 1)"
	"    ON CONFLICT (metric, a, b, c) DO UPDATE SET n = n + 1;"
	"END;",
	/* 17: gates nobody looks at (issue 37, store_reminder.h): the reminders
	 * sent for a task's gate, the one that opened at `since` (its step's
	 * time), so that none goes twice, across restarts and processes. */
	"CREATE TABLE reminders ("
	"  task_seq INTEGER PRIMARY KEY REFERENCES tasks(seq),"
	"  since REAL NOT NULL,"
	"  sent INTEGER NOT NULL,"
	"  at REAL NOT NULL);",
};
#define NMIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

/* The folder of the database file (malloc'd). */
char *store_dir(const struct store *s)
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

int store_tx_begin(struct store *s, struct err *e)
{
	return exec(s, "BEGIN IMMEDIATE", e);
}

int store_tx_end(struct store *s, int rc, struct err *e)
{
	/* A failed COMMIT may leave the transaction open (SQLITE_BUSY does):
	 * it is rolled back too, so the next change does not join it. */
	if (rc >= 0 && exec(s, "COMMIT", e) == 0)
		return rc;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc < 0 ? rc : -1;
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
	if (store_tx_begin(s, e) < 0)
		return -1;
	int v = user_version(s), rc = 0;
	if (v < 0)
		rc = db_err(s, e, "schema version");
	else if (v > NMIGRATIONS)
		rc = err_set(e, _("store %s has schema version %d, newer than this paddock "
		                  "understands (%d); use a newer paddock"), s->path, v, NMIGRATIONS);
	for (; rc == 0 && v < NMIGRATIONS; v++) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
		if (exec(s, migrations[v], e) < 0 || exec(s, sql, e) < 0)
			rc = -1;
	}
	return store_tx_end(s, rc, e);
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

uint64_t store_col_u64(sqlite3_stmt *st, int i)
{
	sqlite3_int64 v = sqlite3_column_int64(st, i);
	return v < 0 ? 0 : (uint64_t)v;
}

int store_rows(struct store *s, sqlite3_stmt *st, const struct store_row_type *type,
               void *arg, void **out, size_t *n, struct err *e)
{
	char *v = NULL;
	size_t cnt = 0, cap = 0;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			v = xrealloc(v, cap * type->size);
		}
		memset(v + cnt * type->size, 0, type->size);
		type->fill(st, v + cnt * type->size, arg);
		cnt++;
	}
	if (step != SQLITE_DONE) {
		db_err(s, e, type->what);
		for (size_t i = 0; type->clear && i < cnt; i++)
			type->clear(v + i * type->size);
		free(v);
		v = NULL;
		cnt = 0;
	}
	*out = v;
	*n = cnt;
	return step == SQLITE_DONE ? 0 : -1;
}

int store_rows_of_task(struct store *s, const char *sql, const char *id,
                       const struct store_row_type *type, void **out, size_t *n,
                       struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, e, type->what);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = store_rows(s, st, type, NULL, out, n, e);
	sqlite3_finalize(st);
	return rc;
}

void store_bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
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
