/* store_actions: decisions that push, recorded by whoever decides and
 * carried out by the scheduler's process (schema 14, decide.h). */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "store_int.h"

#define ACTION_COLS "id, task, action, target, notes, actor, requested, state, by, " \
                    "result, outcome, error, finished"

void store_action_free(struct store_action *a)
{
	if (!a)
		return;
	free(a->action);
	free(a->target);
	free(a->notes);
	free(a->actor);
	free(a->state);
	free(a->by);
	free(a->outcome);
	free(a->error);
	memset(a, 0, sizeof *a);
}

static void action_fill(sqlite3_stmt *st, struct store_action *a)
{
	memset(a, 0, sizeof *a);
	a->id = sqlite3_column_int64(st, 0);
	const unsigned char *task = sqlite3_column_text(st, 1);
	snprintf(a->task, sizeof a->task, "%s", task ? (const char *)task : "");
	a->action = store_col_str(st, 2);
	a->target = store_col_str(st, 3);
	a->notes = store_col_str(st, 4);
	a->actor = store_col_str(st, 5);
	a->requested = sqlite3_column_double(st, 6);
	a->state = store_col_str(st, 7);
	a->by = store_col_str(st, 8);
	a->result = sqlite3_column_int(st, 9);
	a->outcome = store_col_str(st, 10);
	a->error = store_col_str(st, 11);
	a->finished = sqlite3_column_double(st, 12);
	if (!a->action)
		a->action = xstrdup("");
	if (!a->actor)
		a->actor = xstrdup("");
	if (!a->state)
		a->state = xstrdup("");
}

int store_action_add(struct store *s, const char *task, const char *action, const char *target,
                     const char *notes, const char *actor, long long *id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO actions (task, action, target, notes, actor, "
	                       "requested) VALUES (?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "action");
	sqlite3_bind_text(st, 1, task, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, action, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 3, target);
	store_bind_text_or_null(st, 4, notes);
	sqlite3_bind_text(st, 5, actor, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 6, clock_wall());
	int rc = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_db_err(s, e, "action");
	else if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	sqlite3_finalize(st);
	return rc;
}

int store_action_get(struct store *s, long long id, struct store_action *a, struct err *e)
{
	memset(a, 0, sizeof *a);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " ACTION_COLS " FROM actions WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "action");
	sqlite3_bind_int64(st, 1, id);
	int rc = 0, step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		action_fill(st, a);
	else if (step == SQLITE_DONE)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no recorded decision %lld"), id);
	else
		rc = store_db_err(s, e, "action");
	sqlite3_finalize(st);
	return rc;
}

int store_action_take(struct store *s, const char *by, struct store_action *a, struct err *e)
{
	memset(a, 0, sizeof *a);
	if (store_tx_begin(s, e) < 0)
		return -1;
	sqlite3_stmt *st;
	int rc = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT " ACTION_COLS " FROM actions WHERE state = "
	                       "'pending' ORDER BY id LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return store_tx_end(s, store_db_err(s, e, "action"), e);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		action_fill(st, a);
		rc = 1;
	} else if (step != SQLITE_DONE) {
		rc = store_db_err(s, e, "action");
	}
	sqlite3_finalize(st);
	if (rc == 1) {
		if (sqlite3_prepare_v2(s->db, "UPDATE actions SET state = 'running', by = ? WHERE "
		                       "id = ?", -1, &st, NULL) != SQLITE_OK)
			rc = store_db_err(s, e, "action");
		else {
			sqlite3_bind_text(st, 1, by, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 2, a->id);
			if (sqlite3_step(st) != SQLITE_DONE)
				rc = store_db_err(s, e, "action");
			sqlite3_finalize(st);
		}
		if (rc == 1) {
			free(a->state);
			a->state = xstrdup("running");
			free(a->by);
			a->by = xstrdup(by);
		}
	}
	rc = store_tx_end(s, rc, e);
	if (rc < 0)
		store_action_free(a);
	return rc;
}

int store_action_end(struct store *s, long long id, const char *state, int result,
                     const char *outcome, const char *error, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE actions SET state = ?, result = ?, outcome = ?, "
	                       "error = ?, finished = ? WHERE id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "action");
	sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, result);
	store_bind_text_or_null(st, 3, outcome);
	store_bind_text_or_null(st, 4, error);
	sqlite3_bind_double(st, 5, clock_wall());
	sqlite3_bind_int64(st, 6, id);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "action");
	sqlite3_finalize(st);
	return rc;
}

int store_action_requeue(struct store *s, size_t *n, struct err *e)
{
	*n = 0;
	if (store_exec(s, "UPDATE actions SET state = 'pending', by = NULL WHERE state = "
	               "'running'", e) < 0)
		return -1;
	*n = (size_t)sqlite3_changes(s->db);
	return 0;
}

int store_action_pending(struct store *s, size_t *n, struct err *e)
{
	*n = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM actions WHERE state = 'pending'", -1,
	                       &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "action");
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = (size_t)sqlite3_column_int64(st, 0);
	else
		rc = store_db_err(s, e, "action");
	sqlite3_finalize(st);
	return rc;
}

int store_action_open(struct store *s, const char *task, struct store_action *a,
                      struct err *e)
{
	memset(a, 0, sizeof *a);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " ACTION_COLS " FROM actions WHERE task = ? AND "
	                       "state IN ('pending', 'running') ORDER BY id LIMIT 1", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "action");
	sqlite3_bind_text(st, 1, task, -1, SQLITE_STATIC);
	int rc = 0, step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		action_fill(st, a);
		rc = 1;
	} else if (step != SQLITE_DONE) {
		rc = store_db_err(s, e, "action");
	}
	sqlite3_finalize(st);
	return rc;
}
