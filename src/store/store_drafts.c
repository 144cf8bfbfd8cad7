/* store_drafts: review drafts: a reviewer's comments on lines of a task's
 * diff, kept until they go out with a request for changes or are
 * discarded. */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "store_int.h"

int store_draft_add(struct store *s, const char *id, const struct review_comment *c,
                    struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO review_comments (task_seq, n, round, path, line, old, text, comment, "
	        "created) SELECT seq, (SELECT COALESCE(MAX(n), 0) + 1 FROM review_comments "
	        "WHERE task_seq = tasks.seq), round, ?, ?, ?, ?, ?, ? FROM tasks WHERE id = ?",
	        -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "review draft");
	sqlite3_bind_text(st, 1, c->path ? c->path : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, c->line);
	sqlite3_bind_int(st, 3, c->old != 0);
	sqlite3_bind_text(st, 4, c->text ? c->text : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, c->comment ? c->comment : "", -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, clock_wall());
	sqlite3_bind_text(st, 7, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "review draft");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

static void draft_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct review_comment *c = elem;
	(void)arg;
	c->n = sqlite3_column_int64(st, 0);
	c->round = sqlite3_column_int(st, 1);
	c->path = store_col_str(st, 2);
	c->line = (long)sqlite3_column_int64(st, 3);
	c->old = sqlite3_column_int(st, 4);
	c->text = store_col_str(st, 5);
	c->comment = store_col_str(st, 6);
	c->created = sqlite3_column_double(st, 7);
}

static void draft_clear(void *elem)
{
	struct review_comment *c = elem;
	free(c->path);
	free(c->text);
	free(c->comment);
}

static const struct store_row_type draft_rows = {
	sizeof(struct review_comment), draft_fill, draft_clear, "review draft"
};

int store_draft_list(struct store *s, const char *id, struct review_comment **out, size_t *n,
                     struct err *e)
{
	void *v;
	int rc = store_rows_of_task(s, "SELECT n, round, path, line, old, text, comment, created "
	                            "FROM review_comments WHERE task_seq = (SELECT seq FROM tasks "
	                            "WHERE id = ?) ORDER BY n", id, &draft_rows, &v, n, e);
	*out = v;
	return rc;
}

void store_draft_free(struct review_comment *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		draft_clear(&c[i]);
	free(c);
}

int store_draft_count(struct store *s, const char *id, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM review_comments WHERE task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "review draft");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_db_err(s, e, "review draft");
	if (rc == 0)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

int store_draft_discard(struct store *s, const char *id, long long upto, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM review_comments WHERE n <= ? AND task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "review draft");
	sqlite3_bind_int64(st, 1, upto);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db)
	                                         : store_db_err(s, e, "review draft");
	sqlite3_finalize(st);
	return rc;
}
