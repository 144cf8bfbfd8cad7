/* The verbs on tasks: add, list, log, diff and cancel (show has a file of
 * its own, cmd_show.c). */
#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "diffcache.h"
#include "fsx.h"
#include "gate.h"
#include "group.h"
#include "store_github.h"
#include "i18n.h"
#include "mirror.h"
#include "move.h"
#include "paths.h"
#include "recipe.h"
#include "reminder.h"
#include "render.h"
#include "sanitize.h"
#include "store.h"
#include "submit.h"
#include "task.h"
#include "taskjson.h"
#include "units.h"

/* ---------------------------------------------------------------- add */

/* The task text of add: TEXT, --file, or none (a recipe's prompt); -1
 * with the message printed (rc set) when it cannot be used. */
static int add_text(const struct cli_verb *v, const struct cli_opts *o, int argc, char **argv,
                    struct buf *text, int *rc)
{
	struct err e = {{0}};
	if (o->file) {
		if (optind != argc) {
			*rc = cli_die(EXIT_USAGE, _("give the task text either as TEXT or with --file, "
			                            "not both"));
			return -1;
		}
		struct stat st;
		if (strcmp(o->file, "-") != 0 && stat(o->file, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size >= TASK_TEXT_MAX)
			goto too_long;
		if (strcmp(o->file, "-") == 0 ? cli_read_stdin_text(text) < 0
		    : fsx_read_file(o->file, TASK_TEXT_MAX, text, &e) < 0) {
			*rc = cli_die(EXIT_USAGE, _("cannot read the task text: %s"),
			              *e.msg ? e.msg : strerror(errno));
			return -1;
		}
	} else if (optind == argc - 1) {
		buf_adds(text, argv[optind]);
	} else if (optind != argc || !o->recipe) {
		fprintf(stderr, optind == argc ? _("paddock add: the task text is missing\n")
		        : _("paddock add: give the task text as one argument (quote it)\n"));
		*rc = cli_bad_usage(v);
		return -1;
	}
	if (text->len >= TASK_TEXT_MAX) {
	too_long:
		*rc = cli_die(EXIT_USAGE, _("the task text is 128 KiB or more; it must be shorter. "
		                            "Put long material in the repository and refer to it"));
		return -1;
	}
	if (text->data && memchr(text->data, '\0', text->len)) {
		*rc = cli_die(EXIT_USAGE, _("the task text contains a NUL byte; it must be text"));
		return -1;
	}
	if (!o->recipe && (!text->len || strspn(text->data, " \t\r\n") == text->len)) {
		*rc = cli_die(EXIT_USAGE, _("the task text is empty; say what the agent should do"));
		return -1;
	}
	return 0;
}

/* The options of add that are not text, into rq (pointing into o and
 * the arrays given); -1 with the message printed. */
static int add_request(const struct cli_opts *o, struct submit_req *rq, char **names,
                       const char **values, char **agents, struct err *e)
{
	if (o->budget && units_parse_money(o->budget, &rq->budget) < 0)
		return cli_die(EXIT_USAGE, _("--budget %s: not an amount of US dollars; give it like "
		                             "5, 2.50 or $2.50 (0: no limit)"), o->budget), -1;
	if (o->timeout && (units_parse_duration(o->timeout, &rq->timeout) < 0 ||
	                   rq->timeout <= 0))
		return cli_die(EXIT_USAGE, _("--timeout %s: not a duration; give it like 30m, 2h or "
		                             "900 (seconds)"), o->timeout), -1;
	if (o->n) {
		char *end;
		long v = strtol(o->n, &end, 10);
		if (*end || end == o->n || v < 2 || v > SUBMIT_GROUP_MAX)
			return cli_die(EXIT_USAGE, _("--n %s: give a number of tasks from 2 to %d"), o->n,
			               SUBMIT_GROUP_MAX), -1;
		rq->n = (int)v;
	}
	for (int i = 0; i < o->ninputs; i++) {
		if (submit_input_split(o->inputs[i], &names[i], &values[i], e) < 0)
			return cli_die(EXIT_USAGE, "%s", e->msg), -1;
		rq->ninputs++;
	}
	rq->input_names = (const char *const *)names;
	rq->input_values = values;
	if (o->agents) {
		char *copy = xstrdup(o->agents), *save = NULL;
		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			if (rq->nagents == SUBMIT_GROUP_MAX) {
				free(copy);
				return cli_die(EXIT_USAGE, _("--agents: a group has at most %d members"),
				               SUBMIT_GROUP_MAX), -1;
			}
			agents[rq->nagents++] = xstrdup(w);
		}
		free(copy);
		rq->agents = (const char *const *)agents;
	}
	rq->repo = o->repo;
	rq->agent = o->agent;
	rq->recipe = o->recipe;
	rq->base = o->base;
	rq->test = o->test;
	rq->approval = o->approval;
	rq->dry_run = o->dry_run;
	return 0;
}

