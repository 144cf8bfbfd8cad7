/* store_rounds: a task's rounds and the decisions on them: a request for
 * changes and the round it starts, the fix loop's rounds, a reviewer's
 * round, the history shown, and recovery (a round that did not reach
 * review goes back to the one before). */
#include "autoconfig.h"
#include "store.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "store_int.h"

/* The summary in a gate summary's JSON, or NULL. */
static char *gate_summary_text(const char *gate)
{
	json_t *g = gate ? json_loads(gate, 0, NULL) : NULL;
	const char *v = json_string_value(json_object_get(g, "summary"));
	char *out = v ? xstrdup(v) : NULL;
	json_decref(g);
	return out;
}

/* 1 when round n of r[0..nr) was made by the fix loop. */
static int round_is_fix(const struct task_round *r, size_t nr, int n)
{
	for (size_t i = 0; i < nr; i++)
		if (r[i].n == n)
			return r[i].kind && !strcmp(r[i].kind, "fix");
	return 0;
}

/* The round a task at round `round` goes back to when that round does not
 * reach review: the one before, or before the fix loop's rounds and the
 * round whose tests they tried to fix, which never reached review either;
 * 0 when that is none (the first round's fix loop). */
static int rollback_target(const struct task_round *r, size_t nr, int round)
{
	int to = round - 1;
	while (to >= 1 && round_is_fix(r, nr, to + 1))
		to--;
	return to;
}

/* Inside a transaction: round t->round (> 1) did not reach review; the
 * task goes back to review with the round before (rollback_target), which
 * did. */
static int rollback_locked(struct store *s, const struct task_row *t, const char *why,
                           struct err *e)
{
	struct task_round *r;
	size_t n;
	if (store_rounds(s, t->id, &r, &n, e) < 0)
		return -1;
	int to = rollback_target(r, n, t->round);
	const struct task_round *prev = NULL, *cur = NULL;
	for (size_t i = 0; i < n; i++) {
		if (r[i].n == to)
			prev = &r[i];
		if (r[i].n == t->round)
			cur = &r[i];
	}
	int rc = -1;
	if (!prev || !prev->head) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s: round %d has no work to go back to"),
		             t->id, to);
		goto out;
	}
	char *summary = gate_summary_text(prev->gate);
	const char *texts[] = { prev->head, summary ? summary : t->summary,
	                        cur ? cur->head : NULL, why };
	const int ints[] = { to, to + 1 };
	rc = store_task_update(s, "UPDATE tasks SET head = ?, summary = ?, failed_head = ?, "
	                       "failed_why = ?, round = ?, failed_round = ?, pending = NULL, "
	                       "error = NULL, reason = NULL, sandbox_kept = 0, cancel_requested = 0 "
	                       "WHERE id = ?", t->id, e, 4, texts, 2, ints);
	free(summary);
	/* The round starts afresh when changes are requested again. */
	if (rc == 0) {
		const int nr[] = { to };
		rc = store_task_update(s, "DELETE FROM rounds WHERE n > ? AND task_seq = "
		                       "(SELECT seq FROM tasks WHERE id = ?)", t->id, e, 0, NULL, 1, nr);
	}
	if (rc == 0)
		rc = store_transition_locked(s, t->id, TASK_REVIEW, NULL, e);
out:
	task_rounds_free(r, n);
	return rc;
}

int store_task_rollback_round(struct store *s, const char *id, const char *why,
                              struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) == 0) {
		if (t.round < 2 || !task_status_is_active(t.status) || t.status == TASK_PUSHING)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s in round %d; it has no "
			             "earlier round to go back to"), t.id, task_status_label(t.status),
			             t.round);
		else
			rc = rollback_locked(s, &t, why, e);
		task_row_free(&t);
	}
	return store_tx_end(s, rc, e);
}

/* Inside a transaction: *yes 1 when task t is in the first round's fix
 * loop (no round reached review yet); the task is then set back to round
 * 1, its fix rounds gone, to start again as a first round does. */
static int first_round_fix(struct store *s, const struct task_row *t, int *yes, struct err *e)
{
	struct task_round *r;
	size_t n;
	*yes = 0;
	if (store_rounds(s, t->id, &r, &n, e) < 0)
		return -1;
	*yes = round_is_fix(r, n, t->round) && rollback_target(r, n, t->round) == 0;
	task_rounds_free(r, n);
	if (!*yes)
		return 0;
	const int one[] = { 1 };
	if (store_task_update(s, "DELETE FROM rounds WHERE n > ? AND task_seq = "
	                      "(SELECT seq FROM tasks WHERE id = ?)", t->id, e, 0, NULL, 1, one) < 0)
		return -1;
	return store_task_update(s, "UPDATE tasks SET round = ? WHERE id = ?", t->id, e, 0, NULL, 1,
	                         one);
}

