/* paddock show's text, from the task's JSON (taskjson_full): the task, its
 * budget and usage, the gate, its rounds and every request through its
 * gateway, for the local show and the remote one alike (render.h). */
#include "autoconfig.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "cli.h"
#include "decide.h"
#include "gate.h"
#include "i18n.h"
#include "reminder.h"
#include "sanitize.h"
#include "screen.h"
#include "store.h"
#include "task.h"
#include "units.h"

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double jnum(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static int jint(json_t *o, const char *key)
{
	return (int)json_integer_value(json_object_get(o, key));
}

static enum task_status jstatus(json_t *o)
{
	const char *s = jstr(o, "status");
	int st = s ? task_status_parse(s) : -1;
	return st < 0 ? TASK_QUEUED : (enum task_status)st;
}

static void put_visible_str(const char *s)
{
	cli_put_visible(stdout, s, strlen(s), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
}

/* Prints a label in its column: at least 8 columns wide (its display
 * width, not its bytes: a translated label may hold umlauts), then a
 * space.  Returns the column the text starts at. */
static int put_label(const char *label)
{
	int w = screen_textwidth(label, strlen(label));
	printf("%s%*s ", label, w < 8 ? 8 - w : 0, "");
	return (w < 8 ? 8 : w) + 1;
}

/* label with spaces up to 8 columns of display width, for the "%-8s"
 * formats (printf pads by bytes: "Bestätig." would end a column early);
 * static, valid for the next three calls. */
static const char *show_label(const char *label)
{
	static char bufs[4][64];
	static unsigned next;
	char *b = bufs[next++ % 4];
	int w = screen_textwidth(label, strlen(label));
	snprintf(b, sizeof bufs[0], "%s%*s", label, w < 8 ? 8 - w : 0, "");
	return b;
}

/* Prints text a reviewer approves under a label, every line of it from
 * the same column (a diffstat's lines stay aligned). */
static void put_block(const char *label, const char *text)
{
	int col = put_label(label);
	const char *line = text;
	for (int first = 1; *line; first = 0) {
		size_t n = strcspn(line, "\n");
		if (!first)
			printf("%*s", col, "");
		cli_put_visible(stdout, line, n, SANITIZE_KEEP_TAB);
		putchar('\n');
		line += n + (line[n] == '\n');
	}
	if (!*text)
		putchar('\n');
}

/* A decision's notes in the rounds: the first line after "ACTION: ",
 * each further line on a line of its own, indented under the decision;
 * every line through the sanitizer, trailing blank lines dropped. */
static void put_notes(const char *notes)
{
	size_t len = strlen(notes);
	while (len && (notes[len - 1] == '\n' || notes[len - 1] == ' ' || notes[len - 1] == '\r'))
		len--;
	printf(": ");
	for (size_t at = 0, first = 1; at < len; first = 0) {
		const char *nl = memchr(notes + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (notes + at)) : len - at;
		if (!first)
			fputs(n ? "\n       " : "\n", stdout);
		cli_put_text(stdout, notes + at, n);
		at += n + (nl != NULL);
	}
}

static const char *tests_word(const struct gate_tests *t)
{
	if (!t->ran)
		return _("none");
	return t->passed ? _("passed") : _("failed");
}

static void clock_time(double t, char *out, size_t len)
{
	time_t at = (time_t)t;
	struct tm tm;
	strftime(out, len, "%H:%M:%S", localtime_r(&at, &tm));
}

static void date_time(double t, char *out, size_t len)
{
	time_t at = (time_t)t;
	struct tm tm;
	strftime(out, len, "%Y-%m-%d %H:%M:%S", localtime_r(&at, &tm));
}

/* The rounds in order, each with its work and the decisions made on it,
 * in the words of task_history_round_text and task_decision_text. */
static void show_rounds(json_t *j)
{
	json_t *rounds = json_object_get(j, "rounds"), *dec = json_object_get(j, "decisions");
	struct task_history h = { .nrounds = json_array_size(rounds),
	                          .ndecisions = json_array_size(dec) };
	h.rounds = xcalloc(h.nrounds + 1, sizeof *h.rounds);
	h.decisions = xcalloc(h.ndecisions + 1, sizeof *h.decisions);
	for (size_t i = 0; i < h.nrounds; i++) {
		json_t *r = json_array_get(rounds, i);
		h.rounds[i] = (struct task_round){
			.n = jint(r, "round"), .from = (char *)jstr(r, "from"),
			.head = (char *)jstr(r, "head"), .started = jnum(r, "started"),
			.ended = jnum(r, "ended"), .kind = (char *)jstr(r, "kind"),
		};
	}
	for (size_t i = 0; i < h.ndecisions; i++) {
		json_t *d = json_array_get(dec, i);
		h.decisions[i] = (struct task_decision){
			.round = jint(d, "round"),
			.action = (char *)(jstr(d, "action") ? jstr(d, "action") : "?"),
			.notes = (char *)jstr(d, "notes"),
			.actor = (char *)(jstr(d, "actor") ? jstr(d, "actor") : "?"),
			.at = jnum(d, "at"),
		};
	}
	/* As store_history: decisions without a round row come from before
	 * rounds were kept. */
	h.last = h.nrounds ? h.rounds[h.nrounds - 1].n : h.ndecisions ? 1 : 0;
	if (h.last)
		printf("%s\n", _("rounds"));
	for (int n = 1; n <= h.last; n++) {
		char *line = task_history_round_text(&h, n);
		printf("  %s\n", line);
		free(line);
		for (size_t k = 0; k < h.ndecisions; k++) {
			const struct task_decision *d = &h.decisions[k];
			if (d->round != n)
				continue;
			char *text = task_decision_text(d);
			printf("     %s", text);
			free(text);
			if (d->notes)
				put_notes(d->notes);
			putchar('\n');
		}
	}
	/* The strings are the JSON's: only the arrays are ours. */
	free(h.rounds);
	free(h.decisions);
}

/* A task of approval auto or auto-push that waits at review: which
 * condition kept it there (the hold of its round, autogate.h). */
static void show_hold(json_t *j)
{
	if (jstatus(j) != TASK_REVIEW)
		return;
	int round = jint(j, "round");
	const char *hold = NULL;
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(j, "decisions"), i, d)
		if (jint(d, "round") == round && jstr(d, "action") &&
		    !strcmp(jstr(d, "action"), "hold") && jstr(d, "notes"))
			hold = jstr(d, "notes");
	if (hold) {
		printf("%-8s ", show_label(_("held")));
		cli_put_text(stdout, hold, strcspn(hold, "\n"));
		putchar('\n');
	}
}

/* A decision recorded for the scheduler and not carried out yet (decide.h):
 * who made it, since when, and who carries it out. */
static void show_waiting(json_t *j)
{
	json_t *w = json_object_get(j, "waiting_decision");
	if (!json_is_object(w))
		return;
	char since[32];
	date_time(jnum(w, "requested"), since, sizeof since);
	const char *action = jstr(w, "action") ? jstr(w, "action") : "?";
	const char *actor = jstr(w, "actor") ? jstr(w, "actor") : "?";
	printf("%-8s ", show_label(_("waiting")));
	/* "serve 12", as the scheduler's lock names its owner: "serve (pid
	 * 12)". */
	char *who = jstr(w, "by") ? decide_owner_text(jstr(w, "by")) : NULL;
	/* The actor is a token's name or a Unix user: shown as text. */
	char *line = who ? xasprintf(_("%s by %s since %s, for %s"), action, actor, since, who)
	                 : xasprintf(_("%s by %s since %s, for any scheduler"), action, actor,
	                             since);
	free(who);
	cli_put_text(stdout, line, strlen(line));
	putchar('\n');
	free(line);
}

/* A queued task that the review limit keeps queued (reminder.h). */
static void show_review_hold(json_t *j)
{
	json_t *h = json_object_get(j, "review_hold");
	if (!json_is_object(h))
		return;
	struct reminder_hold rh = { .at_review = jint(h, "at_review"), .max = jint(h, "max"),
	                            .of_repo = jstr(h, "repo") != NULL };
	char *text = reminder_hold_text(&rh, jstr(h, "repo"));
	printf("%-8s ", show_label(_("waiting")));
	/* The repo's name is the configuration's: shown as text. */
	cli_put_text(stdout, text, strlen(text));
	putchar('\n');
	free(text);
}

/* A pull request that failed to open: how often, when, the next try,
 * the last why (GitHub's words: shown as text, not as the terminal's). */
static void show_pr_failure(json_t *j, json_t *pe)
{
	char last[16], next[16];
	int n = jint(pe, "attempts");
	clock_time(jnum(pe, "at"), last, sizeof last);
	printf("%-8s ", show_label(_("pull req")));
	printf(ngettext("failed %d time, last at %s", "failed %d times, last at %s",
	                (unsigned long)n), n, last);
	if (jnum(pe, "retry_at") > 0) {
		clock_time(jnum(pe, "retry_at"), next, sizeof next);
		printf(_("; next try at %s"), next);
	}
	printf(_("; paddock pr %s tries now\n"), jstr(j, "id") ? jstr(j, "id") : "?");
	printf("%-8s ", "");
	const char *m = jstr(pe, "message") ? jstr(pe, "message") : "";
	cli_put_text(stdout, m, strlen(m));
	putchar('\n');
}

/* The pull request (with its state and checks on GitHub, in
 * ghsync_pr_words' words) or its failure, and what was pushed. */
static void show_pushed(json_t *j)
{
	json_t *gh = json_object_get(j, "github"), *pe = json_object_get(j, "pull_request_error");
	const char *pr = jstr(j, "pull_request"), *state = jstr(gh, "pr_state");
	enum task_status st = jstatus(j);
	if (pr) {
		printf("%-8s %s", show_label(_("pull req")), pr);
		if (state && jstr(gh, "checks")) {
			printf(" (");
			printf(_("%s; checks: %s"), state, jstr(gh, "checks"));
			printf(")");
		} else if (state) {
			printf(" (%s)", state);
		}
		putchar('\n');
	} else if (json_is_object(pe)) {
		show_pr_failure(j, pe);
	}
	const char *head = jstr(j, "head"), *base = jstr(j, "base"), *appr = jstr(j, "approval");
	if (jstr(j, "pushed"))
		printf("%-8s %s\n", show_label(_("pushed")), jstr(j, "pushed"));
	else if (st == TASK_DONE && head && base && !strcmp(head, base))
		printf("%-8s %s\n", show_label(_("pushed")), _("nothing: the round changed nothing"));
	else if (st == TASK_DONE && appr && !strcmp(appr, "never"))
		printf("%-8s %s\n", show_label(_("pushed")), _("nothing: the branch is kept in the mirror "
		                                   "(approval never)"));
}

/* The gate's summary (gate_summary_json) parsed as the store's, so that
 * gate.h's words and order hold; 1 when there is one. */
static int gate_of(json_t *j, struct gate_summary *g)
{
	json_t *gj = json_object_get(j, "gate");
	if (!json_is_object(gj))
		return 0;
	char *txt = json_dumps(gj, JSON_COMPACT);
	struct err e = {{0}};
	int have = txt && gate_summary_parse(txt, g, &e) == 0;
	free(txt);
	/* The JSON's findings are the summary's, in order, with
	 * "overridden" added. */
	json_t *fj = json_object_get(gj, "findings");
	for (size_t i = 0; have && i < g->nfindings && i < json_array_size(fj); i++)
		g->findings[i].overridden = json_is_true(json_object_get(json_array_get(fj, i),
		                                                        "overridden"));
	return have;
}

/* The tests before and after, the fix loop's tries (pipeline.h), the
 * task's own contract, the logs and the findings in the gate view's
 * order, the mark before the name as there. */
static void show_checks(struct gate_summary *g)
{
	if (g->diffstat && *g->diffstat)
		put_block(_("changes"), g->diffstat);
	const struct gate_tests *tb = &g->tests.before, *ta = &g->tests.after;
	printf("%-8s %s %s, %s %s", show_label(_("tests")), _("before:"), tests_word(tb),
	       _("after:"), tests_word(ta));
	if (ta->verified)
		printf(" %s", _("(verified on a clean checkout)"));
	if (g->tests.agent.ran)
		printf(", %s %s", _("agent's run:"), tests_word(&g->tests.agent));
	putchar('\n');
	char *fix = gate_fix_note(g);
	if (fix)
		printf("%-8s   %s\n", "", fix);
	free(fix);
	if (g->contract.nclauses) {
		struct buf c = {0};
		gate_contract_text(g, &c);
		printf("%-8s ", show_label(_("contract")));
		put_visible_str(c.data ? c.data : "");
		putchar('\n');
		buf_free(&c);
	}
	if (tb->log && *tb->log)
		printf("%-8s   %s %s\n", "", _("before's log:"), tb->log);
	if (ta->log && *ta->log)
		printf("%-8s   %s %s\n", "", _("after's log:"), ta->log);
	if (g->nfindings)
		printf("%s\n", _("findings"));
	for (int rank = 0; rank < GATE_FINDING_RANKS; rank++)
		for (size_t i = 0; i < g->nfindings; i++) {
			const struct gate_finding *f = &g->findings[i];
			if (gate_finding_rank(f) != rank)
				continue;
			printf("  %-5s  ", gate_action_name(f->action));
			if (f->overridden)
				printf("%s  ", _("[overridden]"));
			put_visible_str(f->name ? f->name : "");
			printf("  ");
			put_visible_str(f->detail ? f->detail : "");
			putchar('\n');
		}
}

static void show_gate(json_t *j)
{
	struct gate_summary g;
	int have = gate_of(j, &g);
	/* A mismatch between the agent's run and the clean one comes first. */
	const char *mismatch = have ? gate_mismatch(&g) : NULL;
	if (mismatch)
		put_block(_("warning"), mismatch);
	show_pushed(j);
	show_hold(j);
	show_waiting(j);
	show_review_hold(j);
	enum task_status st = jstatus(j);
	int round = jint(j, "round");
	if (round > 1 || st == TASK_REVIEW)
		printf("%-8s %d%s%s\n", show_label(_("round")), round,
		       json_is_true(json_object_get(j, "sandbox_kept"))
		       ? _(" (sandbox kept for the next round)") : "",
		       jstr(j, "pending") ? _(" (changes requested; waiting for the scheduler)") : "");
	if (jstr(j, "summary") && *jstr(j, "summary"))
		put_block(_("summary"), jstr(j, "summary"));
	if (have) {
		show_checks(&g);
		gate_summary_free(&g);
	}
	show_rounds(j);
}

/* "812 B", "1.2 KiB", "3.4 MiB" */
static void human_bytes(double n, char *out, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (n < 1024) {
		snprintf(out, len, "%.0f B", n);
		return;
	}
	double v = n / 1024;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, "%.1f %s", v, units[u]);
}

