/* store_groups: best-of-N groups: made with their members in one
 * transaction, read, and the member picked. */
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
	if (store_tx_begin(s, e) < 0)
		return -1;
	int rc = 0;
	if (ns[0].max_queued) {
		size_t q = 0;
		rc = store_queued_count(s, &q, e);
		if (rc == 0 && q + n > ns[0].max_queued) {
			if (queued)
				*queued = q;
			rc = -2;
		}
	}
	sqlite3_stmt *st = NULL;
	if (rc == 0 && sqlite3_prepare_v2(s->db, "INSERT INTO task_groups (id, text, created) "
	                                  "VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		rc = store_db_err(s, e, "group");
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
			rc = store_db_err(s, e, "group");
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct task_new tn = ns[i];
		tn.group_id = id_out;
		rc = store_task_insert(s, &tn, ids_out[i], e);
	}
	return store_tx_end(s, rc, e);
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
		return store_db_err(s, e, "group");
	char hi[TASK_ID_LEN + 2];
	snprintf(hi, sizeof hi, "%s~", id);
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hi, -1, SQLITE_STATIC);
	int rc = -1, step = sqlite3_step(st);
	if (step == SQLITE_DONE) {
		err_kind_set(e, ERR_NOT_FOUND, _("no group %s; 'paddock list' shows each task's "
		                                 "group"), id);
	} else if (step != SQLITE_ROW) {
		store_db_err(s, e, "group");
	} else {
		snprintf(g->id, sizeof g->id, "%s", (const char *)sqlite3_column_text(st, 0));
		g->text = store_col_str(st, 1);
		g->created = sqlite3_column_double(st, 2);
		g->chosen = store_col_str(st, 3);
		rc = 0;
		step = sqlite3_step(st);
		if (step == SQLITE_ROW)
			err_kind_set(e, ERR_NOT_FOUND, _("group id prefix %s is ambiguous; type more "
			                                 "of it"), id);
		else if (step != SQLITE_DONE)
			store_db_err(s, e, "group");
		if (step != SQLITE_DONE) {
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
		return store_db_err(s, e, "group");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, task_id, -1, SQLITE_STATIC);
	int rc = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_db_err(s, e, "group");
	else if (sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_CONFLICT, _("group %s has a task picked already, or task %s "
		                                     "is not one of its members"), id, task_id);
	sqlite3_finalize(st);
	return rc;
}