/* Inside a transaction: what becomes of one active task whose process
 * stopped (see store_task_interrupted). */

static int interrupted_locked(struct store *s, const struct task_row *t, int planned,
                              int max_attempts, const char *why, enum task_status *to,
                              struct err *e)
{
	const char *step = task_status_name(t->status);
	char *msg;
	int rc;
	if (t->cancel_requested) {
		*to = TASK_CANCELLED;
		return store_transition_locked(s, t->id, TASK_CANCELLED, _("cancelled while it ran"), e);
	}
	int fix_of_first = 0;
	if (t->round > 1 && first_round_fix(s, t, &fix_of_first, e) < 0)
		return -1;
	if (t->round > 1 && !fix_of_first) {
		*to = TASK_REVIEW;
		msg = xasprintf(_("%s: round %d was interrupted (%s); the task is back at review "
		                  "with round %d's work, and the notes can be sent again"),
		                step, t->round, why, t->round - 1);
		rc = rollback_locked(s, t, msg, e);
		free(msg);
		if (rc == 0)
			return 0;
		/* No reviewed work to go back to: nothing can be recovered. */
		*to = TASK_LOST;
		msg = xasprintf("%s: %s", step, why);
		rc = store_transition_locked(s, t->id, TASK_LOST, msg, e);
		free(msg);
		return rc;
	}
	/* A planned stop does not use up an attempt. */
	int attempts = planned && t->attempts > 0 ? t->attempts - 1 : t->attempts;
	if (!planned && max_attempts > 0 && attempts >= max_attempts) {
		*to = TASK_FAILED;
		msg = xasprintf(_("%s: %s; the task was tried %d times (paddock.max-attempts = %d), "
		                  "every time interrupted"), step, why, attempts, max_attempts);
		rc = store_transition_locked(s, t->id, TASK_FAILED, msg, e);
		free(msg);
		const char *texts[] = { "crashed" };
		return rc < 0 ? -1 : store_task_update(s, "UPDATE tasks SET reason = ? WHERE id = ?",
		                                       t->id, e, 1, texts, 0, NULL);
	}
	*to = TASK_QUEUED;
	msg = xasprintf(_("%s: %s; queued again (attempt %d of %d)"), step, why, attempts + 1,
	                max_attempts);
	const int ints[] = { attempts };
	rc = store_task_update(s, "UPDATE tasks SET attempts = ?, sandbox_kept = 0 WHERE id = ?", t->id,
	                       e, 0, NULL, 1, ints);
	if (rc == 0)
		rc = store_transition_locked(s, t->id, TASK_QUEUED, msg, e);
	free(msg);
	return rc;
}

int store_task_interrupted(struct store *s, const char *id, int planned, int max_attempts,
                           const char *why, enum task_status *to, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	enum task_status dummy;
	if (store_task_get(s, id, &t, e) == 0) {
		if (!task_status_is_active(t.status) || t.status == TASK_PUSHING)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s, not interrupted"), t.id,
			             task_status_label(t.status));
		else
			rc = interrupted_locked(s, &t, planned, max_attempts, why, to ? to : &dummy, e);
		task_row_free(&t);
	}
	return store_tx_end(s, rc, e);
}

int store_recover_active(struct store *s, int max_attempts, const char *why,
                         struct store_recovery *out, struct err *e)
{
	struct task_row *rows;
	size_t n;
	memset(out, 0, sizeof *out);
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_query q = { .status_mask = TASK_MASK_ACTIVE };
	if (store_task_query(s, &q, &rows, &n, e) < 0)
		return store_tx_end(s, -1, e);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		/* Pushes run in the process that decided (gate.h); whoever
		 * touches a task whose pusher died reconciles it. */
		if (!task_status_is_active(rows[i].status) || rows[i].status == TASK_PUSHING)
			continue;
		enum task_status to;
		if (interrupted_locked(s, &rows[i], 0, max_attempts, why, &to, e) < 0) {
			rc = -1;
			break;
		}
		switch (to) {
		case TASK_QUEUED: out->queued++; break;
		case TASK_REVIEW: out->review++; break;
		case TASK_FAILED: out->failed++; break;
		case TASK_CANCELLED: out->cancelled++; break;
		default: out->lost++; break;
		}
	}
	task_rows_free(rows, n);
	return store_tx_end(s, rc, e);
}

