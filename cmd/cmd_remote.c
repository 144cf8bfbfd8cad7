/* paddock --server URL VERB: the verbs against a paddock serve's HTTP API
 * (client.h), with the output and exit statuses of the local verbs.  One
 * dispatch point (cli_remote_main) and one table (remote_verbs): a verb
 * is remote here, or refused as one that works only on the server's
 * machine.  Nothing here opens a data directory or a store; the only local
 * file read is the configuration's [remote] section and its token file. */
#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "client.h"
#include "config.h"
#include "dash.h"
#include "gate.h"
#include "i18n.h"
#include "recipe.h"
#include "sanitize.h"
#include "store.h"
#include "submit.h"
#include "task.h"
#include "taskjson.h"
#include "units.h"

/* A token file's most: a token is a line. */
#define REMOTE_TOKEN_MAX 4096

/* ---------------------------------------------------------------- where */

char *cli_remote_server(const char *flag)
{
	if (flag)
		return xstrdup(flag);
	const char *env = getenv("PADDOCK_SERVER");
	if (env && *env)
		return xstrdup(env);
	/* [remote] server: a configuration that cannot be read has none (the
	 * local verb then says what is wrong with it). */
	struct config cfg;
	struct err e = {{0}};
	char *server = NULL;
	if (config_load(&cfg, NULL, &e) == 0 && cfg.remote_server && *cfg.remote_server)
		server = xstrdup(cfg.remote_server);
	config_free(&cfg);
	return server;
}

/* The token: PADDOCK_TOKEN, else [remote] token-file, which must be a
 * regular file that neither group nor others may read (ssh's rule for a
 * key); "" when there is none.  NULL with the message printed. */
static char *remote_token(int *code)
{
	*code = EXIT_USAGE;
	const char *env = getenv("PADDOCK_TOKEN");
	if (env && *env)
		return xstrdup(env);
	struct config cfg;
	struct err e = {{0}};
	if (config_load(&cfg, NULL, &e) < 0) {
		config_free(&cfg);
		cli_die(EXIT_USAGE, _("%s\n  (fix the configuration; 'paddock config check' lists "
		                      "every problem)"), e.msg);
		return NULL;
	}
	char *file = cfg.remote_token_file ? xstrdup(cfg.remote_token_file) : NULL;
	config_free(&cfg);
	if (!file)
		return xstrdup("");
	char *tok = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		cli_die(EXIT_USAGE, _("cannot read the token file %s ([remote] token-file): %s"), file,
		        strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		cli_die(EXIT_USAGE, _("the token file %s ([remote] token-file) is not a regular file"),
		        file);
	} else if (st.st_mode & 077) {
		cli_die(EXIT_USAGE, _("the token file %s ([remote] token-file) may be read by others "
		                      "(mode %04o); make it yours alone: chmod 600 %s"), file,
		        (unsigned)(st.st_mode & 07777), file);
	} else {
		char buf[REMOTE_TOKEN_MAX + 2];
		ssize_t n = read(fd, buf, REMOTE_TOKEN_MAX + 1);
		buf[n > 0 ? n : 0] = '\0';
		/* Its first line, without the blanks around it. */
		size_t len = n > 0 ? strcspn(buf, "\r\n") : 0;
		while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
			len--;
		if (n < 0 || n > REMOTE_TOKEN_MAX || len == 0)
			cli_die(EXIT_USAGE, _("the token file %s ([remote] token-file) holds no token (a "
			                      "line under 4 KiB)"), file);
		else
			tok = xstrndup(buf, len);
		explicit_bzero(buf, sizeof buf);
	}
	if (fd >= 0)
		close(fd);
	free(file);
	return tok;
}

/* ---------------------------------------------------------------- helpers */

static struct client *rcl;      /* this process's client */

/* The exit status of an error from the server, as the local verb exits:
 * 2 for what was wrong with the request, else 1. */
static int remote_fail(const struct err *e)
{
	/* cli_die shows the server's words with every escape as a mark. */
	return cli_die(e->kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e->msg);
}

/* "/tasks/ID" + rest (ID escaped; the caller checked it with cli_id_usage). */
static char *task_path(const char *id, const char *rest)
{
	char *x = client_escape(id);
	char *p = xasprintf("/tasks/%s%s", x, rest ? rest : "");
	free(x);
	return p;
}