/* add's JSON (add --json), printed, or rendered as its text (render.h). */
static void add_print(const struct submit_result *res, const struct cli_opts *o,
                      double budget)
{
	json_t *tasks = json_array();
	for (size_t i = 0; i < res->n; i++)
		json_array_append_new(tasks, json_pack("{s:s,s:s,s:s,s:s}", "id", res->ids[i],
		                                       "status", "queued", "repo", res->repo,
		                                       "agent", res->agents[i]));
	json_t *j;
	if (res->group[0]) {
		j = json_pack("{s:s,s:o}", "group", res->group, "tasks", tasks);
	} else {
		j = json_incref(json_array_get(tasks, 0));
		json_decref(tasks);
	}
	if (!res->group[0] && budget >= 0)
		json_object_set_new(j, "budget", json_real(budget));
	if (res->confirm) {
		json_object_set_new(j, "confirm", json_string("needed"));
		json_object_set_new(j, "estimate", json_real(res->estimate));
	}
	if (o->json) {
		cli_json_print(j);
	} else {
		render_added(j);
		json_decref(j);
	}
}

int cmd_add(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("add");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json repo agent file budget recipe "
	                        "input base test timeout approval dry-run agents n");
	if (rc >= 0)
		return rc;
	struct submit_req rq = { .budget = -1 };
	char *names[CLI_INPUTS_MAX] = {0}, *agents[SUBMIT_GROUP_MAX] = {0};
	const char *values[CLI_INPUTS_MAX] = {0};
	struct buf text = {0};
	struct err e = {{0}};
	struct config cfg;
	int loaded = 0;
	if (add_text(v, &o, argc, argv, &text, &rc) < 0)
		goto out;
	rc = EXIT_USAGE;
	if (add_request(&o, &rq, names, values, agents, &e) < 0)
		goto out;
	rq.queued_by = gate_actor();
	if (cli_load_config(&cfg) < 0)
		goto out;
	loaded = 1;
	rq.text = text.data;
	/* A wrong request changes nothing: not even a store is made. */
	if (submit_check(&cfg, &rq, &e) < 0) {
		rc = cli_die(EXIT_USAGE, "%s", e.msg);
		goto out;
	}
	char *data = NULL;
	struct store *s = cli_open_store(&data, 1);
	if (!s) {
		rc = 1;
		goto out;
	}
	struct submit_result res;
	if (submit_tasks(s, &cfg, &rq, &res, &e) < 0) {
		/* A request that is wrong is bad usage; the store failing is not. */
		rc = cli_die(e.kind == ERR_INVALID || e.kind == ERR_NOT_FOUND ? EXIT_USAGE : 1, "%s",
		             e.msg);
	} else {
		add_print(&res, &o, rq.budget);
		rc = 0;
	}
	store_close(s);
	free(data);
out:
	for (size_t i = 0; i < CLI_INPUTS_MAX; i++)
		free(names[i]);
	for (size_t i = 0; i < SUBMIT_GROUP_MAX; i++)
		free(agents[i]);
	if (loaded)
		config_free(&cfg);
	buf_free(&text);
	return rc;
}

/* ---------------------------------------------------------------- list */

/* --status: one status or a comma list; -1 (message printed) if one is
 * unknown. */
int cli_list_statuses(const char *arg, unsigned *mask)
{
	*mask = 0;
	if (!arg)
		return 0;
	char *copy = xstrdup(arg), *save = NULL;
	int rc = 0;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int st = task_status_parse(w);
		if (st < 0) {
			cli_die(EXIT_USAGE, _("unknown status '%s'; statuses are queued, preparing, "
			                      "running, testing, review, pushing, done, failed, "
			                      "rejected, cancelled, lost"), w);
			rc = -1;
			break;
		}
		*mask |= TASK_MASK(st);
	}
	free(copy);
	if (rc == 0 && !*mask)
		rc = -1, cli_die(EXIT_USAGE, _("--status needs a status, such as review"));
	return rc;
}

