/* paddock mcp: the Model Context Protocol server on stdio (mcp.h) and its
 * two backends: the local store (the engine calls of the CLI's verbs:
 * submit, taskjson, diffcache, the task's log, gate and decide), and a
 * serve's API (client.h) for `paddock --server URL mcp`, whose token's
 * role decides.  Standard output carries the protocol only: fd 1 is
 * pointed at standard error while the server runs, so that nothing else
 * can write there. */
#include "autoconfig.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "access.h"
#include "buf.h"
#include "client.h"
#include "config.h"
#include "decide.h"
#include "diffcache.h"
#include "gate.h"
#include "i18n.h"
#include "mcp.h"
#include "mirror.h"
#include "paths.h"
#include "scheduler.h"
#include "store.h"
#include "submit.h"
#include "task.h"
#include "taskjson.h"

/* How long an approve recorded for the scheduler is watched before the
 * tool answers that it is recorded (a client's request times out at 60 s
 * by default). */
#define MCP_DECIDE_WAIT 40.0

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---------------------------------------------------------------- local */

struct local {
	struct config cfg;
	char *data;
	struct store *st;
	char *actor;               /* "mcp:USER": who queues and decides */
};

static json_t *local_list(void *arg, const char *status, const char *repo, size_t limit,
                          struct err *e)
{
	struct local *l = arg;
	int s = status ? task_status_parse(status) : -1;
	struct task_query q = { .status_mask = s >= 0 ? TASK_MASK(s) : 0, .repo = repo,
	                        .newest_first = 1, .limit = limit, .no_steps = 1 };
	struct task_row *rows;
	size_t n;
	if (store_task_query(l->st, &q, &rows, &n, e) < 0)
		return NULL;
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, taskjson_row(l->st, &rows[i], &l->cfg));
	task_rows_free(rows, n);
	return a;
}

static json_t *local_show(void *arg, const char *id, struct err *e)
{
	struct local *l = arg;
	struct task_row t;
	if (store_task_get(l->st, id, &t, e) < 0)
		return NULL;
	json_t *j = taskjson_full(l->st, &t, &l->cfg);
	task_row_free(&t);
	return j;
}

struct capped {
	struct buf *out;
	size_t max;
	int *cut;
};

/* A diff file by file, until max bytes: the rest is cut. */
static int capped_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                       struct err *e)
{
	struct capped *c = arg;
	(void)f;
	if (c->out->len + len <= c->max) {
		buf_add(c->out, patch, len);
		return 0;
	}
	buf_add(c->out, patch, c->max - c->out->len);
	*c->cut = 1;
	return err_set(e, "cut");
}

static int local_diff(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                      struct err *e)
{
	struct local *l = arg;
	struct task_row t;
	if (store_task_get(l->st, id, &t, e) < 0)
		return -1;
	int rc = 0;
	if (!t.base || !t.head) {
		rc = err_kind_set(e, ERR_WRONG_STATE, _("task %s has no work to show yet (it is %s); "
		                  "its diff exists once the agent's work is handed back"), t.id,
		                  task_status_label(t.status));
	} else {
		char *mirror = mirror_path(l->data, t.repo);
		char *diffs = paths_task_diffs(l->data, t.id);
		struct capped c = { out, max, cut };
		if (diffcache_each(diffs, mirror, t.base, t.head, capped_file, &c, e) < 0 && !*cut)
			rc = -1;
		free(diffs);
		free(mirror);
	}
	task_row_free(&t);
	return rc;
}

static int local_log(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                     struct err *e)
{
	struct local *l = arg;
	struct task_row t;
	if (store_task_get(l->st, id, &t, e) < 0)
		return -1;
	char *path = paths_task_log(l->data, t.id);
	task_row_free(&t);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	free(path);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		/* No log yet: an empty one. */
		if (fd >= 0)
			close(fd);
		return 0;
	}
	off_t off = sb.st_size > (off_t)max ? sb.st_size - (off_t)max : 0;
	*cut = off > 0;
	char tmp[65536];
	while (out->len < max) {
		size_t want = max - out->len < sizeof tmp ? max - out->len : sizeof tmp;
		ssize_t n = pread(fd, tmp, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(out, tmp, (size_t)n);
		off += n;
	}
	close(fd);
	return 0;
}

