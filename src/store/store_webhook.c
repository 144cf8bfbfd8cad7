/* store_webhook: the webhook queue (webhook.h) with each delivery's tries,
 * and the API's idempotent requests. */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "clock.h"
#include "store_int.h"

/* ---- the webhook queue (schema 4) ---- */

int store_webhook_add(struct store *s, const char *task_id, const char *event,
                      const char *delivery, const char *body, const char *url, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO webhooks (task_id, event, delivery, body, created, next_at, url) "
	        "VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "webhooks");
	store_bind_text_or_null(st, 7, url);
	double t = clock_wall();
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, event, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, delivery, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, body, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, t);
	sqlite3_bind_double(st, 6, t);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "webhooks");
	sqlite3_finalize(st);
	return rc;
}

#define WEBHOOK_COLS "id, task_id, event, delivery, body, created, attempts, next_at, " \
                     "last_error, delivered_at, url"

static void webhook_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct webhook_row *r = elem;
	(void)arg;
	r->id = sqlite3_column_int64(st, 0);
	r->task_id = store_col_str(st, 1);
	r->event = store_col_str(st, 2);
	r->delivery = store_col_str(st, 3);
	r->body = store_col_str(st, 4);
	r->created = sqlite3_column_double(st, 5);
	r->attempts = sqlite3_column_int(st, 6);
	r->next_at = sqlite3_column_type(st, 7) == SQLITE_NULL ? 0 :
	             sqlite3_column_double(st, 7);
	r->last_error = store_col_str(st, 8);
	r->delivered_at = sqlite3_column_type(st, 9) == SQLITE_NULL ? 0 :
	                  sqlite3_column_double(st, 9);
	r->url = store_col_str(st, 10);
}

static void webhook_clear(void *elem)
{
	struct webhook_row *r = elem;
	free(r->task_id);
	free(r->event);
	free(r->delivery);
	free(r->body);
	free(r->last_error);
	free(r->url);
}

static const struct store_row_type webhook_rows = {
	sizeof(struct webhook_row), webhook_fill, webhook_clear, "webhooks"
};

/* The rows of st, a query of WEBHOOK_COLS; finalizes st. */
static int webhooks_read(struct store *s, sqlite3_stmt *st, struct webhook_row **out,
                         size_t *n, struct err *e)
{
	void *v;
	int rc = store_rows(s, st, &webhook_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

int store_webhook_due(struct store *s, double at, struct webhook_row **out, size_t *n,
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT " WEBHOOK_COLS " FROM webhooks WHERE next_at IS NOT NULL AND next_at <= ? "
	        "AND delivered_at IS NULL ORDER BY next_at, id LIMIT 64", -1, &st,
	        NULL) != SQLITE_OK)
		return store_db_err(s, e, "webhooks");
	sqlite3_bind_double(st, 1, at);
	return webhooks_read(s, st, out, n, e);
}

int store_webhook_next(struct store *s, double *at, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT MIN(next_at) FROM webhooks WHERE next_at IS NOT NULL "
	        "AND delivered_at IS NULL", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "webhooks");
	int rc = sqlite3_step(st);
	*at = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ?
	      sqlite3_column_double(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store_db_err(s, e, "webhooks");
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
		return store_db_err(s, e, "webhooks");
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_double(st, 3, clock_wall());
	sqlite3_bind_int(st, 4, status);
	store_bind_text_or_null(st, 5, error);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "webhooks");
	sqlite3_finalize(st);
	return rc;
}

/* One try ended: the delivery's row and its log, in one transaction.
 * delivered: a 2xx; else next_at (<= 0: given up) and error. */
