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
#include "render.h"
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

/* The task ID (the caller checked it with cli_id_usage). */
static json_t *get_task(const char *id, struct err *e)
{
	return client_get_task(rcl, id, e);
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double jnum(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The task as follow-up --json prints it (taskjson_task) from GET
 * /tasks/ID, which adds what list and show print (taskjson_row,
 * taskjson_full): those keys dropped. */
static json_t *task_row_json(json_t *full)
{
	static const char *const extra[] = { "gate", "rounds", "github", "decisions", "egress",
	                                     "pauses", "webhooks", "group_position", "pr_state",
	                                     "waiting_decision" };
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
		json_t *t;
		json_array_foreach(ordered, i, t)
			render_list_row(t, i == 0);
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
		render_task(j, 1);
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
		char *p = client_task_path(full, "/events");
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
	char *p = client_task_path(full, "/log");
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
	char *p = client_task_path(id, query);
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
	char *p = client_task_path(id, rest);
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
		char *p = client_task_path(tid, "/draft");
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
	char *p = client_task_path(argv[optind], "/draft");
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
	if (rc < 0) {
		/* add --json's object, as the local add makes it. */
		json_t *arr = json_array(), *t, *out;
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
		if (o.json) {
			cli_json_print(out);
		} else {
			render_added(out);
			json_decref(out);
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
			render_group(j);
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
			render_recipe(j);
		json_decref(j);
		return 0;
	}
	json_t *list = json_object_get(j, "recipes");
	if (o.json) {
		cli_json_print(json_incref(list));
	} else {
		render_recipes(list);
	}
	json_decref(j);
	return 0;
}

/* paddock audit: GET /audit's pages, newest first, as many as --limit
 * asks (0: all), printed as the local verb prints them (render_audit). */
static int r_audit(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("audit");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help json limit before");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	long limit = 50;
	long long before = 0;
	char *end;
	if (o.limit && ((limit = strtol(o.limit, &end, 10)) < 0 || !*o.limit || *end))
		return cli_die(EXIT_USAGE, _("--limit: '%s' is not a number of events (0: all)"),
		               o.limit);
	if (o.before && ((before = strtoll(o.before, &end, 10)) < 1 || !*o.before || *end))
		return cli_die(EXIT_USAGE, _("--before: '%s' is not the seq of an audit event "
		                             "(--json shows each event's)"), o.before);
	/* The server's pages hold at most 1000. */
	long page = limit > 0 && limit < 1000 ? limit : 1000;
	char *path = before ? xasprintf("/audit?limit=%ld&before=%lld", page, before)
	                    : xasprintf("/audit?limit=%ld", page);
	json_t *all = json_array();
	struct err e = {{0}};
	while (path) {
		json_t *pg = client_get_json(rcl, path, &e);
		free(path);
		path = NULL;
		if (!pg) {
			json_decref(all);
			return remote_fail(&e);
		}
		size_t i;
		json_t *ev;
		json_array_foreach(json_object_get(pg, "events"), i, ev) {
			if (limit > 0 && (long)json_array_size(all) >= limit)
				break;
			json_array_append(all, ev);
		}
		const char *next = jstr(pg, "next");
		if (next && *next == '/' && (!limit || (long)json_array_size(all) < limit))
			path = xstrdup(next);
		json_decref(pg);
	}
	if (o.json) {
		cli_json_print(all);
	} else {
		render_audit(all);
		json_decref(all);
	}
	return 0;
}

/* ---------------------------------------------------------------- dispatch */

/* ---------------------------------------------------------------- mcp */

static int r_mcp(int argc, char **argv)
{
	return cli_mcp_remote(rcl, argc, argv);
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} remote_verbs[] = {
	{ "add", r_add }, { "list", r_list }, { "show", r_show }, { "log", r_log },
	{ "diff", r_diff }, { "approve", r_approve }, { "push", r_push }, { "pr", r_pr },
	{ "reject", r_reject }, { "request-changes", r_request_changes },
	{ "override", r_override }, { "follow-up", r_follow_up }, { "cancel", r_cancel },
	{ "confirm", r_confirm }, { "group", r_group }, { "recipe", r_recipe },
	{ "comment", r_comment }, { "draft", r_draft }, { "audit", r_audit },
	{ "mcp", r_mcp },
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
