/* paddock show: a task, its budget and usage, the gate, its rounds and
 * every request through its gateway. */
#include "autoconfig.h"
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gate.h"
#include "group.h"
#include "ghsync.h"
#include "i18n.h"
#include "store_github.h"
#include "recipe.h"
#include "sanitize.h"
#include "screen.h"
#include "store.h"
#include "task.h"
#include "taskjson.h"
#include "units.h"

static void put_visible_str(FILE *out, const char *s)
{
	cli_put_visible(out, s, strlen(s), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
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

/* The rounds in order, each with its work and the decisions made on it. */
static void show_rounds(struct store *s, const struct task_row *t)
{
	struct err e = {{0}};
	struct task_history h;
	if (store_history(s, t->id, &h, &e) < 0)
		return;
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
	task_history_free(&h);
}

/* A task of approval auto or auto-push that waits at review: which
 * condition kept it there (the hold of its round, autogate.h). */
static void show_hold(struct store *s, const struct task_row *t)
{
	struct task_decision *d;
	size_t n;
	struct err e = {{0}};
	if (t->status != TASK_REVIEW || store_decisions(s, t->id, &d, &n, &e) < 0)
		return;
	const struct task_decision *hold = NULL;
	for (size_t i = 0; i < n; i++)
		if (d[i].round == t->round && !strcmp(d[i].action, "hold") && d[i].notes)
			hold = &d[i];
	if (hold) {
		printf("%-8s ", show_label(_("held")));
		cli_put_text(stdout, hold->notes, strcspn(hold->notes, "\n"));
		putchar('\n');
	}
	task_decisions_free(d, n);
}

static void clock_time(double t, char *out, size_t len);

/* A pull request that failed to open: how often, when, the next try,
 * the last why (GitHub's words: shown as text, not as the terminal's). */
static void show_pr_failure(const struct task_row *t)
{
	char last[16], next[16];
	clock_time(t->pr_error_at, last, sizeof last);
	printf("%-8s ", show_label(_("pull req")));
	printf(ngettext("failed %d time, last at %s", "failed %d times, last at %s",
	                t->pr_attempts), t->pr_attempts, last);
	if (t->pr_retry_at > 0) {
		clock_time(t->pr_retry_at, next, sizeof next);
		printf(_("; next try at %s"), next);
	}
	printf(_("; paddock pr %s tries now\n"), t->id);
	printf("%-8s ", "");
	cli_put_text(stdout, t->pr_error, strlen(t->pr_error));
	putchar('\n');
}

static void show_gate(struct store *s, const struct task_row *t)
{
	struct err e = {{0}};
	struct gate_summary g;
	int have = gate_summary_load(s, t, &g, &e) > 0;
	/* A mismatch between the agent's run and the clean one comes first. */
	const char *mismatch = gate_mismatch(&g);
	if (mismatch)
		put_block(_("warning"), mismatch);
	if (t->pr_url) {
		char *w = ghsync_pr_words(s, t->id);
		if (w)
			printf("%-8s %s (%s)\n", show_label(_("pull req")), t->pr_url, w);
		else
			printf("%-8s %s\n", show_label(_("pull req")), t->pr_url);
		free(w);
	} else if (t->pr_error) {
		show_pr_failure(t);
	}
	if (t->pushed)
		printf("%-8s %s\n", show_label(_("pushed")), t->pushed);
	else if (t->status == TASK_DONE && t->head && t->base && !strcmp(t->head, t->base))
		printf("%-8s %s\n", show_label(_("pushed")), _("nothing: the round changed nothing"));
	else if (t->status == TASK_DONE && t->approval && !strcmp(t->approval, "never"))
		printf("%-8s %s\n", show_label(_("pushed")), _("nothing: the branch is kept in the mirror "
		                                   "(approval never)"));
	show_hold(s, t);
	if (t->round > 1 || t->status == TASK_REVIEW)
		printf("%-8s %d%s%s\n", show_label(_("round")), t->round,
		       t->sandbox_kept ? _(" (sandbox kept for the next round)") : "",
		       t->pending ? _(" (changes requested; waiting for the scheduler)") : "");
	if (t->summary && *t->summary)
		put_block(_("summary"), t->summary);
	if (!have) {
		show_rounds(s, t);
		return;
	}
	if (g.diffstat && *g.diffstat)
		put_block(_("changes"), g.diffstat);
	const struct gate_tests *tb = &g.tests.before, *ta = &g.tests.after;
	printf("%-8s %s %s, %s %s", show_label(_("tests")), _("before:"), tests_word(tb), _("after:"),
	       tests_word(ta));
	if (ta->verified)
		printf(" %s", _("(verified on a clean checkout)"));
	if (g.tests.agent.ran)
		printf(", %s %s", _("agent's run:"), tests_word(&g.tests.agent));
	putchar('\n');
	/* The fix loop's tries (pipeline.h), and the task's own contract. */
	char *fix = gate_fix_note(&g);
	if (fix)
		printf("%-8s   %s\n", "", fix);
	free(fix);
	if (g.contract.nclauses) {
		struct buf c = {0};
		gate_contract_text(&g, &c);
		printf("%-8s ", show_label(_("contract")));
		put_visible_str(stdout, c.data ? c.data : "");
		putchar('\n');
		buf_free(&c);
	}
	if (tb->log && *tb->log)
		printf("%-8s   %s %s\n", "", _("before's log:"), tb->log);
	if (ta->log && *ta->log)
		printf("%-8s   %s %s\n", "", _("after's log:"), ta->log);
	if (g.nfindings)
		printf("%s\n", _("findings"));
	/* In the gate view's order, the mark before the name as there. */
	for (int rank = 0; rank < GATE_FINDING_RANKS; rank++)
		for (size_t i = 0; i < g.nfindings; i++) {
			const struct gate_finding *f = &g.findings[i];
			if (gate_finding_rank(f) != rank)
				continue;
			printf("  %-5s  ", gate_action_name(f->action));
			if (f->overridden)
				printf("%s  ", _("[overridden]"));
			put_visible_str(stdout, f->name ? f->name : "");
			printf("  ");
			put_visible_str(stdout, f->detail ? f->detail : "");
			putchar('\n');
		}
	gate_summary_free(&g);
	show_rounds(s, t);
}

/* "812 B", "1.2 KiB", "3.4 MiB" */
static void human_bytes(uint64_t n, char *out, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (n < 1024) {
		snprintf(out, len, "%llu B", (unsigned long long)n);
		return;
	}
	double v = (double)n / 1024;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, "%.1f %s", v, units[u]);
}

static void clock_time(double t, char *out, size_t len)
{
	time_t at = (time_t)t;
	struct tm tm;
	strftime(out, len, "%H:%M:%S", localtime_r(&at, &tm));
}

/* Budget, model usage, session and the pauses that hold the task back. */
static void show_usage(struct store *s, const struct task_row *t, const struct config *cfg,
                       int have_cfg)
{
	const char *from;
	double budget = taskjson_budget(t, cfg, &from);
	char usd[32];
	units_format_money(budget, 2, usd, sizeof usd);
	printf("%-8s ", show_label(_("budget")));
	if (budget > 0)
		printf(from && !strcmp(from, "task") ? _("$%s (this task's)")
		                                     : _("$%s (limits.budget)"), usd);
	else if (from || have_cfg)
		printf("%s", _("none"));
	else
		printf("%s", _("unknown (the configuration cannot be read)"));
	if (cfg && cfg->limits.budget_tokens)
		printf(_(", %llu tokens (limits.budget-tokens)"),
		       (unsigned long long)cfg->limits.budget_tokens);
	putchar('\n');
	const struct task_usage *u = &t->usage;
	printf("%-8s ", show_label(_("usage")));
	if (!u->requests && !u->in && !u->out && !u->cache_read && !u->cache_write &&
	    u->cost <= 0) {
		printf("%s\n", _("none"));
	} else {
		printf(_("%llu tokens in, %llu out, cache %llu read, %llu written; %llu requests; "),
		       (unsigned long long)u->in, (unsigned long long)u->out,
		       (unsigned long long)u->cache_read, (unsigned long long)u->cache_write,
		       (unsigned long long)u->requests);
		units_format_money(u->cost, 4, usd, sizeof usd);
		if (u->priced)
			printf("$%s\n", usd);
		else if (u->cost > 0)
			printf(_("$%s (some models not priced)\n"), usd);
		else
			printf("%s\n", _("not priced"));
	}
	if (t->session) {
		printf("%-8s ", show_label(_("session")));
		cli_put_str(stdout, t->session);
		putchar('\n');
	}
	struct err e = {{0}};
	struct pause_row *p;
	size_t np;
	if (store_pauses_active(s, clock_wall(), &p, &np, &e) < 0)
		return;
	for (size_t i = 0; i < np; i++) {
		if (!taskjson_pause_applies(cfg, t, &p[i]))
			continue;
		char when[32];
		clock_time(p[i].until, when, sizeof when);
		printf("%-8s ", show_label(_("paused")));
		if (p[i].status)
			printf(_("%s is paused until %s (HTTP %d)"), p[i].endpoint, when, p[i].status);
		else
			printf(_("%s is paused until %s"), p[i].endpoint, when);
		if (t->status == TASK_QUEUED)
			printf("%s", _("; the task starts after that"));
		putchar('\n');
	}
	store_pauses_free(p, np);
}

/* Every request through the task's gateway, refused ones marked. */
static void show_egress(struct store *s, const struct task_row *t)
{
	struct err e = {{0}};
	struct egress_row *r;
	size_t n;
	if (store_egress_list(s, t->id, &r, &n, &e) < 0 || n == 0)
		return;
	size_t refused = 0, allowed = 0;
	for (size_t i = 0; i < n; i++) {
		refused += r[i].verdict && !strcmp(r[i].verdict, "refused");
		allowed += r[i].verdict && !strcmp(r[i].verdict, "allowed");
	}
	printf("%-8s ", show_label(_("egress")));
	printf(_("%zu allowed, %zu refused"), allowed, refused);
	putchar('\n');
	for (size_t i = 0; i < n; i++) {
		const struct egress_row *x = &r[i];
		int no = x->verdict && !strcmp(x->verdict, "refused");
		char when[32], up[32], down[32];
		clock_time(x->time, when, sizeof when);
		printf("  %s  ", when);
		if (t->round > 1)
			printf(_("round %d  "), x->round);
		printf("%-5s  %-7s  %-6s  ", x->step ? x->step : "-",
		       no ? _("REFUSED") : !x->verdict ? "?" :
		       !strcmp(x->verdict, "unlisted") ? _("unlisted") : _("allowed"),
		       x->kind ? x->kind : "-");
		if (x->method) {
			cli_put_str(stdout, x->method);
			putchar(' ');
		}
		cli_put_str(stdout, x->host ? x->host : "?");
		if (x->port)
			printf(":%d", x->port);
		if (x->path) {
			putchar(' ');
			cli_put_str(stdout, x->path);
		}
		if (x->status)
			printf("  %d", x->status);
		if (x->up || x->down) {
			human_bytes(x->up, up, sizeof up);
			human_bytes(x->down, down, sizeof down);
			printf(_("  %s up, %s down"), up, down);
		}
		if (x->ms > 0)
			printf(_("  %.0f ms"), x->ms);
		if (x->reason) {
			printf("  ");
			cli_put_str(stdout, x->reason);
		}
		putchar('\n');
	}
	store_egress_free(r, n);
}

/* ---------------------------------------------------------------- show */

/* Test mode, after approve: what would have been written. */
static void show_dry_run_record(const struct task_row *t)
{
	json_t *j = t->dry_run_record ? json_loads(t->dry_run_record, 0, NULL) : NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		return;
	}
	const char *rs = json_string_value(json_object_get(j, "refspec"));
	const char *remote = json_string_value(json_object_get(j, "remote"));
	printf("%-8s ", show_label(_("would")));
	printf(_("push %s to %s (refspec %s, not forced)\n"),
	       json_string_value(json_object_get(j, "commit")), remote ? remote : "?",
	       rs ? rs : "?");
	json_t *pr = json_object_get(j, "pull_request");
	if (json_is_object(pr)) {
		char *body = json_dumps(json_object_get(pr, "body"), JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%-8s ", "");
		printf(_("open a pull request: POST %s\n"), json_string_value(json_object_get(pr, "url")));
		printf("%-8s ", "");
		cli_put_text(stdout, body ? body : "", body ? strlen(body) : 0);
		putchar('\n');
		free(body);
		const char *problem = json_string_value(json_object_get(pr, "problem"));
		if (problem) {
			printf("%-8s ", "");
			printf(_("but a real approve would not open it: "));
			cli_put_text(stdout, problem, strlen(problem));
			putchar('\n');
		}
	}
	json_decref(j);
}

/* The GitHub issue the task came from (its pull request is shown with the
 * gate). */
static void show_github(struct store *s, const struct task_row *t)
{
	struct gh_link l;
	struct err e = {{0}};
	if (store_github_link(s, t->id, &l, &e) != 1)
		return;
	if (l.issue)
		printf("%-8s %s#%lld\n", show_label(_("issue")), l.gh_repo, l.issue);
	if (l.branch_deleted)
		printf("%-8s %s\n", show_label(_("branch")), _("deleted on GitHub when the pull request was merged"));
	gh_link_free(&l);
}

/* What the task was made with beyond its repo and agent: its recipe and
 * inputs, the base it asked for, its own test command, time limit, fix
 * rounds and output contract (each line only when given). */
static void show_made_with(const struct task_row *t)
{
	if (t->recipe) {
		printf("%-8s %s", show_label(_("recipe")), t->recipe);
		json_t *in = t->inputs ? json_loads(t->inputs, 0, NULL) : NULL;
		const char *k;
		json_t *v;
		int first = 1;
		json_object_foreach(in, k, v) {
			const char *val = json_string_value(v);
			printf("%s%s=", first ? " (" : ", ", k);
			cli_put_text(stdout, val ? val : "", strcspn(val ? val : "", "\n"));
			first = 0;
		}
		printf("%s\n", first ? "" : ")");
		json_decref(in);
	}
	if (t->base_ref)
		printf("%-8s %s\n", show_label(_("from")), t->base_ref);
	if (t->test_cmd) {
		printf("%-8s ", show_label(_("test")));
		cli_put_text(stdout, t->test_cmd, strlen(t->test_cmd));
		putchar('\n');
	}
	if (t->timeout > 0)
		printf(_("%-8s %.0fs per round\n"), show_label(_("timeout")), t->timeout);
	if (t->fix_rounds >= 0)
		printf(_("%-8s %d fix rounds\n"), show_label(_("fixes")), t->fix_rounds);
	if (t->approval && strcmp(t->approval, "review") != 0)
		printf("%-8s %s\n", show_label(_("approval")), t->approval);
	if (t->dry_run)
		printf("%-8s %s\n", show_label(_("mode")), _("dry run: approve records what it would push, and "
		                                   "pushes nothing"));
	if (t->confirm && !strcmp(t->confirm, "needed") && t->status == TASK_QUEUED) {
		char usd[32];
		units_format_money(t->estimate, 2, usd, sizeof usd);
		printf("%-8s ", show_label(_("confirm")));
		if (t->estimate > 0)
			printf(_("needs confirmation (estimated $%s): paddock confirm %s\n"), usd, t->id);
		else
			printf(_("needs confirmation (its cost cannot be estimated): paddock confirm "
			         "%s\n"), t->id);
	}
	show_dry_run_record(t);
	char **c;
	size_t nc;
	struct err e = {{0}};
	if (t->contract && recipe_contract_parse(t->contract, &c, &nc, &e) == 0) {
		printf("%-8s", show_label(_("contract")));
		for (size_t i = 0; i < nc; i++) {
			printf("%s ", i ? ";" : "");
			cli_put_text(stdout, c[i], strlen(c[i]));
		}
		putchar('\n');
		recipe_clauses_free(c, nc);
	}
}

/* A member of a best-of-N group: "group G (2 of 3)", and its pick. */
static void show_group(struct store *s, const struct task_row *t)
{
	int pos, n;
	struct err e = {{0}};
	if (!t->group_id || group_position(s, t, &pos, &n, &e) < 0)
		return;
	printf("%-8s ", show_label(_("group")));
	printf(_("%s (%d of %d)"), t->group_id, pos, n);
	struct task_group g;
	if (store_group_get(s, t->group_id, &g, &e) == 0) {
		if (g.chosen && !strcmp(g.chosen, t->id))
			printf(_(", picked"));
		else if (g.chosen)
			printf(_(", %s was picked"), g.chosen);
		task_group_free(&g);
	}
	putchar('\n');
}

int cmd_show(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("show", argc, argv, "help json", &tv);
	if (rc >= 0)
		return rc;
	const struct task_row t = tv.t;
	struct config cfg;
	int have_cfg = cli_config_soft(&cfg);
	const struct config *conf = have_cfg ? &cfg : NULL;
	if (tv.o.json) {
		cli_json_print(taskjson_full(tv.s, &t, conf));
	} else {
		char when[64];
		time_t c = (time_t)t.created;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&c));
		printf("%-8s %s  %s\n", show_label(_("task")), t.id, task_status_label(t.status));
		printf("%-8s %s\n", show_label(_("repo")), t.repo);
		printf("%-8s %s\n", show_label(_("agent")), t.agent);
		/* A branch or base may be the agent's words (a follow-up's
		 * base): through the sanitizer on a terminal. */
		printf("%-8s ", show_label(_("branch")));
		cli_put_str(stdout, t.branch);
		putchar('\n');
		if (t.base) {
			printf("%-8s ", show_label(_("base")));
			cli_put_str(stdout, t.base);
			putchar('\n');
		}
		if (t.head)
			printf("%-8s %s\n", show_label(_("head")), t.head);
		show_made_with(&t);
		show_github(tv.s, &t);
		printf("%-8s %s\n", show_label(_("queued")), when);
		printf("%-8s", show_label(_("steps")));
		for (size_t i = 0; i < t.nsteps; i++)
			printf("%s %s %.1fs", i ? "," : "", task_status_label(t.steps[i].status),
			       t.steps[i].at);
		putchar('\n');
		if (t.error) {
			/* The first line says what failed; the detail (a test
			 * output's tail) follows, indented under it. */
			printf("%-8s ", show_label(_("error")));
			const char *line = t.error;
			for (int first = 1; *line; first = 0) {
				size_t n = strcspn(line, "\n");
				if (!first)
					printf("%-8s   ", "");
				cli_put_text(stdout, line, n);
				putchar('\n');
				line += n + (line[n] == '\n');
			}
		}
		if (t.reason)
			printf("%-8s %s\n", show_label(_("reason")), task_reason_label(t.reason));
		if (t.attempts > 1)
			printf("%-8s %d\n", show_label(_("attempts")), t.attempts);
		if (t.failed_round && t.status == TASK_REVIEW) {
			/* The round after this one did not reach review: what
			 * it did and why are the reviewer's to see. */
			printf("%-8s ", show_label(_("retry")));
			printf(_("round %d did not reach review: "), t.failed_round);
			/* Its first line; the test output after it is in the log
			 * and in --json. */
			const char *why = t.failed_why ? t.failed_why : "?";
			char *first = xstrndup(why, strcspn(why, "\n"));
			put_visible_str(stdout, first);
			free(first);
			putchar('\n');
			if (t.failed_head) {
				printf("%-8s ", "");
				printf(_("its work: paddock diff --failed %s\n"), t.id);
			}
			printf("%-8s ", "");
			printf(_("send the notes again: paddock request-changes --again %s\n"), t.id);
		}
		if (t.follow_of)
			printf("%-8s %s\n", show_label(_("follows")), t.follow_of);
		show_group(tv.s, &t);
		printf("%-8s ", show_label(_("text")));
		put_visible_str(stdout, t.text);
		putchar('\n');
		show_usage(tv.s, &t, conf, have_cfg);
		show_gate(tv.s, &t);
		show_egress(tv.s, &t);
	}
	if (have_cfg)
		config_free(&cfg);
	cli_task_verb_end(&tv);
	return 0;
}
