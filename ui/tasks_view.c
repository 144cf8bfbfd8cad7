/* The task list: every task, newest last, filtered by group; live.
 *
 * The list holds only a window of rows around what is on screen: a
 * history of 100,000 tasks opens, scrolls and refreshes at the cost of a
 * few dozen rows.  Lines are numbered by the store's counts, rows are read
 * by cursor (seq) from the nearest known place, and nothing is read again
 * while the store's data_version stays. */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "dash.h"
#include "gate.h"
#include "i18n.h"

enum filter { FILTER_ALL, FILTER_ACTIVE, FILTER_REVIEW, FILTER_ENDED, FILTER_N };

static const char *const filter_names[FILTER_N] = {
	N_("all"), N_("active"), N_("review"), N_("ended") };

static const unsigned filter_masks[FILTER_N] = {
	0, TASK_MASK(TASK_QUEUED) | TASK_MASK_ACTIVE, TASK_MASK(TASK_REVIEW), TASK_MASK_ENDED };

#define MARGIN 64                  /* rows kept above and below the screen */

struct tasks {
	struct task_row *rows;     /* the window: rows[i] is line first + i */
	size_t n;
	int first;
	size_t shown;              /* tasks the filter shows: v->lines */
	size_t total;
	enum filter filter;
	uint64_t version;          /* store_data_version when last counted */
	int counted;
	/* The new-task form. */
	char *new_repo, *new_agent;
};

enum role tasks_status_role(enum task_status s);
enum role tasks_status_role(enum task_status s)
{
	switch (s) {
	case TASK_QUEUED: return ROLE_TASK_QUEUED;
	case TASK_REVIEW: return ROLE_TASK_REVIEW;
	case TASK_DONE: return ROLE_TASK_DONE;
	case TASK_FAILED: case TASK_LOST: return ROLE_TASK_FAILED;
	case TASK_REJECTED: case TASK_CANCELLED: return ROLE_TASK_ENDED;
	default: return ROLE_TASK_ACTIVE;
	}
}

static const struct task_row *row_at(const struct tasks *p, int line)
{
	return line >= p->first && line < p->first + (int)p->n ? &p->rows[line - p->first] : NULL;
}

static void window_drop(struct tasks *p)
{
	task_rows_free(p->rows, p->n);
	p->rows = NULL;
	p->n = 0;
	p->first = 0;
}

/* Reads lines [a, b) into the window, from whichever known place is
 * nearest: the start, the end, or the window's edges (a cursor and a
 * short skip).  Replaces the window. */