static json_t *local_queue(void *arg, json_t *args, struct err *e)
{
	struct local *l = arg;
	const char *names[CLI_INPUTS_MAX], *values[CLI_INPUTS_MAX];
	size_t ni = 0;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(args, "inputs"), k, v) {
		if (ni == CLI_INPUTS_MAX) {
			err_kind_set(e, ERR_INVALID, _("more than %d inputs; a recipe takes fewer"),
			             CLI_INPUTS_MAX);
			return NULL;
		}
		names[ni] = k;
		values[ni++] = json_string_value(v);
	}
	const char *text = jstr(args, "text"), *recipe = jstr(args, "recipe");
	int blank = !text || strspn(text, " \t\r\n") == strlen(text);
	if (blank && !recipe) {
		err_kind_set(e, ERR_INVALID, _("the task text is empty; say what the agent should do"));
		return NULL;
	}
	struct submit_req rq = { .text = blank ? NULL : text, .repo = jstr(args, "repo"),
	                         .agent = jstr(args, "agent"), .recipe = recipe,
	                         .input_names = names, .input_values = values, .ninputs = ni,
	                         .base = jstr(args, "base"), .approval = jstr(args, "approval"),
	                         .budget = -1, .queued_by = l->actor };
	struct submit_result res;
	if (submit_tasks(l->st, &l->cfg, &rq, &res, e) < 0)
		return NULL;
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:b}", "id", res.ids[0], "status", "queued",
	                      "repo", res.repo, "agent", res.agents[0], "confirm", res.confirm);
	if (res.confirm)
		json_object_set_new(j, "estimate", json_real(res.estimate));
	return j;
}

/* The task after a decision: {"id", "status", ...}. */
static json_t *after_decision(struct local *l, const char *id, const char *action,
                              struct buf *out, struct err *e)
{
	struct task_row t;
	if (store_task_get(l->st, id, &t, e) < 0)
		return NULL;
	json_t *j = json_pack("{s:s,s:s}", "id", t.id, "status", task_status_name(t.status));
	if (!strcmp(action, "request-changes")) {
		/* The round the notes start: pending until the scheduler runs it. */
		json_object_set_new(j, "round", json_integer(t.pending ? t.round + 1 : t.round));
		json_object_set_new(j, "pending", t.pending ? json_string(t.pending) : json_null());
	} else {
		json_object_set_new(j, "output", json_string(""));
		json_object_set_new(j, "pull_request", t.pr_url ? json_string(t.pr_url) : json_null());
		json_object_set_new(j, "pull_request_error", taskjson_pr_error(&t));
	}
	if (out && out->len)
		json_object_set_new(j, "output", json_stringn(out->data, out->len));
	task_row_free(&t);
	return j;
}

/* An approve recorded for the scheduler (decide_record), watched as the
 * CLI watches it while a scheduler runs, for MCP_DECIDE_WAIT at most; why
 * this process does not carry it out itself (if not empty) and what
 * happened go to out.  0 when it ended done or is left to the scheduler,
 * -1 with e when it failed. */
