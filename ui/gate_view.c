#include "autoconfig.h"
#include "view.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "dash.h"
#include "decide.h"
#include "i18n.h"
#include "sanitize.h"
#include "scheduler.h"
#include "source.h"
#include "units.h"

/* gate view: the gate summary of one task (what `paddock show` prints
 * under the task) as a scrollable list of lines, and the reviewer's
 * actions on it.  Everything shown that an agent or a test wrote goes
 * through screen_text, which makes control sequences inert; what the
 * reviewer approves (summary, changed paths, findings) shows every byte,
 * hidden ones as marks (sanitize_visible).  Long lines are cut with
 * marks, scrolled sideways or wrapped (w); the actions, and the names of
 * the findings that block, always wrap. */

enum gline_kind {
	GL_PLAIN,
	GL_FINDING,   /* a policy finding: OVERRIDE acts on it */
	GL_TESTS,     /* a tests line: Enter opens the log */
	GL_CHANGES,   /* a diffstat line: Enter opens the diff */
	GL_COMMENT    /* a comment of the review draft: Enter opens the diff */
};

struct gline {
	const char *label;     /* translated label in the left column, or NULL */
	char *text;
	enum role role;
	int indent;            /* extra columns before the text */
	enum gline_kind kind;
	char *finding;         /* GL_FINDING: its name */
	int block, overridden; /* GL_FINDING: a block finding; overridden */
	int visible;           /* what a reviewer approves (the agent's summary,
	                          the changed paths, findings): every byte shown,
	                          hidden ones as marks in the escaped role */
	int wrap;              /* wrapped even when lines are cut (w): what can
	                          be done and why not, which no one should have
	                          to scroll sideways to read */
};

struct gate_priv {
	struct gline *line;
	int n, cap;
	int labelw;            /* display width of the widest label */
	uint64_t sig;          /* what the lines were built from */
	int have;              /* sig and the fields below are valid */
	enum task_status status;
	int round;
	struct screen *row;    /* one line drawn whole, shown with screen_window */
};

/* ------------------------------------------------------------ lines */

static void lines_free(struct gate_priv *p)
{
	for (int i = 0; i < p->n; i++) {
		free(p->line[i].text);
		free(p->line[i].finding);
	}
	free(p->line);
	p->line = NULL;
	p->n = p->cap = 0;
}

static struct gline *add_len(struct gate_priv *p, const char *label, enum role role,
                             int indent, const char *text, size_t len)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 32;
		p->line = xrealloc(p->line, (size_t)p->cap * sizeof *p->line);
	}
	struct gline *l = &p->line[p->n++];
	memset(l, 0, sizeof *l);
	l->label = label;
	l->text = xstrndup(text ? text : "", text ? len : 0);
	l->role = role;
	l->indent = indent;
	return l;
}

static struct gline *add(struct gate_priv *p, const char *label, enum role role, int indent,
                         const char *text)
{
	return add_len(p, label, role, indent, text, text ? strlen(text) : 0);
}

/* Multi-line text: one line each, the label on the first only; a
 * trailing newline adds no empty line. */
