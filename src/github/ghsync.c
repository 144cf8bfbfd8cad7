#include "autoconfig.h"
#include "ghsync.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>
#include "autogate.h"
#include "buf.h"
#include "clock.h"
#include "forge.h"
#include "gate.h"
#include "github.h"
#include "gitlib.h"
#include "i18n.h"
#include "mirror.h"
#include "move.h"
#include "paths.h"
#include "sanitize.h"
#include "store_github.h"
#include "submit.h"
#include "webhook.h"

#define GHSYNC_ACTOR_PREFIX "github:"

void ghsync_init(struct ghsync *s, const struct config *cfg, const char *data_dir,
                 struct store *st, const char *source)
{
	memset(s, 0, sizeof *s);
	s->cfg = cfg;
	s->data_dir = data_dir;
	s->st = st;
	s->source = source;
	s->actions = json_array();
	s->remaining = -1;
	s->max_wait = 60;
}

void ghsync_free(struct ghsync *s)
{
	json_decref(s->actions);
	s->actions = NULL;
}

/* Records what was done: an action (for the caller to print). */
static void act(struct ghsync *s, const char *kind, const char *repo, long long number,
                const char *task, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Errors of this process's syncs, for GET /metrics (ghsync_errors). */
static atomic_ulong ghsync_nerrors;

unsigned long ghsync_errors(void)
{
	return atomic_load(&ghsync_nerrors);
}

static void act(struct ghsync *s, const char *kind, const char *repo, long long number,
                const char *task, const char *fmt, ...)
{
	if (!strcmp(kind, "error"))
		atomic_fetch_add(&ghsync_nerrors, 1);
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	json_t *a = json_pack("{s:s, s:s?, s:I, s:s?, s:s}", "kind", kind, "repo", repo,
	                      "number", (json_int_t)number, "task", task, "detail",
	                      b.data ? b.data : "");
	if (a)
		json_array_append_new(s->actions, a);
	buf_free(&b);
}

/* Records an event and its verdict. */
static void event(struct ghsync *s, const char *ev, const char *delivery, const char *actor,
                  const char *repo, long long number, const char *verdict, const char *task,
                  const char *detail)
{
	struct gh_event g = { .source = (char *)s->source, .event = (char *)ev,
	                      .delivery = (char *)delivery, .actor = (char *)actor,
	                      .gh_repo = (char *)repo, .number = number,
	                      .verdict = (char *)verdict, .detail = (char *)detail,
	                      .task_id = (char *)task };
	struct err ignored;
	store_github_event_add(s->st, &g, &ignored);
	s->nevents++;
}

void ghsync_refused(struct store *st, const char *ev, const char *delivery, const char *why)
{
	struct gh_event g = { .source = "webhook", .event = (char *)(ev ? ev : "?"),
	                      .delivery = (char *)delivery, .verdict = "refused",
	                      .detail = (char *)why };
	struct err ignored;
	store_github_event_add(st, &g, &ignored);
}

/* The flock that makes deciding one at a time, across processes. */
static int ghsync_lock(const struct ghsync *s)
{
	char *path = xasprintf("%s/github.lock", s->data_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(path);
	if (fd >= 0)
		while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
			;
	return fd;
}

static void ghsync_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* ---- signatures and secrets ---- */

int ghsync_signature_ok(const char *secret, const char *body, size_t len, const char *header)
{
	char want[WEBHOOK_SIG_LEN];
	if (!secret || !*secret || !header || strlen(header) != WEBHOOK_SIG_LEN - 1)
		return 0;
	webhook_sign(secret, strlen(secret), body ? body : "", len, want);
	char got[WEBHOOK_SIG_LEN];
	for (size_t i = 0; i < sizeof got; i++)
		got[i] = (char)tolower((unsigned char)header[i]);
	return CRYPTO_memcmp(want, got, WEBHOOK_SIG_LEN - 1) == 0;
}

char *ghsync_secret(const struct config *cfg)
{
	struct err e = {{0}};
	if (!cfg->github_secret_env && !cfg->github_secret_file)
		return NULL;
	char *v = config_secret(cfg->github_secret_env, cfg->github_secret_file, &e);
	if (v && !*v) {
		free(v);
		v = NULL;
	}
	return v;
}

/* ---- small things ---- */

/* The repo that follows GitHub repository full ("owner/name"). */
static const struct repo_conf *ghsync_repo_of(const struct config *cfg, const char *full)
{
	for (size_t i = 0; full && i < cfg->nrepos; i++)
		if (config_repo_github_follows(&cfg->repos[i]) &&
		    strcasecmp(cfg->repos[i].github_repo, full) == 0)
			return &cfg->repos[i];
	return NULL;
}

int ghsync_mentions(const char *text, const char *handle)
{
	size_t n = handle ? strlen(handle) : 0;
	if (!n || !text)
		return 0;
	for (const char *p = text; (p = strchr(p, '@')); p++) {
		if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-' || p[-1] == '.'))
			continue;
		if (strncasecmp(p + 1, handle, n) == 0 &&
		    !(isalnum((unsigned char)p[1 + n]) || p[1 + n] == '-'))
			return 1;
	}
	return 0;
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static long long jint(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static const char *jlogin(const json_t *o)
{
	return jstr(json_object_get(o, "user"), "login");
}

/* The first line of s, text from a sandbox, quoted for GitHub
 * (github_quote: a code block, at most 200 bytes of it), then ":" and a
 * blank line before it; or "." when it is empty (malloc'd). */
static char *first_line(const char *s)
{
	size_t n = s ? strcspn(s, "\r\n") : 0;
	char *line = xstrndup(s ? s : "", n);
	char *q = github_quote(line, 200);
	char *out = *q ? xasprintf(":\n\n%s", q) : xstrdup(".");
	free(line);
	free(q);
	return out;
}

/* ---- who may ask ---- */

/* 1 when login is one of r's github-reviewers, by name or as an active
 * member of a listed team; 0 when not (why says so); -1 when GitHub could
 * not be asked. */
static int ghsync_allowed(struct github *g, const struct repo_conf *r, const char *login,
                          struct buf *why, struct err *e)
{
	if (!config_github_login_ok(login, strlen(login))) {
		buf_printf(why, _("'%s' is not a GitHub login"), login);
		return 0;
	}
	for (size_t i = 0; i < r->ngithub_reviewers; i++) {
		const char *w = r->github_reviewers[i];
		if (w[0] != '@' && strcasecmp(w, login) == 0)
			return 1;
	}
	for (size_t i = 0; i < r->ngithub_reviewers; i++) {
		const char *w = r->github_reviewers[i];
		const char *slash = strchr(w, '/');
		if (w[0] != '@' || !slash)
			continue;
		char *org = xstrndup(w + 1, (size_t)(slash - w - 1));
		char *path = xasprintf("/orgs/%s/teams/%s/memberships/%s", org, slash + 1, login);
		json_t *m = NULL;
		struct err ge = {{0}};
		int rc = github_get(g, path, &m, &ge);
		free(org);
		free(path);
		if (rc == 0 && !strcmp(jstr(m, "state"), "active")) {
			json_decref(m);
			return 1;
		}
		json_decref(m);
		if (rc < 0 && ge.kind != ERR_NOT_FOUND) {
			*e = ge;
			return -1;
		}
	}
	buf_printf(why, _("%s is not in github-reviewers of repo %s"), login, r->name);
	return 0;
}

/* ---- issues become tasks ---- */

/* 1 when the issue carries every label of "label:A,B". */
static int ghsync_labels_match(const struct repo_conf *r, const json_t *issue)
{
	char *want = xstrdup(r->github_issues + 6), *save = NULL;
	int all = 1;
	for (char *l = strtok_r(want, ",", &save); l && all; l = strtok_r(NULL, ",", &save)) {
		while (*l == ' ')
			l++;
		int found = 0;
		size_t i;
		json_t *it;
		json_array_foreach(json_object_get(issue, "labels"), i, it) {
			const char *name = json_is_string(it) ? json_string_value(it) : jstr(it, "name");
			found |= strcasecmp(name, l) == 0;
		}
		all = found;
	}
	free(want);
	return all;
}

static int ghsync_by_label(const struct repo_conf *r)
{
	return strncmp(r->github_issues, "label:", 6) == 0;
}

/* The task's text: the title, the body (cut to what a task may hold) and
 * where it came from. */
static char *ghsync_issue_text(const struct repo_conf *r, const json_t *issue)
{
	const char *body = jstr(issue, "body");
	size_t blen = strlen(body), max = TASK_TEXT_MAX / 2;
	struct buf b = {0};
	buf_printf(&b, "%s\n\n", jstr(issue, "title"));
	buf_add(&b, body, blen > max ? max : blen);
	if (blen > max)
		buf_adds(&b, "\n[...]");
	buf_printf(&b, "\n\nGitHub issue %s#%lld: %s", r->github_repo, jint(issue, "number"),
	           jstr(issue, "html_url"));
	return buf_detach(&b);
}

/* A task of the issue that has no link: a process killed between making
 * the task and its link left it.  It is linked now (1, its id), so that
 * the issue does not become a second task; 0 when there is none. */
static int ghsync_issue_orphan(struct ghsync *s, const struct repo_conf *r, long long number,
                               char id[TASK_ID_LEN + 1], struct err *e)
{
	char *mark = xasprintf("GitHub issue %s#%lld: ", r->github_repo, number);
	struct task_query q = { .repo = r->name, .text = mark, .no_steps = 1 };
	struct task_row *rows = NULL;
	size_t n = 0;
	int rc = store_task_query(s->st, &q, &rows, &n, e) < 0 ? -1 : 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct gh_link l;
		int linked = store_github_link(s->st, rows[i].id, &l, e);
		gh_link_free(&l);
		if (!strstr(rows[i].text, mark) || linked != 0)
			continue;
		snprintf(id, TASK_ID_LEN + 1, "%s", rows[i].id);
		struct gh_link nl = { .gh_repo = r->github_repo, .issue = number };
		snprintf(nl.task_id, sizeof nl.task_id, "%s", id);
		rc = store_github_link_put(s->st, &nl, e) < 0 ? -1 : 1;
	}
	task_rows_free(rows, n);
	free(mark);
	return rc;
}

/* Queues the issue's task (under the lock): "task" when made, "duplicate"
 * when it has one, NULL with e set on failure. */
static const char *ghsync_issue_task(struct ghsync *s, const struct repo_conf *r,
                                     const json_t *issue, char id[TASK_ID_LEN + 1],
                                     struct err *e)
{
	long long number = jint(issue, "number");
	int have = store_github_issue_task(s->st, r->github_repo, number, id, e);
	if (have != 0)
		return have > 0 ? "duplicate" : NULL;
	if ((have = ghsync_issue_orphan(s, r, number, id, e)) != 0)
		return have > 0 ? "duplicate" : NULL;
	char *text = ghsync_issue_text(r, issue);
	const char *names[] = { "issue" };
	const char *values[] = { text };
	struct submit_req rq = { .repo = r->name, .recipe = "fix-bug", .input_names = names,
	                         .input_values = values, .ninputs = 1, .budget = -1 };
	struct submit_result res;
	struct err se = {{0}};
	/* fix-bug wants a test command (its contract has tests); without one
	 * (or the recipe) the issue is the task's text. */
	if (!r->test || !config_find_recipe(s->cfg, "fix-bug") ||
	    submit_check(s->cfg, &rq, &se) < 0) {
		struct submit_req plain = { .repo = r->name, .text = text, .budget = -1 };
		rq = plain;
	}
	int rc = submit_tasks(s->st, s->cfg, &rq, &res, e);
	free(text);
	if (rc != 0) {
		if (rc == -2)
			err_kind_set(e, ERR_UNAVAILABLE, _("%zu tasks are queued, as many as "
			             "api.max-queue allows; the issue waits"), res.queued);
		return NULL;
	}
	snprintf(id, TASK_ID_LEN + 1, "%s", res.ids[0]);
	struct gh_link l = { .gh_repo = r->github_repo, .issue = number };
	snprintf(l.task_id, sizeof l.task_id, "%s", id);
	if (store_github_link_put(s->st, &l, e) < 0)
		return NULL;
	return "task";
}

/* An issue the repo's query matched (or a webhook's issue that matches). */
static int ghsync_issue(struct ghsync *s, const struct repo_conf *r, const json_t *issue,
                        const char *delivery, struct err *e)
{
	long long number = jint(issue, "number");
	const char *who = jlogin(issue);
	char id[TASK_ID_LEN + 1] = "";
	if (json_object_get(issue, "pull_request"))
		return 0;   /* a pull request: the issues list holds them too */
	int fd = ghsync_lock(s);
	const char *verdict = ghsync_issue_task(s, r, issue, id, e);
	ghsync_unlock(fd);
	if (!verdict) {
		event(s, "issues", delivery, who, r->github_repo, number, "error", NULL, e->msg);
		act(s, "error", r->github_repo, number, NULL, _("issue %s#%lld: %s"), r->github_repo,
		    number, e->msg);
		return -1;
	}
	if (!strcmp(verdict, "task")) {
		event(s, "issues", delivery, who, r->github_repo, number, "task", id,
		      jstr(issue, "title"));
		act(s, "task", r->github_repo, number, id, _("issue %s#%lld: task %s queued"),
		    r->github_repo, number, id);
	}
	return 0;
}

/* The repo's matching open issues, each a task once. */
static int ghsync_issues(struct ghsync *s, struct github *g, const struct repo_conf *r,
                         struct err *e)
{
	char *path, *q;
	json_t *list = NULL;
	int unchanged = 0, rc;
	if (ghsync_by_label(r)) {
		q = github_escape(r->github_issues + 6);
		path = xasprintf("/repos/%s/issues?state=open&labels=%s&per_page=100", r->github_repo, q);
		rc = github_get_list(g, path, NULL, &list, &unchanged, e);
	} else {
		char *query = xasprintf("repo:%s is:issue is:open %s", r->github_repo, r->github_issues);
		q = github_escape(query);
		free(query);
		path = xasprintf("/search/issues?q=%s&per_page=100", q);
		rc = github_get_list(g, path, "items", &list, &unchanged, e);
	}
	free(q);
	free(path);
	size_t i;
	json_t *it;
	/* An unchanged list was looked at already: each of its issues is a
	 * task, or failed to become one and says so below. */
	json_array_foreach(list, i, it) {
		char id[TASK_ID_LEN + 1];
		struct err ie = {{0}};
		if (unchanged && store_github_issue_task(s->st, r->github_repo, jint(it, "number"), id,
		                                         &ie) == 1)
			continue;
		if (!ghsync_by_label(r) || ghsync_labels_match(r, it))
			ghsync_issue(s, r, it, NULL, &ie);
	}
	json_decref(list);
	return rc;
}

/* ---- the issue's comment ---- */

/* What paddock's comment on the issue says for task t (malloc'd); *final
 * when it will not change again. */
static char *ghsync_comment_body(const struct task_row *t, const struct gh_link *l,
                                 int *final)
{
	struct buf b = {0};
	char *line;
	*final = 0;
	buf_adds(&b, "**paddock** ");
	switch (t->status) {
	case TASK_QUEUED:
		buf_printf(&b, "queued task `%s` for this issue.", t->id);
		break;
	case TASK_PREPARING: case TASK_RUNNING: case TASK_TESTING:
		buf_printf(&b, "is working on this issue: task `%s`, round %d (%s).", t->id, t->round,
		           task_status_name(t->status));
		break;
	case TASK_REVIEW: case TASK_PUSHING:
		line = first_line(t->summary);
		buf_printf(&b, "task `%s` reached the review gate (round %d)%s", t->id, t->round,
		           line);
		free(line);
		break;
	case TASK_DONE:
		if (l->pr_state && !strcmp(l->pr_state, "merged"))
			buf_printf(&b, "task `%s` is done: its pull request %s was merged.", t->id,
			           t->pr_url ? t->pr_url : "");
		else if (l->pr_state && !strcmp(l->pr_state, "closed"))
			buf_printf(&b, "task `%s` is done: its pull request %s was closed without merge.",
			           t->id, t->pr_url ? t->pr_url : "");
		else if (t->pr_url)
			buf_printf(&b, "task `%s` is done: pull request %s.", t->id, t->pr_url);
		else
			buf_printf(&b, "task `%s` is done.", t->id);
		*final = !t->pr_url || (l->pr_state && strcmp(l->pr_state, "open") != 0);
		break;
	default:
		line = first_line(t->error);
		buf_printf(&b, "task `%s` %s%s", t->id, task_status_name(t->status), line);
		free(line);
		*final = 1;
		break;
	}
	buf_printf(&b, "\n\n<!-- paddock:task %s -->", t->id);
	if (*final)
		buf_adds(&b, "\n<!-- paddock:final -->");
	return buf_detach(&b);
}

/* Posts or edits paddock's one comment on the link's issue. */
static int ghsync_comment(struct ghsync *s, struct github *g, struct gh_link *l,
                          const struct task_row *t, struct err *e)
{
	int final;
	char *body = ghsync_comment_body(t, l, &final);
	if (l->issue_comment_body && !strcmp(l->issue_comment_body, body)) {
		free(body);
		return 0;
	}
	json_t *req = json_pack("{s:s}", "body", body), *resp = NULL;
	char *path = l->issue_comment
	             ? xasprintf("/repos/%s/issues/comments/%lld", l->gh_repo, l->issue_comment)
	             : xasprintf("/repos/%s/issues/%lld/comments", l->gh_repo, l->issue);
	int rc = github_send(g, l->issue_comment ? "PATCH" : "POST", path, req, &resp, NULL, e);
	if (rc < 0 && l->issue_comment && e->kind == ERR_NOT_FOUND) {
		/* Someone deleted it: a new one. */
		free(path);
		path = xasprintf("/repos/%s/issues/%lld/comments", l->gh_repo, l->issue);
		rc = github_send(g, "POST", path, req, &resp, NULL, e);
	}
	if (rc == 0) {
		if (jint(resp, "id") > 0)
			l->issue_comment = jint(resp, "id");
		free(l->issue_comment_body);
		l->issue_comment_body = body;
		body = NULL;
		rc = store_github_link_put(s->st, l, e);
		act(s, "comment", l->gh_repo, l->issue, t->id, _("%s#%lld: paddock's comment says "
		    "task %s is %s"), l->gh_repo, l->issue, t->id, task_status_name(t->status));
	}
	json_decref(req);
	json_decref(resp);
	free(path);
	free(body);
	return rc;
}

/* ---- the line a comment is on ---- */

/* Line n of path at commit sha in the mirror (malloc'd), or NULL. */
static char *ghsync_line(const char *mirror, const char *sha, const char *path, long n)
{
	git_repository *repo = NULL;
	git_oid oid;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	char *out = NULL;
	gitlib_init();
	if (!sha || n < 1 || git_repository_open_bare(&repo, mirror) < 0 ||
	    git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, repo, &oid) < 0 ||
	    git_commit_tree(&tree, c) < 0 || git_tree_entry_bypath(&te, tree, path) < 0 ||
	    git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0)
		goto done;
	const char *p = git_blob_rawcontent(blob), *end = p + git_blob_rawsize(blob);
	for (long i = 1; p < end && i < n; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	if (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		out = xstrndup(p, (size_t)((nl ? nl : end) - p));
	}
done:
	git_error_clear();
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(c);
	git_repository_free(repo);
	return out;
}

/* A review comment as the dashboard's line comment: its file, line (the
 * old file's for a LEFT one), the line's text and the comment. */
static void ghsync_review_comment(const char *mirror, const struct task_row *t,
                                  const json_t *c, struct review_comment *rc)
{
	memset(rc, 0, sizeof *rc);
	long line = (long)jint(c, "line");
	if (line <= 0)
		line = (long)jint(c, "original_line");
	rc->path = xstrdup(jstr(c, "path"));
	rc->line = line;
	rc->old = !strcmp(jstr(c, "side"), "LEFT");
	const char *at = rc->old ? t->base : jstr(c, "commit_id");
	rc->text = ghsync_line(mirror, at, rc->path, line);
	if (!rc->text && !rc->old)
		rc->text = ghsync_line(mirror, t->head, rc->path, line);
	if (!rc->text)
		rc->text = xstrdup("");
	rc->comment = xstrdup(jstr(c, "body"));
}

static void review_comments_free(struct review_comment *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].path);
		free(c[i].text);
		free(c[i].comment);
	}
	free(c);
}

