/* store_audit: the audit table (store_audit.h). */
#include "autoconfig.h"
#include "store_audit.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "store_int.h"

static void audit_clear(void *elem)
{
	struct audit_event *ev = elem;
	free(ev->kind);
	free(ev->actor);
	free(ev->task_id);
	free(ev->action);
	free(ev->notes);
	free(ev->token);
	free(ev->old_role);
	free(ev->new_role);
}

void audit_event_clear(struct audit_event *ev)
{
	audit_clear(ev);
}

void audit_events_free(struct audit_event *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		audit_clear(&v[i]);
	free(v);
}

static void audit_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct audit_event *ev = elem;
	(void)arg;
	ev->id = sqlite3_column_int64(st, 0);
	ev->at = sqlite3_column_double(st, 1);
	ev->kind = store_col_str(st, 2);
	ev->actor = store_col_str(st, 3);
	ev->task_id = store_col_str(st, 4);
	ev->round = sqlite3_column_int(st, 5);
	ev->action = store_col_str(st, 6);
	ev->notes = store_col_str(st, 7);
	ev->token = store_col_str(st, 8);
	ev->old_role = store_col_str(st, 9);
	ev->new_role = store_col_str(st, 10);
}

static const struct store_row_type audit_rows = {
	sizeof(struct audit_event), audit_fill, audit_clear, "audit events"
};

#define AUDIT_COLS "id, at, kind, actor, task_id, round, action, notes, token, old_role, new_role"

static int audit_query(struct store *s, const char *sql, long long a, long long b,
                       struct audit_event **out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "audit");
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	void *v;
	int rc = store_rows(s, st, &audit_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

int store_audit_after(struct store *s, long long after, size_t limit,
                      struct audit_event **out, size_t *n, struct err *e)
{
	return audit_query(s, "SELECT " AUDIT_COLS " FROM audit WHERE id > ?1 ORDER BY id LIMIT ?2",
	                   after, limit ? (long long)limit : -1, out, n, e);
}

int store_audit_last(struct store *s, size_t limit, struct audit_event **out, size_t *n,
                     struct err *e)
{
	return store_audit_before(s, 0, limit, out, n, e);
}

int store_audit_before(struct store *s, long long before, size_t limit,
                       struct audit_event **out, size_t *n, struct err *e)
{
	return audit_query(s, "SELECT " AUDIT_COLS " FROM audit WHERE ?1 <= 0 OR id < ?1 "
	                   "ORDER BY id DESC LIMIT ?2", before, limit ? (long long)limit : -1,
	                   out, n, e);
}

int store_audit_top(struct store *s, long long *out, struct err *e)
{
	sqlite3_stmt *st;
	*out = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(id), 0) FROM audit", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "audit");
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_db_err(s, e, "audit");
	if (rc == 0)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

static void role_clear(void *elem)
{
	struct audit_role *r = elem;
	free(r->token);
	free(r->role);
}

void audit_roles_free(struct audit_role *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		role_clear(&v[i]);
	free(v);
}

static void role_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct audit_role *r = elem;
	(void)arg;
	r->token = store_col_str(st, 0);
	r->role = store_col_str(st, 1);
}

static const struct store_row_type role_rows = {
	sizeof(struct audit_role), role_fill, role_clear, "audit roles"
};

int store_audit_roles_known(struct store *s, struct audit_role **out, size_t *n,
                            struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT token, new_role FROM audit WHERE id IN (SELECT MAX(id) "
	                       "FROM audit WHERE kind = 'role-change' GROUP BY token) ORDER BY token",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "audit");
	void *v;
	int rc = store_rows(s, st, &role_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

static int audit_role_insert(struct store *s, const struct audit_role_change *c,
                             const char *actor, double at, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO audit (at, kind, actor, token, old_role, "
	                       "new_role) VALUES (?, 'role-change', ?, ?, ?, ?)", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "audit");
	sqlite3_bind_double(st, 1, at);
	sqlite3_bind_text(st, 2, actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->token, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 4, c->old_role);
	store_bind_text_or_null(st, 5, c->new_role);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "audit");
	sqlite3_finalize(st);
	return rc;
}

int store_audit_roles(struct store *s, const struct audit_role_change *v, size_t n,
                      const char *actor, struct err *e)
{
	if (!n)
		return 0;
	if (store_tx_begin(s, e) < 0)
		return -1;
	double at = clock_wall();
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = audit_role_insert(s, &v[i], actor, at, e);
	return store_tx_end(s, rc, e);
}