static void window_read(struct view *v, int a, int b)
{
	struct tasks *p = v->priv;
	if (a < 0)
		a = 0;
	if (b > (int)p->shown)
		b = (int)p->shown;
	if (a >= b) {
		window_drop(p);
		return;
	}
	struct task_query q = { .status_mask = filter_masks[p->filter], .no_steps = 1,
	                        .limit = (size_t)(b - a) };
	long cost = a;                  /* from the start */
	q.offset = (size_t)a;
	if ((long)p->shown - b < cost) {  /* from the end, newest first */
		cost = (long)p->shown - b;
		q.offset = (size_t)cost;
		q.newest_first = 1;
	}
	int wend = p->first + (int)p->n;
	if (p->n && a >= wend && a - wend < cost) {
		cost = a - wend;
		q = (struct task_query){ .status_mask = q.status_mask, .no_steps = 1,
		                         .limit = q.limit, .after = p->rows[p->n - 1].seq,
		                         .offset = (size_t)cost };
	}
	if (p->n && b <= p->first && p->first - b < cost) {
		cost = p->first - b;
		q = (struct task_query){ .status_mask = q.status_mask, .no_steps = 1,
		                         .limit = q.limit, .before = p->rows[0].seq,
		                         .offset = (size_t)cost, .newest_first = 1 };
	}
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	if (store_task_query(v->d->st, &q, &rows, &n, &e) < 0) {
		dash_message(v->d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	if (q.newest_first)
		for (size_t i = 0; i < n / 2; i++) {
			struct task_row t = rows[i];
			rows[i] = rows[n - 1 - i];
			rows[n - 1 - i] = t;
		}
	window_drop(p);
	p->rows = rows;
	p->n = n;
	/* Read newest first, the rows end at b; else they start at a. */
	p->first = q.newest_first ? b - (int)n : a;
}

/* The window covers the screen and the selection. */
static void window_ensure(struct view *v)
{
	struct tasks *p = v->priv;
	int h = v->height > 0 ? v->height : 24;
	int a = v->top, b = v->top + h;
	if (v->sel >= 0 && v->sel < a)
		a = v->sel;
	if (v->sel >= b)
		b = v->sel + 1;
	if (b > (int)p->shown)
		b = (int)p->shown;
	if (a >= b || (row_at(p, a) && row_at(p, b - 1)))
		return;
	window_read(v, a - MARGIN, b + MARGIN);
}

/* The view's task is the selected one (for L, D, V and Tab). */
static void select_task(struct view *v)
{
	struct tasks *p = v->priv;
	window_ensure(v);
	const struct task_row *t = row_at(p, v->sel);
	snprintf(v->task_id, sizeof v->task_id, "%s", t ? t->id : "");
}

/* Counts again and reads the window when the store changed (force: in
 * any case).  The selection stays on its task while the filter shows
 * it; on the newest task, it follows new ones. */
static void load(struct view *v, int force)
{
	struct tasks *p = v->priv;
	uint64_t ver = store_data_version(v->d->st);
	if (!force && p->counted && ver == p->version)
		return;
	const struct task_row *cur = row_at(p, v->sel);
	long long keep = cur ? cur->seq : 0;
	struct task_query q = { .status_mask = filter_masks[p->filter] }, all = {0};
	size_t shown, total;
	struct err e = {{0}};
	if (store_task_count(v->d->st, &q, &shown, &e) < 0 ||
	    store_task_count(v->d->st, &all, &total, &e) < 0) {
		dash_message(v->d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	p->version = ver;
	p->counted = 1;
	p->shown = shown;
	p->total = total;
	window_drop(p);
	v->lines = (int)shown;
	if (keep) {
		/* Where the selected task is now: the tasks before it, counted
		 * from the nearer end (an index range as long as that). */
		size_t before = 0, after = 0, self = 0;
		struct task_query one = { .status_mask = q.status_mask, .after = keep - 1,
		                          .before = keep + 1 };
		if (v->sel < (int)shown / 2) {
			q.before = keep;
			if (store_task_count(v->d->st, &q, &before, &e) == 0)
				v->sel = (int)before;
		} else {
			q.after = keep;
			if (store_task_count(v->d->st, &q, &after, &e) == 0 &&
			    store_task_count(v->d->st, &one, &self, &e) == 0)
				v->sel = (int)(shown - after - self);
		}
	} else if (v->sel < 0 || v->sel >= v->lines) {
		v->sel = v->lines - 1;
	}
	view_clamp(v);
	select_task(v);
}

static int tasks_open(struct view *v, char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	v->sel = -1;
	v->header_rows = 1;
	load(v, 1);
	return 0;
}

static void tasks_title(struct view *v, char *out, size_t len)
{
	struct tasks *p = v->priv;
	snprintf(out, len, _("paddock  tasks: %s (%zu of %zu)"), _(filter_names[p->filter]),
	         p->shown, p->total);
}

static void elapsed(const struct task_row *t, double now, char *out, size_t len)
{
	double end = task_status_is_terminal(t->status) || t->status == TASK_REVIEW ?
	             t->updated : now;
	long s = (long)(end - t->created);
	if (s < 0)
		s = 0;
	if (s >= 3600)
		snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

static void tasks_draw(struct view *v, struct screen *s, int y, int h)
{
	struct tasks *p = v->priv;
	int w = screen_width(s);
	/* Column widths follow the translated headers. */
	const char *hid = _("ID"), *hst = _("STATUS"), *hrepo = _("REPO"), *hag = _("AGENT"),
	           *hr = _("RND"), *hel = _("TIME"), *htext = _("TASK");
	int wid = TASK_ID_LEN, wst = 9, wrepo = 10, wag = 10, wr = 3, wel = 7;
#define WIDEN(var, str) do { int tw_ = screen_textwidth(str, strlen(str)); if (tw_ > var) var = tw_; } while (0)
	WIDEN(wid, hid);
	WIDEN(wst, hst);
	WIDEN(wrepo, hrepo);
	WIDEN(wag, hag);
	WIDEN(wr, hr);
	WIDEN(wel, hel);
#undef WIDEN
	int xs[7], x = 0;
	int widths[6] = { wid, wst, wrepo, wag, wr, wel };
	for (int i = 0; i < 6; i++) {
		xs[i] = x;
		x += widths[i] + 2;
	}
	xs[6] = x;
	const char *heads[7] = { hid, hst, hrepo, hag, hr, hel, htext };
	screen_fill(s, 0, y, w, ROLE_HEADER);
	for (int i = 0; i < 7; i++)
		screen_str(s, xs[i], y, i < 6 ? widths[i] : w - xs[i], ROLE_HEADER, heads[i]);
	v->height = h - 1;
	view_clamp(v);
	window_ensure(v);
	if (p->shown == 0) {
		screen_str(s, 1, y + 2, w - 1, ROLE_DIM, p->total ?
		           _("no task matches the filter (f changes it)") :
		           _("no tasks yet: n adds one, or run 'paddock demo'"));
		return;
	}
	for (int row = 0; row < h - 1; row++) {
		int i = v->top + row;
		const struct task_row *t = row_at(p, i);
		if (!t)
			break;
		int ry = y + 1 + row;
		char el[32], rnd[16];
		elapsed(t, v->d->now, el, sizeof el);
		snprintf(rnd, sizeof rnd, "%d", t->round ? t->round : 1);
		screen_str(s, xs[0], ry, widths[0], ROLE_NORMAL, t->id);
		screen_str(s, xs[1], ry, widths[1], tasks_status_role(t->status),
		           task_status_name(t->status));
		screen_str(s, xs[2], ry, widths[2], ROLE_NORMAL, t->repo);
		screen_str(s, xs[3], ry, widths[3], ROLE_NORMAL, t->agent);
		screen_str(s, xs[4], ry, widths[4], ROLE_NORMAL, rnd);
		screen_str(s, xs[5], ry, widths[5], ROLE_NORMAL, el);
		/* The first line of the text, cut to the width. */
		size_t tl = strcspn(t->text, "\n");
		screen_text(s, xs[6], ry, w - xs[6], ROLE_NORMAL, t->text, tl);
		if (i == v->sel)
			screen_paint(s, 0, ry, w, ROLE_CURSOR);
	}
}

static void new_text(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct tasks *p = v->priv;
	if (text && strspn(text, " \t\n") != strlen(text)) {
		char id[TASK_ID_LEN + 1];
		struct err e = {{0}};
		const struct repo_conf *r = config_find_repo(d->cfg, p->new_repo);
		if (strlen(text) >= TASK_TEXT_MAX)
			dash_message(d, ROLE_ERROR, _("the task text must be under 128 KiB"));
		else if (store_task_add(d->st, p->new_repo, p->new_agent, text,
		                        r ? r->branch_prefix : NULL, id, &e) < 0)
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		else
			dash_message(d, ROLE_NOTICE, _("task %s queued"), id);
		load(v, 1);
	} else if (text) {
		dash_message(d, ROLE_ERROR, _("the task text is empty; nothing was queued"));
	}
	free(p->new_repo);
	free(p->new_agent);
	p->new_repo = p->new_agent = NULL;
}

static void new_agent(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct tasks *p = v->priv;
	const struct agent_conf *a = text && *text ? config_find_agent(d->cfg, text) :
	                             text ? config_default_agent(d->cfg) : NULL;
	if (!text)
		return;
	if (!a) {
		dash_message(d, ROLE_ERROR, _("no agent named '%s' in the configuration"), text);
		return;
	}
	p->new_agent = xstrdup(a->name);
	dash_ask(d, _("what should the agent do? "), 1, NULL, new_text, v);
}

static void new_repo(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct tasks *p = v->priv;
	if (!text)
		return;
	const struct repo_conf *r = *text ? config_find_repo(d->cfg, text) :
	                            d->cfg->nrepos == 1 ? &d->cfg->repos[0] : NULL;
	if (!r) {
		dash_message(d, ROLE_ERROR, *text ? _("no repo named '%s' in the configuration") :
		             _("name the repo%s"), text);
		return;
	}
	free(p->new_repo);
	p->new_repo = xstrdup(r->name);
	struct buf q = {0};
	buf_printf(&q, _("agent ("));
	for (size_t i = 0; i < d->cfg->nagents; i++)
		buf_printf(&q, "%s%s", i ? ", " : "", d->cfg->agents[i].name);
	buf_printf(&q, _("; Enter: the default): "));
	dash_ask(d, q.data, 0, NULL, new_agent, v);
	buf_free(&q);
}

static void cancel_answer(struct dash *d, void *arg, const char *text)
{
	char *id = arg;
	if (text && rpmatch(text) == 1) {
		struct err e = {{0}};
		struct gate_ctx g = { .cfg = d->cfg, .data_dir = d->data_dir, .st = d->st,
		                      .actor = gate_actor() };
		int r = gate_cancel(&g, id, &e);
		if (r < 0)
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		else
			dash_message(d, ROLE_NOTICE, r == 1 ? _("%s cancelled") :
			             _("%s: cancel requested"), id);
	}
	free(id);
}

int tasks_view_filter(struct view *v, const char *name)
{
	struct tasks *p = v->priv;
	for (int f = 0; f < FILTER_N; f++) {
		if (strcmp(name, filter_names[f]) && strcmp(name, _(filter_names[f])))
			continue;
		p->filter = (enum filter)f;
		load(v, 1);
		select_task(v);
		dash_message(v->d, ROLE_NOTICE, _("showing %s tasks"), _(filter_names[f]));
		return 0;
	}
	dash_message(v->d, ROLE_ERROR, _("no filter named '%s'; filters are all, active, review "
	                                 "and ended"), name);
	return -1;
}

static int tasks_request(struct view *v, enum request req)
{
	struct tasks *p = v->priv;
	struct dash *d = v->d;
	const struct task_row *t = row_at(p, v->sel);
	switch (req) {
	case REQ_NONE:
		/* The selection moved (a click): follow it. */
		select_task(v);
		return 1;
	case REQ_ENTER:
		if (!t)
			return 1;
		dash_open(d, t->status == TASK_REVIEW ? &view_gate : &view_log, t->id);
		return 1;
	case REQ_FILTER:
		p->filter = (p->filter + 1) % FILTER_N;
		load(v, 1);
		dash_message(d, ROLE_NOTICE, _("showing %s tasks"), _(filter_names[p->filter]));
		return 1;
	case REQ_NEW_TASK:
		if (!d->cfg->nrepos) {
			dash_message(d, ROLE_ERROR, _("no repo is configured; add a [repo \"NAME\"] "
			                              "section to %s"), d->cfg->path);
			return 1;
		}
		{
			struct buf q = {0};
			buf_printf(&q, _("repo ("));
			for (size_t i = 0; i < d->cfg->nrepos; i++)
				buf_printf(&q, "%s%s", i ? ", " : "", d->cfg->repos[i].name);
			buf_adds(&q, "): ");
			dash_ask(d, q.data, 0, d->cfg->nrepos == 1 ? d->cfg->repos[0].name : NULL,
			         new_repo, v);
			buf_free(&q);
		}
		return 1;
	case REQ_CANCEL_TASK:
		if (t) {
			char q[128];
			snprintf(q, sizeof q, _("cancel task %s? (y/n) "), t->id);
			dash_ask(d, q, 0, NULL, cancel_answer, xstrdup(t->id));
		}
		return 1;
	default:
		if (view_scroll(v, req)) {
			select_task(v);
			return 1;
		}
		return 0;
	}
}

static void tasks_refresh(struct view *v)
{
	load(v, 0);
	select_task(v);
}

static void tasks_close(struct view *v)
{
	struct tasks *p = v->priv;
	window_drop(p);
	free(p->new_repo);
	free(p->new_agent);
}

const struct view_ops view_tasks = {
	.name = "tasks",
	.priv_size = sizeof(struct tasks),
	.open = tasks_open,
	.title = tasks_title,
	.draw = tasks_draw,
	.request = tasks_request,
	.refresh = tasks_refresh,
	.close = tasks_close,
};
