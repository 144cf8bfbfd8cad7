/* store_tasks: adding, reading and querying tasks, their steps, the
 * columns a supervisor's reports set, a move of status (move.h is its
 * one caller), cancel and confirm. */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "paths.h"
#include "store_int.h"

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
	free(t->pr_error);
	free(t->queued_by);
	memset(t, 0, sizeof *t);
}

void task_rows_free(struct task_row *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		task_row_free(&t[i]);
	free(t);
}

#define TASK_COLS "seq, id, text, repo, agent, base, branch, head, status, error, " \
                  "created, updated, cancel_requested, round, summary, pr_url, pushed, " \
                  "reviewed_head, sandbox_kept, pending, budget, tokens_in, tokens_out, " \
                  "tokens_cache_read, tokens_cache_write, requests, cost, priced, session, " \
                  "reason, attempts, failed_round, failed_head, failed_why, follow_of, " \
                  "callback_url, metadata, recipe, inputs, base_ref, test_cmd, timeout, " \
                  "dry_run, approval, fix_rounds, contract, group_id, confirm, estimate, " \
                  "dry_run_record, pr_error, pr_error_at, pr_attempts, pr_retry_at, queued_by, " \
                  STORE_REMINDERS_COL

/* store_rows's arg for a task's steps. */
struct steps_read {
	double created;            /* the task's */
	long long before;          /* the log offset of the step before */
};

static void step_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct steps_read *r = arg;
	int status = task_status_parse((const char *)sqlite3_column_text(st, 1));
	struct task_step *sp = elem;
	sp->at = sqlite3_column_double(st, 0);
	sp->time = r->created + sp->at;
	sp->status = status < 0 ? TASK_LOST : (enum task_status)status;
	/* Never before the step before it: the log only grows. */
	long long before = r->before;
	sp->log_known = sqlite3_column_type(st, 2) != SQLITE_NULL;
	sp->log_off = !sp->log_known ? before : sqlite3_column_int64(st, 2);
	if (sp->log_off < before)
		sp->log_off = before;
	sp->round = sqlite3_column_int(st, 3);
	r->before = sp->log_off;
}

static const struct store_row_type step_rows = {
	sizeof(struct task_step), step_fill, NULL, "steps"
};

static int load_steps(struct store *s, sqlite3_int64 seq, struct task_row *t, struct err *e)
{
	if (!s->steps && sqlite3_prepare_v2(s->db, "SELECT at, status, log_off, round FROM "
	                                    "steps WHERE task_seq = ? ORDER BY n", -1, &s->steps,
	                                    NULL) != SQLITE_OK)
		return store_db_err(s, e, "steps");
	sqlite3_stmt *st = s->steps;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, seq);
	struct steps_read r = { t->created, 0 };
	void *v;
	int rc = store_rows(s, st, &step_rows, &r, &v, &t->nsteps, e);
	t->steps = v;
	sqlite3_reset(st);
	return rc;
}

