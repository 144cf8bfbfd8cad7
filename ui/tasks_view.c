/* The task list: every task, in the order they were queued (or sorted),
 * filtered by status, repo, agent and text; live.
 *
 * The list holds only a window of rows around what is on screen: a
 * history of 100,000 tasks opens, scrolls and refreshes at the cost of a
 * few dozen rows.  Lines are numbered by the store's counts, rows are read
 * by cursor (seq) from the nearest known place, and nothing is read again
 * while the store's data_version stays.  Another order reads the seq and
 * status of every task selected, in that order (one narrow sort each time
 * the store changes), and the rows by seq.  What a row shows beyond the task's
 * own columns (its round's clock, a blocking finding) is read for the
 * rows drawn only, once per window.  A best-of-N group is one row (the
 * store folds its members into the first the filters select): its id,
 * its status as one, its agents, "best of N" and the members' statuses;
 * Enter opens the group view.  Under a status filter its members are rows
 * of their own, by their own status, marked "group G, 2 of 3" as paddock
 * list marks them.  A row names its task by recipe_task_title. */
#include "autoconfig.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "dash.h"
#include "source.h"
#include "i18n.h"
#include "newtask.h"
#include "recipe.h"
#include "units.h"

enum filter {
	FILTER_ALL, FILTER_ACTIVE, FILTER_REVIEW, FILTER_FAILED, FILTER_ENDED,
	FILTER_RUNNING, FILTER_QUEUED, FILTER_N
};
/* f goes round the first ones. */
#define FILTER_CYCLE (FILTER_ENDED + 1)

static const char *const filter_names[FILTER_N] = {
	N_("all"), N_("active"), N_("review"), N_("failed"), N_("ended"), N_("running"),
	N_("queued") };

#define MASK_FAILED (TASK_MASK(TASK_FAILED) | TASK_MASK(TASK_LOST))

static const unsigned filter_masks[FILTER_N] = {
	0, TASK_MASK(TASK_QUEUED) | TASK_MASK_ACTIVE, TASK_MASK(TASK_REVIEW), MASK_FAILED,
	TASK_MASK_ENDED, TASK_MASK_ACTIVE, TASK_MASK(TASK_QUEUED) };

/* The words :filter takes, the one table of them: the status filters in
 * enum filter's order, then those that take an argument (its name in the
 * manual).  Tab completion, the messages and the manual's lists
 * (tasks_view_write_man) come from here. */
#define FILTER_WORDS(X) \
	X("all", NULL) X("active", NULL) X("review", NULL) X("failed", NULL) X("ended", NULL) \
	X("running", NULL) X("queued", NULL) X("repo", "name") X("agent", "name") \
	X("text", "words")
#define FW_NAME(n, a) n,
#define FW_ARG(n, a) a,
const char *const tasks_view_filter_names[] = { FILTER_WORDS(FW_NAME) NULL };
static const char *const filter_args[] = { FILTER_WORDS(FW_ARG) };
#define FILTER_WORDS_N ((int)(sizeof filter_args / sizeof filter_args[0]))

/* In enum task_order's order; s goes round them. */
static const char *const order_names[] = {
	N_("queued"), N_("status"), N_("age"), N_("time"), N_("repo") };
#define ORDER_N ((int)(sizeof order_names / sizeof order_names[0]))
const char *const tasks_view_sort_names[] = { "queued", "status", "age", "time", "repo", NULL };

/* "all, active, ... and text WORDS": the words of a table as typed (Tab
 * completes them so), the joins and arguments translated. */
static void words_list(struct buf *out, const char *const *names, const char *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			buf_adds(out, i + 1 < n ? ", " : _(" and "));
		buf_adds(out, names[i]);
		if (args && args[i]) {
			buf_addc(out, ' ');
			buf_adds(out, strcmp(args[i], "name") ? _("WORDS") : _("NAME"));
		}
	}
}

/* Text for man(7): every '-' as "\-". */
static void man_word(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '-')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* One list of the manual: each word bold (its argument in italics), the
 * first "(the default)", joined with commas and "or", ending with '.'. */
static void man_list(FILE *f, const char *const *names, const char *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i + 2 < n ? " ," : i + 1 < n ? "" : " .";
		if (args && args[i]) {
			fputs(".BI \"", f);
			man_word(f, names[i]);
			fprintf(f, " \" %s%s\n", args[i], sep);
		} else {
			fputs(*sep ? ".BR " : ".B ", f);
			man_word(f, names[i]);
			fprintf(f, "%s\n", sep);
		}
		if (i == 0)
			fputs("(the default),\n", f);
		else if (i + 2 == n)
			fputs("or\n", f);
	}
}

void tasks_view_write_man(FILE *f)
{
	fputs(".TP\n.BR :filter \" [\\fIname\\fP]\"\n"
	      "Show the tasks of one filter on the task list (see\n.BR \"The task list\" ):\n", f);
	man_list(f, tasks_view_filter_names, filter_args, FILTER_WORDS_N);
	fputs("Without a name, all.\n", f);
	fputs(".TP\n.BI :sort \" order\"\n"
	      "Order the task list (see\n.BR \"The task list\" ):\n", f);
	man_list(f, tasks_view_sort_names, NULL, ORDER_N);
}

#define MARGIN 64                  /* rows kept above and below the screen */

/* What a row shows beyond its task's columns, read when first drawn. */
struct extra {
	int have;
	struct task_glance g;
	char *note, *note_long;    /* the mark before the text, short and as
	                              wide as the room allows; NULL: none */
	enum role role;
	char *title;               /* recipe_task_title: what the row names */
	char *pre, *pre_long;      /* marks before that one, as paddock list
	                              has them: a group's member (where the
	                              list shows members by their own status),
	                              test mode; NULL: none */
	/* A group's row: */
	int is_group;
	enum task_status gstatus;  /* group_status */
	char *agents;              /* its members' agents, "a,b,c" */
	struct task_row rep;       /* the member whose status is the group's:
	                              its status and times only (no strings),
	                              for TIME */
	struct task_glance rg;     /* its glance */
};

struct tasks {
	struct task_row *rows;     /* the window: rows[i] is line first + i */
	struct extra *extra;       /* extra[i] for rows[i] */
	size_t n;
	int first;
	size_t shown;              /* tasks the filter shows: v->lines */
	struct task_key *keys;     /* in another order than the queued one:
	                              keys[line] for each line */
	size_t total;
	enum filter filter;
	char *repo, *agent, *text; /* the other filters; NULL: none */
	enum task_order order;
	uint64_t version;          /* source_data_version when last counted */
	int counted;
	/* The text filter as it was before / (Esc puts it back). */
	char *text_before;
};