/* ---- review comments become rounds ---- */

struct ghsync_ask {
	const char *kind;          /* review, review_comment, issue_comment */
	long long gh_id;
	const char *actor;
	const char *event;         /* for the record */
	const char *delivery;
	const json_t *comments;    /* line comments (review comments), or NULL */
	const char *body;          /* the review's or comment's text */
};

/* Asks the task for changes as a.  1 when the round was asked for, 3
 * when it waits for the task's round to end, 0 when nothing was done
 * (the verdict recorded), -1 on error. */
static int ghsync_ask(struct ghsync *s, struct github *g, const struct repo_conf *r,
                      const struct gh_link *l, const struct ghsync_ask *a, struct err *e)
{
	struct buf why = {0};
	int ok = ghsync_allowed(g, r, a->actor, &why, e);
	if (ok <= 0) {
		if (ok == 0) {
			event(s, a->event, a->delivery, a->actor, l->gh_repo, l->pr, "ignored", l->task_id,
			      why.data);
			act(s, "ignored", l->gh_repo, l->pr, l->task_id, _("%s#%lld: %s by %s ignored: %s"),
			    l->gh_repo, l->pr, a->kind, a->actor, why.data);
			struct err ignored;
			store_github_seen_add(s->st, l->gh_repo, a->kind, a->gh_id, l->task_id, &ignored);
		}
		buf_free(&why);
		return ok;
	}
	buf_free(&why);
	int fd = ghsync_lock(s);
	int rc = 0;
	struct task_row t;
	struct err te = {{0}};
	if (store_github_seen(s->st, l->gh_repo, a->kind, a->gh_id, e) != 0) {
		ghsync_unlock(fd);
		return 0;
	}
	if (store_task_get(s->st, l->task_id, &t, &te) < 0) {
		ghsync_unlock(fd);
		return err_set(e, "%s", te.msg);
	}
	if (task_status_is_terminal(t.status) && t.status != TASK_DONE) {
		/* Ended without its pull request: nothing will take the request. */
		char *d = xasprintf(_("task %s is %s; it takes no more rounds"), t.id,
		                    task_status_name(t.status));
		event(s, a->event, a->delivery, a->actor, l->gh_repo, l->pr, "ignored", t.id, d);
		act(s, "ignored", l->gh_repo, l->pr, t.id, _("%s#%lld: %s by %s ignored: %s"),
		    l->gh_repo, l->pr, a->kind, a->actor, d);
		struct err ignored;
		store_github_seen_add(s->st, l->gh_repo, a->kind, a->gh_id, t.id, &ignored);
		free(d);
		task_row_free(&t);
		ghsync_unlock(fd);
		return 0;
	}
	if (t.pending || (t.status != TASK_REVIEW && t.status != TASK_DONE)) {
		/* Not now: the next sync asks again, once the round ends; the
		 * wait is recorded once, not at every sync. */
		char *kind = xasprintf("waiting-%s", a->kind);
		struct err ignored;
		if (a->delivery || store_github_seen_add(s->st, l->gh_repo, kind, a->gh_id, t.id,
		                                         &ignored) == 1)
			event(s, a->event, a->delivery, a->actor, l->gh_repo, l->pr, "waiting", t.id,
			      _("the task is busy; the request is taken up when its round ends"));
		free(kind);
		task_row_free(&t);
		ghsync_unlock(fd);
		return 3;
	}
	char *mirror = mirror_path(s->data_dir, r->name);
	size_t n = json_array_size(a->comments);
	struct review_comment *c = n ? xcalloc(n, sizeof *c) : NULL;
	for (size_t i = 0; i < n; i++)
		ghsync_review_comment(mirror, &t, json_array_get(a->comments, i), &c[i]);
	char *notes = gate_draft_notes(c, n, a->body);
	char *actor = xasprintf(GHSYNC_ACTOR_PREFIX "%s", a->actor);
	if (!*notes) {
		free(notes);
		notes = xstrdup(_("(a request for changes without words)"));
	}
	struct gh_ask ask = { .round = t.round + 1, .kind = (char *)a->kind, .gh_id = a->gh_id,
	                      .pr = l->pr, .actor = (char *)a->actor };
	snprintf(ask.task_id, sizeof ask.task_id, "%s", t.id);
	struct mover m = { .cfg = s->cfg, .st = s->st };
	if (move_reopen(&m, t.id, notes, actor, e) < 0 ||
	    store_github_ask_add(s->st, &ask, e) < 0) {
		rc = -1;
	} else {
		struct err ignored;
		store_github_seen_add(s->st, l->gh_repo, a->kind, a->gh_id, t.id, &ignored);
		store_github_waiting_clear(s->st, t.id, &ignored);
		for (size_t i = 0; i < n; i++)
			store_github_seen_add(s->st, l->gh_repo, "review_comment",
			                      jint(json_array_get(a->comments, i), "id"), t.id, &ignored);
		char *d = xasprintf(_("round %d asked by %s (%s %lld)"), t.round + 1, a->actor, a->kind,
		                    a->gh_id);
		event(s, a->event, a->delivery, a->actor, l->gh_repo, l->pr, "round", t.id, d);
		act(s, "round", l->gh_repo, l->pr, t.id, _("task %s: %s"), t.id, d);
		free(d);
		rc = 1;
	}
	ghsync_unlock(fd);
	free(actor);
	free(notes);
	review_comments_free(c, n);
	free(mirror);
	task_row_free(&t);
	return rc;
}