static int row_fill_steps(struct store *s, sqlite3_stmt *st, struct task_row *t, int steps,
                          struct err *e)
{
	memset(t, 0, sizeof *t);
	sqlite3_int64 seq = sqlite3_column_int64(st, 0);
	t->seq = seq;
	const unsigned char *id = sqlite3_column_text(st, 1);
	snprintf(t->id, sizeof t->id, "%s", id ? (const char *)id : "");
	t->text = store_col_str(st, 2);
	t->repo = store_col_str(st, 3);
	t->agent = store_col_str(st, 4);
	t->base = store_col_str(st, 5);
	t->branch = store_col_str(st, 6);
	t->head = store_col_str(st, 7);
	int status = task_status_parse((const char *)sqlite3_column_text(st, 8));
	t->status = status < 0 ? TASK_LOST : (enum task_status)status;
	t->error = store_col_str(st, 9);
	t->created = sqlite3_column_double(st, 10);
	t->updated = sqlite3_column_double(st, 11);
	t->cancel_requested = sqlite3_column_int(st, 12);
	t->round = sqlite3_column_int(st, 13);
	t->summary = store_col_str(st, 14);
	t->pr_url = store_col_str(st, 15);
	t->pushed = store_col_str(st, 16);
	t->reviewed_head = store_col_str(st, 17);
	t->sandbox_kept = sqlite3_column_int(st, 18);
	t->pending = store_col_str(st, 19);
	t->budget = sqlite3_column_type(st, 20) == SQLITE_NULL ? -1 :
	            sqlite3_column_double(st, 20);
	t->usage.in = store_col_u64(st, 21);
	t->usage.out = store_col_u64(st, 22);
	t->usage.cache_read = store_col_u64(st, 23);
	t->usage.cache_write = store_col_u64(st, 24);
	t->usage.requests = store_col_u64(st, 25);
	t->usage.cost = sqlite3_column_double(st, 26);
	t->usage.priced = sqlite3_column_int(st, 27);
	t->session = store_col_str(st, 28);
	t->reason = store_col_str(st, 29);
	t->attempts = sqlite3_column_int(st, 30);
	t->failed_round = sqlite3_column_int(st, 31);
	t->failed_head = store_col_str(st, 32);
	t->failed_why = store_col_str(st, 33);
	t->follow_of = store_col_str(st, 34);
	t->callback_url = store_col_str(st, 35);
	t->metadata = store_col_str(st, 36);
	t->recipe = store_col_str(st, 37);
	t->inputs = store_col_str(st, 38);
	t->base_ref = store_col_str(st, 39);
	t->test_cmd = store_col_str(st, 40);
	t->timeout = sqlite3_column_double(st, 41);
	t->dry_run = sqlite3_column_int(st, 42);
	t->approval = store_col_str(st, 43);
	t->fix_rounds = sqlite3_column_int(st, 44);
	t->contract = store_col_str(st, 45);
	t->group_id = store_col_str(st, 46);
	t->confirm = store_col_str(st, 47);
	t->estimate = sqlite3_column_double(st, 48);
	t->dry_run_record = store_col_str(st, 49);
	t->pr_error = store_col_str(st, 50);
	t->pr_error_at = sqlite3_column_double(st, 51);
	t->pr_attempts = sqlite3_column_int(st, 52);
	t->pr_retry_at = sqlite3_column_double(st, 53);
	t->queued_by = store_col_str(st, 54);
	t->reminders = sqlite3_column_int(st, 55);
	return steps ? load_steps(s, seq, t, e) : 0;
}

static int row_fill(struct store *s, sqlite3_stmt *st, struct task_row *t, struct err *e)
{
	return row_fill_steps(s, st, t, 1, e);
}

int store_step_add(struct store *s, const char *id, double at, enum task_status to,
                   struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO steps (task_seq, n, at, status, log_off, round) "
	        "SELECT seq, (SELECT COUNT(*) FROM steps WHERE task_seq = tasks.seq), ?, ?, ?, "
	        "round FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "steps");
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
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "steps");
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
		return store_db_err(s, e, "steps");
	sqlite3_bind_int64(st, 1, off);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "steps");
	sqlite3_finalize(st);
	return rc;
}

int store_task_add(struct store *s, const char *repo, const char *agent, const char *text,
                   const char *branch_prefix, char id_out[TASK_ID_LEN + 1], struct err *e)
{
	return store_task_add_budget(s, repo, agent, text, branch_prefix, -1, id_out, e);
}

int store_task_add_budget(struct store *s, const char *repo, const char *agent,
                          const char *text, const char *branch_prefix, double budget,
                          char id_out[TASK_ID_LEN + 1], struct err *e)
{
	struct task_new n = { .repo = repo, .agent = agent, .text = text,
	                      .branch_prefix = branch_prefix, .budget = budget };
	return store_task_create(s, &n, id_out, NULL, e);
}