/* The pauses of the task's model endpoint that hold it back (the JSON
 * lists only those that apply). */
static void show_pauses(json_t *j)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(j, "pauses"), i, p) {
		char when[32];
		clock_time(jnum(p, "until"), when, sizeof when);
		const char *ep = jstr(p, "endpoint") ? jstr(p, "endpoint") : "?";
		printf("%-8s ", show_label(_("paused")));
		if (jint(p, "status"))
			printf(_("%s is paused until %s (HTTP %d)"), ep, when, jint(p, "status"));
		else
			printf(_("%s is paused until %s"), ep, when);
		if (jstatus(j) == TASK_QUEUED)
			printf("%s", _("; the task starts after that"));
		putchar('\n');
	}
}

/* Budget, model usage, session and the pauses that hold the task back. */
static void show_usage(json_t *j, int config_known)
{
	const char *from = jstr(j, "budget_from");
	double budget = jnum(j, "budget");
	char usd[32];
	units_format_money(budget, 2, usd, sizeof usd);
	printf("%-8s ", show_label(_("budget")));
	if (budget > 0)
		printf(from && !strcmp(from, "task") ? _("$%s (this task's)")
		                                     : _("$%s (limits.budget)"), usd);
	else if (from || config_known)
		printf("%s", _("none"));
	else
		printf("%s", _("unknown (the configuration cannot be read)"));
	if (json_integer_value(json_object_get(j, "budget_tokens")))
		printf(_(", %llu tokens (limits.budget-tokens)"),
		       (unsigned long long)json_integer_value(json_object_get(j, "budget_tokens")));
	putchar('\n');
	json_t *u = json_object_get(j, "usage");
	unsigned long long in = (unsigned long long)jnum(u, "input");
	unsigned long long out = (unsigned long long)jnum(u, "output");
	unsigned long long cr = (unsigned long long)jnum(u, "cache_read");
	unsigned long long cw = (unsigned long long)jnum(u, "cache_write");
	unsigned long long req = (unsigned long long)jnum(u, "requests");
	double cost = jnum(u, "cost");
	printf("%-8s ", show_label(_("usage")));
	if (!req && !in && !out && !cr && !cw && cost <= 0) {
		printf("%s\n", _("none"));
	} else {
		printf(_("%llu tokens in, %llu out, cache %llu read, %llu written; %llu requests; "),
		       in, out, cr, cw, req);
		units_format_money(cost, 4, usd, sizeof usd);
		if (json_is_true(json_object_get(u, "priced")))
			printf("$%s\n", usd);
		else if (cost > 0)
			printf(_("$%s (some models not priced)\n"), usd);
		else
			printf("%s\n", _("not priced"));
	}
	if (jstr(j, "session")) {
		printf("%-8s ", show_label(_("session")));
		cli_put_str(stdout, jstr(j, "session"));
		putchar('\n');
	}
	show_pauses(j);
}

