#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "adapter.h"
#include "api.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "demo.h"
#include "diff.h"
#include "fsx.h"
#include "dash.h"
#include "editor.h"
#include "gate.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "sandbox.h"
#include "sanitize.h"
#include "scheduler.h"
#include "store.h"
#include "taskjson.h"
#include "template.h"
#include "task.h"
#include "units.h"

struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;     /* synopsis after "paddock " */
	const char *help;      /* what it does and its options */
};

static const struct verb *verb_find(const char *name);

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int die(int code, const char *fmt, ...)
{
	va_list ap;
	fputs("paddock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static int verb_help(const struct verb *v, FILE *out)
{
	fprintf(out, _("usage: paddock %s\n\n%s"), _(v->usage), _(v->help));
	return 0;
}

static int bad_usage(const struct verb *v)
{
	fprintf(stderr, _("usage: paddock %s\nTry 'paddock %s --help'.\n"), _(v->usage), v->name);
	return EXIT_USAGE;
}

/* Parses options common to every verb; returns -1 to continue, else an
 * exit status (help printed or bad usage). */
struct opts {
	int json;
	int follow;
	int until_idle;
	const char *repo;
	const char *agent;
	const char *status;
	const char *file;
	const char *notes;
	const char *notes_file;
	const char *round;
	int since_review;
	const char *budget;
	const char *listen;
	int routes;
	const char *older_than;
	int dry_run;
	int failed;
	int again;
};

enum { OPT_HELP = 'h', OPT_JSON = 'j', OPT_FOLLOW = 'f', OPT_REPO = 'r', OPT_AGENT = 'a',
       OPT_NOTES = 'm', OPT_UNTIL_IDLE = 1000, OPT_STATUS, OPT_FILE, OPT_NOTES_FILE,
       OPT_ROUND, OPT_SINCE_REVIEW, OPT_BUDGET, OPT_LISTEN, OPT_ROUTES, OPT_OLDER_THAN,
       OPT_DRY_RUN, OPT_FAILED, OPT_AGAIN };

/* 1 if word is one of the space-separated words of list. */
static int word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

static int parse_opts(const struct verb *v, int argc, char **argv, struct opts *o,
                      const char *allowed)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "until-idle", no_argument, NULL, OPT_UNTIL_IDLE },
		{ "status", required_argument, NULL, OPT_STATUS },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "notes", required_argument, NULL, OPT_NOTES },
		{ "notes-file", required_argument, NULL, OPT_NOTES_FILE },
		{ "round", required_argument, NULL, OPT_ROUND },
		{ "since-review", no_argument, NULL, OPT_SINCE_REVIEW },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "routes", no_argument, NULL, OPT_ROUTES },
		{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "failed", no_argument, NULL, OPT_FAILED },
		{ "again", no_argument, NULL, OPT_AGAIN },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof *o);
	/* GNU getopt permutes: options may come after operands, as in git;
	 * "--" ends them.  optind 0 makes it start over for each verb. */
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hjfr:a:m:", longopts, NULL)) != -1) {
		const char *name = NULL;
		for (const struct option *lo = longopts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		if (c == OPT_HELP) {
			verb_help(v, stdout);
			return 0;
		}
		if (c == '?' || c == ':' || !name || !word_in(allowed, name)) {
			if (c == '?' && optopt == 0)
				fprintf(stderr, _("paddock %s: unknown option '%s'\n"), v->name,
				        argv[optind - 1]);
			else if (c == '?' || c == ':')
				fprintf(stderr, _("paddock %s: bad option '%s'\n"), v->name,
				        argv[optind - 1]);
			else
				fprintf(stderr, _("paddock %s: option --%s does not apply here\n"),
				        v->name, name);
			return bad_usage(v);
		}
		switch (c) {
		case OPT_JSON: o->json = 1; break;
		case OPT_FOLLOW: o->follow = 1; break;
		case OPT_REPO: o->repo = optarg; break;
		case OPT_AGENT: o->agent = optarg; break;
		case OPT_UNTIL_IDLE: o->until_idle = 1; break;
		case OPT_STATUS: o->status = optarg; break;
		case OPT_FILE: o->file = optarg; break;
		case OPT_NOTES: o->notes = optarg; break;
		case OPT_NOTES_FILE: o->notes_file = optarg; break;
		case OPT_ROUND: o->round = optarg; break;
		case OPT_SINCE_REVIEW: o->since_review = 1; break;
		case OPT_BUDGET: o->budget = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_ROUTES: o->routes = 1; break;
		case OPT_OLDER_THAN: o->older_than = optarg; break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case OPT_FAILED: o->failed = 1; break;
		case OPT_AGAIN: o->again = 1; break;
		}
	}
	return -1;
}

static int load_config(struct config *c)
{
	struct err e = {{0}};
	if (config_load(c, NULL, &e) < 0) {
		config_free(c);
		die(EXIT_USAGE, _("%s\n  (fix the configuration; 'paddock config check' lists every "
		                  "problem)"), e.msg);
		return -1;
	}
	/* Tasks of an earlier `paddock demo` stay workable. */
	char *data = paths_data_dir();
	demo_config_add(data, c);
	free(data);
	return 0;
}

/* Opens the store; with create 0 (verbs that read, or act on a task that
 * must exist) a data directory without one is an error and nothing is
 * made, so that a mistyped PADDOCK_HOME leaves no new store behind. */