/* --since: a duration back from now, or a local date and time. */
int cli_list_since(const char *arg, double *since)
{
	double secs;
	if (units_parse_duration(arg, &secs) == 0) {
		*since = clock_wall() - secs;
		return 0;
	}
	static const char *const forms[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M",
	                                     "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		struct tm tm = {0};
		const char *end = strptime(arg, forms[i], &tm);
		if (end && !*end) {
			tm.tm_isdst = -1;
			time_t t = mktime(&tm);
			if (t != (time_t)-1) {
				*since = (double)t;
				return 0;
			}
		}
	}
	return cli_die(EXIT_USAGE, _("--since '%s' is neither a duration (such as 2h or 7d) nor "
	                             "a date (such as 2026-11-30 or 2026-11-30T14:00)"), arg), -1;
}

#define LIST_DEFAULT_LIMIT 100

struct list_out {
	int json;
	size_t n;
	char first_id[TASK_ID_LEN + 1];
	struct config cfg;
	int have_cfg;
	struct store *s;           /* for a member's place in its group */
};

/* The review limits that keep new tasks queued now (reminder.h), one line
 * each on stderr, as the list's note of its newest page: the JSON's array
 * has no place for them. */
static void list_holds(struct store *s)
{
	struct config cfg;
	if (!cli_config_soft(&cfg))
		return;
	struct reminder_gates g = {0};
	struct err e = {{0}};
	if (reminder_limit_on(&cfg) && reminder_count(s, &g, &e) == 0) {
		struct reminder_hold h;
		char *text;
		if (reminder_hold_of(&cfg, &g, NULL, &h)) {
			text = reminder_hold_text(&h, NULL);
			fprintf(stderr, _("paddock: %s: new tasks wait until one leaves review\n"), text);
			free(text);
		}
		for (size_t i = 0; i < cfg.nrepos; i++) {
			const char *name = cfg.repos[i].name;
			if (cfg.repos[i].max_at_review < 0 || !reminder_hold_of(&cfg, &g, name, &h))
				continue;
			text = reminder_hold_text(&h, name);
			fprintf(stderr, _("paddock: %s: its new tasks wait until one leaves review\n"),
			        text);
			free(text);
		}
	}
	reminder_gates_free(&g);
	config_free(&cfg);
}

static int list_print(const struct task_row *t, void *arg, struct err *e)
{
	(void)e;
	struct list_out *lo = arg;
	if (!lo->n)
		memcpy(lo->first_id, t->id, sizeof lo->first_id);
	json_t *j = taskjson_row(lo->s, t, lo->have_cfg ? &lo->cfg : NULL);
	if (lo->json) {
		/* One element of the array at a time, indented as
		 * cli_json_print indents the whole. */
		char *text = json_dumps(j, cli_json_flags());
		fputs(lo->n ? ",\n  " : "[\n  ", stdout);
		for (const char *p = text; p && *p; p++) {
			putchar(*p);
			if (*p == '\n')
				fputs("  ", stdout);
		}
		free(text);
	} else {
		/* The row of the remote list too (render.h). */
		render_list_row(j, !lo->n);
	}
	json_decref(j);
	lo->n++;
	return ferror(stdout) ? 1 : 0;
}