static void add_block(struct gate_priv *p, const char *label, enum role role, int indent,
                      enum gline_kind kind, const char *text)
{
	const char *s = text;
	int first = 1;
	while (*s) {
		size_t n = strcspn(s, "\n");
		add_len(p, first ? label : NULL, role, indent, s, n)->kind = kind;
		first = 0;
		s += n + (s[n] == '\n');
	}
	if (first)
		add(p, label, role, indent, "")->kind = kind;
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static const char *tests_word(const struct gate_tests *t)
{
	if (!t->ran)
		return _("none");
	return t->passed ? _("passed") : _("failed");
}

static enum role tests_role(const struct gate_tests *t)
{
	if (!t->ran)
		return ROLE_DIM;
	return t->passed ? ROLE_GATE_OK : ROLE_ERROR;
}

/* One test run's result, e.g. "after (clean checkout): passed". */
static void add_result(struct gate_priv *p, const char *label, const char *which,
                       const struct gate_tests *t)
{
	struct buf b = {0};
	buf_printf(&b, "%s %s", which, tests_word(t));
	if (t->exited && t->code != 0)
		buf_printf(&b, _(" (exit status %lld)"), (long long)t->code);
	add(p, label, tests_role(t), 0, b.data)->kind = GL_TESTS;
	buf_free(&b);
}

/* One test run's result, then the tail of its output and its log; nothing
 * when it has neither. */
static int add_tail(struct gate_priv *p, const char *label, const char *which,
                    const struct gate_tests *t)
{
	const char *tail = str(t->tail), *log = str(t->log);
	if (!*tail && !*log)
		return 0;
	add_result(p, label, which, t);
	if (*tail)
		add_block(p, NULL, ROLE_DIM, 2, GL_TESTS, tail);
	if (*log) {
		char *s = xasprintf(_("log: %s"), log);
		add(p, NULL, ROLE_DIM, 2, s)->kind = GL_TESTS;
		free(s);
	}
	return 1;
}

static void add_fmt(struct gate_priv *p, enum role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An action line: always wrapped. */
static void add_fmt(struct gate_priv *p, enum role role, const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	add(p, NULL, role, 0, b.data)->wrap = 1;
	buf_free(&b);
}

/* A pull request that failed to open: how often, the last why, the
 * scheduler's next try. */
static void add_pr_failure(struct gate_priv *p, const struct task_row *t)
{
	char when[32] = "";
	if (t->pr_retry_at > 0) {
		time_t at = (time_t)t->pr_retry_at;
		struct tm tm;
		localtime_r(&at, &tm);
		strftime(when, sizeof when, "%H:%M:%S", &tm);
	}
	char *line = *when
		? xasprintf(ngettext("failed %d time, next try at %s",
		                     "failed %d times, next try at %s", t->pr_attempts),
		            t->pr_attempts, when)
		: xasprintf(ngettext("failed %d time", "failed %d times", t->pr_attempts),
		            t->pr_attempts);
	add(p, _("pull req"), ROLE_FINDING_WARN, 0, line);
	add(p, NULL, ROLE_NORMAL, 0, t->pr_error);
	free(line);
}

/* The actions at review, first: what can be done now, and approve shown
 * as unavailable, with why, while a finding blocks or a request waits. */
static void add_actions(struct view *v, const struct task_row *t, const struct gate_summary *g,
                        size_t ndraft)
{
	struct gate_priv *p = v->priv;
	struct dash *d = v->d;
	if (t->status == TASK_QUEUED && t->confirm && !strcmp(t->confirm, "needed")) {
		char ky[32];
		keymap_first_key(d->keys, REQ_CONFIRM_TASK, ky, sizeof ky);
		add_fmt(p, ROLE_FINDING_WARN, _("%s confirm - it waits for a confirmation of its "
		                                "estimated cost"), ky);
		return;
	}
	if (t->status == TASK_DONE && t->pr_error && !t->pr_url) {
		char kq[32];
		keymap_first_key(d->keys, REQ_PR_RETRY, kq, sizeof kq);
		add_fmt(p, ROLE_FINDING_WARN, _("%s pull request - try again now (it failed to open)"),
		        kq);
		add_pr_failure(p, t);
		return;
	}
	if (t->status != TASK_REVIEW)
		return;
	char ka[32], kr[32], kp[32], kx[32], ko[32], kf[32], kd[32];
	keymap_first_key(d->keys, REQ_APPROVE, ka, sizeof ka);
	keymap_first_key(d->keys, REQ_REQUEST_CHANGES, kr, sizeof kr);
	keymap_first_key(d->keys, REQ_PUSH, kp, sizeof kp);
	keymap_first_key(d->keys, REQ_REJECT, kx, sizeof kx);
	keymap_first_key(d->keys, REQ_OVERRIDE, ko, sizeof ko);
	keymap_first_key(d->keys, REQ_NEXT_FINDING, kf, sizeof kf);
	keymap_first_key(d->keys, REQ_DISCARD_DRAFT, kd, sizeof kd);
	struct buf blocking = {0};
	gate_blocking(g, &blocking);
	if (t->pending) {
		add_fmt(p, ROLE_NOTICE, _("%s approve - unavailable: changes were requested; round "
		                          "%d is next"), ka, t->round + 1);
	} else if (blocking.len) {
		add_fmt(p, ROLE_FINDING_BLOCK, _("%s approve - unavailable: a block finding stands "
		                                 "(%s overrides it)"), ka, ko);
		add_fmt(p, ROLE_DIM, _("%s request changes   %s reject   %s next finding"), kr, kx,
		        kf);
	} else if (g->nfindings) {
		add_fmt(p, ROLE_DIM, _("%s approve   %s request changes   %s push   %s reject   "
		                       "%s next finding"), ka, kr, kp, kx, kf);
	} else {
		add_fmt(p, ROLE_DIM, _("%s approve   %s request changes   %s push   %s reject"), ka,
		        kr, kp, kx);
	}
	buf_free(&blocking);
	if (ndraft && !t->pending)
		add_fmt(p, ROLE_NOTICE, ngettext("review draft: %zu comment   %s sends it   "
		                                 "%s discards it",
		                                 "review draft: %zu comments   %s sends them   "
		                                 "%s discards them", ndraft), ndraft, kr, kd);
}

/* The review draft's comments: where and the line, then the comment. */
static void add_draft(struct gate_priv *p, const struct review_comment *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *at = xasprintf(c[i].old ? _("%s:%ld (removed): %s") : "%s:%ld: %s",
		                     str(c[i].path), c[i].line, str(c[i].text));
		struct gline *l = add(p, i ? NULL : _("draft"), ROLE_DIM, 0, at);
		free(at);
		l->kind = GL_COMMENT;
		l->visible = 1;
		int from = p->n;
		add_block(p, NULL, ROLE_NORMAL, 2, GL_COMMENT, str(c[i].comment));
		for (int k = from; k < p->n; k++)
			p->line[k].visible = 1;
	}
}

/* The rounds in order, each with its work and the decisions on it. */
static void add_rounds(struct gate_priv *p, struct source *st, const struct task_row *t)
{
	struct err e = {{0}};
	struct task_history h;
	if (source_history(st, t->id, &h, &e) < 0) {
		add(p, _("rounds"), ROLE_ERROR, 0, e.msg);
		return;
	}
	if (h.last)
		add(p, _("rounds"), ROLE_HEADER, 0, "");
	for (int n = 1; n <= h.last; n++) {
		char *s = task_history_round_text(&h, n);
		add(p, NULL, ROLE_NORMAL, 2, s);
		free(s);
		for (size_t k = 0; k < h.ndecisions; k++) {
			const struct task_decision *d = &h.decisions[k];
			if (d->round != n)
				continue;
			struct buf b = {0};
			char *text = task_decision_text(d);
			buf_printf(&b, "%s", text);
			free(text);
			/* Notes: the first line with the decision, the rest under it. */
			const char *notes = d->notes ? d->notes : "";
			size_t first = strcspn(notes, "\n");
			if (first)
				buf_printf(&b, ": %.*s", (int)first, notes);
			add(p, NULL, ROLE_NORMAL, 5, b.data);
			buf_free(&b);
			if (notes[first] == '\n' && notes[first + 1])
				add_block(p, NULL, ROLE_NORMAL, 7, GL_PLAIN, notes + first + 1);
		}
	}
	task_history_free(&h);
}

/* The model use: tokens, requests, cost (and the budget that applies). */
static void add_usage(struct gate_priv *p, const struct config *cfg, const struct task_row *t)
{
	const struct task_usage *u = &t->usage;
	if (!u->requests && !u->in && !u->out && u->cost <= 0)
		return;
	struct buf b = {0};
	buf_printf(&b, _("%llu tokens in, %llu out, cache %llu read, %llu written; "
	                 "%llu requests; "),
	           (unsigned long long)u->in, (unsigned long long)u->out,
	           (unsigned long long)u->cache_read, (unsigned long long)u->cache_write,
	           (unsigned long long)u->requests);
	char usd[32];
	units_format_money(u->cost, 4, usd, sizeof usd);
	if (u->priced || u->cost > 0)
		buf_printf(&b, "$%s", usd);
	if (!u->priced)
		buf_printf(&b, "%s%s", u->cost > 0 ? " " : "",
		           u->cost > 0 ? _("(some models not priced)") : _("not priced"));
	double budget = t->budget >= 0 ? t->budget : cfg ? cfg->limits.budget : 0;
	units_format_money(budget, 2, usd, sizeof usd);
	if (budget > 0)
		buf_printf(&b, _(" of $%s"), usd);
	add(p, _("usage"), ROLE_NORMAL, 0, b.data);
	buf_free(&b);
}

/* The egress summary: how many requests were allowed and refused, then
 * each refused destination with how often and why. */
static void add_egress(struct gate_priv *p, struct source *st, const struct task_row *t)
{
	struct err e = {{0}};
	struct egress_row *r;
	size_t n;
	if (source_egress_list(st, t->id, &r, &n, &e) < 0) {
		add(p, _("egress"), ROLE_ERROR, 0, e.msg);
		return;
	}
	if (n == 0)
		return;
	size_t refused = 0, allowed = 0;
	for (size_t i = 0; i < n; i++) {
		refused += r[i].verdict && !strcmp(r[i].verdict, "refused");
		allowed += r[i].verdict && !strcmp(r[i].verdict, "allowed");
	}
	char *s = xasprintf(_("%zu allowed, %zu refused"), allowed, refused);
	add(p, _("egress"), refused ? ROLE_FINDING_WARN : ROLE_NORMAL, 0, s);
	free(s);
	/* One line per refused destination, in the order first refused. */
	for (size_t i = 0; i < n; i++) {
		if (!r[i].verdict || strcmp(r[i].verdict, "refused"))
			continue;
		const char *host = r[i].host ? r[i].host : "?";
		int seen = 0;
		size_t times = 0;
		for (size_t k = 0; k < n; k++) {
			if (!r[k].verdict || strcmp(r[k].verdict, "refused") || r[k].port != r[i].port ||
			    strcmp(r[k].host ? r[k].host : "?", host))
				continue;
			if (k < i)
				seen = 1;
			times++;
		}
		if (seen)
			continue;
		struct buf b = {0};
		buf_printf(&b, "%s", host);
		if (r[i].port)
			buf_printf(&b, ":%d", r[i].port);
		if (times > 1)
			buf_printf(&b, _(" (%zu times)"), times);
		if (r[i].reason)
			buf_printf(&b, "  %s", r[i].reason);
		add(p, NULL, ROLE_FINDING_WARN, 2, b.data);
		buf_free(&b);
	}
	source_egress_free(r, n);
}

/* What the task is: its branch, status and round (and a round that
 * changed nothing), why it is back at review, why it ended. */
static void build_state(struct view *v, const struct task_row *t, const struct gate_summary *g)
{
	struct gate_priv *p = v->priv;
	if (t->failed_round && t->status == TASK_REVIEW) {
		/* The round after this one did not reach review: right under
		 * the actions, since it is why the task is back here. */
		char k[64];
		keymap_first_key(v->d->keys, REQ_REQUEST_CHANGES, k, sizeof k);
		/* Its first line says why; the test output after it is in
		 * the log. */
		const char *why = t->failed_why ? t->failed_why : "?";
		char *first = xstrndup(why, strcspn(why, "\n"));
		char *f = xasprintf(_("round %d did not reach review;\n"
		                      "this is round %d's work.\n"
		                      "%s: send the notes again\n%s"), t->failed_round, t->round, k,
		                    first);
		free(first);
		add_block(p, _("retry"), ROLE_ERROR, 0, GL_PLAIN, f);
		free(f);
	}
	if (t->branch && *t->branch)
		add(p, _("branch"), ROLE_NORMAL, 0, t->branch);
	add(p, _("status"), view_status_role(t->status), 0, task_status_label(t->status));
	char *s = xasprintf("%d", t->round);
	add(p, _("round"), ROLE_NORMAL, 0, s);
	free(s);
	if (gate_round_unchanged(g)) {
		s = xasprintf(_("round %d changed nothing: no new commit since round %d"), g->round,
		              g->round - 1);
		add(p, NULL, ROLE_NOTICE, 0, s);
		free(s);
	}
	if (t->dry_run)
		add(p, _("mode"), ROLE_NOTICE, 0, _("dry run: approve records what it would push, "
		                                    "and pushes nothing"));
	if (t->approval && strcmp(t->approval, "review") != 0)
		add(p, _("approval"), ROLE_NORMAL, 0, t->approval);
	if (t->sandbox_kept)
		add(p, NULL, ROLE_DIM, 0, _("sandbox kept for the next round"));
	if (t->pending)
		add(p, NULL, ROLE_NOTICE, 0, _("changes requested; waiting for the scheduler"));
	/* A rejected or cancelled task's "error" only says how it ended. */
	if (t->error && *t->error)
		add_block(p, _("error"), t->status == TASK_FAILED || t->status == TASK_LOST ?
		          ROLE_ERROR : view_status_role(t->status), 0, GL_PLAIN, t->error);
	if (t->reason && *t->reason)
		add(p, _("reason"), ROLE_ERROR, 0, task_reason_label(t->reason));
}

/* The verification: a mismatch of the two runs first, then the result
 * on a clean checkout, the base's and the agent's own. */
static void build_verify(struct gate_priv *p, const struct gate_summary *g)
{
	const char *mismatch = gate_mismatch(g);
	if (mismatch)
		add_block(p, _("warning"), g->tests.after.passed ? ROLE_NOTICE : ROLE_ERROR,
		          0, GL_TESTS, mismatch);
	const struct gate_tests *after = &g->tests.after;
	add_result(p, _("tests"), after->verified ? _("after (clean checkout):") : _("after:"),
	           after);
	add_result(p, NULL, _("before:"), &g->tests.before);
	const struct gate_tests *agent = &g->tests.agent;
	if (agent->ran) {
		char *a = xasprintf("%s %s", _("agent's run:"), tests_word(agent));
		add(p, NULL, tests_role(agent), 0, a)->kind = GL_TESTS;
		free(a);
	}
}

/* The agent's summary and the round's changes: every byte shown. */
static void build_summary(struct gate_priv *p, const struct task_row *t,
                          const struct gate_summary *g)
{
	const char *summary = t->summary && *t->summary ? t->summary : str(g->summary);
	const char *stat = str(g->diffstat);
	int from = p->n;
	if (*summary)
		add_block(p, _("summary"), ROLE_NORMAL, 0, GL_PLAIN, summary);
	if (*stat)
		add_block(p, _("changes"), ROLE_NORMAL, 0, GL_CHANGES, stat);
	for (int k = from; k < p->n; k++)
		p->line[k].visible = 1;
}

/* The tests' output: each run's tail and log. */
static void build_output(struct gate_priv *p, const struct gate_summary *g)
{
	const struct gate_tests *after = &g->tests.after;
	int any = add_tail(p, _("output"), _("before:"), &g->tests.before);
	add_tail(p, any ? NULL : _("output"),
	         after->verified ? _("after (clean checkout):") : _("after:"), after);
}

/* One finding's selectable line: the mark of an overridden one before
 * its name and detail, which may be long, so that a cut line still says
 * it. */
static void add_finding(struct gate_priv *p, const struct gate_finding *f)
{
	int block = f->action == POLICY_BLOCK;
	int over = f->overridden;
	struct buf b = {0};
	buf_printf(&b, "%-5s  ", gate_action_name(f->action));
	if (over)
		buf_printf(&b, "%s  ", _("[overridden]"));
	buf_printf(&b, "%s  %s", str(f->name), str(f->detail));
	/* A multi-line detail stays on its finding's line. */
	for (size_t k = 0; k < b.len; k++)
		if (b.data[k] == '\n')
			b.data[k] = ' ';
	struct gline *l = add(p, NULL, over ? ROLE_DIM : block ? ROLE_FINDING_BLOCK
	                                                      : ROLE_FINDING_WARN,
	                      2, b.data);
	l->kind = GL_FINDING;
	l->visible = 1;
	l->finding = xstrdup(str(f->name));
	l->block = block;
	l->overridden = over;
	buf_free(&b);
}

/* The policy's findings, one selectable line each, standing blocks
 * first (gate_finding_rank). */
static void build_findings(struct gate_priv *p, const struct gate_summary *g)
{
	if (g->nfindings) {
		struct buf blocking = {0};
		gate_blocking(g, &blocking);
		char *head = blocking.len ? xasprintf(_("blocking: %s"), blocking.data)
		                          : xstrdup("");
		add(p, _("findings"), blocking.len ? ROLE_FINDING_BLOCK : ROLE_HEADER, 0, head)
			->wrap = blocking.len > 0;
		free(head);
		buf_free(&blocking);
	}
	for (int rank = 0; rank < GATE_FINDING_RANKS; rank++)
		for (size_t i = 0; i < g->nfindings; i++)
			if (gate_finding_rank(&g->findings[i]) == rank)
				add_finding(p, &g->findings[i]);
}

/* The parts of the output contract, in their order. */
static void build_contract(struct gate_priv *p, const struct gate_summary *g)
{
	if (!g->has_contract)
		return;
	const struct { const char *name; int met; } parts[] = {
		{ "change", g->contract.change }, { "tests", g->contract.tests },
		{ "bundle", g->contract.bundle },
	};
	int all = 1;
	struct buf b = {0};
	for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
		buf_printf(&b, "%s%s: %s", b.len ? "  " : "", parts[k].name,
		           parts[k].met ? _("yes") : _("no"));
		all &= parts[k].met;
	}
	add(p, _("contract"), all ? ROLE_GATE_OK : ROLE_ERROR, 0, b.data);
	buf_free(&b);
}