int store_round_begin(struct store *s, const char *id, int n, const char *from, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT OR IGNORE INTO rounds (task_seq, n, from_commit, started) "
	        "SELECT seq, ?, ?, ? FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "rounds");
	sqlite3_bind_int(st, 1, n);
	store_bind_text_or_null(st, 2, from);
	sqlite3_bind_double(st, 3, clock_wall());
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

int store_round_end(struct store *s, const char *id, int n, const char *head,
                    const char *gate, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "UPDATE rounds SET head = COALESCE(?, head), gate = COALESCE(?, gate), ended = ? "
	        "WHERE n = ? AND task_seq = (SELECT seq FROM tasks WHERE id = ?)", -1, &st,
	        NULL) != SQLITE_OK)
		return store_db_err(s, e, "rounds");
	store_bind_text_or_null(st, 1, head);
	store_bind_text_or_null(st, 2, gate);
	sqlite3_bind_double(st, 3, clock_wall());
	sqlite3_bind_int(st, 4, n);
	sqlite3_bind_text(st, 5, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

static void round_clear(void *elem)
{
	struct task_round *r = elem;
	free(r->from);
	free(r->head);
	free(r->gate);
	free(r->kind);
}

void task_rounds_free(struct task_round *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		round_clear(&r[i]);
	free(r);
}

static void decision_clear(void *elem)
{
	struct task_decision *d = elem;
	free(d->action);
	free(d->notes);
	free(d->actor);
}

void task_decisions_free(struct task_decision *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		decision_clear(&d[i]);
	free(d);
}

static void round_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct task_round *r = elem;
	(void)arg;
	r->n = sqlite3_column_int(st, 0);
	r->from = store_col_str(st, 1);
	r->head = store_col_str(st, 2);
	r->gate = store_col_str(st, 3);
	r->started = sqlite3_column_double(st, 4);
	r->ended = sqlite3_column_double(st, 5);
	r->kind = store_col_str(st, 6);
}

static const struct store_row_type round_rows = {
	sizeof(struct task_round), round_fill, round_clear, "rounds"
};

int store_rounds(struct store *s, const char *id, struct task_round **out, size_t *n,
                 struct err *e)
{
	void *v;
	int rc = store_rows_of_task(s, "SELECT n, from_commit, head, gate, started, ended, kind "
	                            "FROM rounds WHERE task_seq = (SELECT seq FROM tasks WHERE "
	                            "id = ?) ORDER BY n", id, &round_rows, &v, n, e);
	*out = v;
	return rc;
}

int store_decision_add(struct store *s, const char *id, const char *action,
                       const char *notes, const char *actor, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	        "INSERT INTO decisions (task_seq, n, round, action, notes, actor, at) "
	        "SELECT seq, (SELECT COUNT(*) FROM decisions WHERE task_seq = tasks.seq), round, "
	        "?, ?, ?, ? FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "decisions");
	sqlite3_bind_text(st, 1, action, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 2, notes);
	sqlite3_bind_text(st, 3, actor, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 4, clock_wall());
	sqlite3_bind_text(st, 5, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "decisions");
	sqlite3_finalize(st);
	return rc;
}

static void decision_fill(sqlite3_stmt *st, void *elem, void *arg)
{
	struct task_decision *d = elem;
	(void)arg;
	d->round = sqlite3_column_int(st, 0);
	d->action = store_col_str(st, 1);
	d->notes = store_col_str(st, 2);
	d->actor = store_col_str(st, 3);
	d->at = sqlite3_column_double(st, 4);
}

static const struct store_row_type decision_rows = {
	sizeof(struct task_decision), decision_fill, decision_clear, "decisions"
};

int store_decisions(struct store *s, const char *id, struct task_decision **out, size_t *n,
                    struct err *e)
{
	void *v;
	int rc = store_rows_of_task(s, "SELECT round, action, notes, actor, at FROM decisions "
	                            "WHERE task_seq = (SELECT seq FROM tasks WHERE id = ?) ORDER BY n",
	                            id, &decision_rows, &v, n, e);
	*out = v;
	return rc;
}

int store_history(struct store *s, const char *id, struct task_history *h, struct err *e)
{
	memset(h, 0, sizeof *h);
	if (store_rounds(s, id, &h->rounds, &h->nrounds, e) < 0 ||
	    store_decisions(s, id, &h->decisions, &h->ndecisions, e) < 0) {
		task_history_free(h);
		return -1;
	}
	/* Decisions without a round row come from before rounds were kept. */
	h->last = h->nrounds ? h->rounds[h->nrounds - 1].n : h->ndecisions ? 1 : 0;
	return 0;
}