static struct store *open_store(char **data_out, int create)
{
	struct err e = {{0}};
	char *data = create ? paths_data_dir_ensure(&e) : paths_data_dir();
	if (!data) {
		die(1, "%s", e.msg);
		return NULL;
	}
	char *db = paths_join(data, "paddock.db", NULL);
	struct store *s = NULL;
	struct stat st;
	if (!create && stat(db, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		die(1, _("no paddock data in %s; check PADDOCK_HOME (it names the data "
		         "directory), or queue a first task with 'paddock add'"), data);
	else if (store_open(&s, db, &e) < 0)
		die(1, "%s", e.msg);
	free(db);
	if (data_out && s)
		*data_out = data;
	else
		free(data);
	return s;
}

static void json_print(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s) {
		puts(s);
		free(s);
	}
	json_decref(j);
}

/* Reads the configuration for what show and list add from it (the
 * budget, the agents' endpoints); a broken one is not worth failing
 * them for.  Returns 1 when cfg holds it (free it then), 0 when not. */
static int config_soft(struct config *cfg)
{
	struct err e = {{0}};
	if (config_load(cfg, NULL, &e) < 0) {
		config_free(cfg);
		return 0;
	}
	char *data = paths_data_dir();
	demo_config_add(data, cfg);
	free(data);
	return 1;
}

/* Untrusted text (task text, errors with test output) on a terminal goes
 * through sanitize first; pipes get the bytes as stored. */
static void put_text(FILE *out, const char *s, size_t len)
{
	if (isatty(fileno(out))) {
		struct buf b = {0};
		sanitize_text(s, len, 0, &b);
		fwrite(b.data ? b.data : "", 1, b.len, out);
		buf_free(&b);
	} else {
		fwrite(s, 1, len, out);
	}
}

static void put_str(FILE *out, const char *s)
{
	put_text(out, s, strlen(s));
}

/* Text a reviewer approves (a diff, the agent's summary, changed paths,
 * findings) on a terminal: every byte visible, escape sequences, controls,
 * bidi and invisible characters as marks (sanitize_visible), drawn in
 * reverse video where colours are welcome (not NO_COLOR, not TERM=dumb).
 * Pipes get the bytes as stored: a diff stays a patch. */
static void put_visible(FILE *out, const char *s, size_t len, int flags)
{
	if (!isatty(fileno(out))) {
		fwrite(s, 1, len, out);
		return;
	}
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	int colour = !(nc && *nc) && term && *term && strcmp(term, "dumb") != 0;
	struct buf b = {0};
	struct sanitize_segs segs = {0};
	sanitize_visible(s, len, flags, &b, &segs);
	for (size_t i = 0; i < segs.n; i++) {
		const struct sanitize_seg *g = &segs.v[i];
		if (g->mark && colour)
			fputs("\033[7m", out);
		fwrite(b.data + g->out, 1, g->len, out);
		if (g->mark && colour)
			fputs("\033[27m", out);
	}
	buf_free(&b);
	sanitize_segs_free(&segs);
}

static void put_visible_str(FILE *out, const char *s)
{
	put_visible(out, s, strlen(s), SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
}

/* Prints text a reviewer approves under a label, continuation lines
 * indented. */
static void put_block(const char *label, const char *text)
{
	printf("%-8s ", label);
	const char *line = text;
	for (int first = 1; *line; first = 0) {
		size_t n = strcspn(line, "\n");
		if (!first)
			printf("%-8s   ", "");
		put_visible(stdout, line, n, SANITIZE_KEEP_TAB);
		putchar('\n');
		line += n + (line[n] == '\n');
	}
	if (!*text)
		putchar('\n');
}

static const char *tests_word(json_t *t)
{
	if (!json_is_true(json_object_get(t, "ran")))
		return _("none");
	return json_is_true(json_object_get(t, "passed")) ? _("passed") : _("failed");
}

/* The rounds in order, each with its work and the decisions made on it. */
static void show_rounds(struct store *s, const struct task_row *t)
{
	struct err e = {{0}};
	struct task_round *r = NULL;
	struct task_decision *d = NULL;
	size_t nr = 0, nd = 0;
	if (store_rounds(s, t->id, &r, &nr, &e) < 0 || store_decisions(s, t->id, &d, &nd, &e) < 0) {
		task_rounds_free(r, nr);
		return;
	}
	if (nr || nd)
		printf("%s\n", _("rounds"));
	int last = nr ? r[nr - 1].n : (nd ? 1 : 0);
	for (int n = 1; n <= last; n++) {
		const struct task_round *rn = NULL;
		for (size_t i = 0; i < nr; i++)
			if (r[i].n == n)
				rn = &r[i];
		if (rn && rn->head)
			printf("  %d  %.12s..%.12s\n", n, rn->from ? rn->from : "?", rn->head);
		else
			printf(_("  %d  (no work)\n"), n);
		for (size_t k = 0; k < nd; k++) {
			if (d[k].round != n)
				continue;
			char when[64];
			time_t at = (time_t)d[k].at;
			strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&at));
			printf(_("     %s  %s by %s"), when, d[k].action, d[k].actor);
			if (d[k].notes) {
				printf(": ");
				/* Notes may span lines: keep them on this one. */
				struct buf one = {0};
				for (const char *c = d[k].notes; *c; c++)
					buf_addc(&one, *c == '\n' ? ' ' : *c);
				while (one.len && one.data[one.len - 1] == ' ')
					one.data[--one.len] = '\0';
				put_str(stdout, one.data ? one.data : "");
				buf_free(&one);
			}
			putchar('\n');
		}
	}
	task_rounds_free(r, nr);
	task_decisions_free(d, nd);
}

static void show_gate(struct store *s, const struct task_row *t)
{
	struct err e = {{0}};
	json_t *g = gate_summary(s, t, &e);
	/* A mismatch between the agent's run and the clean one comes first. */
	const char *mismatch = gate_mismatch(g);
	if (mismatch)
		put_block(_("warning"), mismatch);
	if (t->pr_url)
		printf("%-8s %s\n", _("pull req"), t->pr_url);
	if (t->pushed)
		printf("%-8s %s\n", _("pushed"), t->pushed);
	if (t->round > 1 || t->status == TASK_REVIEW)
		printf("%-8s %d%s%s\n", _("round"), t->round,
		       t->sandbox_kept ? _(" (sandbox kept for the next round)") : "",
		       t->pending ? _(" (changes requested; waiting for the scheduler)") : "");
	if (t->summary && *t->summary)
		put_block(_("summary"), t->summary);
	if (!g) {
		show_rounds(s, t);
		return;
	}
	const char *stat = json_string_value(json_object_get(g, "diffstat"));
	if (stat && *stat)
		put_block(_("changes"), stat);
	json_t *tests = json_object_get(g, "tests");
	json_t *tb = json_object_get(tests, "before"), *ta = json_object_get(tests, "after");
	json_t *tg = json_object_get(tests, "agent");
	printf("%-8s %s %s, %s %s", _("tests"), _("before:"), tests_word(tb), _("after:"),
	       tests_word(ta));
	if (json_is_true(json_object_get(ta, "verified")))
		printf(" %s", _("(verified on a clean checkout)"));
	if (json_is_true(json_object_get(tg, "ran")))
		printf(", %s %s", _("agent's run:"), tests_word(tg));
	putchar('\n');
	const char *lb = json_string_value(json_object_get(tb, "log"));
	const char *la = json_string_value(json_object_get(ta, "log"));
	if (lb && *lb)
		printf("%-8s   %s %s\n", "", _("before's log:"), lb);
	if (la && *la)
		printf("%-8s   %s %s\n", "", _("after's log:"), la);
	json_t *f;
	size_t i;
	json_t *fa = json_object_get(g, "findings");
	if (json_array_size(fa))
		printf("%s\n", _("findings"));
	json_array_foreach(fa, i, f) {
		printf("  %-5s  ", json_string_value(json_object_get(f, "action")));
		put_visible_str(stdout, json_string_value(json_object_get(f, "name")));
		printf("  ");
		put_visible_str(stdout, json_string_value(json_object_get(f, "detail")));
		if (json_is_true(json_object_get(f, "overridden")))
			printf("  %s", _("[overridden]"));
		putchar('\n');
	}
	json_decref(g);
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
	printf("%-8s ", _("budget"));
	if (budget > 0)
		printf(from && !strcmp(from, "task") ? _("$%.2f (this task's)")
		                                     : _("$%.2f (limits.budget)"), budget);
	else if (from || have_cfg)
		printf("%s", _("none"));
	else
		printf("%s", _("unknown (the configuration cannot be read)"));
	if (cfg && cfg->limits.budget_tokens)
		printf(_(", %llu tokens (limits.budget-tokens)"),
		       (unsigned long long)cfg->limits.budget_tokens);
	putchar('\n');
	const struct task_usage *u = &t->usage;
	printf("%-8s ", _("usage"));
	if (!u->requests && !u->in && !u->out && !u->cache_read && !u->cache_write &&
	    u->cost <= 0) {
		printf("%s\n", _("none"));
	} else {
		printf(_("%llu tokens in, %llu out, cache %llu read, %llu written; %llu requests; "),
		       (unsigned long long)u->in, (unsigned long long)u->out,
		       (unsigned long long)u->cache_read, (unsigned long long)u->cache_write,
		       (unsigned long long)u->requests);
		if (u->priced)
			printf("$%.4f\n", u->cost);
		else if (u->cost > 0)
			printf(_("$%.4f (some models not priced)\n"), u->cost);
		else
			printf("%s\n", _("not priced"));
	}
	if (t->session) {
		printf("%-8s ", _("session"));
		put_str(stdout, t->session);
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
		printf("%-8s ", _("paused"));
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
	size_t refused = 0;
	for (size_t i = 0; i < n; i++)
		refused += r[i].verdict && !strcmp(r[i].verdict, "refused");
	printf("%-8s ", _("egress"));
	printf(_("%zu allowed, %zu refused"), n - refused, refused);
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
		       no ? _("REFUSED") : x->verdict ? _("allowed") : "?",
		       x->kind ? x->kind : "-");
		if (x->method) {
			put_str(stdout, x->method);
			putchar(' ');
		}
		put_str(stdout, x->host ? x->host : "?");
		if (x->port)
			printf(":%d", x->port);
		if (x->path) {
			putchar(' ');
			put_str(stdout, x->path);
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
			put_str(stdout, x->reason);
		}
		putchar('\n');
	}
	store_egress_free(r, n);
}