int store_queued_count(struct store *s, size_t *out, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT n FROM task_counts WHERE status = 'queued'", -1,
	                       &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "count");
	int step = sqlite3_step(st), rc = 0;
	*out = step == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 0;
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = store_db_err(s, e, "count");
	sqlite3_finalize(st);
	return rc;
}

int store_task_create(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      size_t *queued, struct err *e)
{
	/* IMMEDIATE: the write lock first, so the count below cannot go stale
	 * before the insert. */
	if (store_tx_begin(s, e) < 0)
		return -1;
	int rc = 0;
	if (n->max_queued) {
		size_t q = 0;
		rc = store_queued_count(s, &q, e);
		if (rc == 0 && q >= n->max_queued) {
			if (queued)
				*queued = q;
			rc = -2;
		}
	}
	if (rc == 0)
		rc = store_task_insert(s, n, id_out, e);
	return store_tx_end(s, rc, e);
}

int store_task_insert(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO tasks (id, text, repo, agent, branch, status, created, updated, "
	        "budget, callback_url, metadata, recipe, inputs, base_ref, test_cmd, timeout, "
	        "dry_run, approval, fix_rounds, contract, group_id, confirm, estimate, "
	        "queued_by) "
	        "VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	        -1, &st, NULL) != SQLITE_OK) {
		store_db_err(s, e, "add");
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
		sqlite3_bind_text(st, 23, n->queued_by, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			memcpy(id_out, id, sizeof id);
			break;
		}
		if (rc != SQLITE_CONSTRAINT || tries > 8) {
			store_db_err(s, e, "add");
			sqlite3_finalize(st);
			goto fail;
		}
	}
	sqlite3_finalize(st);
	if (store_step_add(s, id_out, 0, TASK_QUEUED, e) < 0)
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
		return store_db_err(s, e, "get");
	/* A prefix matches ids in [prefix, prefix + '~'): '~' sorts after the
	 * whole id alphabet. */
	char hi[TASK_ID_LEN + 2];
	snprintf(hi, sizeof hi, "%s~", id);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hi, -1, SQLITE_STATIC);
	int rc = -1, step = sqlite3_step(st);
	if (step == SQLITE_DONE) {
		err_kind_set(e, ERR_NOT_FOUND, _("no task %s; 'paddock list' shows the tasks"), id);
	} else if (step != SQLITE_ROW) {
		store_db_err(s, e, "get");
	} else {
		char first[TASK_ID_LEN + 1];
		snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(st, 1));
		rc = row_fill(s, st, t, e);
		step = rc == 0 ? sqlite3_step(st) : SQLITE_DONE;
		if (step == SQLITE_ROW)
			/* Not found: no one task has the prefix. */
			err_kind_set(e, ERR_NOT_FOUND, _("task id prefix %s is ambiguous (%s, %s, "
			             "...); type more of it"), id, first,
			             (const char *)sqlite3_column_text(st, 1));
		else if (step != SQLITE_DONE)
			store_db_err(s, e, "get");
		if (rc < 0 || step != SQLITE_DONE) {
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
		/* What changed lately comes from tasks_updated, and the few
		 * rows are sorted: a plain seq lets SQLite walk every task in
		 * order instead, to spare that sort. */
		if (q->changed_after > 0)
			return q->newest_first ? "ORDER BY +seq DESC" : "ORDER BY +seq";
		return q->newest_first ? "ORDER BY seq DESC" : "ORDER BY seq";
	}
#undef ENDED_SQL
}

/* The conditions on a row that q asks for besides its status and group:
 * the statuses of mask, the repo, the agent, startable, the text. */
static void row_sql(struct buf *sql, const struct task_query *q, unsigned mask)
{
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
}

/* struct task_query.fold_groups: a member of a group is the one whose seq
 * is the least of the members the row conditions select.  In the
 * subquery, names without a table are its own row's (g); tasks is the
 * row asked about. */
static void fold_sql(struct buf *sql, const struct task_query *q)
{
	buf_adds(sql, " AND (group_id IS NULL OR seq = (SELECT MIN(seq) FROM tasks g "
	         "WHERE g.group_id = tasks.group_id");
	row_sql(sql, q, query_mask(q));
	buf_adds(sql, "))");
}