/* Builds the lines, what decides first: the actions, the task's state,
 * the contract and the findings, the verification, the review draft, the
 * summary and changes, the tests' output, then the rest. */
static void build(struct view *v, struct source *st, const struct task_row *t)
{
	struct gate_priv *p = v->priv;
	lines_free(p);
	p->status = t->status;
	p->round = t->round;
	struct err e = {{0}};
	struct gate_summary g;
	int have = source_gate_summary(st, t, &g, &e) > 0;
	struct review_comment *c = NULL;
	size_t nc = 0;
	if (source_draft_list(st, t->id, &c, &nc, &e) < 0)
		nc = 0;

	add_actions(v, t, &g, nc);
	build_state(v, t, &g);
	if (have) {
		build_contract(p, &g);
		build_findings(p, &g);
		build_verify(p, &g);
	} else if (t->status != TASK_REVIEW) {
		add(p, _("gate"), ROLE_DIM, 0, _("no gate summary yet"));
	}
	add_draft(p, c, nc);
	source_draft_free(c, nc);
	build_summary(p, t, &g);
	if (have)
		build_output(p, &g);
	add_usage(p, v->d->cfg, t);
	add_egress(p, st, t);
	if (t->pr_url) {
		char *w = source_pr_words(st, t->id);
		char *line = w ? xasprintf("%s (%s)", t->pr_url, w) : NULL;
		add(p, _("pull req"), ROLE_NORMAL, 0, line ? line : t->pr_url);
		free(line);
		free(w);
	}
	if (t->pushed)
		add(p, _("pushed"), ROLE_NORMAL, 0, t->pushed);
	gate_summary_free(&g);
	add_rounds(p, st, t);

	p->labelw = 0;
	for (int i = 0; i < p->n; i++)
		if (p->line[i].label) {
			int w = screen_textwidth(p->line[i].label, strlen(p->line[i].label));
			if (w > p->labelw)
				p->labelw = w;
		}
	v->lines = p->n;
}
/* ------------------------------------------------------------ loading */

