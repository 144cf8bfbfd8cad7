#include "autoconfig.h"
#include "view.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "dash.h"
#include "i18n.h"
#include "source.h"

/* group view: a best-of-N group (group.h) and its members side by side,
 * as `paddock group show` prints them: one row each with its status,
 * verified tests, change, cost, time and findings, the picked one
 * marked.  The selection is a member: Enter opens its gate, L, D and V
 * its log, diff and gate over the group, r asks it for changes, C
 * cancels it, and A picks it (asked first; group_pick, off the loop).
 * Y confirms the estimated cost of every member that waits for it.
 * Below the table, what the selected member's agent said, or why it
 * failed.  The text above and below the table is cut at the edge with
 * the marks of a cut line, scrolled sideways (< >) or wrapped (w), as a
 * log's lines are.  What agents wrote goes through screen_text. */

struct group_priv {
	char id[TASK_ID_LEN + 1];  /* the group's */
	struct group_info gi;
	int have;
	uint64_t version;          /* source_data_version when loaded */
	struct screen *row;        /* one line drawn whole, shown with screen_window */
};

/* Rows above the members: the text, the statuses, a blank, the header
 * (more when the text is wrapped). */
#define HEAD_ROWS 4

static const struct group_member *selected(struct view *v)
{
	struct group_priv *p = v->priv;
	return p->have && v->sel >= 0 && (size_t)v->sel < p->gi.n ? &p->gi.m[v->sel] : NULL;
}

/* The view's task is the selected member (for L, D, V and Tab). */
static void select_member(struct view *v)
{
	const struct group_member *m = selected(v);
	snprintf(v->task_id, sizeof v->task_id, "%s", m ? m->t.id : "");
}

/* Reads the group again when the store changed (force: in any case); the
 * selection stays on its member. */
static int load(struct view *v, int force, struct err *e)
{
	struct group_priv *p = v->priv;
	uint64_t ver = source_data_version(v->d->src);
	if (p->have && !force && ver == p->version)
		return 0;
	struct group_info gi;
	if (source_group_load(v->d->src, p->id, v->d->now, 1, &gi, e) < 0)
		return -1;
	char keep[TASK_ID_LEN + 1];
	snprintf(keep, sizeof keep, "%s", v->task_id);
	group_info_free(&p->gi);
	p->gi = gi;
	p->have = 1;
	p->version = ver;
	snprintf(p->id, sizeof p->id, "%s", gi.g.id);
	v->lines = (int)gi.n;
	for (size_t i = 0; i < gi.n; i++)
		if (!strcmp(gi.m[i].t.id, keep))
			v->sel = (int)i;
	view_clamp(v);
	select_member(v);
	return 0;
}

