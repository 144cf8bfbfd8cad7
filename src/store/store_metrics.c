/* store_metrics: the store's numbers for GET /metrics (metrics.h), read
 * in one transaction: the counters the triggers of schema 16 keep
 * (metric_counts), and the few gauges that need the tasks now (the
 * oldest waits, the kept sandboxes, the open tasks' spending), each
 * from an index, never a scan of a table that only grows. */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "store_int.h"

/* Every query below gives these seven columns: key, three labels, three
 * values. */
static void metric_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	(void)arg;
	struct store_metric *m = elem;
	m->key = store_col_str(st, 0);
	for (int i = 0; i < 3; i++) {
		m->label[i] = store_col_str(st, 1 + i);
		if (!m->label[i])
			m->label[i] = xstrdup("");
		m->value[i] = sqlite3_column_double(st, 4 + i);
	}
	if (!m->key)
		m->key = xstrdup("");
}

static void metric_clear(void *elem)
{
	struct store_metric *m = elem;
	free(m->key);
	for (int i = 0; i < 3; i++)
		free(m->label[i]);
}

static const struct store_row_type metric_rows = {
	sizeof(struct store_metric), metric_fill, metric_clear, "metrics"
};

/* The wall time a task came to its last step: steps.at counts from its
 * creation. */
#define LAST_STEP "(t.created + COALESCE((SELECT s.at FROM steps s WHERE s.task_seq = t.seq " \
                  "ORDER BY s.n DESC LIMIT 1), 0))"

static const char *const metric_sql[] = {
	"SELECT metric, a, b, c, n, 0, 0 FROM metric_counts ORDER BY metric, a, b, c",
	"SELECT 'queue_oldest', '', '', '', COALESCE(MIN(" LAST_STEP "), 0), COUNT(*), 0 "
	"FROM tasks t WHERE t.status = 'queued'",
	"SELECT 'gate_oldest', '', '', '', COALESCE(MIN(" LAST_STEP "), 0), COUNT(*), 0 "
	"FROM tasks t WHERE t.status = 'review'",
	"SELECT 'kept', '', '', '', COUNT(*), 0, 0 FROM tasks "
	"WHERE sandbox_kept != 0 AND status NOT IN ('preparing', 'running', 'testing')",
	"SELECT 'github_wait', api, '', '', until, 0, 0 FROM github_backoff ORDER BY api",
	"SELECT 'open_task', id, repo, agent, cost, "
	"tokens_in + tokens_out + tokens_cache_read + tokens_cache_write, COALESCE(budget, -1) "
	"FROM tasks WHERE status IN ('preparing', 'running', 'testing', 'review', 'pushing') "
	"ORDER BY seq",
};

int store_metrics_read(struct store *s, struct store_metric **out, size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	/* One snapshot (WAL): the numbers of a scrape agree with each other. */
	if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return store_db_err(s, e, "metrics");
	struct store_metric *all = NULL;
	size_t nall = 0;
	int rc = 0;
	for (size_t q = 0; rc == 0 && q < sizeof metric_sql / sizeof *metric_sql; q++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, metric_sql[q], -1, &st, NULL) != SQLITE_OK) {
			rc = store_db_err(s, e, "metrics");
			break;
		}
		void *rows;
		size_t nrows;
		rc = store_rows(s, st, &metric_rows, NULL, &rows, &nrows, e);
		sqlite3_finalize(st);
		if (rc < 0)
			break;
		all = xrealloc(all, (nall + nrows + 1) * sizeof *all);
		if (nrows)
			memcpy(all + nall, rows, nrows * sizeof *all);
		nall += nrows;
		free(rows);
	}
	sqlite3_exec(s->db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
	if (rc < 0) {
		store_metrics_free(all, nall);
		return -1;
	}
	*out = all;
	*n = nall;
	return 0;
}

void store_metrics_free(struct store_metric *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++)
		metric_clear(&m[i]);
	free(m);
}