static void sig_mix(uint64_t *h, const void *data, size_t len)
{
	const unsigned char *c = data;
	for (size_t i = 0; i < len; i++)
		*h = (*h ^ c[i]) * 1099511628211ULL;
	*h = (*h ^ 0xff) * 1099511628211ULL;
}

static void sig_str(uint64_t *h, const char *s)
{
	sig_mix(h, s ? s : "\1", s ? strlen(s) : 1);
}

/* What the lines depend on: the row (its `updated` moves with the status)
 * and the decisions, which an override adds without a transition. */
static uint64_t signature(struct source *st, const struct task_row *t)
{
	uint64_t h = 14695981039346656037ULL;
	struct err e;
	int ints[] = { (int)t->status, t->round, t->sandbox_kept };
	sig_mix(&h, ints, sizeof ints);
	sig_mix(&h, &t->updated, sizeof t->updated);
	sig_str(&h, t->pending);
	sig_str(&h, t->pr_url);
	sig_str(&h, t->pushed);
	sig_str(&h, t->summary);
	sig_str(&h, t->error);
	sig_str(&h, t->reason);
	/* Usage and egress records come without a transition. */
	uint64_t use[] = { t->usage.in, t->usage.out, t->usage.cache_read, t->usage.cache_write,
	                   t->usage.requests, (uint64_t)t->usage.priced };
	sig_mix(&h, use, sizeof use);
	sig_mix(&h, &t->usage.cost, sizeof t->usage.cost);
	size_t ne = 0;
	if (source_egress_count(st, t->id, &ne, &e) == 0)
		sig_mix(&h, &ne, sizeof ne);
	struct task_decision *d = NULL;
	size_t nd = 0;
	if (source_decisions(st, t->id, &d, &nd, &e) == 0) {
		sig_mix(&h, &nd, sizeof nd);
		task_decisions_free(d, nd);
	}
	/* The review draft, which another view or process changes. */
	struct review_comment *c = NULL;
	size_t nc = 0;
	if (source_draft_list(st, t->id, &c, &nc, &e) == 0) {
		sig_mix(&h, &nc, sizeof nc);
		for (size_t i = 0; i < nc; i++)
			sig_mix(&h, &c[i].n, sizeof c[i].n);
		source_draft_free(c, nc);
	}
	return h;
}

