#include "autoconfig.h"
#include "autogate.h"

#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "i18n.h"
#include "store_github.h"

/* 1 when the task's round was asked for on its open pull request
 * (ghsync.h): the reviewer who asked reviews the result there, so it goes
 * to the pull request as an approval auto would send it. */
static int github_round(struct store *st, const struct task_row *t)
{
	struct err e = {{0}};
	return t->pr_url && store_github_ask_for(st, t->id, t->round, &e) == 1;
}

static int mode_of(struct store *st, const struct task_row *t)
{
	int m = t->approval ? config_approval_parse(t->approval) : APPROVAL_REVIEW;
	if (m < 0)
		m = APPROVAL_REVIEW;
	if (m != APPROVAL_NEVER && github_round(st, t))
		return APPROVAL_AUTO;
	return m;
}

int autogate_due(struct store *st, const struct task_row *t, struct err *e)
{
	int m = mode_of(st, t);
	if (t->status != TASK_REVIEW || (m != APPROVAL_AUTO && m != APPROVAL_AUTO_PUSH) ||
	    t->pending)
		return 0;
	struct task_decision *d;
	size_t n;
	if (store_decisions(st, t->id, &d, &n, e) < 0)
		return -1;
	int seen = 0;
	for (size_t i = 0; i < n && !seen; i++)
		seen = d[i].round == t->round && d[i].actor && !strcmp(d[i].actor, AUTOGATE_ACTOR);
	task_decisions_free(d, n);
	return !seen;
}

long autogate_due_ids(struct store *st, struct autogate_look *look,
                      char (**ids)[TASK_ID_LEN + 1], struct err *e)
{
	if (ids)
		*ids = NULL;
	/* Read before the look: a change made during it moves the version,
	 * and the next look asks again. */
	uint64_t v = store_data_version(st);
	if (look->none && look->version == v)
		return 0;
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW), .no_steps = 1,
	                        .auto_approval = 1, .undecided_by = AUTOGATE_ACTOR };
	struct task_row *rows;
	size_t n;
	if (store_task_query(st, &q, &rows, &n, e) < 0)
		return -1;
	long due = 0;
	for (size_t i = 0; i < n; i++) {
		/* The store's conditions are wider: the mode, the pending
		 * request and the round asked on GitHub are autogate_due's. */
		int d = autogate_due(st, &rows[i], e);
		if (d < 0) {
			due = -1;
			break;
		}
		if (!d)
			continue;
		if (ids) {
			*ids = xrealloc(*ids, ((size_t)due + 1) * sizeof **ids);
			memcpy((*ids)[due], rows[i].id, TASK_ID_LEN + 1);
		}
		due++;
	}
	task_rows_free(rows, n);
	if (due < 0 && ids) {
		free(*ids);
		*ids = NULL;
	}
	look->version = v;
	look->none = due == 0;
	return due;
}

static void why_add(struct buf *why, const char *msg)
{
	if (why->len)
		buf_adds(why, "; ");
	buf_adds(why, msg);
}

int autogate_conditions(struct store *st, const struct task_row *t, struct buf *why,
                        struct err *e)
{
	struct gate_summary g;
	int have = gate_summary_load(st, t, &g, e);
	if (have < 0)
		return -1;
	if (!have) {
		why_add(why, _("the round has no gate summary"));
	} else {
		const struct gate_tests *a = &g.tests.after;
		if (!a->ran)
			why_add(why, _("no tests ran"));
		else if (!a->verified)
			why_add(why, _("the tests were not verified on a clean checkout"));
		else if (!a->passed)
			why_add(why, _("the verified tests failed"));
		struct buf b = {0};
		gate_blocking(&g, &b);
		if (b.len) {
			if (why->len)
				buf_adds(why, "; ");
			buf_printf(why, _("policy findings block it: %s"), b.data);
		}
		buf_free(&b);
	}
	gate_summary_free(&g);
	return why->len == 0;
}

/* 1 when the task's round is a reviewer's (paddock shell --keep): a
 * person made it at the gate, and a person decides on it. */
static int reviewers_round(struct store *st, const struct task_row *t)
{
	struct task_round *r;
	size_t n;
	struct err e = {{0}};
	int yes = 0;
	if (store_rounds(st, t->id, &r, &n, &e) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		yes |= r[i].n == t->round && r[i].kind && !strcmp(r[i].kind, "reviewer");
	task_rounds_free(r, n);
	return yes;
}

int autogate_run(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e)
{
	struct task_row t;
	if (store_task_get(g->st, id, &t, e) < 0)
		return -1;
	int rc = 0, due = autogate_due(g->st, &t, e);
	if (due <= 0) {
		task_row_free(&t);
		return due;
	}
	struct gate_ctx ag = *g;
	ag.actor = AUTOGATE_ACTOR;
	struct buf why = {0};
	int m = mode_of(g->st, &t);
	int ok;
	if (t.group_id) {
		/* A best-of-N group's members are alternatives: pushing each
		 * one that passes would open a pull request per member.  The
		 * reviewer picks one. */
		buf_printf(&why, _("it is a member of best-of-N group %s, of which a person picks "
		                   "one (paddock group pick %s ID)"), t.group_id, t.group_id);
		ok = 0;
	} else if (reviewers_round(g->st, &t)) {
		buf_printf(&why, _("round %d is a reviewer's (paddock shell --keep), on which a "
		                   "person decides"), t.round);
		ok = 0;
	} else {
		ok = autogate_conditions(g->st, &t, &why, e);
	}
	struct err ge = {{0}};
	if (ok < 0) {
		rc = -1;
	} else if (ok && (m == APPROVAL_AUTO ? gate_approve(&ag, id, NULL, out, &ge)
	                                     : gate_push(&ag, id, out, &ge)) >= 0) {
		/* Approved, but its pull request failed: on the task, retried. */
		if (ge.msg[0])
			buf_printf(out, "%s\n", ge.msg);
		buf_printf(out, m == APPROVAL_AUTO
		           ? _("task %s: approved without a person (approval auto)\n")
		           : _("task %s: pushed without a person (approval auto-push); it waits "
		               "at review for the pull request\n"), id);
	} else {
		if (ok)
			buf_adds(&why, ge.msg);
		char *notes = github_round(g->st, &t)
		              ? xasprintf(_("asked on GitHub: waits for a person: %s"), why.data)
		              : xasprintf(_("approval %s: waits for a person: %s"),
		                          config_approval_name(m), why.data);
		rc = store_decision_add(g->st, id, "hold", notes, AUTOGATE_ACTOR, e);
		buf_printf(out, _("task %s: %s\n"), id, notes);
		free(notes);
	}
	buf_free(&why);
	task_row_free(&t);
	return rc;
}
