#include "autoconfig.h"
#include "reminder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autogate.h"
#include "buf.h"
#include "i18n.h"
#include "store_reminder.h"
#include "webhook.h"

int reminder_person_gate(struct store *st, const struct task_row *t)
{
	if (t->status != TASK_REVIEW || t->pending)
		return 0;
	struct err e = {{0}};
	/* One the approval mode is about to decide waits for nobody yet; a
	 * store that fails counts it as a person's (the safe side for both
	 * the reminder and the limit). */
	return autogate_due(st, t, &e) != 1;
}

double reminder_interval(const struct config *cfg, const char *repo)
{
	const struct repo_conf *r = repo ? config_find_repo(cfg, repo) : NULL;
	return r && r->gate_reminder >= 0 ? r->gate_reminder : cfg->gate_reminder;
}

int reminder_on(const struct config *cfg)
{
	if (cfg->gate_reminder > 0)
		return 1;
	for (size_t i = 0; i < cfg->nrepos; i++)
		if (cfg->repos[i].gate_reminder > 0)
			return 1;
	return 0;
}

double reminder_period(const struct config *cfg)
{
	double least = cfg->gate_reminder;
	for (size_t i = 0; i < cfg->nrepos; i++)
		if (cfg->repos[i].gate_reminder > 0 && (least <= 0 || cfg->repos[i].gate_reminder < least))
			least = cfg->repos[i].gate_reminder;
	double p = least / 4;
	return p < 1 ? 1 : p > 60 ? 60 : p;
}

void reminder_format(double seconds, char *out, size_t len)
{
	long long s = seconds > 0 ? (long long)seconds : 0;
	static const struct { long long n; char c; } u[] = {
		{ 86400, 'd' }, { 3600, 'h' }, { 60, 'm' }, { 1, 's' }
	};
	size_t i = 0;
	while (i + 1 < sizeof u / sizeof u[0] && s < u[i].n)
		i++;
	/* The largest unit and the next one are enough for a person: 1d2h,
	 * not 1d2h3m4s. */
	long long k = s / u[i].n, rest = (s % u[i].n) / (i + 1 < 4 ? u[i + 1].n : 1);
	if (i + 1 < sizeof u / sizeof u[0] && rest)
		snprintf(out, len, "%lld%c%lld%c", k, u[i].c, rest, u[i + 1].c);
	else
		snprintf(out, len, "%lld%c", k, u[i].c);
}

/* One task's reminder, when one is due: recorded, then sent. */
static int remind(const struct mover *m, const struct task_row *t, double now, struct err *e)
{
	double every = reminder_interval(m->cfg, t->repo);
	if (every <= 0 || !t->nsteps || t->steps[t->nsteps - 1].status != TASK_REVIEW)
		return 0;
	const struct task_step *gate = &t->steps[t->nsteps - 1];
	double waited = now - gate->time;
	if (waited < every)
		return 0;
	/* After a stop that missed intervals, the latest one's only. */
	double k = waited / every;
	int n = k > 1e6 ? 1000000 : (int)k;     /* >= 1: the whole intervals */
	if (n <= t->reminders || !reminder_person_gate(m->st, t))
		return 0;
	int claimed = store_reminder_claim(m->st, t->id, gate->at, n, now, e);
	if (claimed <= 0)
		return claimed;
	char wait[32];
	reminder_format(n * every, wait, sizeof wait);
	char *line = xasprintf(_("waiting %s at review"), wait);
	move_progress(m, t->id, "reminder", line);
	free(line);
	return webhook_enqueue_reminder(m->cfg, m->st, t->id, waited, n, e);
}

int reminder_tick(const struct mover *m, double now, struct err *e)
{
	if (!m->cfg || !reminder_on(m->cfg))
		return 0;
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW) };
	struct task_row *rows;
	size_t n;
	if (store_task_query(m->st, &q, &rows, &n, e) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct err te = {{0}};
		/* One task's failure keeps none of the others' back. */
		if (remind(m, &rows[i], now, &te) < 0 && rc == 0) {
			rc = -1;
			*e = te;
		}
	}
	task_rows_free(rows, n);
	return rc;
}

int reminder_count(struct store *st, struct reminder_gates *g, struct err *e)
{
	memset(g, 0, sizeof *g);
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW), .no_steps = 1 };
	struct task_row *rows;
	size_t n;
	if (store_task_query(st, &q, &rows, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!reminder_person_gate(st, &rows[i]))
			continue;
		g->total++;
		size_t k;
		for (k = 0; k < g->nrepos && strcmp(g->repos[k].repo, rows[i].repo); k++)
			;
		if (k == g->nrepos) {
			g->repos = xrealloc(g->repos, (g->nrepos + 1) * sizeof *g->repos);
			g->repos[k].repo = xstrdup(rows[i].repo);
			g->repos[k].n = 0;
			g->nrepos++;
		}
		g->repos[k].n++;
	}
	task_rows_free(rows, n);
	return 0;
}

void reminder_gates_free(struct reminder_gates *g)
{
	for (size_t i = 0; i < g->nrepos; i++)
		free(g->repos[i].repo);
	free(g->repos);
	memset(g, 0, sizeof *g);
}

int reminder_limit_on(const struct config *cfg)
{
	if (cfg->max_at_review > 0)
		return 1;
	for (size_t i = 0; i < cfg->nrepos; i++)
		if (cfg->repos[i].max_at_review > 0)
			return 1;
	return 0;
}

int reminder_hold_of(const struct config *cfg, const struct reminder_gates *g,
                     const char *repo, struct reminder_hold *h)
{
	const struct repo_conf *r = repo ? config_find_repo(cfg, repo) : NULL;
	memset(h, 0, sizeof *h);
	if (r && r->max_at_review >= 0) {
		h->of_repo = 1;
		h->max = r->max_at_review;
		for (size_t i = 0; i < g->nrepos; i++)
			if (!strcmp(g->repos[i].repo, repo))
				h->at_review = g->repos[i].n;
	} else {
		h->max = cfg->max_at_review;
		h->at_review = g->total;
	}
	return h->max > 0 && h->at_review >= h->max;
}

long reminder_held(struct store *st, const struct config *cfg, struct err *e)
{
	if (!reminder_limit_on(cfg))
		return 0;
	struct reminder_gates g;
	if (reminder_count(st, &g, e) < 0)
		return -1;
	struct task_query q = { .status_mask = TASK_MASK(TASK_QUEUED), .startable = 1,
	                        .no_steps = 1 };
	struct task_row *rows;
	size_t n;
	long held = 0;
	if (store_task_query(st, &q, &rows, &n, e) < 0) {
		reminder_gates_free(&g);
		return -1;
	}
	struct reminder_hold h;
	for (size_t i = 0; i < n; i++)
		held += reminder_hold_of(cfg, &g, rows[i].repo, &h);
	task_rows_free(rows, n);
	reminder_gates_free(&g);
	return held;
}

char *reminder_hold_text(const struct reminder_hold *h, const char *repo)
{
	if (h->of_repo)
		return xasprintf(ngettext("%d task of repo %s at review (repo.%s.max-at-review = %d)",
		                          "%d tasks of repo %s at review (repo.%s.max-at-review = %d)",
		                          (unsigned long)h->at_review),
		                 h->at_review, repo, repo, h->max);
	return xasprintf(ngettext("%d task at review (max-at-review = %d)",
	                          "%d tasks at review (max-at-review = %d)",
	                          (unsigned long)h->at_review), h->at_review, h->max);
}
