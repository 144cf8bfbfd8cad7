#include "autoconfig.h"
#include "store_github.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "store_int.h"

/* gh_link_free for store_rows. */
static void link_clear(void *elem)
{
	gh_link_free(elem);
}

void gh_link_free(struct gh_link *l)
{
	if (!l)
		return;
	free(l->gh_repo);
	free(l->issue_comment_body);
	free(l->pr_state);
	free(l->pr_head);
	free(l->checks);
	memset(l, 0, sizeof *l);
}

void gh_links_free(struct gh_link *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gh_link_free(&l[i]);
	free(l);
}

static void bind_id_or_null(sqlite3_stmt *st, int i, long long v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* Steps a query for one row and finalizes it: 1 when there is a row, 0
 * when none, -1 (e set) on error. */
static int row_exists(struct store *s, sqlite3_stmt *st, const char *what, struct err *e)
{
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_ROW ? 1 : r == SQLITE_DONE ? 0 : store_db_err(s, e, what);
}

#define LINK_COLS "task_id, gh_repo, issue, issue_comment, issue_comment_body, pr, pr_state, " \
                  "pr_head, checks, branch_deleted, updated"

static void link_read(sqlite3_stmt *st, struct gh_link *l)
{
	memset(l, 0, sizeof *l);
	snprintf(l->task_id, sizeof l->task_id, "%s", (const char *)sqlite3_column_text(st, 0));
	l->gh_repo = store_col_str(st, 1);
	l->issue = sqlite3_column_int64(st, 2);
	l->issue_comment = sqlite3_column_int64(st, 3);
	l->issue_comment_body = store_col_str(st, 4);
	l->pr = sqlite3_column_int64(st, 5);
	l->pr_state = store_col_str(st, 6);
	l->pr_head = store_col_str(st, 7);
	l->checks = store_col_str(st, 8);
	l->branch_deleted = sqlite3_column_int(st, 9);
	l->updated = sqlite3_column_double(st, 10);
}

static void link_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	(void)arg;
	link_read(st, elem);
}

static const struct store_row_type link_rows = {
	sizeof(struct gh_link), link_fill, link_clear, "github links"
};