/* The WHERE clause of q for one status (or none: -1, then every status
 * of q's mask), and its binds. */
static void query_sql(struct buf *sql, const struct task_query *q, int status,
                      const char *what, const char *from)
{
	buf_printf(sql, "SELECT %s FROM %s WHERE 1", what, from);
	row_sql(sql, q, status < 0 ? query_mask(q) : 0);
	if (q->group)
		buf_adds(sql, " AND group_id = ?9");
	if (q->fold_groups)
		fold_sql(sql, q);
	/* The few pending requests come from their partial index: the
	 * status's (every task at review) is kept out with a unary +. */
	if (status >= 0)
		buf_adds(sql, q->pending ? " AND +status = ?1" : " AND status = ?1");
	if (q->pending)
		buf_adds(sql, " AND pending IS NOT NULL");
	/* Word for word the WHERE of the index tasks_autogate (schema 11),
	 * so that SQLite reads the tasks it holds, never every task at
	 * review. */
	if (q->auto_approval)
		buf_adds(sql, " AND (approval IN ('auto', 'auto-push') OR pr_url IS NOT NULL)");
	if (q->undecided_by)
		buf_adds(sql, " AND NOT EXISTS (SELECT 1 FROM decisions d WHERE "
		         "d.task_seq = tasks.seq AND d.round = tasks.round AND d.actor = ?10)");
	if (q->since > 0)
		buf_adds(sql, " AND created >= ?2");
	if (q->changed_after > 0)
		buf_adds(sql, " AND updated > ?3");
	if (q->after > 0)
		buf_adds(sql, " AND seq > ?4");
	if (q->before > 0)
		buf_adds(sql, " AND seq < ?5");
}

/* Prepares SELECT what FROM from ... tail for q and status, its values
 * bound; -1 when SQLite refused it. */
static int query_from(struct store *s, const struct task_query *q, int status,
                      const char *what, const char *from, const char *tail,
                      sqlite3_stmt **out)
{
	struct buf sql = {0};
	query_sql(&sql, q, status, what, from);
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
	sqlite3_bind_text(st, 10, q->undecided_by, -1, SQLITE_STATIC);
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

/* The same from the table tasks. */
static int query_prepare(struct store *s, const struct task_query *q, int status,
                         const char *what, const char *tail, sqlite3_stmt **out)
{
	return query_from(s, q, status, what, "tasks", tail, out);
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
		return store_db_err(s, e, "list");
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
		rc = store_db_err(s, e, "list");
	s->query_steps += (uint64_t)sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
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

/* COUNT(*) of q's rows of status (-1: every status of q's) from `from`,
 * tail's conditions added; *n += it. */
static int count_add(struct store *s, const struct task_query *q, int status, const char *from,
                     const char *tail, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (query_from(s, q, status, "COUNT(*)", from, tail, &st) < 0)
		return store_db_err(s, e, "count");
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return store_db_err(s, e, "count");
	}
	*n += (size_t)sqlite3_column_int64(st, 0);
	s->query_steps += (uint64_t)sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
	sqlite3_finalize(st);
	return 0;
}

/* q with fold_groups.  The fold changes only the count of the groups'
 * members: q's count without it (from the counts or an index, as any
 * other), less the members that selects, plus those the fold keeps;
 * both of these read the index of grouped tasks (tasks_group), so a list
 * of 100,000 tasks is not scanned to fold its few groups (issue 14). */
static int count_folded(struct store *s, const struct task_query *q, size_t *n, struct err *e)
{
	struct task_query plain = *q;
	plain.fold_groups = 0;
	static const char grouped[] = "tasks INDEXED BY tasks_group",
	                  members[] = " AND group_id IS NOT NULL";
	size_t all = 0, in = 0, kept = 0;
	if (store_task_count(s, &plain, &all, e) < 0 ||
	    count_add(s, &plain, -1, grouped, members, &in, e) < 0 ||
	    count_add(s, q, -1, grouped, members, &kept, e) < 0)
		return -1;
	/* A task moved by another process between the three may be counted
	 * once too few or too many, as between any two counts; the list
	 * counts again on the change. */
	*n = (all > in ? all - in : 0) + kept;
	return 0;
}

int store_task_count(struct store *s, const struct task_query *q, size_t *n, struct err *e)
{
	unsigned mask = query_mask(q);
	*n = 0;
	if (q->fold_groups)
		return count_folded(s, q, n, e);
	if (!q->pending && q->since <= 0 && q->changed_after <= 0 && q->after <= 0 &&
	    q->before <= 0 && !q->repo && !q->agent && !(q->text && *q->text) &&
	    !q->startable && !q->group && !q->auto_approval && !q->undecided_by) {
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
		if (count_add(s, q, status, "tasks", "", n, e) < 0)
			return -1;
		if (status < 0)
			break;
	}
	return 0;
}

static void key_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct task_key *k = elem;
	(void)arg;
	int v = task_status_parse((const char *)sqlite3_column_text(st, 1));
	k->seq = sqlite3_column_int64(st, 0);
	k->status = v < 0 ? TASK_LOST : (enum task_status)v;
}