/* ---------------------------------------------------------------- add */

static int read_stdin_text(struct buf *b)
{
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0) {
		buf_add(b, tmp, n);
		if (b->len >= TASK_TEXT_MAX)
			break;
	}
	return ferror(stdin) ? -1 : 0;
}

static int cmd_add(int argc, char **argv)
{
	const struct verb *v = verb_find("add");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help json repo agent file budget");
	if (rc >= 0)
		return rc;
	double budget = -1;
	if (o.budget && units_parse_money(o.budget, &budget) < 0)
		return die(EXIT_USAGE, _("--budget %s: not an amount of US dollars; give it like "
		                         "5, 2.50 or $2.50 (0: no limit)"), o.budget);
	struct buf text = {0};
	struct err e = {{0}};
	if (o.file) {
		if (optind != argc)
			return die(EXIT_USAGE, _("give the task text either as TEXT or with --file, "
			                         "not both"));
		struct stat st;
		if (strcmp(o.file, "-") != 0 && stat(o.file, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size >= TASK_TEXT_MAX)
			goto too_long;
		if (strcmp(o.file, "-") == 0 ? read_stdin_text(&text) < 0
		    : fsx_read_file(o.file, TASK_TEXT_MAX, &text, &e) < 0) {
			buf_free(&text);
			return die(EXIT_USAGE, _("cannot read the task text: %s"),
			           *e.msg ? e.msg : strerror(errno));
		}
	} else {
		if (optind != argc - 1) {
			fprintf(stderr, optind == argc ? _("paddock add: the task text is missing\n")
			        : _("paddock add: give the task text as one argument (quote it)\n"));
			return bad_usage(v);
		}
		buf_adds(&text, argv[optind]);
	}
	if (text.len >= TASK_TEXT_MAX) {
	too_long:
		buf_free(&text);
		return die(EXIT_USAGE, _("the task text is 128 KiB or more; it must be shorter. "
		                         "Put long material in the repository and refer to it"));
	}
	if (!text.len || strspn(text.data, " \t\r\n") == text.len) {
		buf_free(&text);
		return die(EXIT_USAGE, _("the task text is empty; say what the agent should do"));
	}
	if (memchr(text.data, '\0', text.len)) {
		buf_free(&text);
		return die(EXIT_USAGE, _("the task text contains a NUL byte; it must be text"));
	}
	struct config cfg;
	if (load_config(&cfg) < 0) {
		buf_free(&text);
		return EXIT_USAGE;
	}
	const struct repo_conf *repo = NULL;
	if (o.repo) {
		repo = config_find_repo(&cfg, o.repo);
		if (!repo) {
			rc = die(EXIT_USAGE, _("no repo named '%s' in %s; add a [repo \"%s\"] section "
			                       "with a url"), o.repo, cfg.path, o.repo);
			goto out;
		}
	} else if (cfg.nrepos == 1) {
		repo = &cfg.repos[0];
	} else if (cfg.nrepos > 1) {
		rc = die(EXIT_USAGE, _("name the repo with --repo NAME; the configuration has %zu "
		                       "repos"), cfg.nrepos);
		goto out;
	} else {
		rc = die(EXIT_USAGE, _("no repo is configured; add a [repo \"NAME\"] section with "
		                       "a url to %s"), cfg.path);
		goto out;
	}
	const struct agent_conf *agent = o.agent ? config_find_agent(&cfg, o.agent)
	                                         : config_default_agent(&cfg);
	if (!agent && o.agent) {
		rc = die(EXIT_USAGE, _("no agent named '%s' in %s; add an [agent \"%s\"] section "
		                       "with a command"), o.agent, cfg.path, o.agent);
		goto out;
	} else if (!agent) {
		rc = die(EXIT_USAGE, _("no agent is configured; add an [agent \"NAME\"] section "
		                       "with a command to %s"), cfg.path);
		goto out;
	}
	char *data = NULL;
	struct store *s = open_store(&data, 1);
	if (!s) {
		rc = 1;
		goto out;
	}
	char id[TASK_ID_LEN + 1];
	if (store_task_add_budget(s, repo->name, agent->name, text.data, repo->branch_prefix,
	                          budget, id, &e) < 0) {
		rc = die(1, "%s", e.msg);
	} else if (o.json) {
		json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "id", id, "status", "queued",
		                      "repo", repo->name, "agent", agent->name);
		if (budget >= 0)
			json_object_set_new(j, "budget", json_real(budget));
		json_print(j);
		rc = 0;
	} else {
		printf("%s\n", id);
		rc = 0;
	}
	store_close(s);
	free(data);
out:
	config_free(&cfg);
	buf_free(&text);
	return rc;
}

/* ---------------------------------------------------------------- list */

static void first_line(const char *s, size_t max, char *out, size_t outlen)
{
	size_t n = strcspn(s, "\n");
	if (n > max)
		n = max;
	if (n >= outlen)
		n = outlen - 1;
	/* Never cut a UTF-8 character in half. */
	while (n > 0 && s[n] && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, s, n);
	out[n] = '\0';
}

static int cmd_list(int argc, char **argv)
{
	const struct verb *v = verb_find("list");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help json status");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return bad_usage(v);
	int status = -1;
	if (o.status && (status = task_status_parse(o.status)) < 0)
		return die(EXIT_USAGE, _("unknown status '%s'; statuses are queued, preparing, "
		                         "running, testing, review, pushing, done, failed, "
		                         "rejected, cancelled, lost"), o.status);
	struct store *s = open_store(NULL, 0);
	if (!s)
		return 1;
	struct task_row *rows;
	size_t n;
	struct err e = {{0}};
	if (store_task_list(s, status, &rows, &n, &e) < 0) {
		store_close(s);
		return die(1, "%s", e.msg);
	}
	if (o.json) {
		struct config cfg;
		int have_cfg = config_soft(&cfg);
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, taskjson_task(&rows[i], have_cfg ? &cfg : NULL));
		json_print(a);
		if (have_cfg)
			config_free(&cfg);
	} else if (n == 0) {
		printf(_("no tasks; add one with: paddock add --repo NAME \"what to do\"\n"));
	} else {
		printf("%-10s  %-9s  %-12s  %-12s  %s\n", _("ID"), _("STATUS"), _("REPO"),
		       _("AGENT"), _("TEXT"));
		for (size_t i = 0; i < n; i++) {
			char text[61];
			first_line(rows[i].text, 60, text, sizeof text);
			printf("%-10s  %-9s  %-12s  %-12s  ", rows[i].id,
			       task_status_name(rows[i].status), rows[i].repo, rows[i].agent);
			/* A follow-up names the task it continues. */
			if (rows[i].follow_of)
				printf(_("(follows %s) "), rows[i].follow_of);
			put_str(stdout, text);
			putchar('\n');
		}
	}
	task_rows_free(rows, n);
	store_close(s);
	return 0;
}