static json_t *get_task(const char *id, struct err *e)
{
	char *p = task_path(id, NULL);
	json_t *j = client_get_json(rcl, p, e);
	free(p);
	if (j && !json_is_object(j)) {
		json_decref(j);
		err_kind_set(e, ERR_REMOTE, _("the server's task is not a JSON object"));
		return NULL;
	}
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double jnum(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The task as list and add print it (taskjson_task) from GET /tasks/ID,
 * which adds what show prints (taskjson_full): those keys dropped. */
static json_t *task_row_json(json_t *full)
{
	static const char *const extra[] = { "gate", "rounds", "github", "decisions", "egress",
	                                     "pauses", "webhooks" };
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
		json_object_del(full, extra[i]);
	return full;
}

static enum task_status jstatus(json_t *o)
{
	const char *s = jstr(o, "status");
	int st = s ? task_status_parse(s) : -1;
	return st < 0 ? TASK_QUEUED : (enum task_status)st;
}

/* The one-ID verbs: options parsed, the id checked.  -1 to go on. */
static int one_id(const char *name, int argc, char **argv, const char *allowed,
                  struct cli_opts *o, int operands)
{
	const struct cli_verb *v = cli_verb_find(name);
	int rc = cli_parse_opts(v, argc, argv, o, allowed);
	if (rc >= 0)
		return rc;
	if (argc - optind != operands)
		return cli_bad_usage(v);
	return cli_id_usage(argv[optind]);
}

/* ---------------------------------------------------------------- list */

/* The list's text row of task j, as cmd_list prints it. */
static void list_row(json_t *j, int first, json_t *groups)
{
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
	free(inputs);
	size_t n = strcspn(title, "\n");
	if (n > 60)
		n = 60;
	while (n > 0 && title[n] && ((unsigned char)title[n] & 0xc0) == 0x80)
		n--;
	title[n] = '\0';
	enum task_status st = jstatus(j);
	printf("%-10s  ", jstr(j, "id") ? jstr(j, "id") : "?");
	cli_pad(task_status_label(st), sw, 0);
	printf("  %-12s  %-12s  ", jstr(j, "repo") ? jstr(j, "repo") : "",
	       jstr(j, "agent") ? jstr(j, "agent") : "");
	if (jstr(j, "follow_of"))
		printf(_("(follows %s) "), jstr(j, "follow_of"));
	const char *g = jstr(j, "group");
	if (g) {
		/* Its place among the group's members, in the order queued
		 * (group_position); the group asked for once per list. */
		json_t *m = json_object_get(groups, g);
		if (!m) {
			struct err e = {{0}};
			char *x = client_escape(g);
			char *p = xasprintf("/groups/%s", x);
			json_t *gj = client_get_json(rcl, p, &e);
			m = json_is_object(gj) ? json_object_get(gj, "members") : NULL;
			json_object_set(groups, g, m ? m : json_null());
			json_decref(gj);
			free(p);
			free(x);
			m = json_object_get(groups, g);
		}
		size_t k;
		json_t *mem;
		int pos = 0;
		json_array_foreach(m, k, mem)
			if (jstr(mem, "id") && jstr(j, "id") && !strcmp(jstr(mem, "id"), jstr(j, "id")))
				pos = (int)json_integer_value(json_object_get(mem, "position"));
		if (pos)
			printf(_("(group %s, %d of %d) "), g, pos, (int)json_array_size(m));
	}
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
	if (st == TASK_DONE && json_is_object(json_object_get(j, "pull_request_error")) &&
	    !jstr(j, "pull_request"))
		printf("%s ", _("[pr failed]"));
	cli_put_str(stdout, title);
	putchar('\n');
	free(title);
}

static int r_list(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("list");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json status limit since before");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	unsigned mask = 0;
	double since = 0;
	if (cli_list_statuses(o.status, &mask) < 0 || (o.since && cli_list_since(o.since, &since) < 0))
		return EXIT_USAGE;
	long limit = 100;
	if (o.limit) {
		char *end;
		errno = 0;
		limit = strtol(o.limit, &end, 10);
		if (errno || end == o.limit || *end || limit < 0)
			return cli_die(EXIT_USAGE, _("--limit '%s' is not a number of tasks (0 lists "
			                             "them all)"), o.limit);
	}
	if (o.before && (rc = cli_id_usage(o.before)) >= 0)
		return rc;
	/* Pages of the API, newest first; one status is asked of the server,
	 * several are picked here.  Oldest first once all are in. */
	int one = -1;
	for (int k = 0; k < TASK_NSTATUS; k++)
		if (mask == TASK_MASK(k))
			one = k;
	char *bx = o.before ? client_escape(o.before) : NULL;
	char *path = xasprintf("/tasks?limit=500%s%s%s%s", one >= 0 ? "&status=" : "",
	                       one >= 0 ? task_status_name((enum task_status)one) : "",
	                       bx ? "&before=" : "", bx ? bx : "");
	free(bx);
	json_t *all = json_array();
	long total = -1;
	struct err e = {{0}};
	int more = 1;
	while (path && more) {
		json_t *page = client_get_json(rcl, path, &e);
		free(path);
		path = NULL;
		if (!page) {
			json_decref(all);
			return remote_fail(&e);
		}
		if (total < 0)
			total = (long)json_integer_value(json_object_get(page, "total"));
		size_t i;
		json_t *t;
		json_array_foreach(json_object_get(page, "tasks"), i, t) {
			if (since > 0 && jnum(t, "created") < since) {
				more = 0;
				break;
			}
			if (mask && !(mask & TASK_MASK(jstatus(t))))
				continue;
			json_array_append(all, t);
			if (limit > 0 && (long)json_array_size(all) >= limit) {
				more = 0;
				break;
			}
		}
		const char *next = jstr(page, "next");
		if (more && next && *next == '/')
			path = xstrdup(next);
		json_decref(page);
	}
	free(path);
	size_t n = json_array_size(all);
	json_t *ordered = json_array();
	for (size_t i = n; i > 0; i--)
		json_array_append(ordered, json_array_get(all, i - 1));
	json_decref(all);
	if (o.json) {
		cli_json_print(ordered);
	} else {
		size_t i;
		json_t *t, *groups = json_object();
		json_array_foreach(ordered, i, t)
			list_row(t, i == 0, groups);
		json_decref(groups);
		if (n == 0 && !mask && !o.since && !o.before)
			printf(_("no tasks; add one with: paddock add --repo NAME \"what to do\"\n"));
		else if (n == 0)
			printf(_("no tasks match\n"));
		if (limit > 0 && (long)n == limit && total > (long)n && one == (mask ? one : -1) &&
		    !o.since)
			fprintf(stderr, _("paddock: the newest %zu of %zu tasks; --limit 0 lists them "
			                  "all, --before %s the ones before\n"), n, (size_t)total,
			        jstr(json_array_get(ordered, 0), "id"));
		json_decref(ordered);
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

/* ---------------------------------------------------------------- show */

/* A label in its 8-column cell (display width, as cmd_show's). */
static void label(const char *l)
{
	int w = cli_cols(l);
	printf("%s%*s ", l, w < 8 ? 8 - w : 0, "");
}

static void put_lines(const char *text, int visible)
{
	for (int first = 1; *text; first = 0) {
		size_t n = strcspn(text, "\n");
		if (!first)
			printf("%-8s ", "");
		if (visible)
			cli_put_visible(stdout, text, n, SANITIZE_KEEP_TAB);
		else
			cli_put_text(stdout, text, n);
		putchar('\n');
		text += n + (text[n] == '\n');
	}
}

/* A decision's notes: the first line after ": ", each further one
 * indented under the decision (as cmd_show's put_notes). */
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

/* The rounds and the decisions made on each, in the local show's words
 * (task_history_round_text, task_decision_text) from the task's JSON. */
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
			.n = (int)json_integer_value(json_object_get(r, "round")),
			.from = (char *)jstr(r, "from"), .head = (char *)jstr(r, "head"),
			.started = jnum(r, "started"), .ended = jnum(r, "ended"),
			.kind = (char *)jstr(r, "kind"),
		};
	}
	for (size_t i = 0; i < h.ndecisions; i++) {
		json_t *d = json_array_get(dec, i);
		h.decisions[i] = (struct task_decision){
			.round = (int)json_integer_value(json_object_get(d, "round")),
			.action = (char *)(jstr(d, "action") ? jstr(d, "action") : "?"),
			.notes = (char *)jstr(d, "notes"),
			.actor = (char *)(jstr(d, "actor") ? jstr(d, "actor") : "?"),
			.at = jnum(d, "at"),
		};
	}
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

/* A pull request that failed to open (as cmd_show's show_pr_failure). */
static void show_pr_failure(json_t *j, json_t *pe)
{
	char last[16], next[16];
	int n = (int)json_integer_value(json_object_get(pe, "attempts"));
	clock_time(jnum(pe, "at"), last, sizeof last);
	label(_("pull req"));
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

/* A task of approval auto or auto-push that waits at review: the hold of
 * its round (as cmd_show's show_hold). */
static void show_hold(json_t *j)
{
	if (jstatus(j) != TASK_REVIEW)
		return;
	json_int_t round = json_integer_value(json_object_get(j, "round"));
	const char *hold = NULL;
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(j, "decisions"), i, d)
		if (json_integer_value(json_object_get(d, "round")) == round && jstr(d, "action") &&
		    !strcmp(jstr(d, "action"), "hold") && jstr(d, "notes"))
			hold = jstr(d, "notes");
	if (hold) {
		label(_("held"));
		cli_put_text(stdout, hold, strcspn(hold, "\n"));
		putchar('\n');
	}
}

/* The gate of the task's JSON, as show prints it: its summary parsed as
 * the store's (gate_summary_parse), so that the local show's words and
 * order (gate.h) hold. */
static void show_gate(json_t *j)
{
	json_t *gj = json_object_get(j, "gate");
	enum task_status st = jstatus(j);
	struct gate_summary g;
	int have = 0;
	if (json_is_object(gj)) {
		char *txt = json_dumps(gj, JSON_COMPACT);
		struct err e = {{0}};
		have = txt && gate_summary_parse(txt, &g, &e) == 0;
		free(txt);
		/* The JSON's findings are the summary's, in order, with
		 * "overridden" added (gate_summary_json). */
		json_t *fj = json_object_get(gj, "findings");
		for (size_t i = 0; have && i < g.nfindings && i < json_array_size(fj); i++)
			g.findings[i].overridden = json_is_true(json_object_get(json_array_get(fj, i),
			                                                        "overridden"));
	}
	const char *mismatch = have ? gate_mismatch(&g) : NULL;
	if (mismatch) {
		label(_("warning"));
		put_lines(mismatch, 1);
	}
	json_t *gh = json_object_get(j, "github"), *pe = json_object_get(j, "pull_request_error");
	if (jstr(j, "pull_request")) {
		label(_("pull req"));
		/* ghsync_pr_words' words: its state, and its checks. */
		if (jstr(gh, "pr_state") && jstr(gh, "checks")) {
			printf("%s (", jstr(j, "pull_request"));
			printf(_("%s; checks: %s"), jstr(gh, "pr_state"), jstr(gh, "checks"));
			printf(")\n");
		} else if (jstr(gh, "pr_state"))
			printf("%s (%s)\n", jstr(j, "pull_request"), jstr(gh, "pr_state"));
		else
			printf("%s\n", jstr(j, "pull_request"));
	} else if (json_is_object(pe)) {
		show_pr_failure(j, pe);
	}
	const char *head = jstr(j, "head"), *base = jstr(j, "base");
	if (jstr(j, "pushed")) {
		label(_("pushed"));
		printf("%s\n", jstr(j, "pushed"));
	} else if (st == TASK_DONE && head && base && !strcmp(head, base)) {
		label(_("pushed"));
		printf("%s\n", _("nothing: the round changed nothing"));
	} else if (st == TASK_DONE && jstr(j, "approval") && !strcmp(jstr(j, "approval"), "never")) {
		label(_("pushed"));
		printf("%s\n", _("nothing: the branch is kept in the mirror (approval never)"));
	}
	show_hold(j);
	int round = (int)json_integer_value(json_object_get(j, "round"));
	if (round > 1 || st == TASK_REVIEW) {
		label(_("round"));
		printf("%d%s%s\n", round,
		       json_is_true(json_object_get(j, "sandbox_kept"))
		       ? _(" (sandbox kept for the next round)") : "",
		       jstr(j, "pending") ? _(" (changes requested; waiting for the scheduler)") : "");
	}
	if (jstr(j, "summary") && *jstr(j, "summary")) {
		label(_("summary"));
		put_lines(jstr(j, "summary"), 1);
	}
	if (!have) {
		show_rounds(j);
		return;
	}
	if (g.diffstat && *g.diffstat) {
		label(_("changes"));
		put_lines(g.diffstat, 1);
	}
	const struct gate_tests *tb = &g.tests.before, *ta = &g.tests.after;
	label(_("tests"));
	printf("%s %s, %s %s", _("before:"), tests_word(tb), _("after:"), tests_word(ta));
	if (ta->verified)
		printf(" %s", _("(verified on a clean checkout)"));
	if (g.tests.agent.ran)
		printf(", %s %s", _("agent's run:"), tests_word(&g.tests.agent));
	putchar('\n');
	char *fix = gate_fix_note(&g);
	if (fix)
		printf("%-8s   %s\n", "", fix);
	free(fix);
	if (g.contract.nclauses) {
		struct buf c = {0};
		gate_contract_text(&g, &c);
		label(_("contract"));
		cli_put_visible(stdout, c.data ? c.data : "", c.len,
		                SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
		putchar('\n');
		buf_free(&c);
	}
	if (tb->log && *tb->log)
		printf("%-8s   %s %s\n", "", _("before's log:"), tb->log);
	if (ta->log && *ta->log)
		printf("%-8s   %s %s\n", "", _("after's log:"), ta->log);
	if (g.nfindings)
		printf("%s\n", _("findings"));
	for (int rank = 0; rank < GATE_FINDING_RANKS; rank++)
		for (size_t i = 0; i < g.nfindings; i++) {
			const struct gate_finding *f = &g.findings[i];
			if (gate_finding_rank(f) != rank)
				continue;
			printf("  %-5s  ", gate_action_name(f->action));
			if (f->overridden)
				printf("%s  ", _("[overridden]"));
			const char *name = f->name ? f->name : "", *detail = f->detail ? f->detail : "";
			cli_put_visible(stdout, name, strlen(name), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
			printf("  ");
			cli_put_visible(stdout, detail, strlen(detail),
			                SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
			putchar('\n');
		}
	gate_summary_free(&g);
	show_rounds(j);
}

/* A member of a best-of-N group: "group G (2 of 3)", and its pick (as
 * cmd_show's show_group). */
static void show_group(json_t *j)
{
	const char *gid = jstr(j, "group"), *id = jstr(j, "id");
	if (!gid || !id)
		return;
	struct err e = {{0}};
	char *x = client_escape(gid);
	char *p = xasprintf("/groups/%s", x);
	json_t *g = client_get_json(rcl, p, &e);
	free(p);
	free(x);
	size_t i;
	json_t *m;
	int pos = 0;
	json_array_foreach(json_object_get(g, "members"), i, m)
		if (jstr(m, "id") && !strcmp(jstr(m, "id"), id))
			pos = (int)json_integer_value(json_object_get(m, "position"));
	if (pos) {
		const char *picked = jstr(g, "picked");
		label(_("group"));
		printf(_("%s (%d of %d)"), gid, pos, (int)json_array_size(json_object_get(g, "members")));
		if (picked && !strcmp(picked, id))
			printf(_(", picked"));
		else if (picked)
			printf(_(", %s was picked"), picked);
		putchar('\n');
	}
	json_decref(g);
}

/* Test mode, after approve: what would have been written (as cmd_show's
 * show_dry_run_record). */
static void show_dry_run_record(json_t *j)
{
	json_t *r = json_object_get(j, "dry_run_record");
	if (!json_is_object(r))
		return;
	const char *rs = jstr(r, "refspec"), *remote = jstr(r, "remote");
	label(_("would"));
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

/* What the task was made with beyond its repo and agent, each line only
 * when given (as cmd_show's show_made_with). */
static void show_made_with(json_t *j)
{
	if (jstr(j, "recipe")) {
		label(_("recipe"));
		/* label() printed the space that "%-8s %s" would */
		printf("%s", jstr(j, "recipe"));
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
	if (jstr(j, "base_ref")) {
		label(_("from"));
		printf("%s\n", jstr(j, "base_ref"));
	}
	if (jstr(j, "test")) {
		label(_("test"));
		cli_put_str(stdout, jstr(j, "test"));
		putchar('\n');
	}
	if (jnum(j, "timeout") > 0)
		printf(_("%-8s %.0fs per round\n"), _("timeout"), jnum(j, "timeout"));
	if (json_is_integer(json_object_get(j, "fix_rounds")))
		printf(_("%-8s %d fix rounds\n"), _("fixes"),
		       (int)json_integer_value(json_object_get(j, "fix_rounds")));
	if (jstr(j, "approval") && strcmp(jstr(j, "approval"), "review") != 0) {
		label(_("approval"));
		printf("%s\n", jstr(j, "approval"));
	}
	if (json_is_true(json_object_get(j, "dry_run"))) {
		label(_("mode"));
		printf("%s\n", _("dry run: approve records what it would push, and pushes nothing"));
	}
	if (jstr(j, "confirm") && !strcmp(jstr(j, "confirm"), "needed") &&
	    jstatus(j) == TASK_QUEUED) {
		char usd[32];
		const char *id = jstr(j, "id") ? jstr(j, "id") : "?";
		units_format_money(jnum(j, "estimate"), 2, usd, sizeof usd);
		label(_("confirm"));
		if (jnum(j, "estimate") > 0)
			printf(_("needs confirmation (estimated $%s): paddock confirm %s\n"), usd, id);
		else
			printf(_("needs confirmation (its cost cannot be estimated): paddock confirm "
			         "%s\n"), id);
	}
	show_dry_run_record(j);
	json_t *c = json_object_get(j, "contract");
	if (json_array_size(c)) {
		size_t i;
		json_t *x;
		printf("%s%*s", _("contract"), cli_cols(_("contract")) < 8 ? 8 - cli_cols(_("contract"))
		                                                          : 0, "");
		json_array_foreach(c, i, x) {
			const char *cl = json_string_value(x) ? json_string_value(x) : "";
			printf("%s ", i ? ";" : "");
			cli_put_text(stdout, cl, strlen(cl));
		}
		putchar('\n');
	}
}

/* "812 B", "1.2 KiB", "3.4 MiB" (as cmd_show's) */
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

/* The egress record: every request through the task's gateway, refused
 * ones marked (as cmd_show's show_egress). */
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
	label(_("egress"));
	printf(_("%zu allowed, %zu refused"), allowed, refused);
	putchar('\n');
	int rounds = json_integer_value(json_object_get(j, "round")) > 1;
	json_array_foreach(eg, i, x) {
		const char *v = jstr(x, "verdict");
		int no = v && !strcmp(v, "refused");
		char when[32], up[32], down[32];
		time_t at = (time_t)jnum(x, "time");
		struct tm tm;
		strftime(when, sizeof when, "%H:%M:%S", localtime_r(&at, &tm));
		printf("  %s  ", when);
		if (rounds)
			printf(_("round %d  "), (int)json_integer_value(json_object_get(x, "round")));
		printf("%-5s  %-7s  %-6s  ", jstr(x, "step") ? jstr(x, "step") : "-",
		       no ? _("REFUSED") : !v ? "?" : !strcmp(v, "unlisted") ? _("unlisted")
		                                                             : _("allowed"),
		       jstr(x, "kind") ? jstr(x, "kind") : "-");
		if (jstr(x, "method")) {
			cli_put_str(stdout, jstr(x, "method"));
			putchar(' ');
		}
		cli_put_str(stdout, jstr(x, "host") ? jstr(x, "host") : "?");
		if (json_integer_value(json_object_get(x, "port")))
			printf(":%d", (int)json_integer_value(json_object_get(x, "port")));
		if (jstr(x, "path")) {
			putchar(' ');
			cli_put_str(stdout, jstr(x, "path"));
		}
		if (json_integer_value(json_object_get(x, "status")))
			printf("  %d", (int)json_integer_value(json_object_get(x, "status")));
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
}

/* Budget, model usage, session and the pauses that hold the task back
 * (as cmd_show's show_usage). */
static void show_usage(json_t *j)
{
	size_t i;
	json_t *s;
	char usd[32];
	const char *from = jstr(j, "budget_from");
	label(_("budget"));
	units_format_money(jnum(j, "budget"), 2, usd, sizeof usd);
	if (jnum(j, "budget") > 0)
		printf(from && !strcmp(from, "task") ? _("$%s (this task's)") : _("$%s (limits.budget)"),
		       usd);
	else
		printf("%s", _("none"));
	if (json_integer_value(json_object_get(j, "budget_tokens")))
		printf(_(", %llu tokens (limits.budget-tokens)"),
		       (unsigned long long)json_integer_value(json_object_get(j, "budget_tokens")));
	putchar('\n');
	json_t *u = json_object_get(j, "usage");
	label(_("usage"));
	if (!jnum(u, "requests") && !jnum(u, "in") && !jnum(u, "out") && !jnum(u, "cache_read") &&
	    !jnum(u, "cache_write") && jnum(u, "cost") <= 0) {
		printf("%s\n", _("none"));
	} else {
		units_format_money(jnum(u, "cost"), 4, usd, sizeof usd);
		printf(_("%llu tokens in, %llu out, cache %llu read, %llu written; %llu requests; "),
		       (unsigned long long)jnum(u, "in"), (unsigned long long)jnum(u, "out"),
		       (unsigned long long)jnum(u, "cache_read"),
		       (unsigned long long)jnum(u, "cache_write"),
		       (unsigned long long)jnum(u, "requests"));
		if (json_is_true(json_object_get(u, "priced")))
			printf("$%s\n", usd);
		else if (jnum(u, "cost") > 0)
			printf(_("$%s (some models not priced)\n"), usd);
		else
			printf("%s\n", _("not priced"));
	}
	if (jstr(j, "session")) {
		label(_("session"));
		cli_put_str(stdout, jstr(j, "session"));
		putchar('\n');
	}
	/* The pauses of its model endpoint that hold it back (the server
	 * listed only those that apply). */
	json_array_foreach(json_object_get(j, "pauses"), i, s) {
		char until[32];
		clock_time(jnum(s, "until"), until, sizeof until);
		const char *ep = jstr(s, "endpoint") ? jstr(s, "endpoint") : "?";
		label(_("paused"));
		if (json_integer_value(json_object_get(s, "status")))
			printf(_("%s is paused until %s (HTTP %d)"), ep, until,
			       (int)json_integer_value(json_object_get(s, "status")));
		else
			printf(_("%s is paused until %s"), ep, until);
		if (jstatus(j) == TASK_QUEUED)
			printf("%s", _("; the task starts after that"));
		putchar('\n');
	}
}

static void show_text(json_t *j)
{
	char when[64];
	time_t c = (time_t)jnum(j, "created");
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&c));
	const char *id = jstr(j, "id") ? jstr(j, "id") : "?";
	label(_("task"));
	printf("%s  %s\n", id, task_status_label(jstatus(j)));
	label(_("repo"));
	printf("%s\n", jstr(j, "repo") ? jstr(j, "repo") : "");
	label(_("agent"));
	printf("%s\n", jstr(j, "agent") ? jstr(j, "agent") : "");
	static const char *const opt[][2] = { { "branch", N_("branch") }, { "base", N_("base") },
	                                      { "head", N_("head") } };
	for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
		if (jstr(j, opt[i][0])) {
			label(_(opt[i][1]));
			cli_put_str(stdout, jstr(j, opt[i][0]));
			putchar('\n');
		}
	show_made_with(j);
	/* The GitHub issue the task came from (its pull request is shown
	 * with the gate). */
	json_t *gh = json_object_get(j, "github");
	if (json_is_object(gh) && json_integer_value(json_object_get(gh, "issue"))) {
		label(_("issue"));
		printf("%s#%lld\n", jstr(gh, "repo") ? jstr(gh, "repo") : "?",
		       (long long)json_integer_value(json_object_get(gh, "issue")));
	}
	if (json_is_true(json_object_get(gh, "branch_deleted"))) {
		label(_("branch"));
		printf("%s\n", _("deleted on GitHub when the pull request was merged"));
	}
	label(_("queued"));
	printf("%s\n", when);
	/* (each step brings its own space) */
	printf("%s%*s", _("steps"), cli_cols(_("steps")) < 8 ? 8 - cli_cols(_("steps")) : 0, "");
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(j, "steps"), i, s) {
		/* [unix time, status]; shown as seconds since it was queued. */
		const char *name = json_string_value(json_array_get(s, 1));
		int st = name ? task_status_parse(name) : -1;
		double at = json_number_value(json_array_get(s, 0)) - jnum(j, "created");
		printf("%s %s %.1fs", i ? "," : "", st < 0 ? "?" : task_status_label((enum task_status)st),
		       at > 0 ? at : 0.0);
	}
	putchar('\n');
	if (jstr(j, "error")) {
		/* The first line says what failed; the detail follows, indented
		 * under it (as the local show). */
		label(_("error"));
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
	if (jstr(j, "reason")) {
		label(_("reason"));
		printf("%s\n", task_reason_label(jstr(j, "reason")));
	}
	if (json_integer_value(json_object_get(j, "attempts")) > 1) {
		label(_("attempts"));
		printf("%d\n", (int)json_integer_value(json_object_get(j, "attempts")));
	}
	json_t *fr = json_object_get(j, "failed_round");
	if (json_is_object(fr) && jstatus(j) == TASK_REVIEW) {
		/* As the local show: the first line of why, and what to do. */
		label(_("retry"));
		printf(_("round %d did not reach review: "),
		       (int)json_integer_value(json_object_get(fr, "round")));
		const char *why = jstr(fr, "error") ? jstr(fr, "error") : "?";
		cli_put_visible(stdout, why, strcspn(why, "\n"), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
		putchar('\n');
		if (jstr(fr, "head")) {
			printf("%-8s ", "");
			printf(_("its work: paddock diff --failed %s\n"), id);
		}
		printf("%-8s ", "");
		printf(_("send the notes again: paddock request-changes --again %s\n"), id);
	}
	if (jstr(j, "follow_of")) {
		label(_("follows"));
		printf("%s\n", jstr(j, "follow_of"));
	}
	show_group(j);
	label(_("text"));
	const char *text = jstr(j, "text") ? jstr(j, "text") : "";
	cli_put_visible(stdout, text, strlen(text), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
	putchar('\n');
	show_usage(j);
	show_gate(j);
	show_egress(j);
}

static int r_show(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("show", argc, argv, "help json", &o, 1);
	if (rc >= 0)
		return rc;
	struct err e = {{0}};
	json_t *j = get_task(argv[optind], &e);
	if (!j)
		return remote_fail(&e);
	if (o.json)
		cli_json_print(j);
	else {
		show_text(j);
		json_decref(j);
	}
	return 0;
}

/* ---------------------------------------------------------------- log */

struct follow {
	const char *id;
	int tty;
	int failed;
	struct err e;
};

static void put_log(const char *s, size_t n, int tty)
{
	if (tty) {
		struct buf b = {0};
		sanitize_text(s, n, 1, &b);
		fwrite(b.data ? b.data : "", 1, b.len, stdout);
		buf_free(&b);
	} else {
		fwrite(s, 1, n, stdout);
	}
}

/* Each log line as it comes; a step that leaves the task neither active
 * nor queued, if it is the task's last, ends it (as the local --follow
 * stops when the task stops). */
static int on_follow(void *arg, const struct client_event *ev)
{
	struct follow *f = arg;
	json_t *d = json_loads(ev->data, 0, NULL);
	int stop = 0;
	if (!strcmp(ev->type, "log")) {
		const char *line = jstr(d, "line");
		if (line) {
			put_log(line, strlen(line), f->tty);
			putchar('\n');
			fflush(stdout);
		}
	} else if (!strcmp(ev->type, "status") || !strcmp(ev->type, "end")) {
		enum task_status st = jstatus(d);
		if (!strcmp(ev->type, "end")) {
			stop = 1;
		} else if (!task_status_is_active(st) && st != TASK_QUEUED) {
			/* Only the task's current step stops it: an earlier
			 * review is history. */
			json_t *t = get_task(f->id, &f->e);
			size_t steps = strtoul(ev->id, NULL, 10);
			stop = t && json_array_size(json_object_get(t, "steps")) <= steps &&
			       !task_status_is_active(jstatus(t)) && jstatus(t) != TASK_QUEUED;
			json_decref(t);
		}
	} else if (!strcmp(ev->type, "error")) {
		err_kind_set(&f->e, ERR_REMOTE, "%s", jstr(d, "error") ? jstr(d, "error") : "?");
		f->failed = 1;
		stop = 1;
	}
	json_decref(d);
	return stop;
}

static int r_log(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("log", argc, argv, "help follow", &o, 1);
	if (rc >= 0)
		return rc;
	const char *id = argv[optind];
	struct err e = {{0}};
	json_t *t = get_task(id, &e);
	if (!t)
		return remote_fail(&e);
	char *full = xstrdup(jstr(t, "id") ? jstr(t, "id") : id);
	enum task_status st = jstatus(t);
	json_decref(t);
	int tty = isatty(STDOUT_FILENO);
	if (o.follow) {
		char *p = task_path(full, "/events");
		struct follow f = { .id = full, .tty = tty };
		int r = client_events(rcl, p, NULL, on_follow, &f, &e);
		free(p);
		fflush(stdout);
		if (r < 0)
			rc = remote_fail(&e);
		else if (f.failed)
			rc = remote_fail(&f.e);
		else
			rc = 0;
		free(full);
		return rc;
	}
	char *p = task_path(full, "/log");
	struct client_resp r;
	rc = 0;
	if (client_request(rcl, "GET", p, NULL, NULL, 0, &r, &e) < 0 || client_resp_error(&r, &e) < 0)
		rc = remote_fail(&e);
	else if (r.body.len)
		put_log(r.body.data, r.body.len, tty);
	else if (st != TASK_QUEUED)
		rc = cli_die(1, _("task %s has no log yet"), full);
	else
		fprintf(stderr, _("paddock: task %s is queued; it has no log yet "
		                  "(use --follow to wait for it)\n"), full);
	client_resp_free(&r);
	free(p);
	free(full);
	fflush(stdout);
	return rc;
}

/* ---------------------------------------------------------------- diff */

/* GET the task's diff (query: "" or "?round=N" ...) into r; -1 with e. */
static int get_diff(const char *id, const char *query, struct client_resp *r, struct err *e)
{
	char *p = task_path(id, query);
	int rc = client_request(rcl, "GET", p, NULL, NULL, 0, r, e) < 0 ||
	         client_resp_error(r, e) < 0 ? -1 : 0;
	free(p);
	return rc;
}

static int r_diff(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("diff", argc, argv, "help round since-review failed", &o, 1);
	if (rc >= 0)
		return rc;
	if (!!o.round + o.since_review + o.failed > 1)
		return cli_die(EXIT_USAGE, _("give one of --round, --since-review and --failed"));
	char *q = NULL;
	if (o.round) {
		char *x = client_escape(o.round);
		q = xasprintf("/diff?round=%s", x);
		free(x);
	} else {
		q = xstrdup(o.since_review ? "/diff?since=review" : o.failed ? "/diff?since=failed"
		                                                              : "/diff");
	}
	struct client_resp r;
	struct err e = {{0}};
	if (get_diff(argv[optind], q, &r, &e) < 0) {
		rc = remote_fail(&e);
	} else {
		rc = 0;
		if (isatty(fileno(stdout)))
			cli_put_visible(stdout, r.body.data ? r.body.data : "", r.body.len,
			                SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
		else if (r.body.len && fwrite(r.body.data, 1, r.body.len, stdout) != r.body.len)
			rc = cli_die(1, _("cannot write the diff: %s"), strerror(errno));
		if (fflush(stdout) != 0)
			rc = cli_die(1, _("cannot write the diff: %s"), strerror(errno));
	}
	client_resp_free(&r);
	free(q);
	return rc;
}

/* ---------------------------------------------------------------- the gate */

/* POST body to the task's action; the answer, or NULL with the failure
 * printed and *code its exit status. */
static json_t *post_action(const char *id, const char *action, json_t *body, long *status,
                           int *code)
{
	char *rest = xasprintf("/%s", action);
	char *p = task_path(id, rest);
	struct err e = {{0}};
	json_t *j = client_post_json(rcl, p, body, status, &e);
	free(p);
	free(rest);
	if (body)
		json_decref(body);
	if (!j)
		*code = remote_fail(&e);
	return j;
}

static int r_gate(const char *name, int argc, char **argv, const char *allowed)
{
	struct cli_opts o;
	int override = !strcmp(name, "override");
	int rc = one_id(name, argc, argv, allowed, &o, override ? 2 : 1);
	if (rc >= 0)
		return rc;
	const char *id = argv[optind];
	int code = 1;
	char *notes = NULL;
	if (o.again && (o.notes || o.notes_file || strcmp(name, "request-changes"))) {
		fprintf(stderr, _("paddock %s: --again sends the last notes again; give it "
		                  "without --notes or --notes-file\n"), name);
		return cli_bad_usage(cli_verb_find(name));
	} else if (o.again) {
		/* the server's last notes */
	} else if (!strcmp(name, "request-changes") || !strcmp(name, "follow-up")) {
		if (!(notes = cli_gate_notes_edit(name, &o, id, &code)))
			return code;
	} else if ((o.notes || o.notes_file) && !(notes = cli_gate_notes(name, &o, id, &code))) {
		return code;
	}
	json_t *body = json_object();
	if (notes)
		json_object_set_new(body, "notes", json_string(notes));
	if (o.again)
		json_object_set_new(body, "again", json_true());
	if (!strcmp(name, "request-changes"))
		json_object_set_new(body, "draft", json_true());
	if (override)
		json_object_set_new(body, "finding", json_string(argv[optind + 1]));
	long status = 0;
	json_t *j = post_action(id, name, body, &status, &code);
	free(notes);
	if (!j)
		return code;
	const char *tid = jstr(j, "id") ? jstr(j, "id") : id;
	const char *out = jstr(j, "output");
	if (out)
		fputs(out, stdout);
	rc = 0;
	if (!strcmp(name, "approve")) {
		printf(_("%s approved: done\n"), tid);
		json_t *pe = json_object_get(j, "pull_request_error");
		if (json_is_object(pe))
			rc = cli_die(1, "%s", jstr(pe, "message") ? jstr(pe, "message") : "?");
	} else if (!strcmp(name, "push")) {
		printf(_("%s stays at review\n"), tid);
	} else if (!strcmp(name, "reject")) {
		printf(_("%s rejected; its branch stays in paddock's mirror\n"), tid);
	} else if (!strcmp(name, "request-changes")) {
		size_t sent = (size_t)json_integer_value(json_object_get(j, "comments"));
		int round = (int)json_integer_value(json_object_get(j, "round"));
		if (sent)
			printf(ngettext("%s: changes requested with %zu comment of the review draft; "
			                "the agent runs round %d when the scheduler picks it up\n",
			                "%s: changes requested with %zu comments of the review draft; "
			                "the agent runs round %d when the scheduler picks it up\n",
			                (unsigned long)sent), tid, sent, round);
		else
			printf(_("%s: changes requested; the agent runs round %d when the scheduler "
			         "picks it up\n"), tid, round);
	} else if (!strcmp(name, "follow-up")) {
		struct err e = {{0}};
		json_t *t = get_task(tid, &e);
		if (!t) {
			rc = remote_fail(&e);
		} else if (o.json) {
			cli_json_print(task_row_json(t));
		} else {
			printf("%s\n", tid);
			fprintf(stderr, _("queued %s: it follows up %s on branch %s\n"), tid,
			        jstr(t, "follow_of") ? jstr(t, "follow_of") : id,
			        jstr(t, "branch") ? jstr(t, "branch") : "?");
			json_decref(t);
		}
	} else {
		printf(_("%s: finding %s overridden\n"), tid, argv[optind + 1]);
	}
	json_decref(j);
	return rc;
}

static int r_approve(int argc, char **argv)
{
	return r_gate("approve", argc, argv, "help notes notes-file");
}

static int r_push(int argc, char **argv)
{
	return r_gate("push", argc, argv, "help");
}

static int r_reject(int argc, char **argv)
{
	return r_gate("reject", argc, argv, "help notes notes-file");
}

static int r_request_changes(int argc, char **argv)
{
	return r_gate("request-changes", argc, argv, "help notes notes-file again");
}

static int r_override(int argc, char **argv)
{
	return r_gate("override", argc, argv, "help notes notes-file");
}

static int r_follow_up(int argc, char **argv)
{
	return r_gate("follow-up", argc, argv, "help json notes notes-file");
}

static int r_cancel(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("cancel", argc, argv, "help", &o, 1);
	if (rc >= 0)
		return rc;
	long status = 0;
	int code = 1;
	json_t *j = post_action(argv[optind], "cancel", NULL, &status, &code);
	if (!j)
		return code;
	const char *id = jstr(j, "id") ? jstr(j, "id") : argv[optind];
	if (status == 200)
		printf(_("%s cancelled\n"), id);
	else
		printf(_("%s: cancel requested; the scheduler stops it shortly\n"), id);
	json_decref(j);
	return 0;
}

static int r_confirm(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("confirm", argc, argv, "help json", &o, 1);
	if (rc >= 0)
		return rc;
	long status = 0;
	int code = 1;
	json_t *j = post_action(argv[optind], "confirm", NULL, &status, &code);
	if (!j)
		return code;
	if (o.json)
		cli_json_print(j);
	else {
		printf(_("%s confirmed; it runs when a worker is free\n"),
		       jstr(j, "id") ? jstr(j, "id") : argv[optind]);
		json_decref(j);
	}
	return 0;
}

static int r_pr(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("pr", argc, argv, "help json", &o, 1);
	if (rc >= 0)
		return rc;
	long status = 0;
	int code = 1;
	json_t *j = post_action(argv[optind], "pull-request", NULL, &status, &code);
	if (!j)
		return code;
	if (o.json)
		cli_json_print(j);
	else {
		/* gate_pr_retry's words. */
		printf(_("opened pull request %s\n"), jstr(j, "pull_request") ? jstr(j, "pull_request")
		                                                               : "?");
		json_decref(j);
	}
	return 0;
}

/* ---------------------------------------------------------------- the draft */

static int r_comment(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("comment", argc, argv, "help old", &o, 3);
	if (rc >= 0)
		return rc;
	const char *id = argv[optind], *com = argv[optind + 2];
	char *path = NULL;
	long line;
	if (cli_comment_where(argv[optind + 1], &path, &line) < 0)
		return EXIT_USAGE;
	if (strspn(com, " \t\r\n") == strlen(com)) {
		free(path);
		return cli_die(EXIT_USAGE, _("the comment is empty; say what the agent should change "
		                             "on that line"));
	}
	/* The line's text, from the change as the reviewer sees it. */
	struct client_resp r;
	struct err e = {{0}};
	char *text = NULL;
	json_t *t = get_task(id, &e);
	const char *tid = t && jstr(t, "id") ? jstr(t, "id") : id;
	if (!t)
		rc = remote_fail(&e);
	else if (jstatus(t) != TASK_REVIEW)
		rc = cli_die(1, _("task %s is %s; a review draft is written at review"), tid,
		             task_status_label(jstatus(t)));
	else if (get_diff(tid, "/diff", &r, &e) < 0)
		rc = remote_fail(&e);
	else {
		text = cli_diff_line(r.body.data ? r.body.data : "", r.body.len, path, line, o.old);
		client_resp_free(&r);
		if (!text)
			rc = cli_die(1, o.old ? _("%s:%ld is no line of the old file in task %s's change; "
			                          "'paddock diff %s' shows it")
			                      : _("%s:%ld is no line of task %s's change; 'paddock diff %s' "
			                          "shows it (--old for a removed line)"),
			             path, line, tid, tid);
	}
	if (text) {
		json_t *body = json_pack("{s:s,s:I,s:b,s:s,s:s}", "path", path, "line",
		                         (json_int_t)line, "old", o.old, "text", text, "comment", com);
		long status = 0;
		int code = 1;
		json_t *c = body ? post_action(tid, "draft", body, &status, &code) : NULL;
		char *p = task_path(tid, "/draft");
		json_t *all = c ? client_get_json(rcl, p, &e) : NULL;
		free(p);
		size_t n = json_array_size(json_object_get(all, "comments"));
		if (!body)
			rc = cli_die(EXIT_USAGE, _("the comment or the line is not text (UTF-8)"));
		else if (!c)
			rc = code;
		else if (!all)
			rc = remote_fail(&e);
		else
			printf(ngettext("%s: comment added to the review draft (%zu comment); "
			                "'paddock request-changes %s' sends it\n",
			                "%s: comment added to the review draft (%zu comments); "
			                "'paddock request-changes %s' sends them\n", (unsigned long)n),
			       tid, n, tid);
		json_decref(c);
		json_decref(all);
	}
	json_decref(t);
	free(text);
	free(path);
	return rc < 0 ? 0 : rc;
}

static int r_draft(int argc, char **argv)
{
	struct cli_opts o;
	int rc = one_id("draft", argc, argv, "help json discard", &o, 1);
	if (rc >= 0)
		return rc;
	if (o.json && o.discard)
		return cli_die(EXIT_USAGE, _("give either --json or --discard, not both"));
	struct err e = {{0}};
	char *p = task_path(argv[optind], "/draft");
	rc = 0;
	if (o.discard) {
		struct client_resp r;
		if (client_request(rcl, "DELETE", p, NULL, NULL, 0, &r, &e) < 0 ||
		    client_resp_error(&r, &e) < 0) {
			rc = remote_fail(&e);
		} else {
			int n = (int)json_integer_value(json_object_get(r.json, "discarded"));
			printf(ngettext("%s: %d comment of the review draft discarded\n",
			                "%s: %d comments of the review draft discarded\n",
			                (unsigned long)n), jstr(r.json, "id") ? jstr(r.json, "id")
			                                                    : argv[optind], n);
		}
		client_resp_free(&r);
	} else {
		json_t *j = client_get_json(rcl, p, &e);
		if (!j)
			rc = remote_fail(&e);
		else if (o.json)
			cli_json_print(j);
		else {
			cli_draft_print(jstr(j, "id") ? jstr(j, "id") : argv[optind],
			                json_object_get(j, "comments"));
			json_decref(j);
		}
	}
	free(p);
	return rc;
}

/* ---------------------------------------------------------------- add */

/* What add prints for the server's answer j (POST /tasks; taken): the
 * ids, or --json's object, and the confirmations it waits for, as the
 * local add (add_print in cmd_task.c). */
static int add_print(json_t *j, const struct cli_opts *op, double budget)
{
	const struct cli_opts o = *op;
	struct err e = {{0}};
	int rc = -1;
	/* Each task as the server has it: its repo, agent and confirmation,
	 * for what the local add prints. */
	json_t *tasks = json_object_get(j, "tasks"), *ids = json_array(), *rows = json_array();
	if (json_is_array(tasks)) {
		size_t i;
		json_t *t;
		json_array_foreach(tasks, i, t)
			json_array_append(ids, json_object_get(t, "id"));
	} else {
		json_array_append(ids, json_object_get(j, "id"));
	}
	size_t i;
	json_t *idj;
	json_array_foreach(ids, i, idj) {
		json_t *t = json_string_value(idj) ? get_task(json_string_value(idj), &e) : NULL;
		if (!t) {
			rc = remote_fail(&e);
			break;
		}
		json_array_append_new(rows, t);
	}
	json_t *out = NULL;
	if (rc < 0 && o.json) {
		json_t *arr = json_array();
		json_t *t;
		json_array_foreach(rows, i, t)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "id", jstr(t, "id"),
			                                     "status", "queued", "repo", jstr(t, "repo"),
			                                     "agent", jstr(t, "agent")));
		if (json_is_array(tasks)) {
			out = json_pack("{s:s,s:o}", "group", jstr(j, "group") ? jstr(j, "group") : "?",
			                "tasks", arr);
		} else {
			out = json_incref(json_array_get(arr, 0));
			json_decref(arr);
			if (o.budget)
				json_object_set_new(out, "budget", json_real(budget));
		}
		json_t *t0 = json_array_get(rows, 0);
		if (jstr(t0, "confirm") && !strcmp(jstr(t0, "confirm"), "needed")) {
			json_object_set_new(out, "confirm", json_string("needed"));
			json_object_set_new(out, "estimate", json_real(jnum(t0, "estimate")));
		}
		cli_json_print(out);
	} else if (rc < 0) {
		json_t *t;
		if (json_is_array(tasks))
			printf("%s\n", jstr(j, "group") ? jstr(j, "group") : "?");
		json_array_foreach(rows, i, t)
			printf("%s\n", jstr(t, "id"));
		json_array_foreach(rows, i, t) {
			if (!jstr(t, "confirm") || strcmp(jstr(t, "confirm"), "needed") != 0)
				continue;
			char usd[32];
			units_format_money(jnum(t, "estimate"), 2, usd, sizeof usd);
			if (jnum(t, "estimate") > 0)
				fprintf(stderr, _("paddock: task %s waits for a confirmation of its estimated "
				                  "cost (%s, over confirm-over); confirm it with: paddock "
				                  "confirm %s\n"), jstr(t, "id"), usd, jstr(t, "id"));
			else
				fprintf(stderr, _("paddock: task %s waits for a confirmation: its cost cannot "
				                  "be estimated (no budget, no history) and confirm-over is "
				                  "set; confirm it with: paddock confirm %s\n"), jstr(t, "id"),
				        jstr(t, "id"));
		}
	}
	json_decref(ids);
	json_decref(rows);
	json_decref(j);
	return rc < 0 ? 0 : rc;
}

static int r_add(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("add");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help repo agent agents n recipe input base "
	                        "test timeout budget approval dry-run json file");
	if (rc >= 0)
		return rc;
	struct buf text = {0};
	if (o.file && optind != argc)
		return cli_die(EXIT_USAGE, _("give the task text either as TEXT or with --file, "
		                             "not both"));
	if (o.file) {
		FILE *f = strcmp(o.file, "-") ? fopen(o.file, "r") : NULL;
		if (!strcmp(o.file, "-") ? cli_read_stdin_text(&text) < 0 : !f)
			return cli_die(EXIT_USAGE, _("cannot read the task text: %s"), strerror(errno));
		if (f) {
			char tmp[65536];
			size_t n;
			while ((n = fread(tmp, 1, sizeof tmp, f)) > 0 && text.len < TASK_TEXT_MAX)
				buf_add(&text, tmp, n);
			fclose(f);
		}
	} else if (optind == argc - 1) {
		buf_adds(&text, argv[optind]);
	} else if (optind != argc || !o.recipe) {
		fprintf(stderr, optind == argc ? _("paddock add: the task text is missing\n")
		        : _("paddock add: give the task text as one argument (quote it)\n"));
		return cli_bad_usage(v);
	}
	if (text.len >= TASK_TEXT_MAX || (text.data && memchr(text.data, '\0', text.len))) {
		buf_free(&text);
		return cli_die(EXIT_USAGE, _("the task text is 128 KiB or more, or not text; it must "
		                             "be shorter text"));
	}
	if (!o.recipe && (!text.len || strspn(text.data, " \t\r\n") == text.len)) {
		buf_free(&text);
		return cli_die(EXIT_USAGE, _("the task text is empty; say what the agent should do"));
	}
	json_t *b = json_object();
	json_object_set_new(b, "text", json_string(text.data ? text.data : ""));
	buf_free(&text);
	const char *strs[][2] = { { "repo", o.repo }, { "agent", o.agent }, { "recipe", o.recipe },
	                          { "base", o.base }, { "test", o.test },
	                          { "approval", o.approval }, { "timeout", o.timeout } };
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (strs[i][1])
			json_object_set_new(b, strs[i][0], json_string(strs[i][1]));
	if (o.dry_run)
		json_object_set_new(b, "dry_run", json_true());
	rc = -1;
	double budget = -1;
	if (o.budget && units_parse_money(o.budget, &budget) < 0)
		rc = cli_die(EXIT_USAGE, _("--budget %s: not an amount of US dollars; give it like "
		                           "5, 2.50 or $2.50 (0: no limit)"), o.budget);
	else if (o.budget)
		json_object_set_new(b, "budget", json_real(budget));
	if (o.n) {
		char *end;
		long n = strtol(o.n, &end, 10);
		if (*end || end == o.n || n < 2 || n > SUBMIT_GROUP_MAX)
			rc = cli_die(EXIT_USAGE, _("--n %s: give a number of tasks from 2 to %d"), o.n,
			             SUBMIT_GROUP_MAX);
		json_object_set_new(b, "n", json_integer(n));
	}
	if (o.agents) {
		json_t *a = json_array();
		char *copy = xstrdup(o.agents), *save = NULL;
		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
			json_array_append_new(a, json_string(w));
		free(copy);
		json_object_set_new(b, "agents", a);
	}
	if (o.ninputs) {
		json_t *in = json_object();
		for (int i = 0; i < o.ninputs; i++) {
			const char *eq = strchr(o.inputs[i], '=');
			if (!eq || eq == o.inputs[i]) {
				rc = cli_die(EXIT_USAGE, _("--input %s: give it as NAME=VALUE"), o.inputs[i]);
				break;
			}
			char *name = xstrndup(o.inputs[i], (size_t)(eq - o.inputs[i]));
			json_object_set_new(in, name, json_string(eq + 1));
			free(name);
		}
		json_object_set_new(b, "inputs", in);
	}
	if (rc >= 0) {
		json_decref(b);
		return rc;
	}
	struct err e = {{0}};
	json_t *j = client_post_json(rcl, "/tasks", b, NULL, &e);
	json_decref(b);
	if (!j)
		return remote_fail(&e);
	return add_print(j, &o, budget);
}

/* ---------------------------------------------------------------- group, recipe */

/* A duration as a clock ("0:42", "1:02:03"; "-" when not started), as
 * cmd_group's. */
static void clock_cell(double secs, char *out, size_t len)
{
	long t = (long)secs;
	if (secs < 0)
		snprintf(out, len, "-");
	else if (t >= 3600)
		snprintf(out, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, len, "%ld:%02ld", t / 60, t % 60);
}

enum { G_ID, G_AGENT, G_STATUS, G_TESTS, G_FILES, G_INS, G_DEL, G_COST, G_TIME, G_FINDINGS,
       G_N };

/* A group's JSON (group_json) as paddock group show prints it. */
static void print_group(json_t *j)
{
	json_t *mem = json_object_get(j, "members");
	size_t n = json_array_size(mem), i;
	const char *id = jstr(j, "id") ? jstr(j, "id") : "?";
	printf("%-8s %s  ", _("group"), id);
	printf(_("best of %zu"), n);
	putchar('\n');
	const char *text = jstr(j, "text") ? jstr(j, "text") : "";
	printf("%-8s ", _("text"));
	cli_put_text(stdout, text, strcspn(text, "\n"));
	putchar('\n');
	struct buf b = {0};
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(j, "statuses"), k, v)
		buf_printf(&b, "%s%lld %s", b.len ? ", " : "", (long long)json_integer_value(v), k);
	printf("%-8s %s\n", _("status"), b.data ? b.data : "-");
	buf_free(&b);
	printf("%-8s ", _("picked"));
	json_t *m, *picked = NULL;
	json_array_foreach(mem, i, m)
		if (jstr(j, "picked") && jstr(m, "id") && !strcmp(jstr(m, "id"), jstr(j, "picked")))
			picked = m;
	if (picked)
		printf("%s (%s)\n", jstr(picked, "id"), jstr(picked, "agent") ? jstr(picked, "agent") : "?");
	else
		printf(_("none yet: 'paddock group pick %s ID' approves one and rejects the "
		         "others\n"), id);
	putchar('\n');
	const char *title[G_N] = { _("ID"), _("AGENT"), _("STATUS"), _("TESTS"), _("FILES"),
	                           "+", "-", _("COST"), _("TIME"), _("FINDINGS") };
	static const int right[G_N] = { [G_FILES] = 1, [G_INS] = 1, [G_DEL] = 1, [G_COST] = 1,
	                                [G_TIME] = 1 };
	char *(*cell)[G_N] = xcalloc(n ? n : 1, sizeof *cell);
	int w[G_N];
	for (int c = 0; c < G_N; c++)
		w[c] = cli_cols(title[c]);
	json_array_foreach(mem, i, m) {
		char **c = cell[i], tb[64];
		json_t *ch = json_object_get(m, "change"), *f = json_object_get(m, "findings");
		const char *tests = jstr(m, "tests");
		int st = jstr(m, "status") ? task_status_parse(jstr(m, "status")) : -1;
		c[G_ID] = xstrdup(jstr(m, "id") ? jstr(m, "id") : "?");
		c[G_AGENT] = xstrdup(jstr(m, "agent") ? jstr(m, "agent") : "?");
		c[G_STATUS] = xstrdup(st < 0 ? "?" : task_status_label((enum task_status)st));
		c[G_TESTS] = xstrdup(!tests ? "-" : !strcmp(tests, "passed") ? _("passed")
		                     : !strcmp(tests, "failed") ? _("failed") : _("not run"));
		c[G_FILES] = json_is_object(ch) ? xasprintf("%lld", (long long)json_integer_value(
		             json_object_get(ch, "files"))) : xstrdup("-");
		c[G_INS] = json_is_object(ch) ? xasprintf("+%lld", (long long)json_integer_value(
		           json_object_get(ch, "insertions"))) : xstrdup("-");
		c[G_DEL] = json_is_object(ch) ? xasprintf("-%lld", (long long)json_integer_value(
		           json_object_get(ch, "deletions"))) : xstrdup("-");
		/* The member's JSON has no request count: a cost of 0 is "-". */
		c[G_COST] = jnum(m, "cost") > 0 ? xasprintf("$%.2f%s", jnum(m, "cost"),
		            json_is_true(json_object_get(m, "priced")) ? "" : "+") : xstrdup("-");
		clock_cell(json_is_number(json_object_get(m, "seconds")) ? jnum(m, "seconds") : -1,
		           tb, sizeof tb);
		c[G_TIME] = xstrdup(tb);
		long long bl = json_integer_value(json_object_get(f, "block"));
		long long wa = json_integer_value(json_object_get(f, "warn"));
		c[G_FINDINGS] = bl || wa ? xasprintf("%lld block, %lld warn", bl, wa)
		                         : xstrdup(_("none"));
		for (int x = 0; x < G_N; x++)
			if (cli_cols(c[x]) > w[x])
				w[x] = cli_cols(c[x]);
	}
	printf("   #  ");
	for (int c = 0; c < G_N; c++) {
		cli_pad(title[c], c == G_N - 1 ? 0 : w[c], right[c]);
		fputs(c == G_N - 1 ? "\n" : "  ", stdout);
	}
	json_array_foreach(mem, i, m) {
		printf("%s %2d  ", json_is_true(json_object_get(m, "picked")) ? "*" : " ",
		       (int)json_integer_value(json_object_get(m, "position")));
		for (int c = 0; c < G_N; c++) {
			cli_pad(cell[i][c], c == G_N - 1 ? 0 : w[c], right[c]);
			fputs(c == G_N - 1 ? "\n" : "  ", stdout);
			free(cell[i][c]);
		}
	}
	free(cell);
}

static int r_group(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("group");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json notes notes-file");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return cli_bad_usage(v);
	const char *sub = argv[optind];
	if ((rc = cli_sub_usage(v, sub, "show pick")) >= 0)
		return rc;
	int show = !strcmp(sub, "show");
	if (argc - optind != (show ? 2 : 3))
		return cli_bad_usage(v);
	if ((rc = cli_id_usage(argv[optind + 1])) >= 0 ||
	    (!show && (rc = cli_id_usage(argv[optind + 2])) >= 0))
		return rc;
	char *gx = client_escape(argv[optind + 1]);
	char *p = xasprintf(show ? "/groups/%s" : "/groups/%s/pick", gx);
	free(gx);
	struct err e = {{0}};
	rc = 0;
	if (show) {
		json_t *j = client_get_json(rcl, p, &e);
		if (!j) {
			rc = remote_fail(&e);
		} else if (o.json) {
			cli_json_print(j);
		} else {
			print_group(j);
			json_decref(j);
		}
	} else {
		int code = 1;
		char *notes = NULL;
		if ((o.notes || o.notes_file) && !(notes = cli_gate_notes("pick", &o, argv[optind + 2],
		                                                          &code))) {
			free(p);
			return code;
		}
		json_t *b = json_pack("{s:s}", "task", argv[optind + 2]);
		if (notes)
			json_object_set_new(b, "notes", json_string(notes));
		json_t *j = client_post_json(rcl, p, b, NULL, &e);
		json_decref(b);
		free(notes);
		if (!j)
			rc = remote_fail(&e);
		else if (jstr(j, "output"))
			fputs(jstr(j, "output"), stdout);
		json_decref(j);
	}
	free(p);
	return rc;
}

/* A recipe's JSON (taskjson_recipe) as paddock recipe show prints it. */
static void recipe_show(json_t *r)
{
	const char *name = jstr(r, "name") ? jstr(r, "name") : "?";
	printf(json_is_true(json_object_get(r, "builtin")) ? _("recipe %s (ready-made)\n")
	                                                   : _("recipe %s\n"), name);
	if (jstr(r, "description"))
		printf("  %s\n", config_recipe_text(jstr(r, "description")));
	printf(_("inputs:\n"));
	json_t *in = json_object_get(r, "inputs");
	if (!json_array_size(in))
		printf(_("  none\n"));
	size_t i;
	json_t *x;
	json_array_foreach(in, i, x)
		printf("  %-13s %s\n", jstr(x, "name") ? jstr(x, "name") : "?",
		       jstr(x, "help") ? config_recipe_text(jstr(x, "help")) : "");
	printf(_("defaults (unset ones are the repo's or the configuration's):\n"));
	static const char *const strs[] = { "repo", "agent", "base", "test" };
	for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
		if (jstr(r, strs[k]))
			printf("  %-13s %s\n", strs[k], jstr(r, strs[k]));
	char v[32];
	if (json_is_number(json_object_get(r, "budget"))) {
		units_format_money(jnum(r, "budget"), 2, v, sizeof v);
		printf("  %-13s %s\n", "budget", v);
	}
	if (json_is_number(json_object_get(r, "timeout")))
		printf("  %-13s %.0fs\n", "timeout", jnum(r, "timeout"));
	if (jstr(r, "approval"))
		printf("  %-13s %s\n", "approval", jstr(r, "approval"));
	if (json_is_number(json_object_get(r, "confirm_over"))) {
		units_format_money(jnum(r, "confirm_over"), 2, v, sizeof v);
		printf("  %-13s %s\n", "confirm-over", v);
	}
	if (json_is_integer(json_object_get(r, "fix_rounds")))
		printf("  %-13s %d\n", "fix-rounds", (int)json_integer_value(json_object_get(r, "fix_rounds")));
	printf(_("contract:\n"));
	json_t *ct = json_object_get(r, "contract");
	if (!json_array_size(ct))
		printf(_("  a change, and the tests pass (the default)\n"));
	json_array_foreach(ct, i, x)
		printf("  %s\n", json_string_value(x) ? json_string_value(x) : "");
	printf(_("prompt:\n"));
	struct buf clean = {0};
	const char *p = jstr(r, "prompt") ? jstr(r, "prompt") : "";
	sanitize_text(p, strlen(p), 0, &clean);
	for (char *line = clean.data ? clean.data : (char *)"", *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		printf("  %s\n", line);
	}
	buf_free(&clean);
}

static int r_recipe(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("recipe");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json");
	if (rc >= 0)
		return rc;
	const char *sub = optind < argc ? argv[optind] : "list";
	if ((rc = cli_sub_usage(v, sub, "list show")) >= 0)
		return rc;
	int show = !strcmp(sub, "show");
	if (!(show && argc - optind == 2) && !(!show && argc - optind <= 1))
		return cli_bad_usage(v);
	char *x = show ? client_escape(argv[optind + 1]) : NULL;
	char *p = show ? xasprintf("/recipes/%s", x) : xstrdup("/recipes");
	free(x);
	struct err e = {{0}};
	json_t *j = client_get_json(rcl, p, &e);
	free(p);
	if (!j)
		/* No such recipe is bad input, as locally. */
		return e.kind == ERR_NOT_FOUND ? cli_die(EXIT_USAGE, "%s", e.msg) : remote_fail(&e);
	if (show) {
		if (o.json)
			cli_json_print(json_incref(j));
		else
			recipe_show(j);
		json_decref(j);
		return 0;
	}
	json_t *list = json_object_get(j, "recipes");
	if (o.json) {
		cli_json_print(json_incref(list));
	} else if (!json_array_size(list)) {
		printf(_("no recipes; add a [recipe \"NAME\"] section with a prompt\n"));
	} else {
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
	json_decref(j);
	return 0;
}

/* ---------------------------------------------------------------- dispatch */

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} remote_verbs[] = {
	{ "add", r_add }, { "list", r_list }, { "show", r_show }, { "log", r_log },
	{ "diff", r_diff }, { "approve", r_approve }, { "push", r_push }, { "pr", r_pr },
	{ "reject", r_reject }, { "request-changes", r_request_changes },
	{ "override", r_override }, { "follow-up", r_follow_up }, { "cancel", r_cancel },
	{ "confirm", r_confirm }, { "group", r_group }, { "recipe", r_recipe },
	{ "comment", r_comment }, { "draft", r_draft },
};

int cli_remote_main(const char *server, int argc, char **argv)
{
	int (*run)(int, char **) = NULL;
	for (size_t i = 0; i < sizeof remote_verbs / sizeof remote_verbs[0]; i++)
		if (!strcmp(remote_verbs[i].name, argv[0]))
			run = remote_verbs[i].run;
	if (!run)
		return cli_die(EXIT_USAGE, _("'paddock %s' works only on the server's machine; run it "
		                             "there (with --server, PADDOCK_SERVER or [remote] server, "
		                             "paddock talks to %s's API, which has no such verb)"),
		               argv[0], server);
	int code;
	char *token = remote_token(&code);
	if (!token)
		return code;
	struct err e = {{0}};
	rcl = client_open(server, token, &e);
	explicit_bzero(token, strlen(token));
	free(token);
	if (!rcl)
		return cli_die(EXIT_USAGE, "%s", e.msg);
	int rc = run(argc, argv);
	client_close(rcl);
	rcl = NULL;
	return rc;
}

int cli_remote_dashboard(const char *server)
{
	int code;
	char *token = remote_token(&code);
	if (!token)
		return code;
	struct config cfg;
	int rc = EXIT_USAGE;
	if (cli_load_config(&cfg) == 0) {
		rc = dash_main_remote(&cfg, server, token);
		config_free(&cfg);
	}
	explicit_bzero(token, strlen(token));
	free(token);
	return rc;
}