/* One request through the task's gateway (rounds: the task has had more
 * than one, so each line says which). */
static void show_egress_row(json_t *x, int rounds)
{
	const char *v = jstr(x, "verdict");
	int no = v && !strcmp(v, "refused");
	char when[32], up[32], down[32];
	clock_time(jnum(x, "time"), when, sizeof when);
	printf("  %s  ", when);
	if (rounds)
		printf(_("round %d  "), jint(x, "round"));
	printf("%-5s  %-7s  %-6s  ", jstr(x, "step") ? jstr(x, "step") : "-",
	       no ? _("REFUSED") : !v ? "?" : !strcmp(v, "unlisted") ? _("unlisted") : _("allowed"),
	       jstr(x, "kind") ? jstr(x, "kind") : "-");
	if (jstr(x, "method")) {
		cli_put_str(stdout, jstr(x, "method"));
		putchar(' ');
	}
	cli_put_str(stdout, jstr(x, "host") ? jstr(x, "host") : "?");
	if (jint(x, "port"))
		printf(":%d", jint(x, "port"));
	if (jstr(x, "path")) {
		putchar(' ');
		cli_put_str(stdout, jstr(x, "path"));
	}
	if (jint(x, "status"))
		printf("  %d", jint(x, "status"));
	if (jnum(x, "up") || jnum(x, "down")) {
		human_bytes(jnum(x, "up"), up, sizeof up);
		human_bytes(jnum(x, "down"), down, sizeof down);
		printf(_("  %s up, %s down"), up, down);
	}
	if (jnum(x, "ms") > 0)
		printf(_("  %.0f ms"), jnum(x, "ms"));
	if (jstr(x, "reason")) {
		printf("  ");
		cli_put_str(stdout, jstr(x, "reason"));
	}
	putchar('\n');
}

