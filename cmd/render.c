/* A list row, a group and a recipe as the command line prints them, from
 * their JSON, for the local verbs and the remote ones alike (render.h). */
#include "autoconfig.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "audit.h"
#include "buf.h"
#include "cli.h"
#include "config.h"
#include "i18n.h"
#include "recipe.h"
#include "sanitize.h"
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

static long long jint(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* ---------------------------------------------------------------- list */

/* The first line of s, at most max bytes, never a UTF-8 character cut in
 * half; malloc'd. */
static char *first_line(const char *s, size_t max)
{
	size_t n = strcspn(s, "\n");
	if (n > max)
		n = max;
	while (n > 0 && s[n] && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return xstrndup(s, n);
}

/* What the row says before the title: what it follows, its group, a
 * confirmation it waits for, test mode, its pull request's trouble. */
static void row_marks(json_t *j, enum task_status st)
{
	json_t *gp = json_object_get(j, "group_position");
	if (jstr(j, "follow_of"))
		printf(_("(follows %s) "), jstr(j, "follow_of"));
	if (jstr(j, "group") && jint(gp, "position"))
		printf(_("(group %s, %d of %d) "), jstr(j, "group"), (int)jint(gp, "position"),
		       (int)jint(gp, "size"));
	if (st == TASK_QUEUED && jstr(j, "confirm") && !strcmp(jstr(j, "confirm"), "needed")) {
		char usd[32];
		units_format_money(jnum(j, "estimate"), 2, usd, sizeof usd);
		if (jnum(j, "estimate") > 0)
			printf(_("(needs confirmation, estimated $%s) "), usd);
		else
			printf("%s ", _("(needs confirmation)"));
	}
	if (json_is_true(json_object_get(j, "dry_run")))
		printf("%s ", _("(dry run)"));
	/* Approved and pushed, its pull request not open (paddock pr). */
	if (st == TASK_DONE && json_is_object(json_object_get(j, "pull_request_error")) &&
	    !jstr(j, "pull_request"))
		printf("%s ", _("[pr failed]"));
	const char *ps = jstr(j, "pr_state") ? jstr(j, "pr_state") : "";
	if (st == TASK_DONE && jstr(j, "pull_request") && (!strcmp(ps, "merged") ||
	                                                  !strcmp(ps, "closed")))
		printf("%s ", !strcmp(ps, "merged") ? _("[merged]") : _("[pr closed]"));
}

void render_list_row(json_t *j, int first)
{
	/* Statuses in the language of messages (--json keeps the names):
	 * the column is as wide as the widest of them. */
	int sw = cli_cols(_("STATUS"));
	for (int k = 0; k < TASK_NSTATUS; k++)
		if (cli_cols(task_status_label((enum task_status)k)) > sw)
			sw = cli_cols(task_status_label((enum task_status)k));
	if (first) {
		printf("%-10s  ", _("ID"));
		cli_pad(_("STATUS"), sw, 0);
		printf("  %-12s  %-12s  %s\n", _("REPO"), _("AGENT"), _("TEXT"));
	}
	json_t *in = json_object_get(j, "inputs");
	char *inputs = json_is_object(in) ? json_dumps(in, JSON_COMPACT | JSON_PRESERVE_ORDER)
	                                  : NULL;
	const char *txt = jstr(j, "text");
	char *title = recipe_task_title(inputs, txt ? txt : "");
	char *text = first_line(title, 60);
	free(title);
	free(inputs);
	const char *s = jstr(j, "status");
	int sti = s ? task_status_parse(s) : -1;
	enum task_status st = sti < 0 ? TASK_QUEUED : (enum task_status)sti;
	printf("%-10s  ", jstr(j, "id") ? jstr(j, "id") : "?");
	cli_pad(task_status_label(st), sw, 0);
	printf("  %-12s  %-12s  ", jstr(j, "repo") ? jstr(j, "repo") : "",
	       jstr(j, "agent") ? jstr(j, "agent") : "");
	row_marks(j, st);
	cli_put_str(stdout, text);
	putchar('\n');
	free(text);
}

/* ---------------------------------------------------------------- add */

void render_added(json_t *j)
{
	json_t *tasks = json_object_get(j, "tasks"), *t;
	size_t i;
	if (jstr(j, "group"))
		printf("%s\n", jstr(j, "group"));
	if (!json_is_array(tasks))
		tasks = NULL;
	json_array_foreach(tasks, i, t)
		printf("%s\n", jstr(t, "id") ? jstr(t, "id") : "?");
	if (!tasks)
		printf("%s\n", jstr(j, "id") ? jstr(j, "id") : "?");
	if (!jstr(j, "confirm") || strcmp(jstr(j, "confirm"), "needed"))
		return;
	char usd[32];
	units_format_money(jnum(j, "estimate"), 2, usd, sizeof usd);
	for (i = 0; i < (tasks ? json_array_size(tasks) : 1); i++) {
		json_t *x = tasks ? json_array_get(tasks, i) : j;
		const char *id = jstr(x, "id") ? jstr(x, "id") : "?";
		if (jnum(j, "estimate") > 0)
			fprintf(stderr, _("paddock: task %s waits for a confirmation of its estimated "
			                  "cost (%s, over confirm-over); confirm it with: paddock "
			                  "confirm %s\n"), id, usd, id);
		else
			fprintf(stderr, _("paddock: task %s waits for a confirmation: its cost cannot "
			                  "be estimated (no budget, no history) and confirm-over is "
			                  "set; confirm it with: paddock confirm %s\n"), id, id);
	}
}

/* ---------------------------------------------------------------- group */

/* A duration as a clock: "0:42", "1:02:03"; "-" when not started. */
static void clock_cell(double secs, char *out, size_t len)
{
	if (secs < 0) {
		snprintf(out, len, "-");
		return;
	}
	long s = (long)secs;
	if (s >= 3600)
		snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

enum { G_ID, G_AGENT, G_STATUS, G_TESTS, G_FILES, G_INS, G_DEL, G_COST, G_TIME, G_FINDINGS,
       G_N };

/* One member's cells, newly allocated. */
static void member_cells(json_t *m, char *c[G_N])
{
	json_t *ch = json_object_get(m, "change"), *f = json_object_get(m, "findings");
	const char *tests = jstr(m, "tests");
	int st = jstr(m, "status") ? task_status_parse(jstr(m, "status")) : -1;
	char b[64];
	c[G_ID] = xstrdup(jstr(m, "id") ? jstr(m, "id") : "?");
	c[G_AGENT] = xstrdup(jstr(m, "agent") ? jstr(m, "agent") : "?");
	c[G_STATUS] = xstrdup(st < 0 ? "?" : task_status_label((enum task_status)st));
	/* group_tests_word's words */
	c[G_TESTS] = xstrdup(!tests ? "-" : !strcmp(tests, "passed") ? _("passed")
	                     : !strcmp(tests, "failed") ? _("failed") : _("not run"));
	int has = json_is_object(ch);
	c[G_FILES] = has ? xasprintf("%lld", jint(ch, "files")) : xstrdup("-");
	c[G_INS] = has ? xasprintf("+%lld", jint(ch, "insertions")) : xstrdup("-");
	c[G_DEL] = has ? xasprintf("-%lld", jint(ch, "deletions")) : xstrdup("-");
	/* "+": some model had no price, so the cost is at least this. */
	c[G_COST] = jint(m, "requests") ? xasprintf("$%.2f%s", jnum(m, "cost"),
	            json_is_true(json_object_get(m, "priced")) ? "" : "+") : xstrdup("-");
	clock_cell(json_is_number(json_object_get(m, "seconds")) ? jnum(m, "seconds") : -1, b,
	           sizeof b);
	c[G_TIME] = xstrdup(b);
	/* block and warn are the policy's words, as show prints them. */
	long long bl = jint(f, "block"), wa = jint(f, "warn");
	c[G_FINDINGS] = bl || wa ? xasprintf("%lld block, %lld warn", bl, wa) : xstrdup(_("none"));
}

static void group_table(json_t *mem)
{
	const char *title[G_N] = { _("ID"), _("AGENT"), _("STATUS"), _("TESTS"), _("FILES"),
	                           "+", "-", _("COST"), _("TIME"), _("FINDINGS") };
	static const int right[G_N] = { [G_FILES] = 1, [G_INS] = 1, [G_DEL] = 1, [G_COST] = 1,
	                                [G_TIME] = 1 };
	size_t n = json_array_size(mem), i;
	json_t *m;
	char *(*cell)[G_N] = xcalloc(n ? n : 1, sizeof *cell);
	int w[G_N];
	for (int k = 0; k < G_N; k++)
		w[k] = cli_cols(title[k]);
	json_array_foreach(mem, i, m) {
		member_cells(m, cell[i]);
		for (int k = 0; k < G_N; k++)
			if (cli_cols(cell[i][k]) > w[k])
				w[k] = cli_cols(cell[i][k]);
	}
	printf("   #  ");
	for (int k = 0; k < G_N; k++) {
		cli_pad(title[k], k == G_N - 1 ? 0 : w[k], right[k]);
		fputs(k == G_N - 1 ? "\n" : "  ", stdout);
	}
	json_array_foreach(mem, i, m) {
		/* The picked one is marked, as git branch marks the current. */
		printf("%s %2d  ", json_is_true(json_object_get(m, "picked")) ? "*" : " ",
		       (int)jint(m, "position"));
		for (int k = 0; k < G_N; k++) {
			cli_pad(cell[i][k], k == G_N - 1 ? 0 : w[k], right[k]);
			fputs(k == G_N - 1 ? "\n" : "  ", stdout);
			free(cell[i][k]);
		}
	}
	free(cell);
}

void render_group(json_t *j)
{
	json_t *mem = json_object_get(j, "members"), *m, *picked = NULL;
	size_t i;
	const char *id = jstr(j, "id") ? jstr(j, "id") : "?";
	printf("%-8s %s  ", _("group"), id);
	printf(_("best of %zu"), json_array_size(mem));
	putchar('\n');
	const char *text = jstr(j, "text") ? jstr(j, "text") : "";
	printf("%-8s ", _("text"));
	cli_put_text(stdout, text, strcspn(text, "\n"));
	putchar('\n');
	/* group_statuses' brief, in the JSON's order (the same). */
	struct buf b = {0};
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(j, "statuses"), k, v)
		buf_printf(&b, "%s%lld %s", b.len ? ", " : "", (long long)json_integer_value(v), k);
	printf("%-8s %s\n", _("status"), b.data ? b.data : "-");
	buf_free(&b);
	printf("%-8s ", _("picked"));
	json_array_foreach(mem, i, m)
		if (jstr(j, "picked") && jstr(m, "id") && !strcmp(jstr(m, "id"), jstr(j, "picked")))
			picked = m;
	if (picked)
		printf("%s (%s)\n", jstr(picked, "id"), jstr(picked, "agent") ? jstr(picked, "agent") : "?");
	else
		printf(_("none yet: 'paddock group pick %s ID' approves one and rejects the "
		         "others\n"), id);
	putchar('\n');
	group_table(mem);
}

/* ---------------------------------------------------------------- recipe */

/* One default of a recipe, when set: key's value in the JSON (name),
 * strings as they are, numbers as money (USD), seconds ("s") or a count. */
static void show_default(json_t *r, const char *key, const char *name, char how)
{
	json_t *x = json_object_get(r, name);
	char v[32];
	if (json_is_string(x)) {
		printf("  %-13s %s\n", key, json_string_value(x));
		return;
	}
	if (!json_is_number(x))
		return;
	if (how == '$')
		units_format_money(json_number_value(x), 2, v, sizeof v);
	else if (how == 's')
		snprintf(v, sizeof v, "%.0fs", json_number_value(x));
	else
		snprintf(v, sizeof v, "%lld", (long long)json_integer_value(x));
	printf("  %-13s %s\n", key, v);
}

static void recipe_defaults(json_t *r)
{
	printf(_("defaults (unset ones are the repo's or the configuration's):\n"));
	static const struct {
		const char *key, *name;
		char how;
	} defs[] = {
		{ "repo", "repo", 0 }, { "agent", "agent", 0 }, { "base", "base", 0 },
		{ "test", "test", 0 }, { "budget", "budget", '$' }, { "timeout", "timeout", 's' },
		{ "approval", "approval", 0 }, { "confirm-over", "confirm_over", '$' },
		{ "fix-rounds", "fix_rounds", 'n' },
	};
	for (size_t k = 0; k < sizeof defs / sizeof defs[0]; k++)
		show_default(r, defs[k].key, defs[k].name, defs[k].how);
}

void render_recipes(json_t *list)
{
	if (!json_array_size(list)) {
		printf(_("no recipes; add a [recipe \"NAME\"] section with a prompt\n"));
		return;
	}
	size_t i;
	json_t *r;
	json_array_foreach(list, i, r) {
		struct buf in = {0};
		size_t k;
		json_t *y;
		json_array_foreach(json_object_get(r, "inputs"), k, y)
			buf_printf(&in, "%s%s", k ? "," : "", jstr(y, "name") ? jstr(y, "name") : "?");
		printf("%-20s %-12s %s\n", jstr(r, "name") ? jstr(r, "name") : "?",
		       in.data ? in.data : "-",
		       jstr(r, "description") ? config_recipe_text(jstr(r, "description")) : "");
		buf_free(&in);
	}
}

void render_recipe(json_t *r)
{
	const char *name = jstr(r, "name") ? jstr(r, "name") : "?";
	printf(json_is_true(json_object_get(r, "builtin")) ? _("recipe %s (ready-made)\n")
	                                                   : _("recipe %s\n"), name);
	if (jstr(r, "description"))
		printf("  %s\n", config_recipe_text(jstr(r, "description")));
	printf(_("inputs:\n"));
	json_t *in = json_object_get(r, "inputs"), *x;
	size_t i;
	if (!json_array_size(in))
		printf(_("  none\n"));
	json_array_foreach(in, i, x)
		printf("  %-13s %s\n", jstr(x, "name") ? jstr(x, "name") : "?",
		       jstr(x, "help") ? config_recipe_text(jstr(x, "help")) : "");
	recipe_defaults(r);
	printf(_("contract:\n"));
	json_t *ct = json_object_get(r, "contract");
	if (!json_array_size(ct))
		printf(_("  a change, and the tests pass (the default)\n"));
	json_array_foreach(ct, i, x)
		printf("  %s\n", json_string_value(x) ? json_string_value(x) : "");
	printf(_("prompt:\n"));
	/* The file's text, but shown on a terminal: no control sequence. */
	struct buf clean = {0};
	const char *p = jstr(r, "prompt") ? jstr(r, "prompt") : "";
	sanitize_text(p, strlen(p), 0, &clean);
	for (char *line = clean.data, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		printf("  %s\n", line);
	}
	buf_free(&clean);
}

void render_audit(json_t *list)
{
	if (!json_array_size(list)) {
		printf(_("no decisions, refusals or role changes yet\n"));
		return;
	}
	size_t i;
	json_t *j;
	json_array_foreach(list, i, j) {
		struct audit_event ev;
		if (audit_event_from_json(j, &ev) < 0)
			continue;
		char *line = audit_event_text(&ev);
		cli_put_str(stdout, line);
		fputc('\n', stdout);
		free(line);
		audit_event_clear(&ev);
	}
}