/* ---------------------------------------------------------------- show */

/* What a verb that acts on one task (ID operand) works with. */
struct task_verb {
	struct opts o;
	struct store *s;
	char *data;
	struct task_row t;
};

/* -1 for an id that may name a task, else the exit status of bad usage:
 * a malformed id is that whether or not there is a store. */
static int id_usage(const char *id)
{
	if (task_id_valid(id, 1))
		return -1;
	return die(EXIT_USAGE, _("'%s' is not a task id (ids look like %s); 'paddock list' "
	                         "shows them"), id, "k3x9m2qa7d");
}

/* Parses the options and the ID, opens the store and loads the task.
 * Returns -1 to go on (then call task_verb_end), else an exit status. */
static int task_verb_begin(const char *name, int argc, char **argv, const char *allowed,
                           struct task_verb *tv)
{
	const struct verb *v = verb_find(name);
	memset(tv, 0, sizeof *tv);
	int rc = parse_opts(v, argc, argv, &tv->o, allowed);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1)
		return bad_usage(v);
	if ((rc = id_usage(argv[optind])) >= 0)
		return rc;
	tv->s = open_store(&tv->data, 0);
	if (!tv->s)
		return 1;
	struct err e = {{0}};
	if (store_task_get(tv->s, argv[optind], &tv->t, &e) < 0) {
		store_close(tv->s);
		free(tv->data);
		return die(task_id_valid(argv[optind], 1) ? 1 : EXIT_USAGE, "%s", e.msg);
	}
	return -1;
}

static void task_verb_end(struct task_verb *tv)
{
	task_row_free(&tv->t);
	store_close(tv->s);
	free(tv->data);
}

static int cmd_show(int argc, char **argv)
{
	struct task_verb tv;
	int rc = task_verb_begin("show", argc, argv, "help json", &tv);
	if (rc >= 0)
		return rc;
	const struct task_row t = tv.t;
	struct config cfg;
	int have_cfg = config_soft(&cfg);
	const struct config *conf = have_cfg ? &cfg : NULL;
	if (tv.o.json) {
		json_print(taskjson_full(tv.s, &t, conf));
	} else {
		char when[64];
		time_t c = (time_t)t.created;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&c));
		printf("%-8s %s  %s\n", _("task"), t.id, task_status_name(t.status));
		printf("%-8s %s\n", _("repo"), t.repo);
		printf("%-8s %s\n", _("agent"), t.agent);
		printf("%-8s %s\n", _("branch"), t.branch);
		if (t.base)
			printf("%-8s %s\n", _("base"), t.base);
		if (t.head)
			printf("%-8s %s\n", _("head"), t.head);
		printf("%-8s %s\n", _("queued"), when);
		printf("%-8s", _("steps"));
		for (size_t i = 0; i < t.nsteps; i++)
			printf("%s %s %.1fs", i ? "," : "", task_status_name(t.steps[i].status),
			       t.steps[i].at);
		putchar('\n');
		if (t.error) {
			/* The first line says what failed; the detail (a test
			 * output's tail) follows, indented under it. */
			printf("%-8s ", _("error"));
			const char *line = t.error;
			for (int first = 1; *line; first = 0) {
				size_t n = strcspn(line, "\n");
				if (!first)
					printf("%-8s   ", "");
				put_text(stdout, line, n);
				putchar('\n');
				line += n + (line[n] == '\n');
			}
		}
		if (t.reason)
			printf("%-8s %s\n", _("reason"), t.reason);
		if (t.attempts > 1)
			printf("%-8s %d\n", _("attempts"), t.attempts);
		if (t.failed_round && t.status == TASK_REVIEW) {
			/* The round after this one did not reach review: what
			 * it did and why are the reviewer's to see. */
			printf("%-8s ", _("retry"));
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
			printf("%-8s %s\n", _("follows"), t.follow_of);
		printf("%-8s ", _("text"));
		put_visible_str(stdout, t.text);
		putchar('\n');
		show_usage(tv.s, &t, conf, have_cfg);
		show_gate(tv.s, &t);
		show_egress(tv.s, &t);
	}
	if (have_cfg)
		config_free(&cfg);
	task_verb_end(&tv);
	return 0;
}

/* ---------------------------------------------------------------- log */