static const struct store_row_type key_rows = {
	sizeof(struct task_key), key_fill, NULL, "order"
};

int store_task_order(struct store *s, const struct task_query *q, struct task_key **out,
                     size_t *n, struct err *e)
{
	char tail[512];
	snprintf(tail, sizeof tail, " %s", order_sql(q));
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (query_prepare(s, q, -1, "seq, status", tail, &st) < 0)
		return store_db_err(s, e, "order");
	void *v;
	int rc = store_rows(s, st, &key_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
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
		return store_db_err(s, e, "list");
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
		rc = store_db_err(s, e, "list");
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
		return store_db_err(s, e, "glance");
	sqlite3_bind_int64(st, 1, seq);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		g->started = sqlite3_column_double(st, 0);
		g->round_started = sqlite3_column_double(st, 1);
		g->round_unchanged = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : store_db_err(s, e, "glance");
}

uint64_t store_task_query_steps(struct store *s)
{
	return s->query_steps;
}

int store_task_counts(struct store *s, size_t counts[TASK_NSTATUS], struct err *e)
{
	memset(counts, 0, TASK_NSTATUS * sizeof *counts);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT status, n FROM task_counts", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "count");
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int v = task_status_parse((const char *)sqlite3_column_text(st, 0));
		counts[v < 0 ? TASK_LOST : v] += (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? 0 : store_db_err(s, e, "count");
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
	                       "'queued' AND confirm IS NOT 'needed' ORDER BY seq LIMIT 1", -1,
	                       &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "next");
	int rc = 0, step = sqlite3_step(st);
	if (step == SQLITE_ROW && row_fill(s, st, t, e) < 0) {
		task_row_free(t);
		rc = -1;
	} else if (step == SQLITE_ROW) {
		rc = 1;
	} else if (step != SQLITE_DONE) {
		rc = store_db_err(s, e, "next");
	}
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
		return store_db_err(s, e, "status");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = -1, step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		int v = task_status_parse((const char *)sqlite3_column_text(st, 0));
		*status = v < 0 ? TASK_LOST : (enum task_status)v;
		*created = sqlite3_column_double(st, 1);
		rc = 0;
	} else if (step == SQLITE_DONE) {
		err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	} else {
		store_db_err(s, e, "status");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_transition_locked(struct store *s, const char *id, enum task_status to,
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
		return store_db_err(s, e, "transition");
	sqlite3_bind_text(st, 1, task_status_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, clock_wall());
	store_bind_text_or_null(st, 3, error);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "transition");
	sqlite3_finalize(st);
	/* Milliseconds are enough for a person. */
	double at = (double)(long long)((clock_wall() - created) * 1000 + 0.5) / 1000;
	if (rc == 0)
		rc = store_step_add(s, id, at < 0 ? 0 : at, to, e);
	return rc;
}

int store_task_transition(struct store *s, const char *id, enum task_status to,
                          const char *error, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	return store_tx_end(s, store_transition_locked(s, id, to, error, e), e);
}

static int set_col(struct store *s, const char *sql, const char *id, const char *v,
                   struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "update");
	sqlite3_bind_text(st, 1, v, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
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

int store_task_cancel(struct store *s, const char *id, const char *actor, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	enum task_status from;
	double created;
	int rc = -1;
	if (read_status(s, id, &from, &created, e) < 0)
		goto out;
	if (from == TASK_QUEUED || from == TASK_REVIEW) {
		/* No process works on it: cancel at once. */
		rc = store_transition_locked(s, id, TASK_CANCELLED, from == TASK_QUEUED ?
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
	if (rc > 0 && store_decision_add(s, id, "cancel", NULL, actor, e) < 0)
		rc = -1;
	return store_tx_end(s, rc, e);
}

/* Runs one UPDATE with the task id bound last; binds: text values (NULL
 * binds NULL) then ints. */
int store_task_update(struct store *s, const char *sql, const char *id, struct err *e,
                      int ntext, const char *const *texts, int nint, const int *ints)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "update");
	int k = 1;
	for (int i = 0; i < ntext; i++, k++)
		store_bind_text_or_null(st, k, texts[i]);
	for (int i = 0; i < nint; i++, k++)
		sqlite3_bind_int(st, k, ints[i]);
	sqlite3_bind_text(st, k, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
	sqlite3_finalize(st);
	return rc;
}

int store_task_follow_up(struct store *s, const char *parent, const char *text,
                         const char *queued_by, size_t max_queued,
                         char id_out[TASK_ID_LEN + 1], struct err *e)
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
	if (store_tx_begin(s, e) < 0)
		goto out;
	/* The queue's limit counted in the insert's transaction, as by
	 * store_task_create. */
	size_t queued = 0;
	const char *texts[] = { p.id, base, p.branch, p.session, p.pr_url, p.pushed };
	/* Its webhooks go where the parent's went, with the same metadata. */
	struct task_new n = { .repo = p.repo, .agent = p.agent, .text = text,
	                      .branch_prefix = *prefix ? prefix : NULL, .budget = p.budget,
	                      .callback_url = p.callback_url, .metadata = p.metadata,
	                      .queued_by = queued_by };
	if (max_queued && store_queued_count(s, &queued, e) < 0)
		rc = -1;
	else if (max_queued && queued >= max_queued)
		rc = -2;
	else if (store_task_insert(s, &n, id_out, e) < 0 ||
	         store_task_update(s, "UPDATE tasks SET follow_of = ?, base = ?, branch = ?, "
	                           "session = ?, pr_url = ?, pushed = ? WHERE id = ?", id_out, e,
	                           6, texts, 0, NULL) < 0)
		rc = -1;
	else
		rc = 0;
	rc = store_tx_end(s, rc, e);
out:
	task_row_free(&p);
	return rc;
}

int store_task_start(struct store *s, const char *id, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	int rc = store_transition_locked(s, id, TASK_PREPARING, NULL, e);
	/* A task queued again starts without its last run's error. */
	if (rc == 0)
		rc = store_task_update(s, "UPDATE tasks SET attempts = attempts + 1, error = NULL, "
		                       "reason = NULL WHERE id = ?", id, e, 0, NULL, 0, NULL);
	return store_tx_end(s, rc, e);
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
		return store_db_err(s, e, "update");
	}
	free(sql);
	store_bind_text_or_null(st, 1, value);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_db_err(s, e, "update");
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
		return store_db_err(s, e, "update");
	sqlite3_bind_int(st, 1, kept);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
	sqlite3_finalize(st);
	return rc;
}

int store_forget_sandboxes(struct store *s, struct err *e)
{
	return store_exec(s, "UPDATE tasks SET sandbox_kept = 0 WHERE sandbox_kept != 0", e);
}

int store_task_set_budget(struct store *s, const char *id, double budget, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET budget = ? WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "update");
	if (budget < 0)
		sqlite3_bind_null(st, 1);
	else
		sqlite3_bind_double(st, 1, budget);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

int store_task_confirm(struct store *s, const char *id, const char *actor, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET confirm = 'confirmed', updated = ? "
	                       "WHERE id = ? AND status = 'queued' AND confirm = 'needed'", -1,
	                       &st, NULL) != SQLITE_OK) {
		rc = store_db_err(s, e, "confirm");
	} else {
		sqlite3_bind_double(st, 1, clock_wall());
		sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = store_db_err(s, e, "confirm");
		else if (sqlite3_changes(s->db) == 0)
			rc = err_kind_set(e, ERR_WRONG_STATE, _("task %s does not wait for a confirmation "
			                                     "(only a queued task whose estimated cost "
			                                     "is over its confirm-over does)"), id);
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = store_decision_add(s, id, "confirm", NULL, actor, e);
	return store_tx_end(s, rc, e);
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
		return store_db_err(s, e, "spend");
	sqlite3_bind_text(st, 1, recipe, -1, SQLITE_STATIC);
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*n = (size_t)sqlite3_column_int64(st, 0);
		*mean = sqlite3_column_double(st, 1);
	} else {
		rc = store_db_err(s, e, "spend");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_task_pr_failed(struct store *s, const char *id, const char *why, double at,
                         double retry_at, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET pr_error = ?, pr_error_at = ?, "
	                       "pr_attempts = pr_attempts + 1, pr_retry_at = ? WHERE id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "update");
	store_bind_text_or_null(st, 1, why);
	sqlite3_bind_double(st, 2, at);
	if (retry_at > 0)
		sqlite3_bind_double(st, 3, retry_at);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

int store_task_pr_retry_at(struct store *s, const char *id, double at, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET pr_retry_at = ? WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "update");
	if (at > 0)
		sqlite3_bind_double(st, 1, at);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "update");
	sqlite3_finalize(st);
	return rc;
}