/* A best-of-N group is one row unless a status filter is on: then its
 * members are rows of their own, by their own status (":filter failed"
 * shows and counts the member that failed, as paddock list does). */
static int folded(const struct tasks *p)
{
	return p->filter == FILTER_ALL;
}

/* The query of the list's filters and order (no window bounds). */
static struct task_query base_query(const struct tasks *p)
{
	return (struct task_query){ .status_mask = filter_masks[p->filter], .no_steps = 1,
	                            .repo = p->repo, .agent = p->agent, .text = p->text,
	                            .order = p->order, .fold_groups = folded(p) };
}

/* The row of line stands for a whole group. */
static int row_is_group(const struct tasks *p, const struct task_row *t)
{
	return t && t->group_id && folded(p);
}

static const struct task_row *row_at(const struct tasks *p, int line)
{
	return line >= p->first && line < p->first + (int)p->n ? &p->rows[line - p->first] : NULL;
}

static void window_drop(struct tasks *p)
{
	for (size_t i = 0; p->extra && i < p->n; i++) {
		free(p->extra[i].note);
		free(p->extra[i].note_long);
		free(p->extra[i].agents);
		free(p->extra[i].title);
		free(p->extra[i].pre);
		free(p->extra[i].pre_long);
	}
	free(p->extra);
	p->extra = NULL;
	task_rows_free(p->rows, p->n);
	p->rows = NULL;
	p->n = 0;
	p->first = 0;
}

/* The cheapest query for lines [a, b) in the queued order: from the
 * start, from the end (newest first), or from the window's edges (a
 * cursor and a short skip). */
static struct task_query window_query(const struct tasks *p, int a, int b)
{
	struct task_query base = base_query(p), q = base;
	q.limit = (size_t)(b - a);
	long cost = a;                  /* from the start */
	q.offset = (size_t)a;
	if (p->order != TASK_ORDER_QUEUED)
		return q;
	if ((long)p->shown - b < cost) {  /* from the end, newest first */
		cost = (long)p->shown - b;
		q.offset = (size_t)cost;
		q.newest_first = 1;
	}
	int wend = p->first + (int)p->n;
	if (p->n && a >= wend && a - wend < cost) {
		cost = a - wend;
		q = base;
		q.limit = (size_t)(b - a);
		q.after = p->rows[p->n - 1].seq;
		q.offset = (size_t)cost;
	}
	if (p->n && b <= p->first && p->first - b < cost) {
		cost = p->first - b;
		q = base;
		q.limit = (size_t)(b - a);
		q.before = p->rows[0].seq;
		q.offset = (size_t)cost;
		q.newest_first = 1;
	}
	return q;
}