static int group_open(struct view *v, char *msg, size_t msglen)
{
	struct group_priv *p = v->priv;
	struct err e = {{0}};
	/* dash_open hands over the group's id as the view's task. */
	snprintf(p->id, sizeof p->id, "%s", v->task_id);
	v->task_id[0] = '\0';
	v->sel = 0;
	v->header_rows = HEAD_ROWS;
	if (!p->id[0]) {
		snprintf(msg, msglen, "%s", _("select a group to see its members"));
		return -1;
	}
	if (load(v, 1, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	/* The first member that waits for a person. */
	for (size_t i = 0; i < p->gi.n; i++)
		if (p->gi.m[i].t.status == TASK_REVIEW) {
			v->sel = (int)i;
			break;
		}
	view_clamp(v);
	select_member(v);
	return 0;
}

static void group_refresh(struct view *v)
{
	struct err e = {{0}};
	/* A group that cannot be read keeps its last rows on screen. */
	load(v, 0, &e);
}

static void group_close(struct view *v)
{
	struct group_priv *p = v->priv;
	group_info_free(&p->gi);
	screen_free(p->row);
	p->row = NULL;
}

static void group_title(struct view *v, char *out, size_t len)
{
	struct group_priv *p = v->priv;
	int n = snprintf(out, len, _("group %s  best of %zu"), p->id, p->gi.n);
	if (p->have && p->gi.g.chosen && n >= 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, _("  picked %s"), p->gi.g.chosen);
}

/* ---- drawing ---- */

enum col { C_NUM, C_ID, C_AGENT, C_STATUS, C_TESTS, C_CHANGE, C_COST, C_TIME, C_FINDINGS,
           C_N };

static const char *col_title(enum col c)
{
	switch (c) {
	case C_NUM: return " #";
	case C_ID: return _("ID");
	case C_AGENT: return _("AGENT");
	case C_STATUS: return _("STATUS");
	case C_TESTS: return _("TESTS");
	case C_CHANGE: return _("CHANGE");
	case C_COST: return _("COST");
	case C_TIME: return _("TIME");
	default: return _("FINDINGS");
	}
}

struct cell {
	char text[96];
	enum role role;
};

static void member_cells(struct view *v, const struct group_member *m, struct cell c[C_N])
{
	const struct task_row *t = &m->t;
	for (int k = 0; k < C_N; k++)
		c[k].role = ROLE_NORMAL;
	snprintf(c[C_NUM].text, sizeof c[C_NUM].text, "%s%d", m->picked ? "*" : " ", m->position);
	c[C_NUM].role = m->picked ? ROLE_GATE_OK : ROLE_NORMAL;
	snprintf(c[C_ID].text, sizeof c[C_ID].text, "%s", t->id);
	snprintf(c[C_AGENT].text, sizeof c[C_AGENT].text, "%s", t->agent);
	snprintf(c[C_STATUS].text, sizeof c[C_STATUS].text, "%s", task_status_label(t->status));
	c[C_STATUS].role = view_status_role(t->status);
	snprintf(c[C_TESTS].text, sizeof c[C_TESTS].text, "%s",
	         m->has_gate ? group_tests_word(m->tests) : "-");
	c[C_TESTS].role = !m->has_gate || m->tests == GROUP_TESTS_NOT_RUN ? ROLE_DIM :
	                  m->tests == GROUP_TESTS_PASSED ? ROLE_GATE_OK : ROLE_ERROR;
	if (m->has_change)
		snprintf(c[C_CHANGE].text, sizeof c[C_CHANGE].text, "%zu +%zu -%zu", m->files, m->ins,
		         m->del);
	else
		snprintf(c[C_CHANGE].text, sizeof c[C_CHANGE].text, "-");
	if (t->usage.requests)
		snprintf(c[C_COST].text, sizeof c[C_COST].text, "$%.2f%s", t->usage.cost,
		         t->usage.priced ? "" : "+");
	else
		snprintf(c[C_COST].text, sizeof c[C_COST].text, "-");
	/* A running member's time goes on between the store's changes; "-"
	 * before it started, as group show prints it. */
	double secs = group_member_seconds(t, v->d->now);
	if (secs < 0)
		snprintf(c[C_TIME].text, sizeof c[C_TIME].text, "-");
	else
		view_clock_text(secs, c[C_TIME].text, sizeof c[C_TIME].text);
	/* block and warn are the policy's words (paddock-config(5)), as
	 * show prints them. */
	if (m->blocks && m->warns)
		snprintf(c[C_FINDINGS].text, sizeof c[C_FINDINGS].text, "%zu block, %zu warn",
		         m->blocks, m->warns);
	else if (m->blocks)
		snprintf(c[C_FINDINGS].text, sizeof c[C_FINDINGS].text, "%zu block", m->blocks);
	else if (m->warns)
		snprintf(c[C_FINDINGS].text, sizeof c[C_FINDINGS].text, "%zu warn", m->warns);
	else
		snprintf(c[C_FINDINGS].text, sizeof c[C_FINDINGS].text, "%s", _("none"));
	c[C_FINDINGS].role = m->blocks ? ROLE_FINDING_BLOCK : m->warns ? ROLE_FINDING_WARN
	                                                               : ROLE_DIM;
}

/* A piece of a line of text in its role. */
struct seg {
	const char *text;
	size_t len;
	enum role role;
};

/* Draws a line made of n pieces from column x of row y to the right edge:
 * cut, scrolled sideways by v->left, with the marks of a cut line (more:
 * text follows that is not shown, as a "»"); or wrapped (w) onto max rows
 * at most.  Returns the rows it took. */
static int draw_line(struct view *v, struct screen *s, int x, int y, int max,
                     const struct seg *seg, int n, int more)
{
	struct group_priv *p = v->priv;
	int w = screen_width(s) - x;
	if (w < 1 || max < 1)
		return 0;
	int width = 0;
	for (int k = 0; k < n; k++)
		width += screen_textwidth(seg[k].text, seg[k].len);
	p->row = screen_line(p->row, width);
	int used = 0;
	for (int k = 0; k < n; k++)
		used += screen_text(p->row, used, 0, -1, seg[k].role, seg[k].text, seg[k].len);
	int flags = SCREEN_TEXT_MARKS | (v->wrap ? SCREEN_TEXT_WRAP : 0) |
	            (more ? SCREEN_TEXT_MORE : 0);
	int rows = v->wrap ? screen_window(NULL, 0, 0, w, 0, p->row, used, 0, flags) : 1;
	if (rows > max)
		rows = max;
	screen_window(s, x, y, w, rows, p->row, used, v->left, flags);
	if (!v->wrap && used > v->left + w)
		v->more_right = 1;
	return rows;
}

/* Text of several lines: the first, cut (the "»" says more follows), or
 * every line wrapped (w); at most max rows.  Returns the rows it took. */
static int draw_lines(struct view *v, struct screen *s, int x, int y, int max, struct seg head,
                      const char *text, enum role role)
{
	int r = 0;
	do {
		size_t n = strcspn(text, "\n");
		int more = text[n] == '\n' && text[n + 1];
		struct seg seg[2] = { head, { text, n, role } };
		r += draw_line(v, s, x, y + r, max - r, head.len ? seg : seg + 1, head.len ? 2 : 1,
		               more && !v->wrap);
		/* The label on the first row only; the rest under the text. */
		if (head.len) {
			x += screen_textwidth(head.text, head.len);
			head.len = 0;
		}
		text += n + (text[n] == '\n');
	} while (v->wrap && *text && r < max);
	return r;
}

/* The text and the statuses in brief, above the table; returns the rows
 * they took. */
static int draw_head(struct view *v, struct screen *s, int y, int max)
{
	struct group_priv *p = v->priv;
	const char *text = p->gi.g.text ? p->gi.g.text : "";
	struct seg none = { "", 0, ROLE_NORMAL };
	int r = draw_lines(v, s, 1, y, max - 1, none, text, ROLE_NORMAL);
	if (r < 1)
		r = 1;
	struct buf b = {0}, pick = {0};
	group_statuses(&p->gi, 1, &b);
	const struct group_member *pm = p->gi.g.chosen ? group_member_find(&p->gi, p->gi.g.chosen)
	                                               : NULL;
	if (pm)
		buf_printf(&pick, _("; picked %s (%s)"), pm->t.id, pm->t.agent);
	else
		buf_printf(&pick, "%s", _("; nothing picked yet"));
	struct buf wait = {0};
	size_t waiting = 0;
	for (size_t i = 0; i < p->gi.n; i++)
		waiting += p->gi.m[i].t.status == TASK_QUEUED && p->gi.m[i].t.confirm &&
		           !strcmp(p->gi.m[i].t.confirm, "needed");
	if (waiting) {
		char k[32];
		keymap_first_key(v->d->keys, REQ_CONFIRM_TASK, k, sizeof k);
		buf_printf(&wait, ngettext("; %zu needs confirmation (%s)",
		                           "; %zu need confirmation (%s)", waiting), waiting, k);
	}
	struct seg seg[3] = { { b.data ? b.data : "", b.len, ROLE_NORMAL },
	                      { pick.data, pick.len, pm ? ROLE_GATE_OK : ROLE_DIM },
	                      { wait.data ? wait.data : "", wait.len, ROLE_FINDING_WARN } };
	r += draw_line(v, s, 1, y + r, max - r, seg, waiting ? 3 : 2, 0);
	buf_free(&wait);
	buf_free(&b);
	buf_free(&pick);
	return r;
}

/* What the selected member's agent said, or why it failed, under the
 * table. */
static void draw_selected(struct view *v, struct screen *s, int y, int h)
{
	const struct group_member *m = selected(v);
	if (!m || h < 2)
		return;
	const char *why = m->t.status == TASK_FAILED || m->t.status == TASK_LOST ? m->t.error : NULL;
	const char *said = why ? why : m->t.summary;
	char label[128];
	snprintf(label, sizeof label, why ? _("%s failed: ") : _("%s's summary: "), m->t.id);
	struct seg head = { label, strlen(label), ROLE_HEADER };
	if (said && *said)
		draw_lines(v, s, 1, y + 1, h - 1, head, said, why ? ROLE_ERROR : ROLE_NORMAL);
	else
		draw_lines(v, s, 1, y + 1, h - 1, head, _("none yet"), ROLE_DIM);
}

static void group_draw(struct view *v, struct screen *s, int y, int h)
{
	struct group_priv *p = v->priv;
	int w = screen_width(s);
	v->width = w;
	v->more_right = 0;
	if (!p->have)
		return;
	/* The text wrapped (w) takes up to a third of the rows. */
	int head = draw_head(v, s, y, h / 3 > 2 ? h / 3 : 2) + 2;
	v->header_rows = head;
	v->height = h - head - 2 > 1 ? h - head - 2 : 1;
	view_clamp(v);
	select_member(v);
	size_t n = p->gi.n;
	struct cell (*cells)[C_N] = xcalloc(n ? n : 1, sizeof *cells);
	int cw[C_N];
	for (int k = 0; k < C_N; k++)
		cw[k] = screen_strwidth(col_title((enum col)k));
	for (size_t i = 0; i < n; i++) {
		member_cells(v, &p->gi.m[i], cells[i]);
		for (int k = 0; k < C_N; k++)
			if (screen_strwidth(cells[i][k].text) > cw[k])
				cw[k] = screen_strwidth(cells[i][k].text);
	}
	/* Where the findings would be cut, the cost gives way, then the
	 * time. */
	int on[C_N], used = 1;
	for (int k = 0; k < C_N; k++) {
		on[k] = 1;
		used += cw[k] + (k < C_N - 1 ? 2 : 0);
	}
	static const enum col drop[] = { C_COST, C_TIME };
	for (size_t d = 0; d < sizeof drop / sizeof drop[0] && used > w; d++) {
		on[drop[d]] = 0;
		used -= cw[drop[d]] + 2;
	}
	int hy = y + head - 1;
	screen_fill(s, 0, hy, w, ROLE_HEADER);
	for (int k = 0, x = 1; k < C_N && x < w; k++)
		if (on[k]) {
			screen_str(s, x, hy, k == C_N - 1 ? w - x : cw[k], ROLE_HEADER,
			           col_title((enum col)k));
			x += cw[k] + 2;
		}
	int r = 0;
	for (size_t i = (size_t)v->top; i < n && r < v->height; i++, r++) {
		int ry = hy + 1 + r;
		for (int k = 0, x = 1; k < C_N && x < w; k++)
			if (on[k]) {
				screen_str(s, x, ry, k == C_N - 1 ? w - x : cw[k], cells[i][k].role,
				           cells[i][k].text);
				x += cw[k] + 2;
			}
		if ((int)i == v->sel)
			screen_paint(s, 0, ry, w, ROLE_CURSOR);
	}
	free(cells);
	draw_selected(v, s, hy + 1 + r, y + h - (hy + 1 + r));
}

/* ---- the pick ---- */

/* The pick the question is about.  In static storage: dash_ask asks
 * one question at a time. */
struct pick_job {
	char group[TASK_ID_LEN + 1], task[TASK_ID_LEN + 1];
};
static struct pick_job pick_asked;

static int pick_verb(struct source *src, const void *arg, struct buf *out,
                     struct err *e)
{
	char *const *args = arg;
	return source_pick(src, args[0], args[1], out, e);
}

/* In the dashboard's job (it pushes): args are the group and the task. */
int group_view_pick_job(struct dash *d, char *const *args, char *msg, size_t msglen)
{
	return gate_view_run(d, pick_verb, args, msg, msglen);
}

static void pick_answer(struct dash *d, void *arg, const char *text)
{
	struct pick_job *job = arg;
	if (!text || rpmatch(text) != 1) {
		dash_message(d, ROLE_DIM, "%s", C_("prompt", "cancelled"));
		return;
	}
	char what[128];
	snprintf(what, sizeof what, _("picking task %s"), job->task);
	const char *args[] = { job->group, job->task };
	dash_background(d, what, "pick", args);
}

/* Refuses at once what the engine would refuse, rather than asking
 * first; group_pick checks again when it runs. */
static int pick_refused(struct view *v, const struct group_member *m)
{
	struct group_priv *p = v->priv;
	const char *id = m->t.id;
	if (p->gi.g.chosen)
		dash_message(v->d, ROLE_ERROR, _("group %s has a pick already: task %s"), p->id,
		             p->gi.g.chosen);
	else if (m->t.status != TASK_REVIEW)
		dash_message(v->d, ROLE_ERROR, _("cannot pick task %s: it is %s, not at review"), id,
		             task_status_label(m->t.status));
	else if (m->t.pending)
		dash_message(v->d, ROLE_ERROR, _("cannot pick task %s: changes were requested and "
		                                 "the agent is about to run round %d"), id,
		             m->t.round + 1);
	else if (m->blocks)
		dash_message(v->d, ROLE_ERROR, _("cannot pick task %s: policy findings block it; "
		                                 "open its gate (Enter) to look at them or override "
		                                 "one"), id);
	else
		return 0;
	return 1;
}

static void act_pick(struct view *v)
{
	struct group_priv *p = v->priv;
	const struct group_member *m = selected(v);
	if (!m || pick_refused(v, m))
		return;
	struct pick_job *job = &pick_asked;
	snprintf(job->group, sizeof job->group, "%s", p->id);
	snprintf(job->task, sizeof job->task, "%s", m->t.id);
	size_t others = 0;
	for (size_t i = 0; i < p->gi.n; i++)
		others += &p->gi.m[i] != m && !task_status_is_terminal(p->gi.m[i].t.status);
	char q[256];
	snprintf(q, sizeof q, ngettext("pick task %s (%s): approve it and end %zu other member? "
	                               "(y/n) ",
	                               "pick task %s (%s): approve it and end %zu other members? "
	                               "(y/n) ", others), m->t.id, m->t.agent, others);
	dash_ask(v->d, q, 0, NULL, pick_answer, job);
}

static int group_request(struct view *v, enum request req)
{
	struct group_priv *p = v->priv;
	const struct group_member *m = selected(v);
	switch (req) {
	case REQ_NONE:
		/* The selection moved (a click): follow it. */
		select_member(v);
		return 1;
	case REQ_ENTER:
		if (m)
			dash_open(v->d, &view_gate, m->t.id);
		return 1;
	case REQ_PICK:
		act_pick(v);
		return 1;
	case REQ_REQUEST_CHANGES:
		if (m)
			gate_view_request_changes(v->d, m->t.id);
		return 1;
	case REQ_CANCEL_TASK:
		if (m)
			tasks_view_cancel(v->d, m->t.id);
		return 1;
	case REQ_COPY:
		if (m)
			dash_copy_menu(v->d, m->t.id, NULL);
		return 1;
	case REQ_CONFIRM_TASK:
		/* The group as a whole; a member's own gate confirms it alone. */
		if (p->have && p->gi.n)
			tasks_view_confirm(v->d, p->gi.m[0].t.id, 1);
		return 1;
	default:
		if (view_scroll(v, req)) {
			select_member(v);
			return 1;
		}
		return 0;
	}
}

const struct view_ops view_group = {
	.name = "group",
	.flags = VIEW_STACKS,
	.priv_size = sizeof(struct group_priv),
	.open = group_open,
	.title = group_title,
	.draw = group_draw,
	.request = group_request,
	.refresh = group_refresh,
	.close = group_close,
	.next_pane = &view_log,
};