/* A review: one that requests changes asks, with its line comments.  As
 * ghsync_ask, and 2 when it was seen before (a duplicate). */
static int ghsync_review(struct ghsync *s, struct github *g, const struct repo_conf *r,
                         const struct gh_link *l, const json_t *rev, const char *delivery,
                         struct err *e)
{
	long long id = jint(rev, "id");
	if (strcasecmp(jstr(rev, "state"), "changes_requested") != 0)
		return 0;
	int seen = store_github_seen(s->st, l->gh_repo, "review", id, e);
	if (seen != 0)
		return seen > 0 ? 2 : 0;
	char *path = xasprintf("/repos/%s/pulls/%lld/reviews/%lld/comments?per_page=100",
	                       l->gh_repo, l->pr, id);
	json_t *comments = NULL;
	int rc = github_get_list(g, path, NULL, &comments, NULL, e);
	free(path);
	if (rc == 0) {
		struct ghsync_ask a = { .kind = "review", .gh_id = id, .actor = jlogin(rev),
		                        .event = "pull_request_review", .delivery = delivery,
		                        .comments = comments, .body = jstr(rev, "body") };
		rc = ghsync_ask(s, g, r, l, &a, e);
	}
	json_decref(comments);
	return rc;
}

/* A comment (kind review_comment: on a line; issue_comment: the pull
 * request's conversation) that mentions the handle asks.  As ghsync_review. */