/* The selected finding's name, to keep the selection on it. */
static char *selected_finding(struct view *v)
{
	struct gate_priv *p = v->priv;
	if (v->sel >= 0 && v->sel < p->n && p->line[v->sel].kind == GL_FINDING)
		return xstrdup(p->line[v->sel].finding);
	return NULL;
}

/* Reloads; rebuilds the lines when the task changed.  -1 with the
 * store's message when the task cannot be read. */
static int load(struct view *v, struct err *e)
{
	struct gate_priv *p = v->priv;
	struct task_row t;
	if (source_task_get(v->d->src, v->task_id, &t, e) < 0)
		return -1;
	uint64_t sig = signature(v->d->src, &t);
	if (!p->have || sig != p->sig) {
		char *keep = selected_finding(v);
		int was = v->sel;
		build(v, v->d->src, &t);
		p->sig = sig;
		p->have = 1;
		snprintf(v->task_id, sizeof v->task_id, "%s", t.id);
		v->sel = was < 0 ? 0 : was;
		for (int i = 0; keep && i < p->n; i++)
			if (p->line[i].kind == GL_FINDING && !strcmp(p->line[i].finding, keep))
				v->sel = i;
		free(keep);
		if (v->sel >= v->lines)
			v->sel = v->lines - 1;
		view_clamp(v);
	}
	task_row_free(&t);
	return 0;
}