static int copy_log(int fd, int sanitize, off_t *off)
{
	char tmp[65536];
	for (;;) {
		ssize_t n = pread(fd, tmp, sizeof tmp, *off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		*off += n;
		if (sanitize) {
			struct buf b = {0};
			sanitize_text(tmp, (size_t)n, 1, &b);
			fwrite(b.data ? b.data : "", 1, b.len, stdout);
			buf_free(&b);
		} else {
			fwrite(tmp, 1, (size_t)n, stdout);
		}
	}
}

static int cmd_log(int argc, char **argv)
{
	struct task_verb tv;
	int rc = task_verb_begin("log", argc, argv, "help follow", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	const struct opts o = tv.o;
	struct store *s = tv.s;
	char *path = paths_join(tv.data, "tasks", t.id, "log", NULL);
	int sanitize = isatty(STDOUT_FILENO);
	off_t off = 0;
	int fd = -1;
	/* A sanitizer may split an escape sequence at a read boundary; that
	 * only ever shows more as visible text, never less. */
	for (;;) {
		if (fd < 0)
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0)
			copy_log(fd, sanitize, &off);
		fflush(stdout);
		if (!o.follow)
			break;
		struct task_row now;
		struct err e = {{0}};
		if (store_task_get(s, t.id, &now, &e) < 0)
			break;
		int over = !task_status_is_active(now.status) && now.status != TASK_QUEUED;
		task_row_free(&now);
		if (over) {
			if (fd < 0)
				fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd >= 0)
				copy_log(fd, sanitize, &off);
			break;
		}
		poll(NULL, 0, 100);
	}
	if (fd < 0 && !o.follow && t.status != TASK_QUEUED)
		rc = die(1, _("task %s has no log yet"), t.id);
	else if (fd < 0 && !o.follow)
		fprintf(stderr, _("paddock: task %s is queued; it has no log yet "
		                  "(use --follow to wait for it)\n"), t.id);
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	free(path);
	task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- diff */

static int cmd_diff(int argc, char **argv)
{
	struct task_verb tv;
	int rc = task_verb_begin("diff", argc, argv, "help round since-review failed", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	struct err e = {{0}};
	char *from = t.base ? xstrdup(t.base) : NULL, *to = t.head ? xstrdup(t.head) : NULL;
	if (!!tv.o.round + tv.o.since_review + tv.o.failed > 1) {
		rc = die(EXIT_USAGE, _("give one of --round, --since-review and --failed"));
	} else if (tv.o.failed) {
		/* The round that did not reach review, from the reviewed head. */
		if (!t.failed_round)
			rc = die(1, _("task %s has no failed round; 'paddock show %s' says where it "
			              "is"), t.id, t.id);
		else if (!t.failed_head)
			rc = die(1, _("round %d of task %s failed before its work was handed back; "
			              "'paddock log %s' shows what it did"), t.failed_round, t.id, t.id);
		free(to);
		to = t.failed_head ? xstrdup(t.failed_head) : NULL;
	} else if (tv.o.round) {
		/* One round: from where it started to its head. */
		char *end;
		long n = strtol(tv.o.round, &end, 10);
		struct task_round *r;
		size_t nr;
		if (*end || n < 1 || n > t.round) {
			rc = die(EXIT_USAGE, _("--round %s: task %s has rounds 1 to %d"), tv.o.round,
			         t.id, t.round);
		} else if (store_rounds(tv.s, t.id, &r, &nr, &e) < 0) {
			rc = die(1, "%s", e.msg);
		} else {
			free(from);
			free(to);
			from = to = NULL;
			for (size_t i = 0; i < nr; i++)
				if (r[i].n == n) {
					from = r[i].from ? xstrdup(r[i].from) : NULL;
					to = r[i].head ? xstrdup(r[i].head) : NULL;
				}
			task_rounds_free(r, nr);
			if (!to)
				rc = die(1, _("round %ld of task %s has no work"), n, t.id);
		}
	} else if (tv.o.since_review) {
		/* What changed since the reviewer last asked for changes. */
		if (!t.reviewed_head)
			rc = die(1, _("task %s has not been reviewed yet (no changes were requested); "
			              "'paddock diff %s' shows all of it"), t.id, t.id);
		free(from);
		from = t.reviewed_head ? xstrdup(t.reviewed_head) : NULL;
	}
	if (rc) {
		/* reported */
	} else if (!to || !from) {
		rc = die(1, _("task %s has no work to show yet (it is %s); its diff exists once "
		              "the agent's work is handed back"), t.id, task_status_name(t.status));
	} else {
		char *mirror = mirror_path(tv.data, t.repo);
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);
		if (diff_write(mirror, from, to, f, &e) < 0) {
			fclose(f);
			rc = die(1, "%s", e.msg);
		} else {
			fclose(f);
			put_visible(stdout, mem, len, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
		}
		free(mem);
		free(mirror);
	}
	free(from);
	free(to);
	task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- gate */

/* Notes from --notes, --notes-file, or $EDITOR; NULL with a message when
 * there are none.  Lines starting with '#' from the editor are dropped. */
static char *read_notes(const struct opts *o, int editor_ok, const char *id, int *code)
{
	struct err e = {{0}};
	*code = EXIT_USAGE;
	if (o->notes && o->notes_file) {
		die(EXIT_USAGE, _("give either --notes or --notes-file, not both"));
		return NULL;
	}
	if (o->notes && strspn(o->notes, " \t\r\n") == strlen(o->notes)) {
		die(EXIT_USAGE, _("the notes are empty; say what the agent should change"));
		return NULL;
	}
	if (o->notes)
		return xstrdup(o->notes);
	struct buf b = {0};
	if (o->notes_file) {
		if ((strcmp(o->notes_file, "-") == 0 ? read_stdin_text(&b) :
		     fsx_read_file(o->notes_file, TASK_TEXT_MAX, &b, &e)) < 0) {
			die(EXIT_USAGE, _("cannot read the notes: %s"), *e.msg ? e.msg : strerror(errno));
			buf_free(&b);
			return NULL;
		}
		/* Refused as task texts are: a NUL would cut the notes short
		 * unseen, and standard input stops reading at the limit. */
		const char *bad = b.len >= TASK_TEXT_MAX
		                  ? _("the notes are 128 KiB or more; they must be shorter")
		                  : memchr(b.data ? b.data : "", '\0', b.len)
		                  ? _("the notes contain a NUL byte; they must be text")
		                  : strspn(b.data ? b.data : "", " \t\r\n") == b.len
		                  ? _("the notes are empty; say what the agent should change") : NULL;
		if (bad) {
			die(EXIT_USAGE, "%s", bad);
			buf_free(&b);
			return NULL;
		}
		return buf_detach(&b);
	}
	if (!editor_ok)
		return NULL;
	if (!editor_command()) {
		die(EXIT_USAGE, _("no notes: give --notes TEXT or --notes-file FILE, or set "
		                  "EDITOR to write them in an editor"));
		return NULL;
	}
	char *hdr = xasprintf(_("\n# Write what the agent should change in task %s.\n"
	                        "# Lines starting with '#' are ignored; empty notes cancel.\n"), id);
	char *notes = NULL;
	int rc = editor_edit(hdr, &notes, &e);
	free(hdr);
	if (rc < 0) {
		*code = die(rc == -2 ? EXIT_USAGE : 1, _("%s; nothing was requested"), e.msg);
		return NULL;
	}
	if (strspn(notes, " \t\n") == strlen(notes)) {
		free(notes);
		die(EXIT_USAGE, _("the notes are empty; nothing was requested"));
		return NULL;
	}
	return notes;
}

/* What follow-up prints: the new id (the new task with --json), and on
 * standard error where it goes on. */
static void follow_up_print(const struct config *cfg, struct store *s,
                            const struct task_row *t, const char *nid, int json)
{
	struct task_row n;
	struct err e = {{0}};
	if (!json) {
		printf("%s\n", nid);
		fprintf(stderr, _("queued %s: it follows up %s on branch %s\n"), nid, t->id,
		        t->branch);
	} else if (store_task_get(s, nid, &n, &e) == 0) {
		json_t *j = taskjson_task(&n, cfg);
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
		task_row_free(&n);
	}
}

/* Runs one gate action on the task named by the operand(s). */
static int gate_verb(const char *name, int argc, char **argv, const char *allowed)
{
	const struct verb *v = verb_find(name);
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, allowed);
	if (rc >= 0)
		return rc;
	int want = strcmp(name, "override") == 0 ? 2 : 1;
	if (argc - optind != want)
		return bad_usage(v);
	const char *id = argv[optind];
	if ((rc = id_usage(id)) >= 0)
		return rc;
	char *notes = NULL;
	int code;
	if (o.again && (o.notes || o.notes_file || strcmp(name, "request-changes"))) {
		fprintf(stderr, _("paddock %s: --again sends the last notes again; give it "
		                  "without --notes or --notes-file\n"), name);
		return bad_usage(v);
	} else if (o.again) {
		/* read from the store below */
	} else if (!strcmp(name, "request-changes") || !strcmp(name, "follow-up")) {
		if (!(notes = read_notes(&o, 1, id, &code)))
			return code;
	} else if ((o.notes || o.notes_file) && !(notes = read_notes(&o, 0, id, &code))) {
		return code;
	}
	struct config cfg;
	if (load_config(&cfg) < 0) {
		free(notes);
		return EXIT_USAGE;
	}
	char *data = NULL;
	struct store *s = open_store(&data, 0);
	if (!s) {
		config_free(&cfg);
		free(notes);
		return 1;
	}
	struct gate_ctx g = { .cfg = &cfg, .data_dir = data, .st = s, .actor = gate_actor() };
	struct err e = {{0}};
	struct buf out = {0};
	struct task_row t;
	char nid[TASK_ID_LEN + 1];
	if (store_task_get(s, id, &t, &e) < 0) {
		rc = die(task_id_valid(id, 1) ? 1 : EXIT_USAGE, "%s", e.msg);
		goto out;
	}
	if (o.again && !(notes = gate_last_notes(s, t.id, &e))) {
		rc = die(1, "%s", e.msg);
		task_row_free(&t);
		goto out;
	}
	if (!strcmp(name, "approve"))
		rc = gate_approve(&g, t.id, notes, &out, &e);
	else if (!strcmp(name, "push"))
		rc = gate_push(&g, t.id, &out, &e);
	else if (!strcmp(name, "reject"))
		rc = gate_reject(&g, t.id, notes, &e);
	else if (!strcmp(name, "request-changes"))
		rc = gate_request_changes(&g, t.id, notes, &e);
	else if (!strcmp(name, "follow-up"))
		rc = gate_follow_up(&g, t.id, notes, nid, &e);
	else
		rc = gate_override(&g, t.id, argv[optind + 1], notes, &e);
	fputs(out.data ? out.data : "", stdout);
	if (rc < 0) {
		rc = die(1, "%s", e.msg);
	} else {
		rc = 0;
		if (!strcmp(name, "approve"))
			printf(_("%s approved: done\n"), t.id);
		else if (!strcmp(name, "push"))
			printf(_("%s stays at review\n"), t.id);
		else if (!strcmp(name, "reject"))
			printf(_("%s rejected; its branch stays in paddock's mirror\n"), t.id);
		else if (!strcmp(name, "request-changes"))
			printf(_("%s: changes requested; the agent runs round %d when the scheduler "
			         "picks it up\n"), t.id, t.round + 1);
		else if (!strcmp(name, "follow-up"))
			follow_up_print(&cfg, s, &t, nid, o.json);
		else
			printf(_("%s: finding %s overridden\n"), t.id, argv[optind + 1]);
	}
	task_row_free(&t);
out:
	buf_free(&out);
	store_close(s);
	free(data);
	config_free(&cfg);
	free(notes);
	return rc;
}

static int cmd_approve(int argc, char **argv)
{
	return gate_verb("approve", argc, argv, "help notes notes-file");
}

static int cmd_push(int argc, char **argv)
{
	return gate_verb("push", argc, argv, "help");
}

static int cmd_reject(int argc, char **argv)
{
	return gate_verb("reject", argc, argv, "help notes notes-file");
}

static int cmd_request_changes(int argc, char **argv)
{
	return gate_verb("request-changes", argc, argv, "help notes notes-file again");
}

static int cmd_override(int argc, char **argv)
{
	return gate_verb("override", argc, argv, "help notes notes-file");
}

/* ---------------------------------------------------------------- follow-up */

static int cmd_follow_up(int argc, char **argv)
{
	return gate_verb("follow-up", argc, argv, "help json notes notes-file");
}

/* ---------------------------------------------------------------- cancel */

static int cmd_cancel(int argc, char **argv)
{
	struct task_verb tv;
	int rc = task_verb_begin("cancel", argc, argv, "help", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	struct err e = {{0}};
	int r;
	struct config cfg;
	if (t.status == TASK_PUSHING && gate_push_lock_free(tv.data, t.id) &&
	    load_config(&cfg) == 0) {
		/* A push left by a dead process: gate_cancel finds out where it
		 * got to first (that needs the repo's push configuration). */
		struct gate_ctx g = { .cfg = &cfg, .data_dir = tv.data, .st = tv.s,
		                      .actor = gate_actor() };
		r = gate_cancel(&g, t.id, &e);
		config_free(&cfg);
	} else {
		r = store_task_cancel(tv.s, t.id, gate_actor(), &e);
	}
	if (r < 0)
		rc = die(1, "%s", e.msg);
	else if (r == 1)
		printf(_("%s cancelled\n"), t.id);
	else
		printf(_("%s: cancel requested; the scheduler stops it shortly\n"), t.id);
	task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- serve */

static int run_scheduler(struct config *cfg, int until_idle, const char *listen)
{
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	if (!data)
		return die(1, "%s", e.msg);
	/* The HTTP API answers beside the scheduler, from threads of its own. */
	struct api *api = NULL;
	if (listen) {
		struct api_opts ao = { .listen = listen, .cfg = cfg, .data_dir = data };
		if (api_start(&api, &ao, stdout, &e) < 0) {
			free(data);
			return die(1, _("the HTTP API: %s"), e.msg);
		}
	}
	struct scheduler_opts so = { .until_idle = until_idle, .progress = stdout };
	int rc = scheduler_run(cfg, data, &so, &e) < 0 ? die(1, "%s", e.msg) : 0;
	api_stop(api);
	free(data);
	return rc;
}

static int cmd_serve(int argc, char **argv)
{
	const struct verb *v = verb_find("serve");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help until-idle listen routes");
	if (rc >= 0)
		return rc;
	if (o.routes) {
		/* What the API answers, for checks against its description. */
		for (const char *const *r = api_routes(); *r; r++)
			puts(*r);
		return 0;
	}
	if (optind != argc)
		return bad_usage(v);
	struct err e = {{0}};
	if (o.listen && api_listen_check(o.listen, &e) < 0)
		return die(EXIT_USAGE, _("--listen: %s"), e.msg);
	struct config cfg;
	if (load_config(&cfg) < 0)
		return EXIT_USAGE;
	rc = run_scheduler(&cfg, o.until_idle, o.listen ? o.listen : cfg.api_listen);
	config_free(&cfg);
	return rc;
}

/* ---------------------------------------------------------------- demo */

static int cmd_demo(int argc, char **argv)
{
	const struct verb *v = verb_find("demo");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return bad_usage(v);
	struct config cfg;
	if (load_config(&cfg) < 0)
		return EXIT_USAGE;
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	if (!data || demo_prepare(data, &cfg, &e) < 0) {
		config_free(&cfg);
		free(data);
		return die(1, "%s", e.msg);
	}
	/* Refuse before queueing anything: the demo's repo and agents live
	 * only in this process's configuration, so tasks queued for another
	 * scheduler (or one that cannot sandbox) could never run. */
	int lockfd;
	if (sandbox_preflight(&e) < 0 || scheduler_lock(data, &lockfd, &e) < 0) {
		config_free(&cfg);
		free(data);
		return die(1, _("demo: %s"), e.msg);
	}
	close(lockfd);
	struct store *s = open_store(NULL, 1);
	if (!s) {
		config_free(&cfg);
		free(data);
		return 1;
	}
	char fix[TASK_ID_LEN + 1], brk[TASK_ID_LEN + 1];
	if (store_task_add(s, "demo", "demo-fixer", "The test suite fails: total() in cart.py "
	                   "ignores the quantity. Fix the bug so the tests pass.", NULL, fix, &e) < 0 ||
	    store_task_add(s, "demo", "demo-hasty", "Round prices in cart.py to whole cents "
	                   "when totals are computed.", NULL, brk, &e) < 0) {
		store_close(s);
		config_free(&cfg);
		free(data);
		return die(1, "%s", e.msg);
	}
	store_close(s);
	/* On a terminal the demo runs in the dashboard; elsewhere (scripts,
	 * CI) it runs headless and prints what happened. */
	if (getenv("PADDOCK_UI_SCRIPT") || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))) {
		rc = dash_main(&cfg, 1);
		config_free(&cfg);
		free(data);
		return rc;
	}
	printf(_("paddock demo: queued two tasks on the demo repo (%s/demo):\n"
	         "  %s  demo-fixer fixes the failing test; it should reach review\n"
	         "  %s  demo-hasty makes an edit that breaks a test; it should fail at testing\n\n"),
	       data, fix, brk);
	fflush(stdout);
	rc = run_scheduler(&cfg, 1, NULL);
	if (rc == 0) {
		printf(_("\nWhat happened:\n"));
		fflush(stdout);
		char *show[] = { "show", fix, NULL };
		cmd_show(2, show);
		putchar('\n');
		char *show2[] = { "show", brk, NULL };
		cmd_show(2, show2);
		printf(_("\nThe fix, from paddock's mirror (paddock diff %s):\n\n"), fix);
		fflush(stdout);
		char *diff[] = { "diff", fix, NULL };
		cmd_diff(2, diff);
		printf(_("\nNext: 'paddock log %s' shows the sandbox's output; 'paddock list' "
		         "shows all tasks.\n"), brk);
	}
	config_free(&cfg);
	free(data);
	return rc;
}

/* ---------------------------------------------------------------- config */

static int cmd_config(int argc, char **argv)
{
	const struct verb *v = verb_find("config");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help");
	if (rc >= 0)
		return rc;
	if (optind >= argc || strcmp(argv[optind], "check") != 0 || argc - optind > 2)
		return bad_usage(v);
	const char *file = optind + 1 < argc ? argv[optind + 1] : NULL;
	char *path = file ? xstrdup(file) : config_default_path();
	int n = config_check(path, stderr);
	if (n == 0)
		printf(_("%s: no problems\n"), path);
	free(path);
	return n ? 1 : 0;
}

/* ---------------------------------------------------------------- agent */

/* The installed package of an agent ("" when not installed). */
static char *agent_installed(const char *data, const struct agent_conf *a)
{
	char *dir = adapter_install_dir(data, a);
	if (!dir)
		return xstrdup("");
	char *mark = paths_join(dir, ".paddock-package", NULL);
	struct buf b = {0};
	struct err e;
	char *out = fsx_read_file(mark, 4096, &b, &e) == 0 && b.data
	            ? xstrndup(b.data, strcspn(b.data, "\n")) : xstrdup("?");
	buf_free(&b);
	free(mark);
	free(dir);
	return out;
}

static json_t *template_json(const struct template_info *t, const char *state)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:b,s:s?}", "repo", t->repo, "name", t->name,
	                 "commit", t->sha, "path", t->path, "bytes", (json_int_t)t->bytes,
	                 "last_used", (json_int_t)t->last_used, "in_use", t->in_use,
	                 "state", state);
}