/* Reads lines [a, b) into the window; replaces the window. */
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
	struct task_query q = window_query(p, a, b);
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	int rc;
	if (p->keys) {
		long long *seqs = xmalloc((size_t)(b - a) * sizeof *seqs);
		for (int i = a; i < b; i++)
			seqs[i - a] = p->keys[i].seq;
		rc = source_task_rows(v->d->src, seqs, (size_t)(b - a), 1, &rows, &n, &e);
		free(seqs);
	} else {
		rc = source_task_query(v->d->src, &q, &rows, &n, &e);
	}
	if (rc < 0) {
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
	p->extra = xcalloc(n ? n : 1, sizeof *p->extra);
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

/* The line of task `keep` (its seq) now.  In the queued order: the tasks
 * before it, counted from the nearer end (an index range as long as
 * that), which is where it would be when the list no longer shows it; in
 * another order -1 then. */
static long line_of(struct view *v, long long keep, struct err *e)
{
	struct tasks *p = v->priv;
	struct task_query q = base_query(p);
	long line = -1;
	if (p->order != TASK_ORDER_QUEUED) {
		for (size_t i = 0; i < p->shown && line < 0; i++)
			if (p->keys[i].seq == keep)
				line = (long)i;
		return line;
	}
	size_t before = 0, after = 0, self = 0;
	struct task_query one = q;
	one.after = keep - 1;
	one.before = keep + 1;
	if (v->sel < (int)p->shown / 2) {
		q.before = keep;
		if (source_task_count(v->d->src, &q, &before, e) == 0)
			line = (long)before;
	} else {
		q.after = keep;
		if (source_task_count(v->d->src, &q, &after, e) == 0 &&
		    source_task_count(v->d->src, &one, &self, e) == 0)
			line = (long)(p->shown - after - self);
	}
	return line;
}

/* Counts again and reads the window when the store changed (force: in
 * any case).  The selection stays on its task while the filter shows
 * it; on the newest task, it follows new ones. */
static void load(struct view *v, int force)
{
	struct tasks *p = v->priv;
	uint64_t ver = source_data_version(v->d->src);
	if (!force && p->counted && ver == p->version)
		return;
	const struct task_row *cur = row_at(p, v->sel);
	long long keep = cur ? cur->seq : 0;
	/* The total counts rows as the list shows them: a folded group is
	 * one, so that "all" never reads "7 of 8". */
	struct task_query q = base_query(p), all = { .fold_groups = q.fold_groups };
	size_t shown, total;
	struct err e = {{0}};
	struct task_key *keys = NULL;
	if ((p->order == TASK_ORDER_QUEUED ? source_task_count(v->d->src, &q, &shown, &e) :
	     source_task_order(v->d->src, &q, &keys, &shown, &e)) < 0 ||
	    source_task_count(v->d->src, &all, &total, &e) < 0) {
		free(keys);
		dash_message(v->d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	free(p->keys);
	p->keys = p->order == TASK_ORDER_QUEUED ? NULL : keys ? keys : xcalloc(1, sizeof *keys);
	p->version = ver;
	p->counted = 1;
	p->shown = shown;
	p->total = total;
	window_drop(p);
	v->lines = (int)shown;
	long line = keep ? line_of(v, keep, &e) : -1;
	if (line >= 0)
		v->sel = (int)line;
	else if (v->sel < 0 || v->sel >= v->lines)
		v->sel = v->lines - 1;
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

/* The filters in words: "failed, repo demo, text "fix"" ("all" only
 * when there is no other). */
static void filter_words(const struct tasks *p, struct buf *out)
{
	if (p->filter != FILTER_ALL || (!p->repo && !p->agent && !p->text))
		buf_adds(out, _(filter_names[p->filter]));
	if (p->repo)
		buf_printf(out, out->len ? _(", repo %s") : _("repo %s"), p->repo);
	if (p->agent)
		buf_printf(out, out->len ? _(", agent %s") : _("agent %s"), p->agent);
	if (p->text)
		buf_printf(out, out->len ? _(", text \"%s\"") : _("text \"%s\""), p->text);
}

static void tasks_title(struct view *v, char *out, size_t len)
{
	struct tasks *p = v->priv;
	struct buf f = {0};
	filter_words(p, &f);
	int n = snprintf(out, len, _("paddock  tasks: %s (%zu of %zu)"), f.data, p->shown,
	                 p->total);
	if (p->order != TASK_ORDER_QUEUED && n >= 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, _(", sorted by %s"), _(order_names[p->order]));
	buf_free(&f);
}

/* ---- what a row shows ---- */

/* The first line of s (up to len bytes) into a new string. */
static char *first_line(const char *s)
{
	size_t n = strcspn(s, "\n");
	char *r = xmalloc(n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

/* Why a failed task failed: its reason word (else its error's step), and
 * its error's first line. */
static void failed_note(const struct task_row *t, struct extra *x)
{
	if (t->reason && !strcmp(t->reason, "contract") && x->g.round_unchanged)
		x->note = xstrdup(_("no change"));
	else if (t->reason && *t->reason)
		x->note = xstrdup(task_reason_label(t->reason));
	else if (t->error && *t->error)
		x->note = first_line(t->error);
	if (x->note && strchr(x->note, ':') && (!t->reason || !*t->reason)) {
		/* The step it failed in ("preparing: ..."), in words. */
		*strchr(x->note, ':') = '\0';
		char *w = xstrdup(task_reason_label(x->note));
		free(x->note);
		x->note = w;
	}
	x->note_long = t->error && *t->error ? first_line(t->error) :
	               x->note ? xstrdup(x->note) : NULL;
	x->role = ROLE_TASK_FAILED;
}

/* A task at review: a later round that failed, or a finding that blocks
 * (the gate summary of its round, read for the rows drawn only). */
static void review_note(struct view *v, const struct task_row *t, struct extra *x)
{
	if (t->failed_round > 0) {
		x->note = xasprintf(_("round %d failed"), t->failed_round);
		x->note_long = t->failed_why && *t->failed_why ?
		               xasprintf(_("round %d failed: %.*s"), t->failed_round,
		                         (int)strcspn(t->failed_why, "\n"), t->failed_why) :
		               xstrdup(x->note);
		x->role = ROLE_TASK_FAILED;
		return;
	}
	struct gate_summary gs;
	struct err e = {{0}};
	if (source_gate_summary(v->d->src, t, &gs, &e) == 1) {
		struct buf b = {0};
		gate_blocking(&gs, &b);
		if (b.len) {
			x->note = xstrdup(_("blocked"));
			x->note_long = xasprintf(_("blocked: %s"), b.data);
			x->role = ROLE_FINDING_BLOCK;
		}
		buf_free(&b);
	}
	gate_summary_free(&gs);
}

/* It waits in queued for a person's confirmation of its cost (Y). */
static int waits_confirm(const struct task_row *t)
{
	return t->status == TASK_QUEUED && t->confirm && !strcmp(t->confirm, "needed");
}

/* A group's row: its members in brief, read for the rows drawn only. */
static void group_extra(struct view *v, const struct task_row *t, struct extra *x)
{
	struct group_info gi;
	struct err e = {{0}};
	if (source_group_load(v->d->src, t->group_id, v->d->now, 0, &gi, &e) < 0)
		return;
	x->is_group = 1;
	x->gstatus = group_status(&gi);
	/* TIME is the time of the member the status is (the picked one, or
	 * the first with that status): a group at review has waited there
	 * so long, whatever its first member does. */
	const struct group_member *rep = NULL;
	for (size_t i = 0; i < gi.n && !rep; i++)
		if (gi.m[i].picked)
			rep = &gi.m[i];
	for (size_t i = 0; i < gi.n && !rep; i++)
		if (gi.m[i].t.status == x->gstatus)
			rep = &gi.m[i];
	if (rep) {
		x->rep = (struct task_row){ .seq = rep->t.seq, .status = rep->t.status,
		                            .created = rep->t.created, .updated = rep->t.updated };
		if (rep->t.status != TASK_QUEUED && source_task_glance(v->d->src, rep->t.seq, &x->rg,
		                                                      &e) < 0)
			memset(&x->rg, 0, sizeof x->rg);
	} else {
		x->rep = (struct task_row){ .seq = t->seq, .status = t->status,
		                            .created = t->created, .updated = t->updated };
		x->rg = x->g;
	}
	struct buf b = {0};
	for (size_t i = 0; i < gi.n; i++)
		buf_printf(&b, "%s%s", i ? "," : "", gi.m[i].t.agent);
	x->agents = buf_detach(&b);
	group_statuses(&gi, 1, &b);
	/* Where the room is short, the text comes before the statuses: the
	 * group view has them. */
	size_t waiting = 0;
	for (size_t i = 0; i < gi.n; i++)
		waiting += waits_confirm(&gi.m[i].t);
	/* A group that waits is marked as a task's row is (Y confirms it). */
	x->note = waiting ? xstrdup(_("needs confirmation")) : xasprintf(_("best of %zu"), gi.n);
	if (waiting) {
		x->note_long = xasprintf(_("best of %zu: needs confirmation (Y); %s"), gi.n,
		                         b.data ? b.data : "");
	} else if (gi.g.chosen)
		x->note_long = xasprintf(_("best of %zu: %s picked; %s"), gi.n, gi.g.chosen,
		                         b.data ? b.data : "");
	else
		x->note_long = xasprintf(_("best of %zu: %s"), gi.n, b.data ? b.data : "");
	x->role = waiting ? ROLE_FINDING_WARN : view_status_role(x->gstatus);
	buf_free(&b);
	group_info_free(&gi);
}

/* A done task's pull request that GitHub merged or closed (ghsync.h). */
static int pr_note(struct view *v, const struct task_row *t, struct extra *x)
{
	struct gh_link l;
	struct err e = {{0}};
	if (source_github_link(v->d->src, t->id, &l, &e) != 1)
		return 0;
	int merged = l.pr_state && !strcmp(l.pr_state, "merged");
	int closed = l.pr_state && !strcmp(l.pr_state, "closed");
	gh_link_free(&l);
	if (!merged && !closed)
		return 0;
	x->note = xstrdup(merged ? _("merged") : _("pr closed"));
	x->note_long = xstrdup(merged ? _("pull request merged") : _("pull request closed without "
	                                                               "merge"));
	x->role = merged ? ROLE_NORMAL : ROLE_DIM;
	return 1;
}

/* A group's member shown as a row of its own: "group G, 2 of 3" (as
 * paddock list marks it), "2 of 3" where the room is short. */
static void member_mark(struct view *v, const struct task_row *t, struct extra *x)
{
	int pos, n;
	struct err e = {{0}};
	if (!t->group_id || source_group_position(v->d->src, t, &pos, &n, &e) < 0 || n == 0)
		return;
	x->pre = xasprintf(_("%d of %d"), pos, n);
	x->pre_long = xasprintf(_("group %s, %d of %d"), t->group_id, pos, n);
}

static const struct extra *extra_at(struct view *v, int line)
{
	struct tasks *p = v->priv;
	const struct task_row *t = row_at(p, line);
	if (!t)
		return NULL;
	struct extra *x = &p->extra[line - p->first];
	if (x->have)
		return x;
	x->have = 1;
	x->title = recipe_task_title(t->inputs, t->text);
	struct err e = {{0}};
	if (t->status != TASK_QUEUED && source_task_glance(v->d->src, t->seq, &x->g, &e) < 0)
		memset(&x->g, 0, sizeof x->g);
	if (row_is_group(p, t))
		group_extra(v, t, x);
	else
		member_mark(v, t, x);
	if (t->dry_run) {
		/* paddock list's "(dry run)": it pushes nothing when approved. */
		char *pre = x->pre, *pre_long = x->pre_long;
		x->pre = xasprintf("%s%s%s", pre ? pre : "", pre ? "] [" : "", _("dry run"));
		x->pre_long = xasprintf("%s%s%s", pre_long ? pre_long : "", pre_long ? "] [" : "",
		                        _("dry run"));
		free(pre);
		free(pre_long);
	}
	if (x->is_group) {
		/* its note is the group's */
	} else if (t->status == TASK_FAILED || t->status == TASK_LOST) {
		failed_note(t, x);
	} else if (t->status == TASK_REVIEW) {
		review_note(v, t, x);
		/* A later round that made no commit: its head is where it
		 * started (the first round's no change ends the task done). */
		if (!x->note && t->round > 1 && x->g.round_unchanged) {
			x->note = xstrdup(_("no change"));
			x->note_long = xasprintf(_("no change in round %d"), t->round);
			x->role = ROLE_DIM;
		}
	} else if (t->status == TASK_DONE && t->pr_error && !t->pr_url) {
		/* paddock list's "[pr failed]": pushed, its pull request not open. */
		x->note = xstrdup(_("pr failed"));
		x->note_long = xasprintf(ngettext("pull request failed %d time (its gate tries again)",
		                                  "pull request failed %d times (its gate tries again)",
		                                  t->pr_attempts), t->pr_attempts);
		x->role = ROLE_FINDING_WARN;
	} else if (t->status == TASK_DONE && t->pr_url && pr_note(v, t, x)) {
		/* its pull request's end: merged, or closed without merge */
	} else if (t->status == TASK_DONE && x->g.round_unchanged) {
		x->note = xstrdup(_("no change"));
		x->note_long = xstrdup(x->note);
		x->role = ROLE_DIM;
	} else if (waits_confirm(t)) {
		/* It runs only once a person says so (Y). */
		x->note = xstrdup(_("needs confirmation"));
		x->note_long = xstrdup(_("needs confirmation (Y)"));
		x->role = ROLE_FINDING_WARN;
	}
	return x;
}

/* The cells of a row that are not the task's own strings. */
struct cells {
	char rnd[16], wait[32], time[64], age[48];
	const char *id, *agent;    /* the task's, or its group's */
	enum task_status status;
};

/* TIME: queued for how long; in the current step for how long, and how
 * much of the round's time limit is left; at review for how long; once
 * ended, how long it ran (the queue not counted). */
static void time_cell(struct view *v, const struct task_row *t, const struct extra *x,
                      char *out, size_t len)
{
	double now = v->d->now, limit = v->d->cfg->limits.timeout;
	char a[32], b[32];
	/* A group's: its status's member's (group_extra). */
	const struct task_glance *g = x->is_group ? &x->rg : &x->g;
	if (x->is_group)
		t = &x->rep;
	if (t->status == TASK_QUEUED) {
		view_short_text(now - t->updated, a, sizeof a);
		snprintf(out, len, _("queued %s"), a);
	} else if (task_status_is_terminal(t->status)) {
		if (g->started > 0)
			view_clock_text(t->updated - g->started, out, len);
		else
			snprintf(out, len, "-");
	} else {
		view_clock_text(now - t->updated, a, sizeof a);
		if (task_status_is_active(t->status) && t->status != TASK_PUSHING && limit > 0) {
			double from = g->round_started > 0 ? g->round_started : t->updated;
			view_short_text(limit - (now - from), b, sizeof b);
			snprintf(out, len, _("%s (%s left)"), a, b);
		} else {
			snprintf(out, len, "%s", a);
		}
	}
}

static void row_cells(struct view *v, const struct task_row *t, const struct extra *x,
                      struct cells *c)
{
	double now = v->d->now;
	char a[32];
	int group = x && x->is_group;
	c->id = group ? t->group_id : t->id;
	c->agent = group ? x->agents : t->agent;
	c->status = group ? x->gstatus : t->status;
	snprintf(c->rnd, sizeof c->rnd, "%d", t->round ? t->round : 1);
	if (group)
		snprintf(c->rnd, sizeof c->rnd, "-");
	c->wait[0] = '\0';
	if (t->status == TASK_QUEUED)
		view_clock_text(now - t->created, c->wait, sizeof c->wait);
	else if (x->g.started > 0)
		view_clock_text(x->g.started - t->created, c->wait, sizeof c->wait);
	time_cell(v, t, x, c->time, sizeof c->time);
	view_short_text(now - t->created, a, sizeof a);
	snprintf(c->age, sizeof c->age, _("%s ago"), a);
}

/* ---- the columns ---- */

enum col { C_ID, C_STATUS, C_REPO, C_AGENT, C_RND, C_WAIT, C_TIME, C_AGE, C_TASK, C_N };

struct layout {
	int on[C_N], x[C_N], w[C_N];
};

static const char *col_title(enum col c)
{
	switch (c) {
	case C_ID: return _("ID");
	case C_STATUS: return _("STATUS");
	case C_REPO: return _("REPO");
	case C_AGENT: return _("AGENT");
	case C_RND: return _("RND");
	case C_WAIT: return _("WAIT");
	case C_TIME: return _("TIME");
	case C_AGE: return _("AGE");
	default: return _("TASK");
	}
}

/* The columns for width w: ID, STATUS and TIME always; the text gets at
 * least 3/8 of the width, and the others come in while there is room
 * (AGE first, then REPO and AGENT, shrunk if need be, RND, WAIT), in that
 * order: one that does not fit keeps the rest out.  Two spaces between
 * columns. */
static void layout(int w, const int pref[C_N], struct layout *L)
{
	memset(L, 0, sizeof *L);
	L->on[C_ID] = L->on[C_STATUS] = L->on[C_TIME] = L->on[C_TASK] = 1;
	const int gap = 2;
	int used = pref[C_ID] + pref[C_STATUS] + pref[C_TIME] + 3 * gap;
	int text_min = w * 3 / 8 > 10 ? w * 3 / 8 : 10;
	static const enum col add[] = { C_AGE, C_REPO, C_AGENT, C_RND, C_WAIT };
	for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) {
		enum col c = add[i];
		int room = w - used - text_min - gap;
		int least = c == C_REPO || c == C_AGENT ? screen_strwidth(col_title(c)) : pref[c];
		if (least < 4 && pref[c] >= 4)
			least = 4;
		if (room < least)
			break;             /* nor the ones after it */
		L->on[c] = 1;
		L->w[c] = pref[c] < room ? pref[c] : room;
		used += L->w[c] + gap;
	}
	int x = 0;
	for (int c = 0; c < C_TASK; c++) {
		if (!L->on[c])
			continue;
		if (c == C_ID || c == C_STATUS || c == C_TIME)
			L->w[c] = pref[c];
		L->x[c] = x;
		x += L->w[c] + gap;
	}
	L->x[C_TASK] = x;
	L->w[C_TASK] = w - x;
}

/* Each column's width for the rows on screen: its title's, the widest
 * cell's (REPO and AGENT at most 16), every status name's. */
static void widths(struct view *v, int rows, const struct cells *cells, int pref[C_N])
{
	struct tasks *p = v->priv;
	for (int c = 0; c < C_N; c++)
		pref[c] = screen_strwidth(col_title((enum col)c));
#define WIDEN(c, n) do { int n_ = (n); if (n_ > pref[c]) pref[c] = n_; } while (0)
	WIDEN(C_ID, TASK_ID_LEN);
	for (int s = 0; s < TASK_NSTATUS; s++)
		WIDEN(C_STATUS, screen_strwidth(task_status_label((enum task_status)s)));
	/* Room for the common cases, so that columns stay put as times grow. */
	char sample[64];
	snprintf(sample, sizeof sample, _("%s ago"), "59m");
	WIDEN(C_AGE, screen_strwidth(sample));
	snprintf(sample, sizeof sample, _("%s (%s left)"), "59:59", "59m");
	WIDEN(C_TIME, screen_strwidth(sample));
	for (int r = 0; r < rows; r++) {
		const struct task_row *t = row_at(p, v->top + r);
		if (!t)
			break;
		int rw = screen_strwidth(t->repo), aw = screen_strwidth(cells[r].agent);
		WIDEN(C_REPO, rw < 16 ? rw : 16);
		WIDEN(C_AGENT, aw < 16 ? aw : 16);
		WIDEN(C_RND, screen_strwidth(cells[r].rnd));
		WIDEN(C_WAIT, screen_strwidth(cells[r].wait));
		WIDEN(C_TIME, screen_strwidth(cells[r].time));
		WIDEN(C_AGE, screen_strwidth(cells[r].age));
	}
#undef WIDEN
}

/* One mark in brackets at (*x, y): the long one where w is 60 or more
 * and it takes at most half of w, else the short one; *x and *w move past
 * it.  0 when no room is left for what follows. */
static int draw_mark(struct screen *s, int *x, int y, int *w, enum role role,
                     const char *mark, const char *mark_long)
{
	struct buf b = {0};
	if (mark_long && *w >= 60)
		buf_printf(&b, "[%s]", mark_long);
	if (!b.len || screen_strwidth(b.data) > *w / 2) {
		buf_reset(&b);
		buf_printf(&b, "[%s]", mark);
	}
	int used = screen_text(s, *x, y, *w, role, b.data, b.len);
	buf_free(&b);
	*x += used + 1;
	*w -= used + 1;
	return *w > 0;
}

/* The text column: the marks (a group's member, test mode; a failure's
 * reason, a blocking finding, no change) in brackets, then what the task
 * is named by (recipe_task_title). */
static void draw_text(struct screen *s, int x, int y, int w, const struct task_row *t,
                      const struct extra *ex)
{
	if (w <= 0)
		return;
	if (ex && ex->pre && !draw_mark(s, &x, y, &w, ROLE_DIM, ex->pre, ex->pre_long))
		return;
	/* The long note (a failure's first line) where it takes at most half
	 * the room. */
	if (ex && ex->note && !draw_mark(s, &x, y, &w, ex->role, ex->note, ex->note_long))
		return;
	const char *title = ex && ex->title ? ex->title : t->text;
	/* Cut at the edge with the dim mark: the gate and show have it whole. */
	screen_text_window(s, x, y, w, 1, ROLE_NORMAL, title, strcspn(title, "\n"), 0,
	                   SCREEN_TEXT_MARKS);
}

static void draw_row(struct screen *s, int ry, const struct layout *L,
                     const struct task_row *t, const struct extra *x, const struct cells *c)
{
	const char *cell[C_N] = { c->id, task_status_label(c->status), t->repo, c->agent,
	                          c->rnd, c->wait, c->time, c->age, NULL };
	for (int k = 0; k < C_TASK; k++)
		if (L->on[k])
			screen_str(s, L->x[k], ry, L->w[k],
			           k == C_STATUS ? view_status_role(c->status) : ROLE_NORMAL, cell[k]);
	draw_text(s, L->x[C_TASK], ry, L->w[C_TASK], t, x);
}

static void tasks_draw(struct view *v, struct screen *s, int y, int h)
{
	struct tasks *p = v->priv;
	int w = screen_width(s);
	v->height = h - 1;
	view_clamp(v);
	window_ensure(v);
	int rows = h - 1 > 0 ? h - 1 : 0;
	struct cells *cells = xcalloc((size_t)rows + 1, sizeof *cells);
	const struct extra **xs = xcalloc((size_t)rows + 1, sizeof *xs);
	for (int r = 0; r < rows; r++) {
		const struct task_row *t = row_at(p, v->top + r);
		if (!t)
			break;
		xs[r] = extra_at(v, v->top + r);
		row_cells(v, t, xs[r], &cells[r]);
	}
	int pref[C_N];
	struct layout L;
	widths(v, rows, cells, pref);
	layout(w, pref, &L);
	screen_fill(s, 0, y, w, ROLE_HEADER);
	for (int c = 0; c < C_N; c++)
		if (L.on[c])
			screen_str(s, L.x[c], y, c == C_TASK ? w - L.x[c] : L.w[c], ROLE_HEADER,
			           col_title((enum col)c));
	if (p->shown == 0) {
		screen_str(s, 1, y + 2, w - 1, ROLE_DIM, p->total ?
		           _("no task matches the filter (f changes it, :filter all shows every "
		             "task)") :
		           _("no tasks yet: n adds one, or run 'paddock demo'"));
	}
	for (int r = 0; p->shown && r < rows; r++) {
		int i = v->top + r;
		const struct task_row *t = row_at(p, i);
		if (!t)
			break;
		draw_row(s, y + 1 + r, &L, t, xs[r], &cells[r]);
		if (i == v->sel)
			screen_paint(s, 0, y + 1 + r, w, ROLE_CURSOR);
	}
	v->width = w;
	free(cells);
	free(xs);
}

/* ---- confirming a task's (or a group's) estimated cost ---- */

/* What Y asked about: one task, or the members of a group that wait. */
struct confirm_ask {
	char group[TASK_ID_LEN + 1];   /* "" for one task */
	char (*ids)[TASK_ID_LEN + 1];
	size_t n;
};

static void confirm_answer(struct dash *d, void *arg, const char *text)
{
	struct confirm_ask *a = arg;
	struct err e = {{0}}, first = {{0}};
	size_t done = 0, failed = 0;
	for (size_t i = 0; text && rpmatch(text) == 1 && i < a->n; i++) {
		if (source_confirm(d->src, a->ids[i], &e) == 0)
			done++;
		else if (!failed++)
			first = e;
	}
	if (failed)
		dash_message(d, ROLE_ERROR, "%s", first.msg);
	else if (done && !a->group[0])
		dash_message(d, ROLE_NOTICE, _("task %s confirmed; it runs when a worker is "
		                               "free"), a->ids[0]);
	else if (done)
		dash_message(d, ROLE_NOTICE, ngettext("group %s: %zu member confirmed; it runs when "
		                                      "a worker is free",
		                                      "group %s: %zu members confirmed; they run "
		                                      "when workers are free", done), a->group, done);
	free(a->ids);
	free(a);
}

/* The members of group_id that wait into a; their estimated cost in all
 * (0 when one of them has none). */
static double confirm_group(struct dash *d, const char *group_id, struct confirm_ask *a,
                            struct err *e)
{
	struct group_info gi;
	if (source_group_load(d->src, group_id, d->now, 0, &gi, e) < 0)
		return -1;
	snprintf(a->group, sizeof a->group, "%s", gi.g.id);
	a->ids = xcalloc(gi.n ? gi.n : 1, sizeof *a->ids);
	double sum = 0;
	int unknown = 0;
	for (size_t i = 0; i < gi.n; i++)
		if (waits_confirm(&gi.m[i].t)) {
			snprintf(a->ids[a->n++], sizeof a->ids[0], "%s", gi.m[i].t.id);
			sum += gi.m[i].t.estimate;
			unknown |= gi.m[i].t.estimate <= 0;
		}
	group_info_free(&gi);
	return unknown ? 0 : sum;
}

void tasks_view_confirm(struct dash *d, const char *id, int whole_group)
{
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(d->src, id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	struct confirm_ask *a = xcalloc(1, sizeof *a);
	double cost = t.estimate;
	if (whole_group && t.group_id) {
		cost = confirm_group(d, t.group_id, a, &e);
	} else if (waits_confirm(&t)) {
		a->ids = xcalloc(1, sizeof *a->ids);
		snprintf(a->ids[a->n++], sizeof a->ids[0], "%s", t.id);
	}
	char q[256], usd[32];
	units_format_money(cost, 2, usd, sizeof usd);
	if (cost < 0)
		dash_message(d, ROLE_ERROR, "%s", e.msg);
	else if (!a->n && a->group[0])
		dash_message(d, ROLE_ERROR, _("no member of group %s waits for a confirmation"),
		             a->group);
	else if (!a->n)
		dash_message(d, ROLE_ERROR, _("task %s does not wait for a confirmation"), t.id);
	else if (a->group[0] && cost > 0)
		snprintf(q, sizeof q, ngettext("run %zu member of group %s, estimated to cost $%s? "
		                               "(y/n) ",
		                               "run %zu members of group %s, estimated to cost $%s in "
		                               "all? (y/n) ", a->n), a->n, a->group, usd);
	else if (a->group[0])
		snprintf(q, sizeof q, ngettext("run %zu member of group %s, whose cost cannot be "
		                               "estimated? (y/n) ",
		                               "run %zu members of group %s, whose cost cannot be "
		                               "estimated? (y/n) ", a->n), a->n, a->group);
	else if (cost > 0)
		snprintf(q, sizeof q, _("run task %s, estimated to cost $%s? (y/n) "), t.id, usd);
	else
		snprintf(q, sizeof q, _("run task %s, whose cost cannot be estimated? (y/n) "), t.id);
	task_row_free(&t);
	if (cost < 0 || !a->n) {
		free(a->ids);
		free(a);
		return;
	}
	dash_ask(d, q, 0, NULL, confirm_answer, a);
}

/* ---- the new-task form (newtask.h) ---- */

static void new_added(struct dash *d, void *arg)
{
	(void)d;
	load(arg, 1);
}

static void cancel_answer(struct dash *d, void *arg, const char *text)
{
	char *id = arg;
	if (text && rpmatch(text) == 1) {
		struct err e = {{0}};
		int r = source_cancel(d->src, id, &e);
		if (r < 0)
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		else
			dash_message(d, ROLE_NOTICE, r == 1 ? _("%s cancelled") :
			             _("%s: cancel requested"), id);
	} else {
		dash_message(d, ROLE_DIM, "%s", C_("prompt", "cancelled"));
	}
	free(id);
}

void tasks_view_cancel(struct dash *d, const char *id)
{
	char q[128];
	snprintf(q, sizeof q, _("cancel task %s? (y/n) "), id);
	dash_ask(d, q, 0, NULL, cancel_answer, xstrdup(id));
}

/* ---- filters and orders ---- */

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value && *value ? xstrdup(value) : NULL;
}

/* Sets the text filter (a copy without control characters; "" clears it)
 * and reads the list again. */
static void set_text(struct view *v, const char *text)
{
	struct tasks *p = v->priv;
	struct buf b = {0};
	for (const char *c = text ? text : ""; *c; c++)
		if ((unsigned char)*c >= 0x20 && *c != 0x7f)
			buf_addc(&b, *c);
	if (!(p->text ? b.len && !strcmp(p->text, b.data) : !b.len)) {
		set_str(&p->text, b.data);
		load(v, 1);
	}
	buf_free(&b);
}

static void text_message(struct view *v)
{
	struct tasks *p = v->priv;
	dash_message(v->d, ROLE_NOTICE, ngettext("%zu task contains \"%s\"",
	                                         "%zu tasks contain \"%s\"", p->shown),
	             p->shown, p->text);
}

static void text_changed(struct dash *d, void *arg, const char *text)
{
	(void)d;
	set_text(arg, text);
}

static void text_done(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct tasks *p = v->priv;
	(void)d;
	/* Esc puts the filter back as it was. */
	set_text(v, text ? text : p->text_before);
	free(p->text_before);
	p->text_before = NULL;
	if (text && p->text)
		text_message(v);
}

/* A repo (or agent) the list can filter by: one in the configuration, or
 * one some task has. */
static int known(struct view *v, int agent, const char *name)
{
	struct config *cfg = v->d->cfg;
	if (agent ? config_find_agent(cfg, name) != NULL : config_find_repo(cfg, name) != NULL)
		return 1;
	struct task_query q = { .repo = agent ? NULL : name, .agent = agent ? name : NULL };
	size_t n = 0;
	struct err e = {{0}};
	return source_task_count(v->d->src, &q, &n, &e) == 0 && n > 0;
}

/* :filter repo NAME, :filter agent NAME (no name: any). */
static int filter_by(struct view *v, int agent, const char *name)
{
	struct tasks *p = v->priv;
	struct config *cfg = v->d->cfg;
	if (*name && !known(v, agent, name)) {
		struct buf b = {0};
		size_t n = agent ? cfg->nagents : cfg->nrepos;
		for (size_t i = 0; i < n; i++)
			buf_printf(&b, "%s%s", i ? ", " : "",
			           agent ? cfg->agents[i].name : cfg->repos[i].name);
		if (agent)
			dash_message(v->d, ROLE_ERROR, _("no agent named '%s'; agents are %s"), name,
			             b.len ? b.data : "-");
		else
			dash_message(v->d, ROLE_ERROR, _("no repo named '%s'; repos are %s"), name,
			             b.len ? b.data : "-");
		buf_free(&b);
		return -1;
	}
	set_str(agent ? &p->agent : &p->repo, name);
	load(v, 1);
	if (!*name)
		dash_message(v->d, ROLE_NOTICE, agent ? _("showing the tasks of every agent") :
		             _("showing the tasks of every repo"));
	else
		dash_message(v->d, ROLE_NOTICE, agent ? _("showing the tasks of agent %s") :
		             _("showing the tasks of repo %s"), name);
	return 0;
}

static void set_filter(struct view *v, enum filter f)
{
	struct tasks *p = v->priv;
	p->filter = f;
	if (f == FILTER_ALL) {
		/* All is all: the other filters go too. */
		set_str(&p->repo, NULL);
		set_str(&p->agent, NULL);
		set_str(&p->text, NULL);
	}
	load(v, 1);
	dash_message(v->d, ROLE_NOTICE, _("showing %s tasks"), _(filter_names[f]));
}

static int tasks_view_filter(struct view *v, const char *arg)
{
	char word[64] = "";
	while (*arg == ' ')
		arg++;
	size_t wl = strcspn(arg, " ");
	snprintf(word, sizeof word, "%.*s", (int)wl, arg);
	const char *rest = arg + wl;
	while (*rest == ' ')
		rest++;
	char name[256];
	snprintf(name, sizeof name, "%s", rest);
	for (size_t n = strlen(name); n && name[n - 1] == ' '; n--)
		name[n - 1] = '\0';
	if (!*word)
		snprintf(word, sizeof word, "all");
	if (!strcmp(word, "repo") || !strcmp(word, _("repo")))
		return filter_by(v, 0, name);
	if (!strcmp(word, "agent") || !strcmp(word, _("agent")))
		return filter_by(v, 1, name);
	if (!strcmp(word, "text") || !strcmp(word, _("text"))) {
		set_text(v, name);
		struct tasks *p = v->priv;
		if (p->text)
			text_message(v);
		else
			dash_message(v->d, ROLE_NOTICE, _("the text filter is off"));
		return 0;
	}
	for (int f = 0; f < FILTER_N && !*name; f++) {
		if (strcmp(word, filter_names[f]) && strcmp(word, _(filter_names[f])))
			continue;
		set_filter(v, (enum filter)f);
		return 0;
	}
	struct buf names = {0};
	words_list(&names, tasks_view_filter_names, filter_args, FILTER_WORDS_N);
	dash_message(v->d, ROLE_ERROR, _("no filter named '%s'; filters are %s"), arg, names.data);
	buf_free(&names);
	return -1;
}

static void set_order(struct view *v, enum task_order o)
{
	struct tasks *p = v->priv;
	p->order = o;
	load(v, 1);
	dash_message(v->d, ROLE_NOTICE, _("sorted by %s"), _(order_names[o]));
}

static int tasks_view_sort(struct view *v, const char *name)
{
	while (*name == ' ')
		name++;
	for (int o = 0; o < ORDER_N; o++) {
		if (strcmp(name, order_names[o]) && strcmp(name, _(order_names[o])))
			continue;
		set_order(v, (enum task_order)o);
		return 0;
	}
	struct buf names = {0};
	words_list(&names, tasks_view_sort_names, NULL, ORDER_N);
	dash_message(v->d, ROLE_ERROR, _("no order named '%s'; orders are %s"), name, names.data);
	buf_free(&names);
	return -1;
}

/* ---- jumps ---- */

/* The seq of group gid's member that q (the list's filters, one row per
 * group) shows: its first (newest 0), or of its members the last one
 * (newest 1), where the group's row ends; 0 when none. */
static long long group_seq(struct view *v, struct task_query q, const char *gid, int newest)
{
	struct task_row *rows = NULL;
	size_t n = 0;
	struct err e = {{0}};
	if (newest)
		q = (struct task_query){ .no_steps = 1 };
	q.group = gid;
	q.limit = 1;
	q.newest_first = newest;
	long long seq = source_task_query(v->d->src, &q, &rows, &n, &e) == 0 && n ? rows[0].seq : 0;
	task_rows_free(rows, n);
	return seq;
}

/* The line of the next task after the selection whose status is in
 * want, going round the end; -1 when the list has none.  A group's row
 * counts when a member's status is in want. */
static long next_line(struct view *v, unsigned want, struct err *e)
{
	struct tasks *p = v->priv;
	struct task_query q = base_query(p);
	if (p->order != TASK_ORDER_QUEUED) {
		for (size_t k = 1; p->keys && k <= p->shown; k++) {
			size_t i = ((size_t)(v->sel < 0 ? -1 : v->sel) + k) % p->shown;
			if (want & TASK_MASK(p->keys[i].status))
				return (long)i;
		}
		return -1;
	}
	/* In the queued order: by seq, from the status's index. */
	const struct task_row *cur = row_at(p, v->sel);
	q.status_mask = q.status_mask ? q.status_mask & want : want;
	if (!q.status_mask)
		return -1;
	q.limit = 1;
	q.after = cur ? cur->seq : 0;
	if (row_is_group(p, cur))
		q.after = group_seq(v, q, cur->group_id, 1);
	struct task_row *rows = NULL;
	size_t n = 0;
	if (source_task_query(v->d->src, &q, &rows, &n, e) < 0)
		return -1;
	if (!n) {
		q.after = 0;
		if (source_task_query(v->d->src, &q, &rows, &n, e) < 0)
			return -1;
	}
	if (!n)
		return -1;
	struct task_query before = base_query(p);
	before.before = rows[0].seq;
	/* The member found stands in the list as its group's row. */
	if (row_is_group(p, &rows[0]))
		before.before = group_seq(v, base_query(p), rows[0].group_id, 0);
	size_t k = 0;
	task_rows_free(rows, n);
	return source_task_count(v->d->src, &before, &k, e) < 0 ? -1 : (long)k;
}

static void jump(struct view *v, unsigned want)
{
	struct err e = {{0}};
	long line = next_line(v, want, &e);
	if (e.msg[0]) {
		dash_message(v->d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	if (line < 0) {
		dash_message(v->d, ROLE_NOTICE, want == MASK_FAILED ?
		             _("no failed task in the list") : _("no task at review in the list"));
		return;
	}
	v->sel = (int)line;
	/* The task found in the middle of the screen when it was off it. */
	if (v->sel < v->top || v->sel >= v->top + v->height)
		v->top = v->sel - v->height / 2;
	view_clamp(v);
	select_task(v);
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
		if (row_is_group(p, t))
			dash_open(d, &view_group, t->group_id);
		else if (t)
			dash_open(d, t->status == TASK_REVIEW ? &view_gate : &view_log, t->id);
		return 1;
	case REQ_FILTER:
		set_filter(v, (p->filter + 1) % FILTER_CYCLE);
		return 1;
	case REQ_TEXT_FILTER:
		free(p->text_before);
		p->text_before = p->text ? xstrdup(p->text) : NULL;
		dash_ask_live(d, "/", p->text, text_changed, text_done, v);
		return 1;
	case REQ_CLEAR_FILTER:
		/* Esc backs out of a filter before it quits, as in k9s and
		 * lazygit; the order stays (it hides no task). */
		if (p->filter == FILTER_ALL && !p->repo && !p->agent && !p->text)
			return 0;
		set_filter(v, FILTER_ALL);
		return 1;
	case REQ_COPY:
		/* A group's row is the group: its id (it has no branch of its
		 * own; its members' are in the group view). */
		if (row_is_group(p, t))
			dash_copy(d, _("group id"), t->group_id);
		else
			dash_copy_menu(d, t ? t->id : NULL, NULL);
		return 1;
	case REQ_SORT:
		set_order(v, (enum task_order)((p->order + 1) % ORDER_N));
		return 1;
	case REQ_NEXT_FAILED:
		jump(v, MASK_FAILED);
		return 1;
	case REQ_NEXT_REVIEW:
		jump(v, TASK_MASK(TASK_REVIEW));
		return 1;
	case REQ_NEW_TASK:
		newtask_open(d, new_added, v);
		return 1;
	case REQ_SHELL:
		if (t)
			dash_shell(d, t->id);
		return 1;
	case REQ_CONFIRM_TASK:
		/* A group's row: every member that waits, as one. */
		if (t)
			tasks_view_confirm(d, t->id, 1);
		return 1;
	case REQ_CANCEL_TASK:
		if (row_is_group(p, t)) {
			dash_message(d, ROLE_ERROR, _("this row is best-of-N group %s: open it (Enter) "
			                              "and cancel one member there"), t->group_id);
		} else if (t) {
			tasks_view_cancel(d, t->id);
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
	free(p->repo);
	free(p->agent);
	free(p->text);
	free(p->text_before);
	free(p->keys);
}

const struct view_ops view_tasks = {
	.name = "tasks",
	.flags = VIEW_STACKS | VIEW_CLICK_REQUEST,
	.priv_size = sizeof(struct tasks),
	.open = tasks_open,
	.title = tasks_title,
	.draw = tasks_draw,
	.request = tasks_request,
	.refresh = tasks_refresh,
	.close = tasks_close,
	.filter = tasks_view_filter,
	.sort = tasks_view_sort,
	.filter_names = tasks_view_filter_names,
	.sort_names = tasks_view_sort_names,
	.next_pane = &view_log,
};