void task_history_free(struct task_history *h)
{
	task_rounds_free(h->rounds, h->nrounds);
	task_decisions_free(h->decisions, h->ndecisions);
	memset(h, 0, sizeof *h);
}

char *task_history_round_text(const struct task_history *h, int n)
{
	const struct task_round *rn = NULL;
	for (size_t i = 0; i < h->nrounds; i++)
		if (h->rounds[i].n == n)
			rn = &h->rounds[i];
	/* A reviewer's round (paddock shell --keep) says so. */
	if (rn && rn->head && rn->kind && !strcmp(rn->kind, "reviewer"))
		return xasprintf(_("%d  %.12s..%.12s  (reviewer's shell)"), n,
		                 rn->from ? rn->from : "?", rn->head);
	if (rn && rn->head)
		return xasprintf("%d  %.12s..%.12s", n, rn->from ? rn->from : "?", rn->head);
	if (rn && !rn->ended)
		return xasprintf(_("%d  (running)"), n);
	return xasprintf(_("%d  (no work)"), n);
}

char *task_decision_text(const struct task_decision *d)
{
	char when[64];
	time_t at = (time_t)d->at;
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&at, &tm));
	return xasprintf(_("%s  %s by %s"), when, d->action, d->actor);
}

int store_task_request_changes(struct store *s, const char *id, const char *notes,
                               const char *actor, struct err *e)
{
	return store_task_request_changes_draft(s, id, notes, actor, 0, e);
}

int store_task_request_changes_draft(struct store *s, const char *id, const char *notes,
                                     const char *actor, long long upto, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status != TASK_REVIEW)
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; changes can be requested only "
		             "at review"), t.id, task_status_label(t.status));
	else if (t.pending)
		err_kind_set(e, ERR_WRONG_STATE, _("task %s already has changes requested; they "
		             "start when the scheduler picks them up"), t.id);
	else if (store_decision_add(s, t.id, "request-changes", notes, actor, e) == 0 &&
	         store_task_set(s, t.id, "pending", "request-changes", e) == 0 &&
	         store_task_set(s, t.id, "reviewed_head", t.head, e) == 0 &&
	         (upto <= 0 || store_draft_discard(s, t.id, upto, e) >= 0))
		rc = 0;
	task_row_free(&t);
out:
	return store_tx_end(s, rc, e);
}

int store_task_reopen_changes(struct store *s, const char *id, const char *notes,
                              const char *actor, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status == TASK_DONE && (!t.pushed || !t.head || strcmp(t.pushed, t.head) != 0)) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is done, but its last round was not "
		             "pushed; changes can be asked for only on the work its pull request "
		             "holds"), t.id);
	} else if (t.status != TASK_DONE && t.status != TASK_REVIEW) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; changes can be requested only "
		             "at review or on a done task's open pull request"), t.id,
		             task_status_label(t.status));
	} else if (t.pending) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s already has changes requested; they "
		             "start when the scheduler picks them up"), t.id);
	} else {
		rc = 0;
		/* Done is otherwise final: this is its only way back, for a pull
		 * request that is still open and asks for more. */
		if (t.status == TASK_DONE) {
			sqlite3_stmt *st;
			rc = -1;
			if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET status = 'review', updated = ? "
			                       "WHERE id = ? AND status = 'done'", -1, &st,
			                       NULL) == SQLITE_OK) {
				sqlite3_bind_double(st, 1, clock_wall());
				sqlite3_bind_text(st, 2, t.id, -1, SQLITE_STATIC);
				rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "reopen");
				sqlite3_finalize(st);
			} else {
				store_db_err(s, e, "reopen");
			}
			double at = (double)(long long)((clock_wall() - t.created) * 1000 + 0.5) / 1000;
			if (rc == 0)
				rc = store_step_add(s, t.id, at < 0 ? 0 : at, TASK_REVIEW, e);
		}
		if (rc == 0 && (store_decision_add(s, t.id, "request-changes", notes, actor, e) < 0 ||
		                store_task_set(s, t.id, "pending", "request-changes", e) < 0 ||
		                store_task_set(s, t.id, "reviewed_head", t.head, e) < 0))
			rc = -1;
	}
	task_row_free(&t);
out:
	return store_tx_end(s, rc, e);
}