static int cmd_template(int argc, char **argv)
{
	const struct verb *v = verb_find("template");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help json older-than dry-run");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return bad_usage(v);
	const char *sub = argv[optind];
	int prune = strcmp(sub, "prune") == 0;
	if (argc - optind != 1 || (!prune && strcmp(sub, "list") != 0) ||
	    (!prune && (o.older_than || o.dry_run)))
		return bad_usage(v);
	double age = 0;
	if (o.older_than && strcmp(o.older_than, "0") != 0 &&
	    (units_parse_duration(o.older_than, &age) < 0 || age < 0))
		return die(EXIT_USAGE, _("--older-than: '%s' is not a duration (for example 7d, "
		                         "12h or 0)"), o.older_than);
	if (prune && !o.older_than) {
		struct config cfg;
		if (config_soft(&cfg)) {
			age = cfg.template_max_age;
			config_free(&cfg);
		}
	}
	struct err e = {{0}};
	char *data = paths_data_dir();
	struct template_info *t = NULL;
	size_t n = 0;
	if (template_list(data, 1, &t, &n, &e) < 0) {
		free(data);
		return die(1, "%s", e.msg);
	}
	json_t *arr = o.json ? json_array() : NULL;
	time_t now = time(NULL);
	rc = 0;
	if (!arr && !prune && n)
		printf("%-12s %-14s %-12s %9s  %-16s %s\n", _("REPO"), _("COMMIT"), _("SET-UP"),
		       _("SIZE"), _("LAST USED"), _("STATE"));
	uint64_t freed = 0;
	size_t removed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *state = t[i].in_use ? "in-use" : "idle";
		if (prune) {
			if (!template_stale(&t[i], now, age))
				continue;
			state = o.dry_run ? "would-remove" : "removed";
			if (!o.dry_run && template_remove(data, &t[i], &e) < 0) {
				rc = die(1, "%s", e.msg);
				continue;
			}
			removed++;
			freed += t[i].bytes;
		}
		if (arr) {
			json_array_append_new(arr, template_json(&t[i], state));
			continue;
		}
		char size[32], when[32];
		units_format_size(t[i].bytes, size, sizeof size);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t[i].last_used));
		if (prune) {
			printf(o.dry_run ? _("would remove %s/%s (%s, last used %s)\n")
			                 : _("removed %s/%s (%s, last used %s)\n"),
			       t[i].repo, t[i].name, size, when);
			continue;
		}
		const char *key = strlen(t[i].name) > 41 ? t[i].name + 41 : "-";
		printf("%-12s %-14.12s %-12s %9s  %-16s %s\n", t[i].repo, t[i].sha, key, size, when,
		       t[i].in_use ? _("in use") : _("idle"));
	}
	if (arr) {
		json_print(arr);
	} else if (prune) {
		char size[32];
		units_format_size(freed, size, sizeof size);
		printf(o.dry_run ? _("%zu templates would be removed (%s)\n")
		                 : _("%zu templates removed (%s freed)\n"), removed, size);
	}
	template_list_free(t, n);
	free(data);
	return rc;
}