static int gate_open(struct view *v, char *msg, size_t msglen)
{
	struct err e = {{0}};
	v->sel = 0;
	v->top = 0;
	if (!v->task_id[0]) {
		snprintf(msg, msglen, "%s", _("select a task to see its gate"));
		return -1;
	}
	if (load(v, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	return 0;
}

static void gate_refresh(struct view *v)
{
	struct err e;
	/* A task that vanished keeps its last lines on screen. */
	load(v, &e);
}

static void gate_close(struct view *v)
{
	struct gate_priv *p = v->priv;
	lines_free(p);
	screen_free(p->row);
	p->row = NULL;
}

static void gate_title(struct view *v, char *out, size_t len)
{
	struct gate_priv *p = v->priv;
	if (!p->have) {
		snprintf(out, len, _("gate %s"), v->task_id);
		return;
	}
	snprintf(out, len, _("gate %s  %s  round %d"), v->task_id, task_status_label(p->status),
	         p->round);
}

/* Draws line l whole (as far as a window of it needs: w columns from
 * v->left, or all of it when wrapped) into p->row; returns its width there.
 * What a reviewer approves shows its hidden characters as marks
 * (sanitize_visible) in the escaped role. */
static int render(struct view *v, const struct gline *l, int w, int wrap)
{
	struct gate_priv *p = v->priv;
	struct buf vis = {0};
	struct sanitize_segs segs = {0};
	const char *text = l->text;
	size_t len = strlen(text);
	if (l->visible) {
		sanitize_visible(text, len, SANITIZE_KEEP_TAB, &vis, &segs);
		text = vis.data ? vis.data : "";
		len = vis.len;
	}
	int width = wrap ? screen_textwidth(text, len) : v->left + w + 1;
	p->row = screen_line(p->row, width);
	int x = 0;
	if (!l->visible) {
		x = screen_text(p->row, 0, 0, width, l->role, text, len);
	} else {
		for (size_t k = 0; k < segs.n && x < width; k++)
			x += screen_text(p->row, x, 0, width - x, segs.v[k].mark ? ROLE_ESCAPED : l->role,
			                 text + segs.v[k].out, segs.v[k].len);
	}
	buf_free(&vis);
	sanitize_segs_free(&segs);
	return x;
}

/* The column line l's text starts at. */
static int text_x(const struct gate_priv *p, const struct gline *l)
{
	return 1 + (p->labelw ? p->labelw + 2 : 0) + l->indent;
}

/* The rows line i takes on a screen w columns wide. */
static int line_rows(struct view *v, int i, int w)
{
	struct gate_priv *p = v->priv;
	const struct gline *l = &p->line[i];
	if (!v->wrap && !l->wrap)
		return 1;
	int tw = w - text_x(p, l);
	if (tw < 1)
		return 1;
	int used = render(v, l, tw, 1);
	return screen_window(NULL, 0, 0, tw, 0, p->row, used, 0, SCREEN_TEXT_WRAP);
}

static void gate_draw(struct view *v, struct screen *s, int y, int h)
{
	struct gate_priv *p = v->priv;
	int w = screen_width(s);
	v->height = h;
	v->width = w;
	view_clamp(v);
	/* Wrapped lines take more rows: the selection stays on screen. */
	if (v->sel > v->top) {
		int rows = 0;
		for (int i = v->top; i <= v->sel; i++)
			rows += line_rows(v, i, w);
		for (; v->top < v->sel && rows > h; v->top++)
			rows -= line_rows(v, v->top, w);
	}
	v->more_right = 0;
	for (int i = v->top, r = 0; i >= 0 && i < p->n && r < h; i++) {
		const struct gline *l = &p->line[i];
		if (l->label)
			screen_str(s, 1, y + r, p->labelw, ROLE_HEADER, l->label);
		int x = text_x(p, l), rows = 1, wrap = v->wrap || l->wrap;
		int flags = SCREEN_TEXT_MARKS | (wrap ? SCREEN_TEXT_WRAP : 0);
		if (x < w) {
			int used = render(v, l, w - x, wrap);
			rows = wrap ? screen_window(NULL, 0, 0, w - x, 0, p->row, used, 0, flags) : 1;
			if (rows > h - r)
				rows = h - r;
			int n = screen_window(s, x, y + r, w - x, rows, p->row, used, v->left, flags);
			v->more_right |= !wrap && n > v->left + w - x;
		}
		for (int k = 0; i == v->sel && k < rows; k++)
			screen_paint(s, 0, y + r + k, w, ROLE_CURSOR);
		r += rows;
	}
}

/* ------------------------------------------------------------ actions */

/* A push or an approval, in the dashboard's job (dash_background). */
struct gate_job {
	const char *id;
	const char *verb;          /* "approve", "push" or "pr" */
};

/* "a\nb\n" -> "a; b" */
static void one_line(const char *text, char *out, size_t len)
{
	struct buf b = {0};
	for (const char *s = text ? text : ""; *s;) {
		size_t k = strcspn(s, "\n");
		if (k) {
			buf_adds(&b, b.len ? "; " : "");
			buf_add(&b, s, k);
		}
		s += k + (s[k] == '\n');
	}
	snprintf(out, len, "%s", b.data ? b.data : "");
	buf_free(&b);
}

int gate_view_run(struct dash *d,
                  int (*verb)(struct source *src, const void *arg, struct buf *out,
                              struct err *e),
                  const void *arg, char *msg, size_t msglen)
{
	struct err e = {{0}};
	struct source *src = source_for_job(d->cfg, d->data_dir, &e);
	if (!src) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	struct buf out = {0};
	int rc = verb(src, arg, &out, &e);
	/* > 0: done, with what went wrong after (a pull request that did
	 * not open). */
	if (rc != 0) {
		snprintf(msg, msglen, "%s", e.msg);
	} else {
		char facts[400];
		one_line(out.data, facts, sizeof facts);
		snprintf(msg, msglen, "%s", facts);
	}
	buf_free(&out);
	source_close(src);
	return rc;
}

/* The source's approve, push or pr (source_approve). */
static int gate_job_verb(struct source *src, const void *arg, struct buf *out, struct err *e)
{
	const struct gate_job *job = arg;
	return source_approve(src, job->verb, job->id, out, e);
}

int gate_view_job(struct dash *d, char *const *args, char *msg, size_t msglen)
{
	const struct gate_job job = { .id = args[1], .verb = args[0] };
	int approve = !strcmp(job.verb, "approve"), pr = !strcmp(job.verb, "pr");
	int rc = gate_view_run(d, gate_job_verb, &job, msg, msglen);
	if (rc >= 0 && !pr) {
		char facts[400];
		snprintf(facts, sizeof facts, "%s", msg);
		snprintf(msg, msglen, approve ? _("approved task %s: %s")
		                              : _("pushed task %s: %s"), job.id, facts);
	}
	return rc;
}

/* verb: "approve", "push" or "pr" (the pull request again). */
static void start_job(struct dash *d, const char *id, const char *verb)
{
	char what[192], owner[64];
	snprintf(what, sizeof what, !strcmp(verb, "approve") ? _("approving task %s")
	                            : !strcmp(verb, "push") ? _("pushing task %s")
	                            : _("opening the pull request of task %s"), id);
	/* Not hosting the scheduler: the process that does carries it out. */
	if (!d->sched && strcmp(verb, "pr") && source_store(d->src) &&
	    scheduler_owner(d->data_dir, owner, sizeof owner)) {
		char *who = decide_owner_text(owner);
		size_t n = strlen(what);
		snprintf(what + n, sizeof what - n, _(" (recorded for %s, which carries it out)"), who);
		free(who);
	}
	const char *args[] = { verb, id };
	dash_background(d, what, "gate", args);
}

/* The question being asked (dash_ask asks one at a time). */
static struct {
	char id[TASK_ID_LEN + 1];
	char *finding;
} ask;

static void ask_set(const char *id, const char *finding)
{
	snprintf(ask.id, sizeof ask.id, "%s", id);
	free(ask.finding);
	ask.finding = finding ? xstrdup(finding) : NULL;
}

static int blank(const char *s)
{
	return !s || strspn(s, " \t\r\n") == strlen(s);
}

static void cancelled(struct dash *d)
{
	dash_message(d, ROLE_DIM, "%s", C_("prompt", "cancelled"));
}

/* The start of an answer that acts on the gate: none (Escape) cancels
 * and returns 0. */
static int gate_answer(struct dash *d, const char *text)
{
	if (!text) {
		cancelled(d);
		return 0;
	}
	return 1;
}

/* The end of one: the gate verb's error, or notice (which it frees). */
static void gate_outcome(struct dash *d, int rc, const struct err *e, char *notice)
{
	if (rc < 0)
		dash_message(d, ROLE_ERROR, "%s", e->msg);
	else
		dash_message(d, ROLE_NOTICE, "%s", notice);
	free(notice);
}

static void approve_done(struct dash *d, void *arg, const char *text)
{
	(void)arg;
	if (!text || rpmatch(text) != 1) {
		cancelled(d);
		return;
	}
	start_job(d, ask.id, "approve");
}

static void reject_done(struct dash *d, void *arg, const char *text)
{
	struct err e = {{0}};
	(void)arg;
	if (gate_answer(d, text))
		gate_outcome(d, source_reject(d->src, ask.id, blank(text) ? NULL : text, &e), &e,
		             xasprintf(_("rejected task %s; its branch stays in the mirror"), ask.id));
}

/* Reject ends the task: asked first, like approve. */
static void reject_confirm(struct dash *d, void *arg, const char *text)
{
	(void)arg;
	if (!text || rpmatch(text) != 1) {
		cancelled(d);
		return;
	}
	char q[160];
	snprintf(q, sizeof q, _("reject task %s; notes (optional): "), ask.id);
	dash_ask(d, q, 0, NULL, reject_done, NULL);
}

static void follow_up_done(struct dash *d, void *arg, const char *text)
{
	struct err e = {{0}};
	char nid[TASK_ID_LEN + 1];
	(void)arg;
	if (gate_answer(d, text)) {
		int rc = source_follow_up(d->src, ask.id, text, nid, &e);
		if (rc < 0) {
			/* As changes_done: the notes stay in the editor. */
			dash_ask_again(d, ROLE_ERROR, "%s", e.msg);
			return;
		}
		gate_outcome(d, rc, &e, rc < 0 ? NULL : xasprintf(_("queued %s: it follows up "
		                                                    "task %s"), nid, ask.id));
	}
}

static void override_done(struct dash *d, void *arg, const char *text)
{
	(void)arg;
	if (!text || !ask.finding) {
		cancelled(d);
		free(ask.finding);
		ask.finding = NULL;
		return;
	}
	struct err e = {{0}};
	gate_outcome(d, source_override(d->src, ask.id, ask.finding, blank(text) ? NULL : text,
	                                &e), &e,
	             xasprintf(_("overrode finding %s of task %s"), ask.finding, ask.id));
	free(ask.finding);
	ask.finding = NULL;
}

/* Refuses an approval or a push at once when the task is not at review
 * or a finding blocks it, rather than asking first; the engine checks
 * again when it runs. */
static int refused_task(struct dash *d, const char *id, const char *action, int findings)
{
	struct err e = {{0}};
	struct task_row t;
	if (source_task_get(d->src, id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return 1;
	}
	int no = 1;
	if (t.status != TASK_REVIEW) {
		dash_message(d, ROLE_ERROR, _("cannot %s task %s: it is %s, not at review"), action,
		             t.id, task_status_label(t.status));
	} else if (t.pending) {
		dash_message(d, ROLE_ERROR, _("cannot %s task %s: changes were requested and the "
		                              "agent is about to run round %d"), action, t.id,
		             t.round + 1);
	} else if (!findings) {
		no = 0;
	} else {
		struct gate_summary g;
		struct buf b = {0};
		if (source_gate_summary(d->src, &t, &g, &e) > 0)
			gate_blocking(&g, &b);
		gate_summary_free(&g);
		if (b.len) {
			char k[64];
			keymap_first_key(d->keys, REQ_OVERRIDE, k, sizeof k);
			dash_message(d, ROLE_ERROR, _("cannot %s task %s: policy findings block it: "
			                              "%s; select one and press %s to override it"),
			             action, t.id, b.data, k);
		} else {
			no = 0;
		}
		buf_free(&b);
	}
	task_row_free(&t);
	return no;
}

static int refused(struct view *v, const char *action)
{
	return refused_task(v->d, v->task_id, action, 1);
}

/* ---- the review draft ---- */

struct draft_ask {
	char id[TASK_ID_LEN + 1];
	long long upto;            /* the last comment the reviewer was told of */
	size_t n;
};

static void changes_done(struct dash *d, void *arg, const char *text)
{
	struct draft_ask *a = arg;
	struct err e = {{0}};
	size_t sent = 0;
	if (!text) {
		if (a->n)
			dash_message(d, ROLE_DIM, "%s", _("cancelled; the review draft is kept"));
		else
			cancelled(d);
	} else {
		int rc = source_request_changes(d->src, a->id, text, &sent, &e);
		if (rc < 0) {
			/* The notes stay in the editor, and the keys with it
			 * rather than with the gate behind (A, X, d). */
			dash_ask_again(d, ROLE_ERROR, "%s", e.msg);
			return;
		}
		gate_outcome(d, rc, &e, rc < 0 ? NULL : sent
		             ? xasprintf(ngettext("changes requested on task %s with %zu comment "
		                                  "of the review draft; its agent runs another round",
		                                  "changes requested on task %s with %zu comments "
		                                  "of the review draft; its agent runs another round",
		                                  sent), a->id, sent)
		             : xasprintf(_("changes requested on task %s; its agent runs another "
		                           "round"), a->id));
	}
	free(a);
}

void gate_view_request_changes(struct dash *d, const char *task_id)
{
	if (refused_task(d, task_id, _("request changes on"), 0))
		return;
	struct task_row t;
	struct err e = {{0}};
	char *again = NULL;
	size_t n = 0;
	if (source_task_get(d->src, task_id, &t, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	/* After a round that did not reach review, its notes are ready to
	 * send again: one more key. */
	if (t.failed_round)
		again = source_last_notes(d->src, t.id, &e);
	source_draft_count(d->src, t.id, &n, &e);
	struct draft_ask *a = xcalloc(1, sizeof *a);
	snprintf(a->id, sizeof a->id, "%s", t.id);
	a->n = n;
	task_row_free(&t);
	char *q = n ? xasprintf(ngettext("changes for %s with the draft's %zu comment; notes "
	                                 "(optional): ",
	                                 "changes for %s with the draft's %zu comments; notes "
	                                 "(optional): ", n), a->id, n)
	            : xasprintf(_("changes for task %s (what should the agent do?): "), a->id);
	dash_ask(d, q, 1, again, changes_done, a);
	free(q);
	free(again);
}

static void discard_done(struct dash *d, void *arg, const char *text)
{
	struct draft_ask *a = arg;
	struct err e = {{0}};
	if (!text || rpmatch(text) != 1) {
		dash_message(d, ROLE_DIM, ngettext("kept the review draft of %zu comment",
		                                   "kept the review draft of %zu comments", a->n),
		             a->n);
	} else {
		int rc = source_draft_discard(d->src, a->id, a->upto, &e);
		if (rc < 0)
			dash_message(d, ROLE_ERROR, "%s", e.msg);
		else
			dash_message(d, ROLE_NOTICE, ngettext("discarded the review draft of task %s "
			                                      "(%d comment)",
			                                      "discarded the review draft of task %s "
			                                      "(%d comments)", rc), a->id, rc);
	}
	free(a);
}

void gate_view_discard_draft(struct dash *d, const char *task_id)
{
	struct review_comment *c = NULL;
	size_t n = 0;
	struct err e = {{0}};
	if (source_draft_list(d->src, task_id, &c, &n, &e) < 0) {
		dash_message(d, ROLE_ERROR, "%s", e.msg);
		return;
	}
	if (!n) {
		dash_message(d, ROLE_NOTICE, _("task %s has no review draft to discard"), task_id);
		return;
	}
	struct draft_ask *a = xcalloc(1, sizeof *a);
	snprintf(a->id, sizeof a->id, "%s", task_id);
	a->upto = c[n - 1].n;
	a->n = n;
	source_draft_free(c, n);
	char *q = xasprintf(ngettext("discard the review draft of %zu comment? (y/n) ",
	                             "discard the review draft of %zu comments? (y/n) ", n), n);
	dash_ask(d, q, 0, NULL, discard_done, a);
	free(q);
}

static void act_approve(struct view *v)
{
	if (refused(v, _("approve")))
		return;
	char q[256];
	snprintf(q, sizeof q, _("approve task %s? (y/n) "), v->task_id);
	ask_set(v->task_id, NULL);
	dash_ask(v->d, q, 0, NULL, approve_done, NULL);
}

static void act_override(struct view *v)
{
	struct gate_priv *p = v->priv;
	const struct gline *l = v->sel >= 0 && v->sel < p->n ? &p->line[v->sel] : NULL;
	if (!l || l->kind != GL_FINDING) {
		dash_message(v->d, ROLE_ERROR, "%s",
		             _("select a block finding (move to its line), then override it"));
		return;
	}
	if (!l->block) {
		dash_message(v->d, ROLE_ERROR, _("finding %s only warns; there is nothing to "
		                                 "override"), l->finding);
		return;
	}
	if (l->overridden) {
		dash_message(v->d, ROLE_ERROR, _("finding %s is already overridden"), l->finding);
		return;
	}
	char q[512];
	snprintf(q, sizeof q, _("override %s: why is it fine? (optional) "), l->finding);
	ask_set(v->task_id, l->finding);
	dash_ask(v->d, q, 0, NULL, override_done, NULL);
}

/* ] and [: the next or previous finding's line, going round. */
static void jump_finding(struct view *v, int dir)
{
	struct gate_priv *p = v->priv;
	int n = p->n, from = v->sel < 0 ? (dir > 0 ? -1 : n) : v->sel;
	for (int k = 1; k <= n; k++) {
		int i = ((from + dir * k) % n + n) % n;
		if (p->line[i].kind != GL_FINDING)
			continue;
		if ((dir > 0 && i <= from) || (dir < 0 && i >= from))
			dash_message(v->d, ROLE_DIM, "%s", dir > 0 ? _("back at the first finding")
			                                           : _("back at the last finding"));
		v->sel = i;
		view_clamp(v);
		return;
	}
	dash_message(v->d, ROLE_NOTICE, "%s", _("this gate has no policy findings"));
}

static int gate_request(struct view *v, enum request req)
{
	struct gate_priv *p = v->priv;
	const struct gline *l = v->sel >= 0 && v->sel < p->n ? &p->line[v->sel] : NULL;
	char q[256];
	switch (req) {
	case REQ_APPROVE:
		act_approve(v);
		return 1;
	case REQ_PUSH:
		if (!refused(v, _("push")))
			start_job(v->d, v->task_id, "push");
		return 1;
	case REQ_PR_RETRY:
		start_job(v->d, v->task_id, "pr");
		return 1;
	case REQ_REJECT:
		snprintf(q, sizeof q, _("reject task %s? (y/n) "), v->task_id);
		ask_set(v->task_id, NULL);
		dash_ask(v->d, q, 0, NULL, reject_confirm, NULL);
		return 1;
	case REQ_REQUEST_CHANGES:
		gate_view_request_changes(v->d, v->task_id);
		return 1;
	case REQ_SHELL:
		dash_shell(v->d, v->task_id);
		return 1;
	case REQ_DISCARD_DRAFT:
		gate_view_discard_draft(v->d, v->task_id);
		return 1;
	case REQ_CONFIRM_TASK:
		/* This task only, a group's member too. */
		tasks_view_confirm(v->d, v->task_id, 0);
		return 1;
	case REQ_FOLLOW_UP:
		snprintf(q, sizeof q, _("follow up task %s (what should the agent do next?): "),
		         v->task_id);
		ask_set(v->task_id, NULL);
		dash_ask(v->d, q, 1, NULL, follow_up_done, NULL);
		return 1;
	case REQ_OVERRIDE:
		act_override(v);
		return 1;
	case REQ_NEXT_FINDING:
	case REQ_PREV_FINDING:
		jump_finding(v, req == REQ_NEXT_FINDING ? 1 : -1);
		return 1;
	case REQ_COPY:
		dash_copy_menu(v->d, v->task_id, l && *l->text ? l->text : NULL);
		return 1;
	case REQ_ENTER:
		if (l && l->kind == GL_TESTS)
			dash_open(v->d, &view_log, v->task_id);
		else if (l && (l->kind == GL_CHANGES || l->kind == GL_COMMENT))
			dash_open(v->d, &view_diff, v->task_id);
		return 1;
	default:
		return view_scroll(v, req);
	}
}

const struct view_ops view_gate = {
	.name = "gate",
	.priv_size = sizeof(struct gate_priv),
	.open = gate_open,
	.title = gate_title,
	.draw = gate_draw,
	.request = gate_request,
	.refresh = gate_refresh,
	.close = gate_close,
	.next_pane = &view_log,
};