int cmd_list(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("list");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json status limit since before");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	struct task_query q = { .no_steps = 0 };
	if (cli_list_statuses(o.status, &q.status_mask) < 0 ||
	    (o.since && cli_list_since(o.since, &q.since) < 0))
		return EXIT_USAGE;
	/* A history of 100,000 tasks prints its newest page, as gh does, and
	 * says so; --limit 0 prints them all. */
	long limit = LIST_DEFAULT_LIMIT;
	if (o.limit) {
		char *end;
		errno = 0;
		limit = strtol(o.limit, &end, 10);
		if (errno || end == o.limit || *end || limit < 0)
			return cli_die(EXIT_USAGE, _("--limit '%s' is not a number of tasks (0 lists "
			                             "them all)"), o.limit);
	}
	struct store *s = cli_open_store(NULL, 0);
	if (!s)
		return 1;
	struct err e = {{0}};
	if (o.before) {
		struct task_row b;
		if (store_task_get(s, o.before, &b, &e) < 0) {
			store_close(s);
			return cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
		}
		q.before = b.seq;
		task_row_free(&b);
	}
	struct list_out lo = { .json = o.json, .s = s };
	if (o.json)
		lo.have_cfg = cli_config_soft(&lo.cfg);
	/* The table shows no steps: one row read per task. */
	q.no_steps = !o.json;
	if (limit > 0) {
		/* The newest N, printed oldest first like the rest. */
		q.limit = (size_t)limit;
		q.newest_first = 1;
		struct task_row *rows;
		size_t n;
		rc = store_task_query(s, &q, &rows, &n, &e);
		for (size_t i = n; rc == 0 && i > 0; i--)
			if (list_print(&rows[i - 1], &lo, &e))
				break;
		if (rc == 0)
			task_rows_free(rows, n);
		size_t all = 0;
		if (rc == 0 && n == q.limit && store_task_count(s, &q, &all, &e) == 0 && all > n)
			fprintf(stderr, _("paddock: the newest %zu of %zu tasks; --limit 0 lists them "
			                  "all, --before %s the ones before\n"), n, all,
			        lo.first_id);
	} else {
		/* Every one, printed as it is read. */
		rc = store_task_each(s, &q, list_print, &lo, &e);
	}
	if (lo.have_cfg)
		config_free(&lo.cfg);
	if (rc == 0)
		list_holds(s);
	store_close(s);
	if (rc < 0)
		return cli_die(1, "%s", e.msg);
	if (o.json)
		puts(lo.n ? "\n]" : "[]");
	else if (lo.n == 0 && !q.status_mask && !q.since && !q.before)
		printf(_("no tasks; add one with: paddock add --repo NAME \"what to do\"\n"));
	else if (lo.n == 0)
		printf(_("no tasks match\n"));
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
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

int cmd_log(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("log", argc, argv, "help follow", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	const struct cli_opts o = tv.o;
	struct store *s = tv.s;
	char *path = paths_task_log(tv.data, t.id);
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
		rc = cli_die(1, _("task %s has no log yet"), t.id);
	else if (fd < 0 && !o.follow)
		fprintf(stderr, _("paddock: task %s is queued; it has no log yet "
		                  "(use --follow to wait for it)\n"), t.id);
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	free(path);
	cli_task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- diff */

/* paddock diff's output, file by file as the diff is computed (nothing
 * waits for the whole): raw bytes to a file or a pipe, marks on a
 * terminal.  A file's patch is whole lines and no escape sequence or
 * character spans a newline, so marking file by file is marking the
 * whole. */
struct diff_out {
	int tty;
};

static int diff_out_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                         struct err *e)
{
	const struct diff_out *o = arg;
	(void)f;
	if (o->tty)
		cli_put_visible(stdout, patch, len, SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE);
	else if (len && fwrite(patch, 1, len, stdout) != len)
		return err_errno(e, _("cannot write the diff"));
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("diff", argc, argv, "help round since-review failed", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	struct err e = {{0}};
	char *from = t.base ? xstrdup(t.base) : NULL, *to = t.head ? xstrdup(t.head) : NULL;
	if (!!tv.o.round + tv.o.since_review + tv.o.failed > 1) {
		rc = cli_die(EXIT_USAGE, _("give one of --round, --since-review and --failed"));
	} else if (tv.o.failed) {
		/* The round that did not reach review, from the reviewed head. */
		if (!t.failed_round)
			rc = cli_die(1, _("task %s has no failed round; 'paddock show %s' says where it "
			                  "is"), t.id, t.id);
		else if (!t.failed_head)
			rc = cli_die(1, _("round %d of task %s failed before its work was handed "
			                  "back; 'paddock log %s' shows what it did"), t.failed_round,
			             t.id, t.id);
		free(to);
		to = t.failed_head ? xstrdup(t.failed_head) : NULL;
	} else if (tv.o.round) {
		/* One round: from where it started to its head. */
		char *end;
		long n = strtol(tv.o.round, &end, 10);
		struct task_round *r;
		size_t nr;
		if (*end || n < 1 || n > t.round) {
			rc = cli_die(EXIT_USAGE, _("--round %s: task %s has rounds 1 to %d"), tv.o.round,
			             t.id, t.round);
		} else if (store_rounds(tv.s, t.id, &r, &nr, &e) < 0) {
			rc = cli_die(1, "%s", e.msg);
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
				rc = cli_die(1, _("round %ld of task %s has no work"), n, t.id);
		}
	} else if (tv.o.since_review) {
		/* What changed since the reviewer last asked for changes. */
		if (!t.reviewed_head)
			rc = cli_die(1, _("task %s has not been reviewed yet (no changes were "
			                  "requested); 'paddock diff %s' shows all of it"), t.id, t.id);
		free(from);
		from = t.reviewed_head ? xstrdup(t.reviewed_head) : NULL;
	}
	if (rc) {
		/* reported */
	} else if (!to || !from) {
		rc = cli_die(1, _("task %s has no work to show yet (it is %s); its diff exists once "
		                  "the agent's work is handed back"), t.id, task_status_label(t.status));
	} else {
		char *mirror = mirror_path(tv.data, t.repo);
		char *diffs = paths_task_diffs(tv.data, t.id);
		struct diff_out o = { isatty(fileno(stdout)) };
		if (diffcache_each(diffs, mirror, from, to, diff_out_file, &o, &e) < 0)
			rc = cli_die(1, "%s", e.msg);
		else if (fflush(stdout) != 0)
			rc = cli_die(1, _("cannot write the diff: %s"), strerror(errno));
		free(diffs);
		free(mirror);
	}
	free(from);
	free(to);
	cli_task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- cancel */

int cmd_cancel(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("cancel", argc, argv, "help", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	const struct task_row t = tv.t;
	struct err e = {{0}};
	int r;
	struct config cfg;
	if (t.status == TASK_PUSHING && gate_push_lock_free(tv.data, t.id) &&
	    cli_load_config(&cfg) == 0) {
		/* A push left by a dead process: gate_cancel finds out where it
		 * got to first (that needs the repo's push configuration). */
		struct gate_ctx g = gate_ctx_of(&cfg, tv.data, tv.s, NULL);
		r = gate_cancel(&g, t.id, &e);
		config_free(&cfg);
	} else {
		struct mover mv = { .st = tv.s };
		struct gate_ctx g = gate_ctx_of(NULL, tv.data, tv.s, NULL);
		r = gate_action_waits(&g, t.id, _("cancel"), &e) < 0 ? -1
		    : move_cancel(&mv, t.id, gate_actor(), &e);
	}
	if (r < 0)
		rc = cli_die(1, "%s", e.msg);
	else if (r == 1)
		printf(_("%s cancelled\n"), t.id);
	else
		printf(_("%s: cancel requested; the scheduler stops it shortly\n"), t.id);
	cli_task_verb_end(&tv);
	return rc;
}

/* ---------------------------------------------------------------- confirm */

int cmd_confirm(int argc, char **argv)
{
	struct cli_task_verb tv;
	int rc = cli_task_verb_begin("confirm", argc, argv, "help json", &tv);
	if (rc >= 0)
		return rc;
	rc = 0;
	struct err e = {{0}};
	/* The repo's reviewers decide its confirmations too. */
	struct config cfg;
	if (cli_load_config(&cfg) < 0) {
		cli_task_verb_end(&tv);
		return EXIT_USAGE;
	}
	struct gate_ctx g = gate_ctx_of(&cfg, tv.data, tv.s, NULL);
	if (gate_may_decide(&g, &tv.t, "confirm", &e) < 0 ||
	    store_task_confirm(tv.s, tv.t.id, gate_actor(), &e) < 0) {
		rc = cli_die(1, "%s", e.msg);
	} else if (tv.o.json) {
		struct task_row t;
		if (store_task_get(tv.s, tv.t.id, &t, &e) == 0) {
			cli_json_print(taskjson_task(&t, NULL));
			task_row_free(&t);
		}
	} else {
		printf(_("%s confirmed; it runs when a worker is free\n"), tv.t.id);
	}
	config_free(&cfg);
	cli_task_verb_end(&tv);
	return rc;
}