static int ghsync_mention(struct ghsync *s, struct github *g, const struct repo_conf *r,
                          const struct gh_link *l, const json_t *c, const char *kind,
                          const char *delivery, struct err *e)
{
	long long id = jint(c, "id");
	const char *who = jlogin(c);
	if (!r->github_handle || !strcasecmp(who, r->github_handle) ||
	    !ghsync_mentions(jstr(c, "body"), r->github_handle))
		return 0;
	int seen = store_github_seen(s->st, l->gh_repo, kind, id, e);
	if (seen != 0)
		return seen > 0 ? 2 : 0;
	json_t *one = NULL;
	if (!strcmp(kind, "review_comment")) {
		one = json_array();
		json_array_append(one, (json_t *)c);
	}
	struct ghsync_ask a = { .kind = kind, .gh_id = id, .actor = who,
	                        .event = !strcmp(kind, "review_comment")
	                                 ? "pull_request_review_comment" : "issue_comment",
	                        .delivery = delivery, .comments = one,
	                        .body = one ? NULL : jstr(c, "body") };
	int rc = ghsync_ask(s, g, r, l, &a, e);
	json_decref(one);
	return rc;
}

/* Every review and comment of the link's open pull request. */
static int ghsync_asks_scan(struct ghsync *s, struct github *g, const struct repo_conf *r,
                            const struct gh_link *l, struct err *e)
{
	for (size_t k = 0; k < 3; k++) {
		if (k > 0 && !r->github_handle)
			break;
		char *path = k == 0 ? xasprintf("/repos/%s/pulls/%lld/reviews?per_page=100", l->gh_repo, l->pr)
		       : k == 1 ? xasprintf("/repos/%s/pulls/%lld/comments?per_page=100", l->gh_repo,
		                            l->pr)
		       : xasprintf("/repos/%s/issues/%lld/comments?per_page=100", l->gh_repo, l->pr);
		json_t *list = NULL;
		int rc = github_get_list(g, path, NULL, &list, NULL, e);
		free(path);
		if (rc < 0)
			return -1;
		size_t i;
		json_t *it;
		json_array_foreach(list, i, it) {
			if (k == 0)
				rc = ghsync_review(s, g, r, l, it, NULL, e);
			else
				rc = ghsync_mention(s, g, r, l, it, k == 1 ? "review_comment" : "issue_comment",
				                    NULL, e);
			if (rc < 0)
				break;
		}
		json_decref(list);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- pull requests followed to the end ---- */

/* "success", "failure", "pending" or NULL (no check runs) of sha. */
static char *ghsync_checks(struct github *g, const char *gh_repo, const char *sha,
                           struct err *e)
{
	char *path = xasprintf("/repos/%s/commits/%s/check-runs?per_page=100", gh_repo, sha);
	json_t *runs = NULL;
	int rc = github_get_list(g, path, "check_runs", &runs, NULL, e);
	free(path);
	if (rc < 0 || !json_array_size(runs)) {
		json_decref(runs);
		return NULL;
	}
	int failed = 0, pending = 0;
	size_t i;
	json_t *it;
	json_array_foreach(runs, i, it) {
		const char *c = jstr(it, "conclusion");
		if (strcmp(jstr(it, "status"), "completed") != 0)
			pending = 1;
		else if (strcmp(c, "success") && strcmp(c, "neutral") && strcmp(c, "skipped"))
			failed = 1;
	}
	json_decref(runs);
	return xstrdup(failed ? "failure" : pending ? "pending" : "success");
}

/* The pull request merged: the task is marked (done, a decision), and
 * its branch deleted when the repo says so. */
static void ghsync_merged(struct ghsync *s, struct github *g, const struct repo_conf *r,
                          struct gh_link *l, const struct task_row *t, const json_t *pr)
{
	struct err e = {{0}};
	const char *by = jstr(json_object_get(pr, "merged_by"), "login");
	char *actor = xasprintf(GHSYNC_ACTOR_PREFIX "%s", *by ? by : "?");
	store_decision_add(s->st, t->id, "merged", jstr(pr, "html_url"), actor, &e);
	if (t->status == TASK_REVIEW && !t->pending) {
		struct mover m = { .cfg = s->cfg, .st = s->st };
		move_task(&m, t->id, TASK_DONE, NULL, &e);
	}
	free(actor);
	act(s, "merged", l->gh_repo, l->pr, t->id, _("task %s: pull request %s#%lld merged"), t->id,
	    l->gh_repo, l->pr);
	event(s, "pull_request", NULL, *by ? by : NULL, l->gh_repo, l->pr, "state", t->id, "merged");
	if (!r->github_delete_branch || l->branch_deleted)
		return;
	if (forge_branch_allowed(r, t->branch, &e) < 0) {
		act(s, "error", l->gh_repo, l->pr, t->id, _("task %s: branch %s not deleted: %s"), t->id,
		    t->branch, e.msg);
		return;
	}
	char *path = xasprintf("/repos/%s/git/refs/heads/%s", l->gh_repo, t->branch);
	long status = 0;
	if (github_send(g, "DELETE", path, NULL, NULL, &status, &e) == 0 || status == 422) {
		l->branch_deleted = 1;
		act(s, "deleted", l->gh_repo, l->pr, t->id, _("task %s: branch %s deleted on GitHub"),
		    t->id, t->branch);
	} else {
		act(s, "error", l->gh_repo, l->pr, t->id, _("task %s: branch %s not deleted: %s"), t->id,
		    t->branch, e.msg);
	}
	free(path);
}

/* Reads the link's pull request: state, head, checks. */
static int ghsync_pr(struct ghsync *s, struct github *g, const struct repo_conf *r,
                     struct gh_link *l, const struct task_row *t, struct err *e)
{
	char *path = xasprintf("/repos/%s/pulls/%lld", l->gh_repo, l->pr);
	json_t *pr = NULL;
	int rc = github_get(g, path, &pr, e);
	free(path);
	if (rc < 0)
		return -1;
	const char *state = json_is_true(json_object_get(pr, "merged")) ? "merged"
	                    : !strcmp(jstr(pr, "state"), "closed") ? "closed" : "open";
	const char *sha = jstr(json_object_get(pr, "head"), "sha");
	int was_open = !l->pr_state || !strcmp(l->pr_state, "open");
	if (*sha && (!l->pr_head || strcmp(l->pr_head, sha) != 0)) {
		free(l->pr_head);
		l->pr_head = xstrdup(sha);
	}
	if (*sha) {
		struct err ce = {{0}};
		char *checks = ghsync_checks(g, l->gh_repo, sha, &ce);
		free(l->checks);
		l->checks = checks;
	}
	free(l->pr_state);
	l->pr_state = xstrdup(state);
	if (was_open && !strcmp(state, "merged")) {
		ghsync_merged(s, g, r, l, t, pr);
	} else if (!was_open && !strcmp(state, "open")) {
		act(s, "reopened", l->gh_repo, l->pr, t->id, _("task %s: pull request %s#%lld "
		    "reopened"), t->id, l->gh_repo, l->pr);
		event(s, "pull_request", NULL, NULL, l->gh_repo, l->pr, "state", t->id, "reopened");
	} else if (was_open && !strcmp(state, "closed")) {
		struct err ignored;
		store_decision_add(s->st, t->id, "closed", jstr(pr, "html_url"),
		                   GHSYNC_ACTOR_PREFIX "github", &ignored);
		act(s, "closed", l->gh_repo, l->pr, t->id, _("task %s: pull request %s#%lld closed "
		    "without merge"), t->id, l->gh_repo, l->pr);
		event(s, "pull_request", NULL, NULL, l->gh_repo, l->pr, "state", t->id, "closed");
	}
	json_decref(pr);
	return store_github_link_put(s->st, l, e);
}

/* ---- answers in the thread ---- */

/* What round a->round came to, for the thread (malloc'd), or NULL while
 * it has not ended. */
static char *ghsync_answer_body(struct store *st, const struct task_row *t,
                                const struct gh_ask *a)
{
	struct buf b = {0};
	if (t->failed_round == a->round) {
		char *why = first_line(t->failed_why);
		buf_printf(&b, "**paddock**: round %d failed%s", a->round, why);
		free(why);
	} else if (t->round > a->round) {
		buf_printf(&b, "**paddock**: round %d ended; round %d followed.", a->round, t->round);
	} else if (t->round < a->round || t->pending) {
		return NULL;
	} else if (t->status == TASK_DONE && t->pushed && t->head && !strcmp(t->pushed, t->head)) {
		char *sum = first_line(t->summary);
		buf_printf(&b, "**paddock**: round %d is pushed to this pull request (commit %.12s)%s",
		           a->round, t->head, sum);
		free(sum);
	} else if (task_status_is_terminal(t->status)) {
		char *why = first_line(t->error);
		buf_printf(&b, "**paddock**: round %d ended: task %s%s", a->round,
		           task_status_name(t->status), why);
		free(why);
	} else if (t->status == TASK_REVIEW) {
		struct task_decision *d;
		size_t n;
		struct err e = {{0}};
		const char *hold = NULL;
		if (store_decisions(st, t->id, &d, &n, &e) < 0)
			return NULL;
		for (size_t i = 0; i < n; i++)
			if (d[i].round == a->round && !strcmp(d[i].action, "hold"))
				hold = d[i].notes;
		char *why = hold ? first_line(hold) : NULL;
		if (hold)
			buf_printf(&b, "**paddock**: round %d is at paddock's review gate and waits for a "
			           "person there%s", a->round, why);
		free(why);
		task_decisions_free(d, n);
		if (!hold)
			return NULL;
	} else {
		return NULL;
	}
	buf_printf(&b, "\n\n<!-- paddock:task %s round %d -->", t->id, a->round);
	return buf_detach(&b);
}

/* Answers the asks of repo r whose rounds ended. */
static int ghsync_answers(struct ghsync *s, struct github *g, const struct repo_conf *r,
                          struct err *e)
{
	struct gh_ask *a;
	size_t n;
	if (store_github_asks_open(s->st, &a, &n, e) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct task_row t;
		struct err te = {{0}};
		if (store_task_get(s->st, a[i].task_id, &t, &te) < 0)
			continue;
		char *body = strcmp(t.repo, r->name) == 0 ? ghsync_answer_body(s->st, &t, &a[i]) : NULL;
		if (body) {
			json_t *req = json_pack("{s:s}", "body", body);
			char *path = !strcmp(a[i].kind, "review_comment")
			             ? xasprintf("/repos/%s/pulls/%lld/comments/%lld/replies",
			                         r->github_repo, a[i].pr, a[i].gh_id)
			             : xasprintf("/repos/%s/issues/%lld/comments", r->github_repo, a[i].pr);
			rc = github_send(g, "POST", path, req, NULL, NULL, e);
			if (rc == 0) {
				rc = store_github_ask_answered(s->st, t.id, a[i].round, e);
				act(s, "answer", r->github_repo, a[i].pr, t.id, _("task %s: round %d answered "
				    "on %s#%lld"), t.id, a[i].round, r->github_repo, a[i].pr);
			}
			json_decref(req);
			free(path);
			free(body);
		}
		task_row_free(&t);
	}
	gh_asks_free(a, n);
	return rc;
}

/* ---- one repo ---- */

/* A link: its pull request (number from the task's URL once opened), the
 * requests on it, the issue's comment. */
static int ghsync_follow(struct ghsync *s, struct github *g, const struct repo_conf *r,
                         struct gh_link *l, struct err *e)
{
	struct task_row t;
	if (store_task_get(s->st, l->task_id, &t, e) < 0)
		return -1;
	int rc = 0;
	if (!l->pr && t.pr_url && strstr(t.pr_url, "/pull/")) {
		l->pr = strtoll(strstr(t.pr_url, "/pull/") + 6, NULL, 10);
		rc = store_github_link_put(s->st, l, e);
	}
	if (rc == 0 && l->pr && !s->outbound_only && (!l->pr_state || !strcmp(l->pr_state, "open")))
		rc = ghsync_pr(s, g, r, l, &t, e);
	/* Outbound only, a request that waited for the round to end is still
	 * read again, once the task can take it. */
	int waited = s->outbound_only && !t.pending &&
	             (t.status == TASK_REVIEW || t.status == TASK_DONE) &&
	             store_github_waiting(s->st, t.id, e) == 1;
	if (rc == 0 && l->pr && (!s->outbound_only || waited) && l->pr_state &&
	    !strcmp(l->pr_state, "open"))
		rc = ghsync_asks_scan(s, g, r, l, e);
	if (rc == 0 && l->issue) {
		task_row_free(&t);
		if (store_task_get(s->st, l->task_id, &t, e) < 0)
			return -1;
		rc = ghsync_comment(s, g, l, &t, e);
	}
	task_row_free(&t);
	return rc;
}

static void ghsync_rate(struct ghsync *s, struct github *g)
{
	long rem;
	long long reset;
	github_rate(g, &rem, &reset);
	if (rem >= 0) {
		s->remaining = rem;
		s->reset = reset;
	}
}

int ghsync_repo(struct ghsync *s, const struct repo_conf *r, struct err *e)
{
	struct github *g;
	if (github_open(&g, r, s->st, e) < 0)
		return -1;
	github_set_max_wait(g, s->max_wait);
	int rc = r->github_issues && !s->outbound_only ? ghsync_issues(s, g, r, e) : 0;
	struct gh_link *l = NULL;
	size_t n = 0;
	if (rc == 0)
		rc = store_github_links_live(s->st, r->github_repo, &l, &n, e);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = ghsync_follow(s, g, r, &l[i], e);
	gh_links_free(l, n);
	if (rc == 0)
		rc = ghsync_answers(s, g, r, e);
	ghsync_rate(s, g);
	github_close(g);
	return rc;
}

int ghsync_all(struct ghsync *s, const char *only, struct err *e)
{
	int rc = 0, any = 0;
	for (size_t i = 0; i < s->cfg->nrepos; i++) {
		const struct repo_conf *r = &s->cfg->repos[i];
		if (only && strcmp(only, r->name) != 0)
			continue;
		if (!config_repo_github_follows(r)) {
			if (only) {
				err_kind_set(e, ERR_INVALID, _("repo %s does not follow GitHub; set "
				             "github-repo and github-issues, github-handle or "
				             "github-reviewers (or github-follow = true)"), only);
				return -2;
			}
			continue;
		}
		any = 1;
		struct err re = {{0}};
		if (ghsync_repo(s, r, &re) < 0) {
			act(s, "error", r->github_repo, 0, NULL, _("repo %s: %s"), r->name, re.msg);
			if (rc == 0)
				*e = re;
			rc = -1;
		}
	}
	if (only && !any) {
		err_kind_set(e, ERR_NOT_FOUND, _("no repo %s in the config"), only);
		return -2;
	}
	/* What went wrong on the way (an issue that could not become a task,
	 * a branch not deleted) fails the sync too. */
	size_t i;
	json_t *a;
	json_array_foreach(s->actions, i, a) {
		if (rc == 0 && !strcmp(jstr(a, "kind"), "error")) {
			err_set(e, "%s", jstr(a, "detail"));
			rc = -1;
		}
	}
	return rc;
}

/* ---- webhooks ---- */

/* Which webhook events are about an issue or a pull request, and what
 * they carry. */
static const char *ghsync_hook_act(struct ghsync *s, struct github *g, const struct repo_conf *r,
                                   const char *ev, const char *delivery, const json_t *p,
                                   char task[TASK_ID_LEN + 1], struct err *e)
{
	const char *action = jstr(p, "action");
	const json_t *issue = json_object_get(p, "issue");
	const json_t *prj = json_object_get(p, "pull_request");
	long long number = jint(issue ? issue : prj, "number");
	struct gh_link l;
	int rc;
	if (!strcmp(ev, "issues")) {
		if (!r->github_issues || strcmp(jstr(issue, "state"), "open") != 0 ||
		    (strcmp(action, "opened") && strcmp(action, "labeled") && strcmp(action, "edited") &&
		     strcmp(action, "reopened")))
			return "ignored";
		size_t before = json_array_size(s->actions);
		if (!ghsync_by_label(r))
			return ghsync_issues(s, g, r, e) < 0 ? NULL
			       : json_array_size(s->actions) > before ? "task" : "ignored";
		if (!ghsync_labels_match(r, issue))
			return "ignored";
		if (ghsync_issue(s, r, issue, delivery, e) < 0)
			return NULL;
		store_github_issue_task(s->st, r->github_repo, number, task, e);
		return json_array_size(s->actions) > before ? "task" : "duplicate";
	}
	if (!issue && !prj)
		return "ignored";
	if ((rc = store_github_pr_link(s->st, r->github_repo, number, &l, e)) <= 0)
		return rc < 0 ? NULL : "ignored";
	/* A pull_request delivery reads the state again (a reopened one is
	 * followed again); the others ask only on an open one. */
	if (strcmp(ev, "pull_request") != 0 && l.pr_state && strcmp(l.pr_state, "open") != 0) {
		gh_link_free(&l);
		return "ignored";
	}
	snprintf(task, TASK_ID_LEN + 1, "%s", l.task_id);
	if (!strcmp(ev, "pull_request_review") && !strcmp(action, "submitted"))
		rc = ghsync_review(s, g, r, &l, json_object_get(p, "review"), delivery, e);
	else if (!strcmp(ev, "pull_request_review_comment") && !strcmp(action, "created"))
		rc = ghsync_mention(s, g, r, &l, json_object_get(p, "comment"), "review_comment",
		                    delivery, e);
	else if (!strcmp(ev, "issue_comment") && !strcmp(action, "created") &&
	         json_object_get(issue, "pull_request"))
		rc = ghsync_mention(s, g, r, &l, json_object_get(p, "comment"), "issue_comment",
		                    delivery, e);
	else if (!strcmp(ev, "pull_request")) {
		struct task_row t;
		rc = store_task_get(s->st, l.task_id, &t, e);
		if (rc == 0) {
			rc = ghsync_pr(s, g, r, &l, &t, e);
			task_row_free(&t);
		}
		gh_link_free(&l);
		return rc < 0 ? NULL : "state";
	} else
		rc = 0;
	gh_link_free(&l);
	return rc < 0 ? NULL : rc == 2 ? "duplicate" : rc == 3 ? "waiting" : rc > 0 ? "round"
	       : "ignored";
}

int ghsync_webhook(struct ghsync *s, const char *ev, const char *delivery, const char *body,
                   size_t len, json_t **answer, struct err *e)
{
	json_error_t je;
	json_t *p = json_loadb(body, len, 0, &je);
	*answer = NULL;
	if (!json_is_object(p)) {
		json_decref(p);
		ghsync_refused(s->st, ev, delivery, _("the body is not a JSON object"));
		return err_kind_set(e, ERR_INVALID, _("the body is not a JSON object (%s)"), je.text);
	}
	const char *full = jstr(json_object_get(p, "repository"), "full_name");
	const struct repo_conf *r = ghsync_repo_of(s->cfg, full);
	char task[TASK_ID_LEN + 1] = "";
	const char *result = NULL;
	struct err we = {{0}};
	unsigned nev = s->nevents;
	if (!strcmp(ev ? ev : "", "ping")) {
		result = "pong";
	} else if (store_github_delivery_seen(s->st, delivery, &we) == 1) {
		result = "duplicate";
	} else if (!r) {
		result = "ignored";
		snprintf(we.msg, sizeof we.msg, _("no repo of the config follows %s"), *full ? full : "?");
	} else {
		struct github *g;
		size_t before = json_array_size(s->actions);
		if (github_open(&g, r, s->st, &we) == 0) {
			github_set_max_wait(g, s->max_wait);
			result = ghsync_hook_act(s, g, r, ev ? ev : "", delivery, p, task, &we);
			github_close(g);
		}
		if (!result)
			result = "error";
		else if (json_array_size(s->actions) > before && !we.msg[0]) {
			json_t *last = json_array_get(s->actions, json_array_size(s->actions) - 1);
			snprintf(we.msg, sizeof we.msg, "%s", jstr(last, "detail"));
		}
	}
	const json_t *who = json_object_get(p, "sender");
	if (s->nevents == nev)
		event(s, ev ? ev : "?", delivery, *jstr(who, "login") ? jstr(who, "login") : NULL,
		      *full ? full : NULL, jint(json_object_get(p, "issue") ? json_object_get(p, "issue")
		                                : json_object_get(p, "pull_request"), "number"),
		      result, *task ? task : NULL, we.msg[0] ? we.msg : NULL);
	*answer = json_pack("{s:s, s:s?, s:s, s:s?, s:s?}", "event", ev ? ev : "", "delivery",
	                    delivery, "result", result, "task", *task ? task : NULL, "detail",
	                    we.msg[0] ? we.msg : NULL);
	json_decref(p);
	return 0;
}

char *ghsync_pr_words(struct store *st, const char *task_id)
{
	struct gh_link l;
	struct err e = {{0}};
	if (store_github_link(st, task_id, &l, &e) != 1)
		return NULL;
	char *w = ghsync_link_words(&l);
	gh_link_free(&l);
	return w;
}

char *ghsync_link_words(const struct gh_link *l)
{
	if (!l->pr_state)
		return NULL;
	return l->checks ? xasprintf(_("%s; checks: %s"), l->pr_state, l->checks)
	                 : xstrdup(l->pr_state);
}

/* ---- serve's poller ---- */

struct ghsync_poller {
	const struct config *cfg;
	char *data_dir;
	struct logger *log;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int outbound_only;
	double every;
};

static void ghsync_poller_pass(struct ghsync_poller *p, struct store *st)
{
	struct ghsync s;
	struct err e = {{0}};
	ghsync_init(&s, p->cfg, p->data_dir, st, "poll");
	s.outbound_only = p->outbound_only;
	ghsync_all(&s, NULL, &e);
	size_t i;
	json_t *a;
	json_array_foreach(s.actions, i, a) {
		if (!p->log)
			break;
		/* GitHub's words reach a terminal: through the sanitizer. */
		char *d = sanitize_quote_str(jstr(a, "detail"));
		const char *kind = jstr(a, "kind");
		char *ev = xasprintf("github.%s", kind ? kind : "action");
		int bad = kind && !strcmp(kind, "error");
		logger_event(p->log, bad ? LOGGER_ERROR | LOGGER_ON_OUT : LOGGER_INFO,
		             json_string_value(json_object_get(a, "task")),
		             json_string_value(json_object_get(a, "repo")), ev,
		             "paddock: github: %s", d);
		free(ev);
		free(d);
	}
	ghsync_free(&s);
}

static void *ghsync_poller_run(void *arg)
{
	struct ghsync_poller *p = arg;
	struct store *st = NULL;
	struct err e = {{0}};
	char *db = paths_db(p->data_dir);
	if (store_open(&st, db, &e) < 0) {
		if (p->log)
			logger_event(p->log, LOGGER_ERROR | LOGGER_ON_OUT, NULL, NULL, "github.error",
			             "paddock: github: %s", e.msg);
		free(db);
		return NULL;
	}
	free(db);
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		pthread_mutex_unlock(&p->mu);
		ghsync_poller_pass(p, st);
		pthread_mutex_lock(&p->mu);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)p->every;
		while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu, &until) == 0)
			;
	}
	pthread_mutex_unlock(&p->mu);
	store_close(st);
	return NULL;
}

struct ghsync_poller *ghsync_poller_start(const struct config *cfg, const char *data_dir,
                                          struct logger *log)
{
	int any = 0;
	for (size_t i = 0; i < cfg->nrepos; i++)
		any |= config_repo_github_follows(&cfg->repos[i]);
	char *secret = ghsync_secret(cfg);
	int hook = secret != NULL;
	free(secret);
	if (!any || (cfg->github_poll <= 0 && !hook))
		return NULL;
	struct ghsync_poller *p = xcalloc(1, sizeof *p);
	p->cfg = cfg;
	p->data_dir = xstrdup(data_dir);
	p->log = log;
	p->outbound_only = cfg->github_poll <= 0;
	p->every = cfg->github_poll > 0 ? cfg->github_poll : 10;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, ghsync_poller_run, p) != 0) {
		free(p->data_dir);
		free(p);
		return NULL;
	}
	return p;
}

void ghsync_poller_stop(struct ghsync_poller *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->data_dir);
	free(p);
}