int store_task_resume(struct store *s, const char *id, int *round_out, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (!t.pending) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s has no changes requested"), t.id);
	} else {
		/* The round first: the "running" step is the new round's. */
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET round = round + 1, pending = NULL, "
		                       "error = NULL, reason = NULL, failed_round = 0, "
		                       "failed_head = NULL, failed_why = NULL WHERE id = ?", -1, &st,
		                       NULL) != SQLITE_OK) {
			store_db_err(s, e, "resume");
		} else {
			sqlite3_bind_text(st, 1, t.id, -1, SQLITE_STATIC);
			if (sqlite3_step(st) != SQLITE_DONE)
				store_db_err(s, e, "resume");
			else if (store_transition_locked(s, t.id, TASK_RUNNING, NULL, e) == 0 &&
			         store_round_begin(s, t.id, t.round + 1, t.head, e) == 0) {
				*round_out = t.round + 1;
				rc = 0;
			}
			sqlite3_finalize(st);
		}
	}
	task_row_free(&t);
out:
	return store_tx_end(s, rc, e);
}

int store_task_fix_round(struct store *s, const char *id, int n, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) < 0)
		goto out;
	if (t.status != TASK_RUNNING && t.status != TASK_TESTING) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s; only a running task gets a fix "
		             "round"), t.id, task_status_label(t.status));
	} else if (n != t.round + 1) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s is in round %d; its fix round would be "
		             "%d, not %d"), t.id, t.round, t.round + 1, n);
	} else {
		/* The round first: the "running" step is the new round's. */
		const int ints[] = { n };
		rc = store_task_update(s, "UPDATE tasks SET round = ?, error = NULL, reason = NULL "
		                       "WHERE id = ?", t.id, e, 0, NULL, 1, ints);
		if (rc == 0 && t.status != TASK_RUNNING)
			rc = store_transition_locked(s, t.id, TASK_RUNNING, NULL, e);
		if (rc == 0)
			rc = store_round_begin(s, t.id, n, t.head ? t.head : t.base, e);
		if (rc == 0)
			rc = store_round_set_kind(s, t.id, n, "fix", e);
	}
	task_row_free(&t);
out:
	return store_tx_end(s, rc, e);
}

int store_round_set_kind(struct store *s, const char *id, int n, const char *kind,
                         struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE rounds SET kind = ? WHERE n = ? AND task_seq = "
	                       "(SELECT seq FROM tasks WHERE id = ?)", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "rounds");
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, n);
	sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

/* The task row's and the round's part of store_task_reviewer_round, in
 * its transaction. */
static int reviewer_round_locked(struct store *s, const char *id, int n, const char *from,
                                 const char *head, const char *gate, const char *summary,
                                 double started, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE tasks SET round = ?, head = ?, summary = ?, "
	                       "failed_round = 0, failed_head = NULL, failed_why = NULL "
	                       "WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "reviewer round");
	sqlite3_bind_int(st, 1, n);
	sqlite3_bind_text(st, 2, head, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, summary, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "reviewer round");
	sqlite3_finalize(st);
	if (rc < 0)
		return -1;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO rounds (task_seq, n, from_commit, "
	                       "head, gate, started, ended, kind) SELECT seq, ?, ?, ?, ?, ?, ?, "
	                       "'reviewer' FROM tasks WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, e, "rounds");
	sqlite3_bind_int(st, 1, n);
	sqlite3_bind_text(st, 2, from, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, head, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, gate, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 5, started);
	sqlite3_bind_double(st, 6, clock_wall());
	sqlite3_bind_text(st, 7, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, e, "rounds");
	sqlite3_finalize(st);
	return rc;
}

int store_task_reviewer_round(struct store *s, const char *id, int n, const char *from,
                              const char *head, const char *gate, const char *summary,
                              double started, struct err *e)
{
	if (store_tx_begin(s, e) < 0)
		return -1;
	struct task_row t;
	int rc = -1;
	if (store_task_get(s, id, &t, e) == 0) {
		if (t.status != TASK_REVIEW || t.pending)
			err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s%s now; a reviewer's round is "
			             "kept only while the task waits at review"), t.id,
			             task_status_label(t.status),
			             t.pending ? _(" with changes requested") : "");
		else if (t.round != n - 1 || !t.head || strcmp(t.head, from) != 0)
			err_kind_set(e, ERR_CONFLICT, _("task %s moved on to round %d while the shell "
			             "ran; the reviewer's round %d would not follow it"), t.id, t.round, n);
		else
			rc = reviewer_round_locked(s, t.id, n, from, head, gate, summary, started, e);
		task_row_free(&t);
	}
	return store_tx_end(s, rc, e);
}