static int webhook_tried(struct store *s, long long id, int delivered, double next_at,
                         const char *error, int status, struct err *e)
{
	sqlite3_stmt *st;
	if (store_tx_begin(s, e) < 0)
		return -1;
	int rc = sqlite3_prepare_v2(s->db, delivered
	        ? "UPDATE webhooks SET attempts = attempts + 1, next_at = NULL, delivered_at = ?1 "
	          "WHERE id = ?3"
	        : "UPDATE webhooks SET attempts = attempts + 1, next_at = ?1, last_error = ?2 "
	          "WHERE id = ?3", -1, &st, NULL) == SQLITE_OK ? 0 : store_db_err(s, e, "webhooks");
	if (rc == 0) {
		if (delivered)
			sqlite3_bind_double(st, 1, clock_wall());
		else if (next_at > 0)
			sqlite3_bind_double(st, 1, next_at);
		else
			sqlite3_bind_null(st, 1);
		if (!delivered)
			store_bind_text_or_null(st, 2, error);
		sqlite3_bind_int64(st, 3, id);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "webhooks");
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = webhook_attempt(s, id, status, delivered ? NULL : error, e);
	return store_tx_end(s, rc, e);
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

static void attempt_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct webhook_attempt *a = elem;
	(void)arg;
	a->at = sqlite3_column_double(st, 0);
	a->status = sqlite3_column_int(st, 1);
	a->error = store_col_str(st, 2);
}

static void attempt_clear(void *elem)
{
	free(((struct webhook_attempt *)elem)->error);
}

static const struct store_row_type attempt_rows = {
	sizeof(struct webhook_attempt), attempt_fill, attempt_clear, "webhooks"
};

int store_webhook_attempts(struct store *s, long long id, struct webhook_attempt **out,
                           size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT at, status, error FROM webhook_attempts WHERE "
	                       "webhook_id = ? ORDER BY n", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "webhooks");
	sqlite3_bind_int64(st, 1, id);
	void *v;
	int rc = store_rows(s, st, &attempt_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

void store_webhook_attempts_free(struct webhook_attempt *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		attempt_clear(&a[i]);
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
		return store_db_err(s, e, "webhooks");
	if (task_id)
		sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	return webhooks_read(s, st, out, n, e);
}

void store_webhooks_free(struct webhook_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		webhook_clear(&r[i]);
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
		return store_db_err(s, e, "idempotency");
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	int rc = STORE_IDEM_NEW, step = sqlite3_step(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = store_db_err(s, e, "idempotency");
	if (step == SQLITE_ROW) {
		const char *fp = (const char *)sqlite3_column_text(st, 0);
		out->status = sqlite3_column_int(st, 1);
		out->body = store_col_str(st, 2);
		out->location = store_col_str(st, 3);
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
	if (store_tx_begin(s, e) < 0)
		return -1;
	double now = clock_wall();
	sqlite3_stmt *st;
	int rc = -1;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM idempotency WHERE created < ?", -1, &st,
	                       NULL) != SQLITE_OK) {
		store_db_err(s, e, "idempotency");
		goto out;
	}
	sqlite3_bind_double(st, 1, now - IDEM_KEEP);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "idempotency");
	sqlite3_finalize(st);
	if (rc < 0)
		goto out;
	rc = idem_lookup(s, k, out, now, e);
	if (rc != STORE_IDEM_NEW)
		goto out;
	/* The key is taken now: a second request with it waits for this one's
	 * answer (STORE_IDEM_BUSY) instead of doing the work again. */
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO idempotency (key, actor, route, "
	                       "fingerprint, status, body, created) VALUES (?, ?, ?, ?, 0, '', ?)",
	                       -1, &st, NULL) != SQLITE_OK) {
		rc = store_db_err(s, e, "idempotency");
		goto out;
	}
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, k->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = store_db_err(s, e, "idempotency");
	sqlite3_finalize(st);
out:
	rc = store_tx_end(s, rc, e);
	if (rc < 0)
		store_idem_free(out);
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
		return store_db_err(s, e, "idempotency");
	sqlite3_bind_text(st, 1, k->key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, k->route, -1, SQLITE_STATIC);
	if (status) {
		sqlite3_bind_int(st, 4, status);
		sqlite3_bind_text(st, 5, body ? body : "", -1, SQLITE_STATIC);
		store_bind_text_or_null(st, 6, location);
	}
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "idempotency");
	sqlite3_finalize(st);
	return rc;
}