static int approve_recorded(struct local *l, const struct gate_ctx *g, const char *id,
                            const char *notes, const char *why, struct buf *out,
                            struct err *e)
{
	struct decide_watch w;
	if (decide_record(g, "approve", id, NULL, notes, &w, e) < 0)
		return -1;
	buf_printf(out, _("recorded: %s of task %s by %s (decision %lld)\n"), "approve", id,
	           g->actor, w.id);
	if (why && *why)
		buf_printf(out, _("not carried out here: %s\n"), why);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char owner[64];
		int running = scheduler_owner(l->data, owner, sizeof owner);
		struct store_action a;
		int ended = decide_watch_step(&w, l->st, running ? owner : NULL, out, &a, e);
		if (ended < 0)
			return -1;
		if (ended) {
			int failed = !strcmp(a.state, "failed");
			if (a.outcome)
				buf_adds(out, a.outcome);
			if (failed)
				err_kind_set(e, ERR_REMOTE, "%s", a.error ? a.error
				                                          : _("the decision failed"));
			store_action_free(&a);
			return failed ? -1 : 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* No scheduler to carry it out: no use waiting for one. */
		if (!running || (double)(now.tv_sec - t0.tv_sec) > MCP_DECIDE_WAIT) {
			buf_printf(out, _("%s: %s recorded; the scheduler (paddock serve or the dashboard) "
			                  "carries it out\n"), id, "approve");
			return 0;
		}
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
}

static json_t *local_decide(void *arg, const char *id, const char *action, const char *notes,
                            struct err *e)
{
	struct local *l = arg;
	struct task_row t;
	if (store_task_get(l->st, id, &t, e) < 0)
		return NULL;
	struct gate_ctx g = gate_ctx_of(&l->cfg, l->data, l->st, l->actor);
	struct buf out = {0}, why = {0};
	int rc;
	if (gate_may_decide(&g, &t, action, e) < 0)
		rc = -1;
	else if (!strcmp(action, "request-changes"))
		rc = gate_request_changes(&g, t.id, notes, e);
	else if (scheduler_owner(l->data, NULL, 0) || !decide_local(&g, action, t.id, &why))
		/* As the CLI: the scheduler's process carries it out. */
		rc = approve_recorded(l, &g, t.id, notes, why.data, &out, e);
	else
		/* 1: done, the pull request failed to open (on the task). */
		rc = gate_approve(&g, t.id, notes, &out, e) < 0 ? -1 : 0;
	json_t *j = rc < 0 ? NULL : after_decision(l, t.id, action, &out, e);
	buf_free(&out);
	buf_free(&why);
	task_row_free(&t);
	return j;
}

static const struct mcp_backend local_ops_proto = {
	.list = local_list, .show = local_show, .diff = local_diff, .log = local_log,
	.queue = local_queue, .decide = local_decide,
};

static json_t *remote_list(void *arg, const char *status, const char *repo, size_t limit,
                           struct err *e)
{
	struct client *c = arg;
	/* The API has no repo filter: a larger page, filtered here. */
	char *sx = status ? client_escape(status) : NULL;
	char *path = xasprintf("/tasks?limit=%zu%s%s", repo ? (size_t)500 : limit,
	                       sx ? "&status=" : "", sx ? sx : "");
	free(sx);
	json_t *page = client_get_json(c, path, e);
	free(path);
	if (!page)
		return NULL;
	json_t *out = json_array(), *t;
	size_t i;
	json_array_foreach(json_object_get(page, "tasks"), i, t)
		if ((!repo || (jstr(t, "repo") && !strcmp(jstr(t, "repo"), repo))) &&
		    json_array_size(out) < limit)
			json_array_append(out, t);
	json_decref(page);
	return out;
}

static json_t *remote_show(void *arg, const char *id, struct err *e)
{
	return client_get_task(arg, id, e);
}

/* GET the task's rest (/diff, /log) into out, at most max bytes. */
static int remote_text(struct client *c, const char *id, const char *rest, size_t max,
                       struct buf *out, int *cut, struct err *e)
{
	char *p = client_task_path(id, rest);
	char range[64];
	snprintf(range, sizeof range, "Range: bytes=-%zu", max);
	const char *const hdr[] = { range, NULL };
	int log = !strcmp(rest, "/log");
	struct client_resp r;
	long st = client_request(c, "GET", p, NULL, log ? hdr : NULL, 0, &r, e);
	free(p);
	int rc = 0;
	if (st == 416) {
		/* An empty log has no last bytes. */
	} else if (st < 0 || client_resp_error(&r, e) < 0) {
		rc = -1;
	} else {
		size_t n = r.body.len > max ? max : r.body.len;
		buf_add(out, log ? r.body.data + (r.body.len - n) : r.body.data, n);
		/* A log's last max bytes: cut when all of them came. */
		*cut = r.body.len > max || (log && st == 206 && r.body.len >= max);
	}
	if (st >= 0)
		client_resp_free(&r);
	return rc;
}

static int remote_diff(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                       struct err *e)
{
	return remote_text(arg, id, "/diff", max, out, cut, e);
}

static int remote_log(void *arg, const char *id, size_t max, struct buf *out, int *cut,
                      struct err *e)
{
	return remote_text(arg, id, "/log", max, out, cut, e);
}

static json_t *remote_queue(void *arg, json_t *args, struct err *e)
{
	json_t *j = client_post_json(arg, "/tasks", args, NULL, e);
	if (j && !jstr(j, "id")) {
		/* A group's answer is not made by this tool. */
		json_decref(j);
		err_kind_set(e, ERR_REMOTE, _("the server's answer names no task"));
		return NULL;
	}
	if (j && !jstr(j, "status"))
		json_object_set_new(j, "status", json_string("queued"));
	return j;
}

static json_t *remote_decide(void *arg, const char *id, const char *action, const char *notes,
                             struct err *e)
{
	char *rest = xasprintf("/%s", action);
	char *p = client_task_path(id, rest);
	free(rest);
	json_t *body = notes ? json_pack("{s:s}", "notes", notes) : json_object();
	json_t *j = client_post_json(arg, p, body, NULL, e);
	json_decref(body);
	free(p);
	if (j && (!jstr(j, "id") || !jstr(j, "status"))) {
		json_decref(j);
		err_kind_set(e, ERR_REMOTE, _("the server's answer names no task"));
		return NULL;
	}
	if (j && !strcmp(action, "request-changes") && !json_is_integer(json_object_get(j, "round")))
		json_object_set_new(j, "round", json_integer(0));
	return j;
}

static const struct mcp_backend remote_ops_proto = {
	.list = remote_list, .show = remote_show, .diff = remote_diff, .log = remote_log,
	.queue = remote_queue, .decide = remote_decide,
};

/* The token's role as the API tells it (GET /token, paddock-api(7)).
 * ACCESS_NONE with e when the server cannot be asked. */
static enum access remote_role(struct client *c, struct err *e)
{
	struct client_resp r;
	long st = client_request(c, "GET", "/token", NULL, NULL, 20, &r, e);
	if (st < 0)
		return ACCESS_NONE;
	enum access role = ACCESS_NONE;
	if (st == 200 && jstr(r.json, "role"))
		role = access_parse(jstr(r.json, "role"));
	if (role == ACCESS_NONE && client_resp_error(&r, e) == 0)
		err_kind_set(e, ERR_REMOTE, _("the server did not say the token's role (HTTP %ld)"),
		             st);
	client_resp_free(&r);
	return role;
}

/* ---------------------------------------------------------------- the verb */

/* Serves m on standard input and output: fd 1 is the protocol's alone
 * (anything else written to standard output goes to standard error). */
static int serve_stdio(struct mcp *m)
{
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	int pfd = dup(STDOUT_FILENO);
	FILE *out = pfd >= 0 ? fdopen(pfd, "w") : NULL;
	if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		if (pfd >= 0 && !out)
			close(pfd);
		return cli_die(1, _("cannot set up standard output: %s"), strerror(errno));
	}
	char *names = mcp_tool_names(m->role);
	fprintf(stderr, _("paddock mcp: serving %s with the role %s (tools: %s)\n"),
	        m->where ? m->where : _("the local store"), access_name(m->role), names);
	free(names);
	int rc = mcp_serve(m, STDIN_FILENO, out);
	if (fclose(out) != 0)
		rc = -1;
	return rc < 0 ? 1 : 0;
}

