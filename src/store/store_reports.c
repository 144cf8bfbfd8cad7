/* store_reports: the gateway's reports: a task's model usage, its egress
 * records, the endpoints' pauses. */
#include "autoconfig.h"
#include "store.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "store_int.h"

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
		return store_db_err(s, e, "usage");
	sqlite3_bind_int64(st, 1, i64(u->in));
	sqlite3_bind_int64(st, 2, i64(u->out));
	sqlite3_bind_int64(st, 3, i64(u->cache_read));
	sqlite3_bind_int64(st, 4, i64(u->cache_write));
	sqlite3_bind_int64(st, 5, i64(u->requests));
	sqlite3_bind_double(st, 6, u->cost > 0 ? u->cost : 0);
	sqlite3_bind_int(st, 7, u->priced != 0);
	sqlite3_bind_text(st, 8, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "usage");
	sqlite3_finalize(st);
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = err_kind_set(e, ERR_NOT_FOUND, _("no task %s"), id);
	return rc;
}

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
		store_db_err(s, e, "egress");
		goto out;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, round);
	sqlite3_bind_double(st, 3, time > 0 ? time : clock_wall());
	for (int i = 0; i < 4; i++)          /* step kind endpoint host */
		store_bind_text_or_null(st, 4 + i, v[i]);
	sqlite3_bind_int(st, 8, port > 0 && port < 65536 ? (int)port : 0);
	store_bind_text_or_null(st, 9, v[4]);
	store_bind_text_or_null(st, 10, v[5]);
	if (status > 0 && status < 1000)
		sqlite3_bind_int(st, 11, (int)status);
	else
		sqlite3_bind_null(st, 11);
	sqlite3_bind_int64(st, 12, i64(up));
	sqlite3_bind_int64(st, 13, i64(down));
	sqlite3_bind_double(st, 14, ms > 0 ? ms : 0);
	store_bind_text_or_null(st, 15, v[6]);
	store_bind_text_or_null(st, 16, v[7]);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "egress");
	sqlite3_finalize(st);
out:
	for (size_t i = 0; i < NSTR; i++)
		free(v[i]);
	json_decref(j);
	return rc;
}

static void egress_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct egress_row *r = elem;
	(void)arg;
	r->id = sqlite3_column_int64(st, 0);
	r->round = sqlite3_column_int(st, 1);
	r->time = sqlite3_column_double(st, 2);
	r->step = store_col_str(st, 3);
	r->kind = store_col_str(st, 4);
	r->endpoint = store_col_str(st, 5);
	r->host = store_col_str(st, 6);
	r->port = sqlite3_column_int(st, 7);
	r->method = store_col_str(st, 8);
	r->path = store_col_str(st, 9);
	r->status = sqlite3_column_int(st, 10);
	r->up = store_col_u64(st, 11);
	r->down = store_col_u64(st, 12);
	r->ms = sqlite3_column_double(st, 13);
	r->verdict = store_col_str(st, 14);
	r->reason = store_col_str(st, 15);
}

static void egress_clear(void *elem)
{
	struct egress_row *r = elem;
	free(r->step);
	free(r->kind);
	free(r->endpoint);
	free(r->host);
	free(r->method);
	free(r->path);
	free(r->verdict);
	free(r->reason);
}

static const struct store_row_type egress_rows = {
	sizeof(struct egress_row), egress_fill, egress_clear, "egress"
};

int store_egress_list(struct store *s, const char *id, struct egress_row **out, size_t *n,
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT id, round, time, step, kind, endpoint, host, port, method, path, status, "
	        "up, down, ms, verdict, reason FROM egress WHERE task_id = ? ORDER BY id", -1,
	        &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "egress");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	void *v;
	int rc = store_rows(s, st, &egress_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

void store_egress_free(struct egress_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		egress_clear(&r[i]);
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
		return store_db_err(s, e, "pauses");
	sqlite3_bind_text(st, 1, endpoint, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, until);
	sqlite3_bind_int(st, 3, status);
	store_bind_text_or_null(st, 4, task_id);
	sqlite3_bind_double(st, 5, clock_wall());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "pauses");
	sqlite3_finalize(st);
	return rc;
}

static void pause_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct pause_row *p = elem;
	(void)arg;
	p->endpoint = store_col_str(st, 0);
	p->until = sqlite3_column_double(st, 1);
	p->status = sqlite3_column_int(st, 2);
	p->task_id = store_col_str(st, 3);
	p->time = sqlite3_column_double(st, 4);
	if (!p->endpoint)
		p->endpoint = xstrdup("");
}

static void pause_clear(void *elem)
{
	struct pause_row *p = elem;
	free(p->endpoint);
	free(p->task_id);
}

static const struct store_row_type pause_rows = {
	sizeof(struct pause_row), pause_fill, pause_clear, "pauses"
};

int store_pauses_active(struct store *s, double at, struct pause_row **out, size_t *n,
                        struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT endpoint, until, status, task_id, time FROM pauses "
	                       "WHERE until > ? ORDER BY until, endpoint", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "pauses");
	sqlite3_bind_double(st, 1, at);
	void *v;
	int rc = store_rows(s, st, &pause_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

void store_pauses_free(struct pause_row *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pause_clear(&p[i]);
	free(p);
}

int store_egress_count(struct store *s, const char *id, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM egress WHERE task_id = ?", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "egress");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_db_err(s, e, "egress");
	if (rc == 0)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}