int store_github_link(struct store *s, const char *task_id, struct gh_link *out,
                      struct err *e)
{
	sqlite3_stmt *st;
	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(s->db, "SELECT " LINK_COLS " FROM github_links WHERE task_id = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github link");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_ROW) {
		link_read(st, out);
		rc = 1;
	} else if (r != SQLITE_DONE) {
		rc = store_db_err(s, e, "github link");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_github_pr_link(struct store *s, const char *gh_repo, long long pr, struct gh_link *out,
                         struct err *e)
{
	sqlite3_stmt *st;
	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(s->db, "SELECT " LINK_COLS " FROM github_links WHERE gh_repo = ? "
	                       "AND pr = ? ORDER BY updated DESC LIMIT 1", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "github link");
	sqlite3_bind_text(st, 1, gh_repo, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, pr);
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_ROW) {
		link_read(st, out);
		rc = 1;
	} else if (r != SQLITE_DONE) {
		rc = store_db_err(s, e, "github link");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_github_issue_task(struct store *s, const char *gh_repo, long long issue,
                            char task_out[TASK_ID_LEN + 1], struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT task_id FROM github_links WHERE gh_repo = ? AND "
	                       "issue = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github issue");
	sqlite3_bind_text(st, 1, gh_repo, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, issue);
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_ROW) {
		snprintf(task_out, TASK_ID_LEN + 1, "%s", (const char *)sqlite3_column_text(st, 0));
		rc = 1;
	} else if (r != SQLITE_DONE) {
		rc = store_db_err(s, e, "github issue");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_github_link_put(struct store *s, const struct gh_link *l, struct err *e)
{
	sqlite3_stmt *st;
	/* An upsert on the task alone: OR REPLACE would delete another
	 * task's link to the same issue instead of failing. */
	if (sqlite3_prepare_v2(s->db, "INSERT INTO github_links (" LINK_COLS ") "
	                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(task_id) DO "
	                       "UPDATE SET gh_repo = excluded.gh_repo, issue = excluded.issue, "
	                       "issue_comment = excluded.issue_comment, issue_comment_body = "
	                       "excluded.issue_comment_body, pr = excluded.pr, pr_state = "
	                       "excluded.pr_state, pr_head = excluded.pr_head, checks = "
	                       "excluded.checks, branch_deleted = excluded.branch_deleted, "
	                       "updated = excluded.updated", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github link");
	sqlite3_bind_text(st, 1, l->task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, l->gh_repo ? l->gh_repo : "", -1, SQLITE_STATIC);
	bind_id_or_null(st, 3, l->issue);
	bind_id_or_null(st, 4, l->issue_comment);
	store_bind_text_or_null(st, 5, l->issue_comment_body);
	bind_id_or_null(st, 6, l->pr);
	store_bind_text_or_null(st, 7, l->pr_state);
	store_bind_text_or_null(st, 8, l->pr_head);
	store_bind_text_or_null(st, 9, l->checks);
	sqlite3_bind_int(st, 10, l->branch_deleted);
	sqlite3_bind_double(st, 11, clock_wall());
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_CONSTRAINT)
		rc = -2, err_kind_set(e, ERR_CONFLICT, _("issue %s#%lld is another task's already"),
		                      l->gh_repo, l->issue);
	else if (r != SQLITE_DONE)
		rc = store_db_err(s, e, "github link");
	sqlite3_finalize(st);
	return rc;
}

int store_github_links_live(struct store *s, const char *gh_repo, struct gh_link **out,
                            size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	/* The comment's last words name the end; a link whose task ended
	 * and whose comment says so already has nothing left to update. */
	if (sqlite3_prepare_v2(s->db, "SELECT " LINK_COLS " FROM github_links l WHERE gh_repo = ? "
	                       "AND ((pr IS NOT NULL AND (pr_state IS NULL OR pr_state = 'open')) "
	                       "OR (issue IS NOT NULL AND (issue_comment_body IS NULL OR "
	                       "issue_comment_body NOT LIKE '%<!-- paddock:final -->%'))) "
	                       "ORDER BY updated", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github links");
	sqlite3_bind_text(st, 1, gh_repo, -1, SQLITE_STATIC);
	void *v;
	int rc = store_rows(s, st, &link_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

static void event_clear(void *elem)
{
	struct gh_event *ev = elem;
	free(ev->source);
	free(ev->event);
	free(ev->delivery);
	free(ev->actor);
	free(ev->gh_repo);
	free(ev->verdict);
	free(ev->detail);
	free(ev->task_id);
}

void gh_events_free(struct gh_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		event_clear(&ev[i]);
	free(ev);
}

static void event_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct gh_event *ev = elem;
	(void)arg;
	ev->id = sqlite3_column_int64(st, 0);
	ev->time = sqlite3_column_double(st, 1);
	ev->source = store_col_str(st, 2);
	ev->event = store_col_str(st, 3);
	ev->delivery = store_col_str(st, 4);
	ev->actor = store_col_str(st, 5);
	ev->gh_repo = store_col_str(st, 6);
	ev->number = sqlite3_column_int64(st, 7);
	ev->verdict = store_col_str(st, 8);
	ev->detail = store_col_str(st, 9);
	ev->task_id = store_col_str(st, 10);
}

static const struct store_row_type event_rows = {
	sizeof(struct gh_event), event_fill, event_clear, "github events"
};

/* What a sender's header may leave in the store: GH_FIELD_MAX printable
 * ASCII bytes, the rest cut and any other byte a '?'.  NULL stays NULL. */
static const char *gh_field(const char *v, char out[GH_FIELD_MAX + 1])
{
	if (!v)
		return NULL;
	size_t i = 0;
	for (; v[i] && i < GH_FIELD_MAX; i++)
		out[i] = (unsigned char)v[i] >= 0x20 && (unsigned char)v[i] < 0x7f ? v[i] : '?';
	out[i] = '\0';
	return out;
}

int store_github_event_add(struct store *s, const struct gh_event *ev, struct err *e)
{
	sqlite3_stmt *st;
	char event[GH_FIELD_MAX + 1], delivery[GH_FIELD_MAX + 1];
	int refused = ev->verdict && strcmp(ev->verdict, "refused") == 0;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO github_events (time, source, event, delivery, "
	                       "actor, gh_repo, number, verdict, detail, task_id) VALUES "
	                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github event");
	sqlite3_bind_double(st, 1, ev->time > 0 ? ev->time : clock_wall());
	sqlite3_bind_text(st, 2, ev->source ? ev->source : "poll", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, ev->event ? gh_field(ev->event, event) : "", -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 4, gh_field(ev->delivery, delivery));
	store_bind_text_or_null(st, 5, ev->actor);
	store_bind_text_or_null(st, 6, ev->gh_repo);
	bind_id_or_null(st, 7, ev->number);
	sqlite3_bind_text(st, 8, ev->verdict ? ev->verdict : "ignored", -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 9, ev->detail);
	store_bind_text_or_null(st, 10, ev->task_id);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github event");
	sqlite3_finalize(st);
	if (rc < 0 || !refused)
		return rc;
	/* Refusals are a stranger's to send: only the newest are kept. */
	if (sqlite3_prepare_v2(s->db, "DELETE FROM github_events WHERE verdict = 'refused' AND "
	                       "id <= (SELECT id FROM github_events WHERE verdict = 'refused' "
	                       "ORDER BY id DESC LIMIT 1 OFFSET ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github event");
	sqlite3_bind_int(st, 1, GH_REFUSED_KEPT);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github event");
	sqlite3_finalize(st);
	return rc;
}

int store_github_events(struct store *s, size_t limit, struct gh_event **out, size_t *n,
                        struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT id, time, source, event, delivery, actor, gh_repo, "
	                       "number, verdict, detail, task_id FROM github_events ORDER BY id "
	                       "DESC LIMIT ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github events");
	sqlite3_bind_int64(st, 1, limit ? (sqlite3_int64)limit : -1);
	void *v;
	int rc = store_rows(s, st, &event_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

int store_github_delivery_seen(struct store *s, const char *delivery, struct err *e)
{
	sqlite3_stmt *st;
	if (!delivery || !*delivery)
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM github_events WHERE delivery = ? AND "
	                       "verdict NOT IN ('refused', 'error')", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "github delivery");
	char clipped[GH_FIELD_MAX + 1];
	sqlite3_bind_text(st, 1, gh_field(delivery, clipped), -1, SQLITE_STATIC);
	return row_exists(s, st, "github delivery", e);
}

int store_github_seen_add(struct store *s, const char *gh_repo, const char *kind,
                          long long gh_id, const char *task_id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO github_seen (gh_repo, kind, gh_id, "
	                       "task_id) VALUES (?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github seen");
	sqlite3_bind_text(st, 1, gh_repo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, gh_id);
	store_bind_text_or_null(st, 4, task_id);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) > 0
	                                         : store_db_err(s, e, "github seen");
	sqlite3_finalize(st);
	return rc;
}

int store_github_seen(struct store *s, const char *gh_repo, const char *kind, long long gh_id,
                      struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM github_seen WHERE gh_repo = ? AND kind = ? "
	                       "AND gh_id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github seen");
	sqlite3_bind_text(st, 1, gh_repo, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, gh_id);
	return row_exists(s, st, "github seen", e);
}

int store_github_waiting(struct store *s, const char *task_id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM github_seen WHERE task_id = ? AND kind LIKE "
	                       "'waiting-%' LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github seen");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	return row_exists(s, st, "github seen", e);
}

int store_github_waiting_clear(struct store *s, const char *task_id, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "DELETE FROM github_seen WHERE task_id = ? AND kind LIKE "
	                       "'waiting-%'", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github seen");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github seen");
	sqlite3_finalize(st);
	return rc;
}

static void ask_clear(void *elem)
{
	struct gh_ask *a = elem;
	free(a->kind);
	free(a->actor);
}

void gh_asks_free(struct gh_ask *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ask_clear(&a[i]);
	free(a);
}

static void ask_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct gh_ask *a = elem;
	(void)arg;
	snprintf(a->task_id, sizeof a->task_id, "%s", (const char *)sqlite3_column_text(st, 0));
	a->round = sqlite3_column_int(st, 1);
	a->kind = store_col_str(st, 2);
	a->gh_id = sqlite3_column_int64(st, 3);
	a->pr = sqlite3_column_int64(st, 4);
	a->actor = store_col_str(st, 5);
}

static const struct store_row_type ask_rows = {
	sizeof(struct gh_ask), ask_fill, ask_clear, "github asks"
};

int store_github_ask_add(struct store *s, const struct gh_ask *a, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO github_asks (task_id, round, kind, "
	                       "gh_id, pr, actor, answered) VALUES (?, ?, ?, ?, ?, ?, 0)", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "github ask");
	sqlite3_bind_text(st, 1, a->task_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, a->round);
	sqlite3_bind_text(st, 3, a->kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, a->gh_id);
	sqlite3_bind_int64(st, 5, a->pr);
	store_bind_text_or_null(st, 6, a->actor);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github ask");
	sqlite3_finalize(st);
	return rc;
}

int store_github_asks_open(struct store *s, struct gh_ask **out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT task_id, round, kind, gh_id, pr, actor FROM "
	                       "github_asks WHERE answered = 0 ORDER BY task_id, round", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_db_err(s, e, "github asks");
	void *v;
	int rc = store_rows(s, st, &ask_rows, NULL, &v, n, e);
	sqlite3_finalize(st);
	*out = v;
	return rc;
}

int store_github_ask_for(struct store *s, const char *task_id, int round, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM github_asks WHERE task_id = ? AND round = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github ask");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, round);
	return row_exists(s, st, "github ask", e);
}

int store_github_ask_answered(struct store *s, const char *task_id, int round, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE github_asks SET answered = 1 WHERE task_id = ? AND "
	                       "round = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github ask");
	sqlite3_bind_text(st, 1, task_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, round);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github ask");
	sqlite3_finalize(st);
	return rc;
}

int store_github_etag(struct store *s, const char *url, char **etag, char **body, char **link,
                      struct err *e)
{
	sqlite3_stmt *st;
	*etag = *body = *link = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT etag, body, link FROM github_etags WHERE url = ?",
	                       -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github etag");
	sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_ROW) {
		*etag = store_col_str(st, 0);
		*body = store_col_str(st, 1);
		*link = store_col_str(st, 2);
		rc = 1;
	} else if (r != SQLITE_DONE) {
		rc = store_db_err(s, e, "github etag");
	}
	sqlite3_finalize(st);
	return rc;
}

int store_github_etag_put(struct store *s, const char *url, const char *etag, const char *body,
                          const char *link, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO github_etags (url, etag, body, link) "
	                       "VALUES (?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github etag");
	sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, etag, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, body ? body : "", -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 4, link);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github etag");
	sqlite3_finalize(st);
	return rc;
}

int store_github_backoff_set(struct store *s, const char *api, double until, const char *why,
                             struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO github_backoff (api, until, why) "
	                       "VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github backoff");
	sqlite3_bind_text(st, 1, api, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, until);
	store_bind_text_or_null(st, 3, why);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "github backoff");
	sqlite3_finalize(st);
	return rc;
}

int store_github_backoff(struct store *s, const char *api, double *until, char **why,
                         struct err *e)
{
	sqlite3_stmt *st;
	*until = 0;
	*why = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT until, why FROM github_backoff WHERE api = ?", -1,
	                       &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "github backoff");
	sqlite3_bind_text(st, 1, api, -1, SQLITE_STATIC);
	int r = sqlite3_step(st), rc = 0;
	if (r == SQLITE_ROW) {
		*until = sqlite3_column_double(st, 0);
		*why = store_col_str(st, 1);
		rc = 1;
	} else if (r != SQLITE_DONE) {
		rc = store_db_err(s, e, "github backoff");
	}
	sqlite3_finalize(st);
	return rc;
}