/* Every request through the task's gateway, refused ones marked. */
static void show_egress(json_t *j)
{
	json_t *eg = json_object_get(j, "egress"), *x;
	size_t n = json_array_size(eg), i, refused = 0, allowed = 0;
	if (!n)
		return;
	json_array_foreach(eg, i, x) {
		const char *v = jstr(x, "verdict");
		refused += v && !strcmp(v, "refused");
		allowed += v && !strcmp(v, "allowed");
	}
	printf("%-8s ", show_label(_("egress")));
	printf(_("%zu allowed, %zu refused"), allowed, refused);
	putchar('\n');
	int rounds = jint(j, "round") > 1;
	json_array_foreach(eg, i, x)
		show_egress_row(x, rounds);
}

/* Test mode, after approve: what would have been written. */
static void show_dry_run_record(json_t *j)
{
	json_t *r = json_object_get(j, "dry_run_record");
	if (!json_is_object(r))
		return;
	const char *rs = jstr(r, "refspec"), *remote = jstr(r, "remote");
	printf("%-8s ", show_label(_("would")));
	printf(_("push %s to %s (refspec %s, not forced)\n"), jstr(r, "commit"),
	       remote ? remote : "?", rs ? rs : "?");
	json_t *pr = json_object_get(r, "pull_request");
	if (json_is_object(pr)) {
		char *body = json_dumps(json_object_get(pr, "body"), JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%-8s ", "");
		printf(_("open a pull request: POST %s\n"), jstr(pr, "url"));
		printf("%-8s ", "");
		cli_put_text(stdout, body ? body : "", body ? strlen(body) : 0);
		putchar('\n');
		free(body);
		const char *problem = jstr(pr, "problem");
		if (problem) {
			printf("%-8s ", "");
			printf(_("but a real approve would not open it: "));
			cli_put_text(stdout, problem, strlen(problem));
			putchar('\n');
		}
	}
}

/* A task queued with approval review and a cost over the confirm limit. */
static void show_confirm(json_t *j)
{
	const char *c = jstr(j, "confirm"), *id = jstr(j, "id") ? jstr(j, "id") : "?";
	if (!c || strcmp(c, "needed") || jstatus(j) != TASK_QUEUED)
		return;
	char usd[32];
	units_format_money(jnum(j, "estimate"), 2, usd, sizeof usd);
	printf("%-8s ", show_label(_("confirm")));
	if (jnum(j, "estimate") > 0)
		printf(_("needs confirmation (estimated $%s): paddock confirm %s\n"), usd, id);
	else
		printf(_("needs confirmation (its cost cannot be estimated): paddock confirm "
		         "%s\n"), id);
}

/* What the task was made with beyond its repo and agent: its recipe and
 * inputs, the base it asked for, its own test command, time limit, fix
 * rounds and output contract (each line only when given). */
static void show_made_with(json_t *j)
{
	if (jstr(j, "recipe")) {
		printf("%-8s %s", show_label(_("recipe")), jstr(j, "recipe"));
		const char *k;
		json_t *v;
		int first = 1;
		json_object_foreach(json_object_get(j, "inputs"), k, v) {
			const char *val = json_string_value(v) ? json_string_value(v) : "";
			printf("%s%s=", first ? " (" : ", ", k);
			cli_put_text(stdout, val, strcspn(val, "\n"));
			first = 0;
		}
		printf("%s\n", first ? "" : ")");
	}
	if (jstr(j, "base_ref"))
		printf("%-8s %s\n", show_label(_("from")), jstr(j, "base_ref"));
	if (jstr(j, "test")) {
		printf("%-8s ", show_label(_("test")));
		cli_put_text(stdout, jstr(j, "test"), strlen(jstr(j, "test")));
		putchar('\n');
	}
	if (jnum(j, "timeout") > 0)
		printf(_("%-8s %.0fs per round\n"), show_label(_("timeout")), jnum(j, "timeout"));
	if (json_is_integer(json_object_get(j, "fix_rounds")))
		printf(_("%-8s %d fix rounds\n"), show_label(_("fixes")), jint(j, "fix_rounds"));
	if (jstr(j, "approval") && strcmp(jstr(j, "approval"), "review") != 0)
		printf("%-8s %s\n", show_label(_("approval")), jstr(j, "approval"));
	if (json_is_true(json_object_get(j, "dry_run")))
		printf("%-8s %s\n", show_label(_("mode")), _("dry run: approve records what it would push, and "
		                                   "pushes nothing"));
	show_confirm(j);
	show_dry_run_record(j);
	json_t *c = json_object_get(j, "contract");
	if (json_array_size(c)) {
		size_t i;
		json_t *x;
		printf("%-8s", show_label(_("contract")));
		json_array_foreach(c, i, x) {
			const char *cl = json_string_value(x) ? json_string_value(x) : "";
			printf("%s ", i ? ";" : "");
			cli_put_text(stdout, cl, strlen(cl));
		}
		putchar('\n');
	}
}

/* The GitHub issue the task came from (its pull request is shown with the
 * gate). */
static void show_github(json_t *j)
{
	json_t *gh = json_object_get(j, "github");
	if (!json_is_object(gh))
		return;
	if (json_integer_value(json_object_get(gh, "issue")))
		printf("%-8s %s#%lld\n", show_label(_("issue")), jstr(gh, "repo") ? jstr(gh, "repo") : "?",
		       (long long)json_integer_value(json_object_get(gh, "issue")));
	if (json_is_true(json_object_get(gh, "branch_deleted")))
		printf("%-8s %s\n", show_label(_("branch")), _("deleted on GitHub when the pull request was merged"));
}

/* A member of a best-of-N group: "group G (2 of 3)", and its pick. */
static void show_group(json_t *j)
{
	json_t *gp = json_object_get(j, "group_position");
	const char *gid = jstr(j, "group"), *id = jstr(j, "id");
	if (!gid || !id || !json_is_object(gp) || !jint(gp, "position"))
		return;
	printf("%-8s ", show_label(_("group")));
	printf(_("%s (%d of %d)"), gid, jint(gp, "position"), jint(gp, "size"));
	const char *picked = jstr(gp, "picked");
	if (picked && !strcmp(picked, id))
		printf(_(", picked"));
	else if (picked)
		printf(_(", %s was picked"), picked);
	putchar('\n');
}

/* Its steps, as seconds since it was queued (the JSON's are unix times). */
static void show_steps(json_t *j)
{
	printf("%-8s", show_label(_("steps")));
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(j, "steps"), i, s) {
		const char *name = json_string_value(json_array_get(s, 1));
		int st = name ? task_status_parse(name) : -1;
		double at = json_number_value(json_array_get(s, 0)) - jnum(j, "created");
		printf("%s %s %.1fs", i ? "," : "", st < 0 ? "?" : task_status_label((enum task_status)st),
		       at > 0 ? at : 0.0);
	}
	putchar('\n');
}