/* --role's value, or ACCESS_NONE when not given; -1 after a message. */
static int parse_role(const char *arg, enum access *role)
{
	*role = ACCESS_NONE;
	if (!arg)
		return 0;
	if ((*role = access_parse(arg)) == ACCESS_NONE) {
		cli_die(EXIT_USAGE, _("--role '%s' is not a role; use read, submit, review or admin"),
		        arg);
		return -1;
	}
	return 0;
}

/* The verb's options (--role: *role, ACCESS_NONE when not given): -1 to
 * go on, else the exit status (--help, bad usage). */
static int mcp_args(int argc, char **argv, enum access *role)
{
	const struct cli_verb *v = cli_verb_find("mcp");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help role");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	return parse_role(o.role, role) < 0 ? EXIT_USAGE : -1;
}

int cmd_mcp(int argc, char **argv)
{
	enum access role;
	int rc = mcp_args(argc, argv, &role);
	if (rc >= 0)
		return rc;
	struct local l = {0};
	if (cli_load_config(&l.cfg) < 0)
		return EXIT_USAGE;
	if (role == ACCESS_NONE)
		role = l.cfg.mcp_role != ACCESS_NONE ? l.cfg.mcp_role : ACCESS_SUBMIT;
	if (!(l.st = cli_open_store(&l.data, 1))) {
		config_free(&l.cfg);
		return 1;
	}
	l.actor = xasprintf("mcp:%s", gate_actor());
	struct mcp_backend b = local_ops_proto;
	b.arg = &l;
	struct mcp m;
	mcp_init(&m, &b, role, NULL);
	rc = serve_stdio(&m);
	store_close(l.st);
	free(l.data);
	free(l.actor);
	config_free(&l.cfg);
	return rc;
}

int cli_mcp_remote(struct client *c, int argc, char **argv)
{
	enum access narrow;
	int rc = mcp_args(argc, argv, &narrow);
	if (rc >= 0)
		return rc;
	struct err e = {{0}};
	enum access role = remote_role(c, &e);
	if (role == ACCESS_NONE)
		return cli_die(1, _("cannot ask %s for the token's role: %s"), client_url(c), e.msg);
	/* --role may narrow the token's role, never widen it. */
	if (narrow != ACCESS_NONE && access_allows(role, narrow))
		role = narrow;
	else if (narrow != ACCESS_NONE)
		fprintf(stderr, _("paddock mcp: the token's role is %s; --role %s cannot widen it\n"),
		        access_name(role), access_name(narrow));
	struct mcp_backend b = remote_ops_proto;
	b.arg = c;
	struct mcp m;
	mcp_init(&m, &b, role, client_url(c));
	return serve_stdio(&m);
}