static int cmd_agent(int argc, char **argv)
{
	const struct verb *v = verb_find("agent");
	struct opts o;
	int rc = parse_opts(v, argc, argv, &o, "help json");
	if (rc >= 0)
		return rc;
	rc = 0;
	if (optind >= argc)
		return bad_usage(v);
	const char *sub = argv[optind];
	int install = strcmp(sub, "install") == 0;
	if (!(install && argc - optind == 2) && !(strcmp(sub, "list") == 0 && argc - optind == 1))
		return bad_usage(v);
	struct config cfg;
	if (load_config(&cfg) < 0)
		return EXIT_USAGE;
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	if (!data) {
		config_free(&cfg);
		return die(1, "%s", e.msg);
	}
	if (install) {
		const struct agent_conf *a = config_find_agent(&cfg, argv[optind + 1]);
		if (!a)
			rc = die(EXIT_USAGE, _("no agent named '%s' in the configuration; "
			                       "'paddock agent list' lists them"), argv[optind + 1]);
		else if (!a->package)
			rc = die(EXIT_USAGE, _("agent '%s' has no package to install (it is a script); "
			                       "set agent.%s.package to an npm package to install one"),
			         a->name, a->name);
		else {
			fprintf(stderr, _("installing %s for agent %s...\n"), a->package, a->name);
			fflush(stderr);
			if (adapter_install(data, a, STDERR_FILENO, &e) < 0)
				rc = die(1, "%s", e.msg);
			else
				printf(_("agent %s: %s installed\n"), a->name, a->package);
		}
	} else {
		json_t *arr = o.json ? json_array() : NULL;
		for (size_t i = 0; i < cfg.nagents; i++) {
			const struct agent_conf *a = &cfg.agents[i];
			char *inst = agent_installed(data, a);
			if (arr) {
				json_array_append_new(arr, json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:b,s:s?}",
					"name", a->name, "kind", config_agent_kind_name(a->kind),
					"endpoint", a->endpoint, "package", a->package, "model", a->model,
					"builtin", a->builtin, "installed", *inst ? inst : NULL));
			} else {
				const char *state = !a->package ? _("script")
				                    : *inst ? inst : _("not installed");
				printf("%-10s %-8s %-10s %s\n", a->name, config_agent_kind_name(a->kind),
				       a->endpoint ? a->endpoint : "-", state);
			}
			free(inst);
		}
		if (arr) {
			char *txt = json_dumps(arr, JSON_INDENT(2));
			puts(txt);
			free(txt);
			json_decref(arr);
		}
	}
	free(data);
	config_free(&cfg);
	return rc;
}

/* ---------------------------------------------------------------- table */