/* Why it failed, and a round after review that did not reach review. */
static void show_failure(json_t *j)
{
	const char *id = jstr(j, "id") ? jstr(j, "id") : "?";
	if (jstr(j, "error")) {
		/* The first line says what failed; the detail (a test
		 * output's tail) follows, indented under it. */
		printf("%-8s ", show_label(_("error")));
		const char *line = jstr(j, "error");
		for (int first = 1; *line; first = 0) {
			size_t n = strcspn(line, "\n");
			if (!first)
				printf("%-8s   ", "");
			cli_put_text(stdout, line, n);
			putchar('\n');
			line += n + (line[n] == '\n');
		}
	}
	if (jstr(j, "reason"))
		printf("%-8s %s\n", show_label(_("reason")), task_reason_label(jstr(j, "reason")));
	if (jint(j, "attempts") > 1)
		printf("%-8s %d\n", show_label(_("attempts")), jint(j, "attempts"));
	json_t *fr = json_object_get(j, "failed_round");
	if (json_is_object(fr) && jstatus(j) == TASK_REVIEW) {
		/* The round after this one did not reach review: what it did
		 * and why are the reviewer's to see; the first line of why (the
		 * test output after it is in the log and in --json). */
		printf("%-8s ", show_label(_("retry")));
		printf(_("round %d did not reach review: "), jint(fr, "round"));
		const char *why = jstr(fr, "error") ? jstr(fr, "error") : "?";
		char *first = xstrndup(why, strcspn(why, "\n"));
		put_visible_str(first);
		free(first);
		putchar('\n');
		if (jstr(fr, "head")) {
			printf("%-8s ", "");
			printf(_("its work: paddock diff --failed %s\n"), id);
		}
		printf("%-8s ", "");
		printf(_("send the notes again: paddock request-changes --again %s\n"), id);
	}
}