int store_task_pr_opened(struct store *s, const char *id, const char *url, struct err *e)
{
	const char *texts[] = { url };
	return store_task_update(s, "UPDATE tasks SET pr_url = ?, pr_error = NULL, "
	                         "pr_error_at = NULL, pr_attempts = 0, pr_retry_at = NULL "
	                         "WHERE id = ?", id, e, 1, texts, 0, NULL);
}

static void pr_due_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	(void)arg;
	char *id = elem;
	const unsigned char *v = sqlite3_column_text(st, 0);
	snprintf(id, TASK_ID_LEN + 1, "%s", v ? (const char *)v : "");
}

static const struct store_row_type pr_due_rows = {
	TASK_ID_LEN + 1, pr_due_fill, NULL, "pull requests due"
};

int store_task_pr_due(struct store *s, double now, char (**ids)[TASK_ID_LEN + 1], size_t *n,
                      double *next, struct err *e)
{
	*ids = NULL;
	*n = 0;
	*next = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM tasks WHERE pr_retry_at IS NOT NULL AND "
	                       "pr_retry_at <= ? AND pr_url IS NULL AND status = 'done' "
	                       "ORDER BY pr_retry_at LIMIT 16", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "pull requests due");
	sqlite3_bind_double(st, 1, now);
	void *v;
	int rc = store_rows(s, st, &pr_due_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*ids = v;
	if (rc < 0)
		return -1;
	if (sqlite3_prepare_v2(s->db, "SELECT min(pr_retry_at) FROM tasks WHERE pr_retry_at IS "
	                       "NOT NULL AND pr_retry_at > ? AND pr_url IS NULL AND "
	                       "status = 'done'", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "pull requests due");
	sqlite3_bind_double(st, 1, now);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*next = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return 0;
}