static const struct verb verbs[] = {
	{ "add", cmd_add, N_("add [--repo NAME] [--agent NAME] [--budget USD] [--json] "
	                     "(TEXT | --file FILE)"),
	  N_("Queues a task and prints its id.  TEXT is what the agent should do (under\n"
	     "128 KiB); --file reads it from FILE ('-' for standard input).\n"
	     "  -r, --repo NAME    the repo, from the configuration (needed when there are several)\n"
	     "  -a, --agent NAME   the agent (default: the agent named 'default', else the first)\n"
	     "  --budget USD       what the task may spend on model calls (5, 2.50, $2.50; 0: no\n"
	     "                     limit); default: limits.budget of the configuration\n"
	     "  -j, --json         print {\"id\": ...} as JSON\n") },
	{ "list", cmd_list, N_("list [--status STATUS] [--json]"),
	  N_("Lists tasks, oldest first.\n"
	     "  --status STATUS    only tasks with this status\n"
	     "  -j, --json         print a JSON array\n") },
	{ "show", cmd_show, N_("show [--json] ID"),
	  N_("Shows a task: status, steps with seconds since it was queued, branch, base and\n"
	     "head commits, the error of a failed task and why it failed, its budget, model\n"
	     "usage and cost, the agent's session, pauses of its model endpoint, the gate and\n"
	     "every request through its gateway.  ID may be a unique prefix.\n"
	     "  -j, --json         print a JSON object (id, status, steps, branch, error, ...)\n") },
	{ "log", cmd_log, N_("log [--follow] ID"),
	  N_("Prints a task's sandbox output (agent, tests, hand-off).  On a terminal,\n"
	     "colours are kept, other escape sequences are removed and control characters\n"
	     "show as ^X.\n"
	     "  -f, --follow       keep printing as the task runs, until it stops\n") },
	{ "diff", cmd_diff, N_("diff [--round N | --since-review | --failed] ID"),
	  N_("Prints the task's change (base..head) from paddock's mirror.\n"
	     "  --round N          only what round N changed\n"
	     "  --since-review     only what changed since changes were last requested\n"
	     "  --failed           what the round that did not reach review did\n") },
	{ "approve", cmd_approve, N_("approve [--notes TEXT] ID"),
	  N_("Pushes the task's branch with paddock's credentials, opens the pull request\n"
	     "when the repo has one configured, tears the sandbox down; the task is done.\n"
	     "Refused while a policy finding blocks it (see 'paddock override').\n"
	     "  -m, --notes TEXT   a note recorded with the decision\n"
	     "  --notes-file FILE  the note from FILE ('-' for standard input)\n") },
	{ "push", cmd_push, N_("push ID"),
	  N_("Pushes the task's branch now; the task stays at review.\n") },
	{ "reject", cmd_reject, N_("reject [--notes TEXT] ID"),
	  N_("Ends the task without pushing; its branch stays in paddock's mirror.\n"
	     "  -m, --notes TEXT   why, recorded with the decision\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n") },
	{ "request-changes", cmd_request_changes,
	  N_("request-changes [--notes TEXT | --notes-file FILE | --again] ID"),
	  N_("Sends the task back to its agent with notes: the agent continues in the same\n"
	     "sandbox (round N+1), then tests, hand-off and the gate again.  Without --notes\n"
	     "or --notes-file, $VISUAL or $EDITOR opens for the notes.\n"
	     "  -m, --notes TEXT   the notes\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n"
	     "  --again            the last notes again (after a round that did not reach\n"
	     "                     review)\n") },
	{ "override", cmd_override, N_("override [--notes TEXT] ID FINDING"),
	  N_("Overrides a blocking policy finding of the task's current round by its name\n"
	     "(as 'paddock show' lists it, e.g. secrets:config/key.pem); recorded.\n"
	     "  -m, --notes TEXT   why it is fine, recorded with the decision\n") },
	{ "follow-up", cmd_follow_up,
	  N_("follow-up [--notes TEXT | --notes-file FILE] [--json] ID"),
	  N_("Queues a new task that follows up a finished one (done, failed, rejected):\n"
	     "the agent continues the task's conversation on its branch, with the notes as\n"
	     "its prompt.  Prints the new task's id.  Without --notes or --notes-file,\n"
	     "$VISUAL or $EDITOR opens for the notes.\n"
	     "  -m, --notes TEXT   the notes\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n"
	     "  --json             print the new task as JSON\n") },
	{ "cancel", cmd_cancel, N_("cancel ID"),
	  N_("Cancels a queued task at once, or asks the scheduler to stop a running one.\n") },
	{ "serve", cmd_serve, N_("serve [--until-idle] [--listen ADDR:PORT]"),
	  N_("Runs the scheduler without the dashboard until interrupted.\n"
	     "  --until-idle       return when nothing is queued or running\n"
	     "  --listen ADDR:PORT also answer the HTTP API there (default: api.listen of the\n"
	     "                     configuration, else none); see paddock-api(7)\n"
	     "  --routes           print the API's routes and exit\n") },
	{ "demo", cmd_demo, N_("demo"),
	  N_("Makes a demo repo with a failing test and two scripted agents, queues a task\n"
	     "for each and runs them: one reaches review with a fix, one fails at testing.\n") },
	{ "agent", cmd_agent, N_("agent [--json] (list | install NAME)"),
	  N_("Lists the agents of the configuration (the ready-made claude, codex, pi and\n"
	     "opencode among them) with what is installed, or installs an agent's pinned\n"
	     "npm package into paddock's data directory, where sandboxes see it read-only.\n"
	     "Install scripts of the package are not run.\n"
	     "  -j, --json         print a JSON array (list)\n") },
	{ "template", cmd_template, N_("template [--json] (list | prune [--older-than AGE] [--dry-run])"),
	  N_("Lists the templates (one read-only checkout per repo, base commit and set-up,\n"
	     "the lower layer of every task's workspace) with their size, last use and\n"
	     "whether a process holds them, or removes those no process holds.\n"
	     "  --older-than AGE   prune only templates last used longer ago than AGE\n"
	     "                     (e.g. 7d; default: paddock.template-max-age, else 0)\n"
	     "  --dry-run          print what prune would remove, remove nothing\n"
	     "  -j, --json         print a JSON array\n") },
	{ "config", cmd_config, N_("config check [FILE]"),
	  N_("Checks the configuration file (default: $PADDOCK_CONFIG, else\n"
	     "$XDG_CONFIG_HOME/paddock/config) and prints every problem as FILE:LINE: message.\n"
	     "Exits 1 when there is a problem.\n") },
};

static const struct verb *verb_find(const char *name)
{
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out, _("usage: paddock [--version] [--help] VERB [ARGS]\n\n"
	               "paddock runs coding agents on tasks against git repositories, each in a\n"
	               "sandbox that holds no credential.\n\nVerbs:\n"));
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		fprintf(out, "  paddock %s\n", _(verbs[i].usage));
	fprintf(out, _("\n'paddock VERB --help' describes a verb; man paddock has the details.\n"));
}

/* The dashboard, `paddock` with no arguments. */
static int cmd_dashboard(void)
{
	struct config cfg;
	if (load_config(&cfg) < 0)
		return EXIT_USAGE;
	int rc = dash_main(&cfg, 0);
	config_free(&cfg);
	return rc;
}

int cli_main(int argc, char **argv)
{
	if (argc < 2)
		return cmd_dashboard();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && verb_find(argv[2]))
			return verb_help(verb_find(argv[2]), stdout);
		if (argc > 2) {
			fprintf(stderr, _("paddock: '%s' is not a verb.\n"), argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("paddock %s\n", PACKAGE_VERSION);
		return 0;
	}
	const struct verb *v = verb_find(argv[1]);
	if (!v) {
		fprintf(stderr, _("paddock: '%s' is not a verb.\n"), argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return v->run(argc - 1, argv + 1);
}