void render_task(json_t *j, int config_known)
{
	char when[64];
	date_time(jnum(j, "created"), when, sizeof when);
	printf("%-8s %s  %s\n", show_label(_("task")), jstr(j, "id") ? jstr(j, "id") : "?",
	       task_status_label(jstatus(j)));
	printf("%-8s %s\n", show_label(_("repo")), jstr(j, "repo") ? jstr(j, "repo") : "");
	printf("%-8s %s\n", show_label(_("agent")), jstr(j, "agent") ? jstr(j, "agent") : "");
	/* A branch or base may be the agent's words (a follow-up's base):
	 * through the sanitizer on a terminal. */
	printf("%-8s ", show_label(_("branch")));
	cli_put_str(stdout, jstr(j, "branch") ? jstr(j, "branch") : "");
	putchar('\n');
	if (jstr(j, "base")) {
		printf("%-8s ", show_label(_("base")));
		cli_put_str(stdout, jstr(j, "base"));
		putchar('\n');
	}
	if (jstr(j, "head"))
		printf("%-8s %s\n", show_label(_("head")), jstr(j, "head"));
	show_made_with(j);
	show_github(j);
	printf("%-8s %s\n", show_label(_("queued")), when);
	show_steps(j);
	show_failure(j);
	if (jstr(j, "follow_of"))
		printf("%-8s %s\n", show_label(_("follows")), jstr(j, "follow_of"));
	show_group(j);
	printf("%-8s ", show_label(_("text")));
	put_visible_str(jstr(j, "text") ? jstr(j, "text") : "");
	putchar('\n');
	show_usage(j, config_known);
	show_gate(j);
	show_egress(j);
}
