#include "autoconfig.h"
#include "gate.h"

#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "forge.h"
#include "fsx.h"
#include "github.h"
#include "mirror.h"
#include "move.h"
#include "i18n.h"
#include "paths.h"
#include "store_github.h"
#include "task.h"
#include "webhook.h"

/* The most of an agent's summary a pull request body quotes (GitHub takes
 * 65536 characters). */
#define PR_SUMMARY_MAX 16000

static char actor_name[256];

static void actor_find(void)
{
	struct passwd *pw = getpwuid(getuid());
	const char *u = getenv("USER");
	/* sudo leaves the person's name in SUDO_USER. */
	const char *s = getenv("SUDO_USER");
	snprintf(actor_name, sizeof actor_name, "%s",
	         s && *s ? s : u && *u ? u : pw ? pw->pw_name : "?");
}

const char *gate_actor(void)
{
	/* Once per process, under pthread_once's lock: serve's reconcile
	 * thread asks while its loop may (getpwuid's buffer is shared too). */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, actor_find);
	return actor_name;
}

struct gate_ctx gate_ctx_of(const struct config *cfg, const char *data_dir, struct store *st,
                            const char *actor)
{
	return (struct gate_ctx){ .cfg = cfg, .data_dir = data_dir, .st = st,
	                          .actor = actor ? actor : gate_actor() };
}

int gate_refusal(struct store *st, const char *id, const char *actor, const char *action,
                 const char *why, struct err *e)
{
	char *notes = xasprintf("%s: %s", action, why);
	int rc = store_decision_add(st, id, "refused", notes, actor, e);
	free(notes);
	return rc;
}

static int listed(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

int gate_may_decide(const struct gate_ctx *g, const struct task_row *t, const char *action,
                    struct err *e)
{
	/* Without a configuration (a caller that has none) no repo limits. */
	const struct repo_conf *r = g->cfg ? config_find_repo(g->cfg, t->repo) : NULL;
	if (!r)
		return 0;
	struct err why = {{0}};
	if (r->nreviewers && !listed(r->reviewers, r->nreviewers, g->actor)) {
		struct buf names = {0};
		for (size_t i = 0; i < r->nreviewers; i++)
			buf_printf(&names, "%s%s", i ? ", " : "", r->reviewers[i]);
		err_kind_set(&why, ERR_FORBIDDEN, _("%s may not decide the gates of repo %s: its "
		             "reviewers are %s"), g->actor, r->name, names.data);
		buf_free(&names);
	} else if (r->four_eyes && (!strcmp(action, "approve") || !strcmp(action, "pick")) &&
	           t->queued_by && !strcmp(t->queued_by, g->actor)) {
		err_kind_set(&why, ERR_FORBIDDEN, _("%s queued task %s and may not approve it: repo "
		             "%s has four-eyes = true, so another person must"), g->actor, t->id,
		             r->name);
	} else {
		return 0;
	}
	if (gate_refusal(g->st, t->id, g->actor, action, why.msg, e) < 0)
		return -1;
	*e = why;
	return -1;
}

int gate_may_decide_id(const struct gate_ctx *g, const char *id, const char *action,
                       struct err *e)
{
	struct task_row t;
	if (store_task_get(g->st, id, &t, e) < 0)
		return -1;
	int rc = gate_may_decide(g, &t, action, e);
	task_row_free(&t);
	return rc;
}

int gate_push_lock(const char *data_dir, const char *id, struct err *e)
{
	char *dir = paths_task_dir(data_dir, id);
	char *path = paths_task_push_lock(data_dir, id);
	int fd = fsx_lock_try(dir, path, e);
	if (fd == -2)
		err_kind_set(e, ERR_CONFLICT, _("a push of task %s is already in progress"), id);
	free(dir);
	free(path);
	return fd < 0 ? -1 : fd;
}

int gate_push_lock_free(const char *data_dir, const char *id)
{
	struct err ignored;
	int fd = gate_push_lock(data_dir, id, &ignored);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* A move at the gate (move.h): the webhook follows, no progress line. */
static int gate_move(const struct gate_ctx *g, const char *id, enum task_status to,
                     const char *why, struct err *e)
{
	struct mover mv = { .cfg = g->cfg, .st = g->st };
	return move_task(&mv, id, to, why, e);
}

/* A task left pushing by a process that died: whoever touches it next
 * finds out where the push got to (gate_recover_push; what happened is in
 * the task: pushed, its error).  1 when it did, and t is then stale. */
static int recover_dead_push(const struct gate_ctx *g, const struct task_row *t)
{
	if (t->status != TASK_PUSHING || !gate_push_lock_free(g->data_dir, t->id))
		return 0;
	struct buf said = {0};
	struct err re = {{0}};
	gate_recover_push(g, t->id, &said, &re);
	buf_free(&said);
	return 1;
}

/* Loads the task and checks it is at review with nothing pending. */
/* A person's decision on a task whose approve or push waits for the
 * scheduler would race it: refused until that one has its outcome. */
int gate_action_waits(const struct gate_ctx *g, const char *id, const char *action,
                      struct err *e)
{
	struct store_action a;
	int rc = store_action_open(g->st, id, &a, e);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return 0;
	err_kind_set(e, ERR_CONFLICT, _("cannot %s task %s: %s's %s of it is waiting to be "
	             "carried out by the scheduler; paddock show %s follows it"),
	             action, id, a.actor, a.action, id);
	store_action_free(&a);
	return -1;
}

static int at_review(const struct gate_ctx *g, const char *id, const char *action,
                     struct task_row *t, struct err *e)
{
	if (store_task_get(g->st, id, t, e) < 0)
		return -1;
	if (recover_dead_push(g, t)) {
		char tid[TASK_ID_LEN + 1];
		memcpy(tid, t->id, sizeof tid);
		task_row_free(t);
		if (store_task_get(g->st, tid, t, e) < 0)
			return -1;
	}
	if (t->status != TASK_REVIEW) {
		const char *what;
		switch (t->status) {
		case TASK_QUEUED: case TASK_PREPARING: case TASK_RUNNING: case TASK_TESTING:
			what = _("wait until it reaches review, or cancel it");
			break;
		case TASK_PUSHING:
			what = _("a push is in progress; try again when it is done");
			break;
		default:
			what = _("it has ended; add a new task to try again");
		}
		err_kind_set(e, ERR_WRONG_STATE, _("cannot %s task %s: it is %s; %s"), action,
		             t->id, task_status_label(t->status), what);
		task_row_free(t);
		return -1;
	}
	if (t->pending) {
		err_kind_set(e, ERR_WRONG_STATE, _("cannot %s task %s: changes were requested and "
		             "the agent is about to run round %d"), action, t->id, t->round + 1);
		task_row_free(t);
		return -1;
	}
	if (!t->head) {
		err_kind_set(e, ERR_WRONG_STATE, _("cannot %s task %s: it has no work"), action,
		             t->id);
		task_row_free(t);
		return -1;
	}
	return 0;
}

/* Refuses a push while a block finding stands. */
static int check_findings(const struct gate_ctx *g, const struct task_row *t,
                          const char *action, struct err *e)
{
	struct gate_summary s;
	/* A summary that cannot be read cannot say nothing blocks. */
	if (gate_summary_load(g->st, t, &s, e) < 0)
		return -1;
	struct buf b = {0};
	gate_blocking(&s, &b);
	gate_summary_free(&s);
	if (b.len) {
		err_kind_set(e, ERR_BLOCKED, _("cannot %s task %s: policy findings block it: %s. "
		             "Look at them with 'paddock show %s'; override one with 'paddock "
		             "override %s NAME' if it is fine"), action, t->id, b.data, t->id, t->id);
		buf_free(&b);
		return -1;
	}
	buf_free(&b);
	return 0;
}

/* The push lock file says what the push is for ("approve ACTOR" or "push
 * ACTOR"), so that whoever finds it left by a dead process can finish it
 * (gate_recover_push). */
static void push_intent_write(int lock, const char *action, const char *actor)
{
	char *line = xasprintf("%s %s\n", action, actor);
	if (ftruncate(lock, 0) < 0 || pwrite(lock, line, strlen(line), 0) < 0) {
		/* Without it, recovery treats the push as a plain push. */
	}
	free(line);
}

static void push_intent_read(int lock, char action[16], char actor[256])
{
	char buf[300];
	ssize_t n = pread(lock, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	char *sp = strchr(buf, ' ');
	snprintf(action, 16, "%s", "push");
	snprintf(actor, 256, "%s", gate_actor());
	if (sp) {
		*sp = '\0';
		if (!strcmp(buf, "approve"))
			snprintf(action, 16, "%s", "approve");
		if (sp[1])
			snprintf(actor, 256, "%s", sp + 1);
	}
}

/* review -> pushing, and the push.  On success the task is still pushing
 * and *lock_out holds its push lock: the caller moves it on (review or
 * done), then closes the lock. */
static int push_task(const struct gate_ctx *g, const struct task_row *t, const char *action,
                     struct buf *out, int *lock_out, struct err *e)
{
	const struct repo_conf *r = config_find_repo(g->cfg, t->repo);
	if (!r)
		return err_kind_set(e, ERR_REMOTE, _("cannot push task %s: repo %s is no longer in "
		                    "the configuration"), t->id, t->repo);
	if (forge_branch_allowed(r, t->branch, e) < 0)
		return err_kind_mark(e, ERR_REMOTE);
	/* The lock says a push is alive: the scheduler puts a task whose
	 * pusher died back at review (gate_push_lock_free). */
	int lock = gate_push_lock(g->data_dir, t->id, e);
	if (lock < 0)
		return -1;
	push_intent_write(lock, action, g->actor);
	if (gate_move(g, t->id, TASK_PUSHING, NULL, e) < 0) {
		close(lock);
		return -1;
	}
	struct err pe = {{0}};
	if (forge_push(g->data_dir, r, t->branch, t->head, &pe) < 0) {
		struct err ignored;
		gate_move(g, t->id, TASK_REVIEW, NULL, &ignored);
		close(lock);
		return err_kind_set(e, ERR_REMOTE, _("push of task %s failed: %s (the task is "
		                    "still at review)"), t->id, pe.msg);
	}
	*lock_out = lock;
	struct err ignored;
	store_task_set(g->st, t->id, "pushed", t->head, &ignored);
	char *shown = mirror_url_display(r->push_url ? r->push_url : r->url);
	buf_printf(out, _("pushed %s to branch %s of %s\n"), t->head, t->branch, shown);
	free(shown);
	return 0;
}

static char *pr_title(const char *text)
{
	size_t n = strcspn(text, "\n");
	if (n > 72) {
		n = 72;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	return xstrndup(text, n);
}

/* The pull request's body: the agent's summary (quoted, github_quote: its
 * words can neither mention, link nor embed), the tests, the issue it
 * closes (a task made from a GitHub issue of the same repository). */
static char *pr_body(struct store *st, const struct task_row *t,
                     const struct gate_summary *summary)
{
	struct buf b = {0};
	const char *s = summary->summary;
	char *q = github_quote(s && *s ? s : t->summary, PR_SUMMARY_MAX);
	if (*q)
		buf_printf(&b, "Summary by the agent:\n\n%s\n\n", q);
	free(q);
	if (summary->tests.after.ran)
		buf_printf(&b, "Tests: %s.\n", summary->tests.after.passed ? "passed" : "failed");
	struct gh_link l;
	struct err ignored;
	if (store_github_link(st, t->id, &l, &ignored) == 1) {
		if (l.issue)
			buf_printf(&b, "\nCloses #%lld.\n", l.issue);
		gh_link_free(&l);
	}
	buf_printf(&b, "\nOpened by paddock for task `%s` (round %d).\n", t->id, t->round);
	return buf_detach(&b);
}

/* The pull request just opened, for a repo that follows GitHub: its
 * number and state go into the task's link (ghsync.h reads them). */
static void pr_link(struct store *st, const struct repo_conf *r, const struct task_row *t,
                    const char *url)
{
	const char *p = url ? strstr(url, "/pull/") : NULL;
	long long n = p ? strtoll(p + 6, NULL, 10) : 0;
	if (n <= 0 || !config_repo_github_follows(r))
		return;
	struct gh_link l;
	struct err ignored;
	if (store_github_link(st, t->id, &l, &ignored) != 1) {
		memset(&l, 0, sizeof l);
		snprintf(l.task_id, sizeof l.task_id, "%s", t->id);
		l.gh_repo = xstrdup(r->github_repo);
	}
	l.pr = n;
	free(l.pr_state);
	l.pr_state = xstrdup("open");
	store_github_link_put(st, &l, &ignored);
	gh_link_free(&l);
}

static int approve_finish(const struct gate_ctx *g, const struct task_row *tr,
                          const char *notes, const char *actor, struct buf *out,
                          struct err *e);

/* Test mode: what an approve (or a push) would write, recorded with the
 * task (dry_run_record) and printed; nothing leaves paddock. */
static int dry_run_record(const struct gate_ctx *g, const struct task_row *t, int approve,
                          struct buf *out, struct err *e)
{
	const struct repo_conf *r = config_find_repo(g->cfg, t->repo);
	if (!r)
		return err_kind_set(e, ERR_REMOTE, _("cannot approve task %s: repo %s is no longer "
		                    "in the configuration"), t->id, t->repo);
	if (forge_branch_allowed(r, t->branch, e) < 0)
		return err_kind_mark(e, ERR_REMOTE);
	struct gate_summary s;
	struct err pe = {{0}};
	gate_summary_load(g->st, t, &s, &pe);
	char *title = pr_title(t->text);
	char *body = pr_body(g->st, t, &s);
	struct github_pull_request pr = { .branch = t->branch, .title = title, .body = body };
	json_t *rec = forge_dry_run(r, t->branch, t->head);
	json_object_set_new(rec, "pull_request",
	                    github_pull_request_dry_run(r, approve && !t->pr_url ? &pr : NULL));
	json_object_set_new(rec, "action", json_string(approve ? "approve" : "push"));
	char *txt = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int rc = store_task_set(g->st, t->id, "dry_run_record", txt, e);
	if (rc == 0) {
		buf_printf(out, _("dry run: would push %s to branch %s of %s (refspec %s, not "
		                  "forced); nothing was pushed\n"), t->head,
		           t->branch, json_string_value(json_object_get(rec, "remote")),
		           json_string_value(json_object_get(rec, "refspec")));
		json_t *pj = json_object_get(rec, "pull_request");
		const char *problem = json_string_value(json_object_get(pj, "problem"));
		if (json_is_object(pj))
			buf_printf(out, _("dry run: would open a pull request with POST %s; nothing was "
			                  "opened\n"), json_string_value(json_object_get(pj, "url")));
		if (problem)
			buf_printf(out, _("dry run: but a real approve would not open it: %s\n"), problem);
	}
	free(txt);
	json_decref(rec);
	free(title);
	free(body);
	gate_summary_free(&s);
	return rc;
}

/* An approve that pushes nothing (test mode, approval never, a task that
 * changed nothing): the decision, done. */
static int approve_no_push(const struct gate_ctx *g, const struct task_row *t,
                           const char *notes, struct err *e)
{
	if (store_decision_add(g->st, t->id, "approve", notes, g->actor, e) < 0)
		return -1;
	return gate_move(g, t->id, TASK_DONE, NULL, e);
}

static int approval_never(const struct task_row *t)
{
	return t->approval && config_approval_parse(t->approval) == APPROVAL_NEVER;
}

/* A round that changed nothing (a contract with no-change, such as the
 * verify-pr recipe's): its head is the base. */
static int changed_nothing(const struct task_row *t)
{
	return !t->head || (t->base && !strcmp(t->head, t->base));
}

int gate_approve(const struct gate_ctx *g, const char *id, const char *notes,
                 struct buf *out, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("approve"), &t, e) < 0)
		return -1;
	int rc = -1, lock = -1;
	if (check_findings(g, &t, _("approve"), e) < 0)
		goto out;
	/* What would be pushed decides, before test mode: a dry run of a
	 * task that pushes nothing records nothing. */
	if (changed_nothing(&t)) {
		buf_printf(out, _("task %s changed nothing: there is nothing to push\n"), t.id);
		rc = approve_no_push(g, &t, notes, e);
	} else if (approval_never(&t)) {
		buf_printf(out, _("approval never: nothing is pushed; branch %s stays in paddock's "
		                  "mirror\n"), t.branch);
		rc = approve_no_push(g, &t, notes, e);
	} else if (t.dry_run) {
		rc = dry_run_record(g, &t, 1, out, e) == 0 ? approve_no_push(g, &t, notes, e) : -1;
	} else if (t.pushed && !strcmp(t.pushed, t.head)) {
		/* Pushed already (auto-push, or push): the pull request and done. */
		rc = approve_finish(g, &t, notes, g->actor, out, e);
	} else if (push_task(g, &t, "approve", out, &lock, e) == 0) {
		rc = approve_finish(g, &t, notes, g->actor, out, e);
	}
out:
	if (lock >= 0)
		close(lock);
	task_row_free(&t);
	return rc;
}

/* The wait before the scheduler's next try of a pull request that failed
 * `attempts` times: 1 min, doubling, at most 1 h (PADDOCK_PR_RETRY_BASE:
 * the first wait in seconds, for tests). */
static double pr_backoff(int attempts)
{
	double base = 60;
	const char *v = getenv("PADDOCK_PR_RETRY_BASE");
	if (v && *v) {
		char *end;
		double b = strtod(v, &end);
		if (!*end && b > 0 && b <= 3600)
			base = b;
	}
	double w = base;
	for (int i = 1; i < attempts && w < 3600; i++)
		w *= 2;
	return w < 3600 ? w : 3600;
}

/* Opens the pull request of t (pushed, its repo configured for one, none
 * open), holding t's push lock.  Opened: links it (pr_url, the GitHub
 * link) and clears a failure; 0.  Failed: the failure goes on the task
 * with the scheduler's next try (the back-off, or GitHub's wait when
 * longer); -1 with e (ERR_REMOTE) saying so.  The caller sends the
 * webhook (pr_failed_event), once the task is where it stays. */
static int pr_open(const struct gate_ctx *g, const struct repo_conf *r,
                   const struct task_row *t, struct buf *out, struct err *e)
{
	struct err pe = {{0}};
	struct gate_summary s;
	/* Without the summary, the body has the task's. */
	gate_summary_load(g->st, t, &s, &pe);
	char *title = pr_title(t->text);
	char *body = pr_body(g->st, t, &s);
	struct github_pull_request pr = { .branch = t->branch, .title = title, .body = body };
	char *url = NULL;
	int rc;
	/* Through the store: the rate limits and back-offs every GitHub
	 * call honours. */
	if (github_pull_request_open(r, g->st, &pr, &url, &pe) == 0) {
		struct err ignored;
		store_task_pr_opened(g->st, t->id, url, &ignored);
		pr_link(g->st, r, t, url);
		buf_printf(out, _("opened pull request %s\n"), url);
		rc = 0;
	} else {
		double now = clock_wall();
		double at = now + pr_backoff(t->pr_attempts + 1);
		double until = github_backoff_until(r, g->st);
		if (until > at)
			at = until;
		struct err ignored;
		store_task_pr_failed(g->st, t->id, pe.msg, now, at, &ignored);
		/* The push stands, and the task is done. */
		rc = err_kind_set(e, ERR_REMOTE, _("task %s: branch %s is pushed, but the pull "
		                  "request could not be opened: %s; paddock tries again by itself "
		                  "(paddock serve or the dashboard), or now with paddock pr %s"),
		                  t->id, t->branch, pe.msg, t->id);
	}
	free(url);
	free(title);
	free(body);
	gate_summary_free(&s);
	return rc;
}

static void pr_failed_event(const struct gate_ctx *g, const char *id)
{
	struct err ignored;
	webhook_enqueue_event(g->cfg, g->st, id, WEBHOOK_PR_FAILED, &ignored);
}

/* After the push of an approve: the pull request (when configured and
 * not open yet), the decision, done; 1 (e set) when the pull request
 * failed to open. */
static int approve_finish(const struct gate_ctx *g, const struct task_row *tr,
                          const char *notes, const char *actor, struct buf *out, struct err *e)
{
	const struct task_row t = *tr;
	const struct repo_conf *r = config_find_repo(g->cfg, t.repo);
	struct err pe = {{0}};
	int failed = r && r->pull_request && !t.pr_url && pr_open(g, r, &t, out, &pe) < 0;
	if (store_decision_add(g->st, t.id, "approve", notes, actor, e) < 0 ||
	    gate_move(g, t.id, TASK_DONE, NULL, e) < 0)
		return -1;
	if (failed) {
		pr_failed_event(g, t.id);
		*e = pe;
		return 1;
	}
	return 0;
}

/* The task's pull request may be tried: done, pushed at its head, its
 * repo configured for one, none open.  -1 with e (ERR_WRONG_STATE) when
 * not. */
static int pr_may_open(const struct gate_ctx *g, const struct task_row *t,
                       const struct repo_conf **r, struct err *e)
{
	*r = config_find_repo(g->cfg, t->repo);
	if (t->pr_url)
		return err_kind_set(e, ERR_WRONG_STATE, _("task %s has a pull request already: %s"),
		                    t->id, t->pr_url);
	if (!*r || !(*r)->pull_request)
		return err_kind_set(e, ERR_WRONG_STATE, _("task %s: its repo %s opens no pull "
		                    "requests (set pull-request = github in its [repo] section)"),
		                    t->id, t->repo);
	if (t->status != TASK_DONE || !t->pushed || t->dry_run)
		return err_kind_set(e, ERR_WRONG_STATE, _("task %s is %s: only an approved task "
		                    "whose branch is pushed gets a pull request"), t->id,
		                    task_status_label(t->status));
	return 0;
}

int gate_pr_retry(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e)
{
	struct task_row t;
	if (store_task_get(g->st, id, &t, e) < 0)
		return -1;
	const struct repo_conf *r;
	int rc = -1;
	int lock = -1;
	if (pr_may_open(g, &t, &r, e) < 0)
		goto out;
	/* One try at a time (the scheduler's, a person's): two would open two. */
	if ((lock = gate_push_lock(g->data_dir, t.id, e)) < 0) {
		if (e->kind == ERR_CONFLICT)
			err_kind_set(e, ERR_CONFLICT, _("task %s: its pull request is being opened by "
			             "another process now"), t.id);
		goto out;
	}
	/* Under the lock, the task again: the other try may have opened it. */
	task_row_free(&t);
	if (store_task_get(g->st, id, &t, e) < 0 || pr_may_open(g, &t, &r, e) < 0)
		goto out;
	if ((rc = pr_open(g, r, &t, out, e)) < 0)
		pr_failed_event(g, t.id);
out:
	if (lock >= 0)
		close(lock);
	task_row_free(&t);
	return rc;
}

int gate_pr_scheduled(const struct gate_ctx *g, const char *id, struct buf *out,
                      struct err *e)
{
	struct err pe = {{0}};
	int rc = gate_pr_retry(g, id, out, &pe);
	if (rc < 0 && pe.kind != ERR_INTERNAL && pe.kind != ERR_UNAVAILABLE) {
		struct err ignored;
		/* Said on the task; the progress line says it too. */
		if (pe.kind == ERR_REMOTE)
			buf_printf(out, "%s\n", pe.msg);
		/* Another process tries it now: look again in a moment. */
		else if (pe.kind == ERR_CONFLICT)
			store_task_pr_retry_at(g->st, id, clock_wall() + 5, &ignored);
		/* No longer wanted (opened, or its repo opens none now). */
		else
			store_task_pr_retry_at(g->st, id, 0, &ignored);
		return 0;
	}
	if (rc < 0)
		*e = pe;
	return rc;
}

int gate_recover_push(const struct gate_ctx *g, const char *id, struct buf *out,
                      struct err *e)
{
	struct task_row t;
	if (store_task_get(g->st, id, &t, e) < 0)
		return -1;
	if (t.status != TASK_PUSHING) {
		task_row_free(&t);
		return 0;
	}
	struct err le;
	int lock = gate_push_lock(g->data_dir, t.id, &le);
	if (lock < 0) {
		task_row_free(&t);
		return 0;            /* the push is alive */
	}
	/* Under the lock, the state again: another process may have
	 * finished it a moment ago. */
	task_row_free(&t);
	int rc = -1;
	if (store_task_get(g->st, id, &t, e) < 0) {
		close(lock);
		return -1;
	}
	if (t.status != TASK_PUSHING) {
		rc = 0;
		goto out;
	}
	char action[16], actor[256];
	push_intent_read(lock, action, actor);
	const struct repo_conf *r = config_find_repo(g->cfg, t.repo);
	char sha[41] = "";
	struct err ne = {{0}};
	int found = r && t.head ? forge_remote_branch(g->data_dir, r, t.branch, sha, &ne) : -1;
	if (found == 1 && !strcmp(sha, t.head)) {
		/* The remote took it before the pusher died: record it and
		 * finish what it was for. */
		store_task_set(g->st, t.id, "pushed", t.head, &ne);
		free(t.pushed);
		t.pushed = xstrdup(t.head);
		buf_printf(out, _("task %s: the interrupted push had arrived: branch %s is at "
		                  "%.12s\n"), t.id, t.branch, t.head);
		if (!strcmp(action, "approve")) {
			rc = approve_finish(g, &t, NULL, actor, out, e);
		} else {
			rc = store_decision_add(g->st, t.id, "push", NULL, actor, e) == 0 &&
			     gate_move(g, t.id, TASK_REVIEW, NULL, e) == 0 ? 0 : -1;
		}
	} else {
		char *why = found < 0
			? xasprintf(_("pushing: the push did not complete, and whether it arrived "
			              "could not be checked (%s); push again"),
			            r ? ne.msg : _("the repo is no longer in the configuration"))
			: xasprintf(_("pushing: the push did not complete (the remote branch %s is "
			              "%s); push or approve again"), t.branch,
			            found == 1 ? _("somewhere else") : _("not there"));
		rc = gate_move(g, t.id, TASK_REVIEW, why, e);
		if (rc == 0)
			buf_printf(out, _("task %s: %s\n"), t.id, why);
		free(why);
	}
out:
	close(lock);
	task_row_free(&t);
	return rc;
}

int gate_ready(const struct gate_ctx *g, const char *id, const char *action, struct err *e)
{
	struct task_row t;
	int push = !strcmp(action, "push");
	if (at_review(g, id, push ? _("push") : _("approve"), &t, e) < 0)
		return -1;
	int rc = -1;
	if (push && approval_never(&t))
		err_kind_set(e, ERR_WRONG_STATE, _("task %s has approval never: its branch is never "
		                                   "pushed; approve ends it, keeping the branch in "
		                                   "paddock's mirror"), t.id);
	else if (push && changed_nothing(&t))
		err_kind_set(e, ERR_WRONG_STATE, _("task %s changed nothing: there is nothing to "
		                                   "push; approve ends it"), t.id);
	else if ((push || !changed_nothing(&t)) &&
	         check_findings(g, &t, push ? _("push") : _("approve"), e) < 0)
		rc = -1;
	else
		rc = 0;
	task_row_free(&t);
	return rc;
}

int gate_push(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("push"), &t, e) < 0)
		return -1;
	int rc = -1, lock = -1;
	if (approval_never(&t)) {
		err_kind_set(e, ERR_WRONG_STATE, _("task %s has approval never: its branch is never "
		                                   "pushed; approve ends it, keeping the branch in "
		                                   "paddock's mirror"), t.id);
	} else if (changed_nothing(&t)) {
		/* A branch at the base would be a branch of nothing. */
		err_kind_set(e, ERR_WRONG_STATE, _("task %s changed nothing: there is nothing to "
		                                   "push; approve ends it"), t.id);
	} else if (t.dry_run) {
		if (check_findings(g, &t, _("push"), e) == 0 && dry_run_record(g, &t, 0, out, e) == 0 &&
		    store_decision_add(g->st, t.id, "push", NULL, g->actor, e) == 0)
			rc = 0;
	} else if (check_findings(g, &t, _("push"), e) == 0 &&
	    push_task(g, &t, "push", out, &lock, e) == 0 &&
	    store_decision_add(g->st, t.id, "push", NULL, g->actor, e) == 0 &&
	    gate_move(g, t.id, TASK_REVIEW, NULL, e) == 0)
		rc = 0;
	if (lock >= 0)
		close(lock);
	task_row_free(&t);
	return rc;
}

int gate_reject(const struct gate_ctx *g, const char *id, const char *notes, struct err *e)
{
	struct task_row t;
	if (gate_action_waits(g, id, _("reject"), e) < 0 || at_review(g, id, _("reject"), &t, e) < 0)
		return -1;
	int rc = store_decision_add(g->st, t.id, "reject", notes, g->actor, e) == 0 &&
	         gate_move(g, t.id, TASK_REJECTED, _("rejected at review"), e) == 0
	         ? 0 : -1;
	task_row_free(&t);
	return rc;
}

int gate_follow_up(const struct gate_ctx *g, const char *id, const char *notes,
                   char id_out[TASK_ID_LEN + 1], struct err *e)
{
	if (!notes || strspn(notes, " \t\r\n") == strlen(notes))
		return err_kind_set(e, ERR_INVALID, _("the notes are empty; say what the agent "
		                    "should do next"));
	int rc = store_task_follow_up(g->st, id, notes, g->actor, g->max_queued, id_out, e);
	if (rc < 0)
		return rc;
	struct err ignored;
	/* The parent says where its work went on. */
	store_decision_add(g->st, id, "follow-up", id_out, g->actor, &ignored);
	return 0;
}

char *gate_last_notes(struct store *st, const char *id, struct err *e)
{
	struct task_decision *d;
	size_t n;
	if (store_decisions(st, id, &d, &n, e) < 0)
		return NULL;
	char *notes = NULL;
	for (size_t i = n; i-- > 0 && !notes;)
		if (!strcmp(d[i].action, "request-changes") && d[i].notes)
			notes = xstrdup(d[i].notes);
	task_decisions_free(d, n);
	if (!notes)
		err_kind_set(e, ERR_CONFLICT, _("task %s has no earlier notes to send again; give "
		             "them with --notes"), id);
	return notes;
}

int gate_cancel(const struct gate_ctx *g, const char *id, struct err *e)
{
	struct task_row t;
	if (gate_action_waits(g, id, _("cancel"), e) < 0 || store_task_get(g->st, id, &t, e) < 0)
		return -1;
	recover_dead_push(g, &t);
	struct mover mv = { .cfg = g->cfg, .st = g->st };
	int rc = move_cancel(&mv, t.id, g->actor, e);
	task_row_free(&t);
	return rc;
}

int gate_request_changes(const struct gate_ctx *g, const char *id, const char *notes,
                         struct err *e)
{
	/* The state first: what the task is says more than the notes. */
	struct task_row t;
	if (gate_action_waits(g, id, _("request changes on"), e) < 0 || at_review(g, id, _("request changes on"), &t, e) < 0)
		return -1;
	task_row_free(&t);
	if (!notes || strspn(notes, " \t\r\n") == strlen(notes))
		return err_kind_set(e, ERR_INVALID, _("the notes are empty; say what the agent "
		                    "should change"));
	return store_task_request_changes(g->st, id, notes, g->actor, e);
}

char *gate_draft_notes(const struct review_comment *c, size_t n, const char *notes)
{
	struct buf b = {0};
	for (size_t i = 0; i < n; i++) {
		/* A removed line's number is the old file's: said, since the
		 * agent works on the new one. */
		buf_printf(&b, c[i].old ? "%s:%ld (removed): %s\n" : "%s:%ld: %s\n",
		           c[i].path ? c[i].path : "", c[i].line, c[i].text ? c[i].text : "");
		const char *cm = c[i].comment ? c[i].comment : "";
		size_t len = strlen(cm);
		while (len && strchr(" \t\r\n", cm[len - 1]))
			len--;
		buf_add(&b, cm, len);
		buf_adds(&b, "\n\n");
	}
	if (notes && strspn(notes, " \t\r\n") != strlen(notes))
		buf_adds(&b, notes);
	else if (b.len)
		b.data[--b.len] = '\0';   /* one newline at the end, not two */
	if (!b.data)
		return xstrdup("");
	return b.data;
}

int gate_request_changes_draft(const struct gate_ctx *g, const char *id, const char *notes,
                               size_t *sent, struct err *e)
{
	struct task_row t;
	*sent = 0;
	if (gate_action_waits(g, id, _("request changes on"), e) < 0 || at_review(g, id, _("request changes on"), &t, e) < 0)
		return -1;
	struct review_comment *c = NULL;
	size_t n = 0;
	int rc = store_draft_list(g->st, t.id, &c, &n, e);
	if (rc == 0 && n == 0) {
		rc = gate_request_changes(g, t.id, notes, e);
	} else if (rc == 0) {
		char *all = gate_draft_notes(c, n, notes);
		rc = store_task_request_changes_draft(g->st, t.id, all, g->actor, c[n - 1].n, e);
		if (rc == 0)
			*sent = n;
		free(all);
	}
	store_draft_free(c, n);
	task_row_free(&t);
	return rc;
}

char *gate_fix_note(const struct gate_summary *s)
{
	if (!s || s->fix_rounds <= 0)
		return NULL;
	unsigned long n = (unsigned long)s->fix_rounds;
	if (s->tests.after.ran && s->tests.after.passed)
		return xasprintf(ngettext("tests passed after %d fix round",
		                          "tests passed after %d fix rounds", n), s->fix_rounds);
	return xasprintf(ngettext("tests still failed after %d fix round",
	                          "tests still failed after %d fix rounds", n), s->fix_rounds);
}

int gate_contract_text(const struct gate_summary *s, struct buf *out)
{
	int all = 1;
	size_t start = out->len;
	for (size_t i = 0; i < s->contract.nclauses; i++) {
		buf_printf(out, "%s%s: %s", out->len > start ? "  " : "",
		           s->contract.clauses[i].clause, s->contract.clauses[i].held ? _("yes")
		                                                                       : _("no"));
		all &= s->contract.clauses[i].held;
	}
	if (s->contract.nclauses)
		return all;
	const struct { const char *name; int met; } parts[] = {
		{ "change", s->contract.change }, { "tests", s->contract.tests },
		{ "bundle", s->contract.bundle },
	};
	for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
		buf_printf(out, "%s%s: %s", out->len > start ? "  " : "", parts[k].name,
		           parts[k].met ? _("yes") : _("no"));
		all &= parts[k].met;
	}
	return all;
}

int gate_round_unchanged(const struct gate_summary *s)
{
	return s && s->round > 1 && s->from && s->head && *s->head && !strcmp(s->from, s->head);
}

int gate_override(const struct gate_ctx *g, const char *id, const char *finding,
                  const char *notes, struct err *e)
{
	struct task_row t;
	if (gate_action_waits(g, id, _("override a finding of"), e) < 0 || at_review(g, id, _("override a finding of"), &t, e) < 0)
		return -1;
	int rc = -1;
	struct gate_summary s;
	const struct gate_finding *hit = NULL;
	if (gate_summary_load(g->st, &t, &s, e) < 0) {
		task_row_free(&t);
		return -1;
	}
	for (size_t i = 0; i < s.nfindings; i++)
		if (s.findings[i].name && !strcmp(s.findings[i].name, finding))
			hit = &s.findings[i];
	if (!hit) {
		struct buf names = {0};
		for (size_t i = 0; i < s.nfindings; i++) {
			const char *name = s.findings[i].name;
			buf_adds(&names, names.len ? ", " : "");
			buf_adds(&names, name && *name ? name : "?");
		}
		err_kind_set(e, ERR_INVALID, _("task %s has no finding named '%s' in round %d%s%s"),
		             t.id, finding, t.round,
		             names.len ? _("; its findings are: ") : _("; it has none"),
		             names.len ? names.data : "");
		buf_free(&names);
	} else if (hit->action != POLICY_BLOCK) {
		err_kind_set(e, ERR_INVALID, _("finding '%s' only warns; it does not block "
		             "anything"), finding);
	} else if (hit->overridden) {
		err_kind_set(e, ERR_CONFLICT, _("finding '%s' is already overridden"), finding);
	} else {
		char *text = xasprintf("%s%s%s", finding, notes ? "\n" : "", notes ? notes : "");
		rc = store_decision_add(g->st, t.id, "override", text, g->actor, e);
		free(text);
	}
	gate_summary_free(&s);
	task_row_free(&t);
	return rc;
}

/* ---------------------------------------------------------- gate summary */

const char *gate_action_name(enum policy_action a)
{
	return a == POLICY_BLOCK ? "block" : a == POLICY_WARN ? "warn" : "off";
}

/* What still blocks first, then what warns, then what was overridden:
 * a reviewer reads first what stops the approval. */
int gate_finding_rank(const struct gate_finding *f)
{
	if (f->action == POLICY_BLOCK && !f->overridden)
		return 0;
	return f->overridden ? 2 : 1;
}

void gate_summary_add_finding(struct gate_summary *s, const char *name, const char *rule,
                              enum policy_action action, const char *path,
                              const char *detail)
{
	s->findings = xrealloc(s->findings, (s->nfindings + 1) * sizeof *s->findings);
	s->findings[s->nfindings++] = (struct gate_finding){
		.name = xstrdup(name ? name : ""), .rule = xstrdup(rule ? rule : ""),
		.action = action, .path = xstrdup(path ? path : ""),
		.detail = xstrdup(detail ? detail : ""),
	};
}

static void tests_free(struct gate_tests *t)
{
	free(t->tail);
	free(t->log);
}

void gate_summary_free(struct gate_summary *s)
{
	free(s->branch);
	free(s->from);
	free(s->head);
	free(s->summary);
	free(s->diffstat);
	tests_free(&s->tests.before);
	tests_free(&s->tests.after);
	tests_free(&s->tests.agent);
	for (size_t i = 0; i < s->nfindings; i++) {
		free(s->findings[i].name);
		free(s->findings[i].rule);
		free(s->findings[i].path);
		free(s->findings[i].detail);
	}
	free(s->findings);
	for (size_t i = 0; i < s->contract.nclauses; i++)
		free(s->contract.clauses[i].clause);
	free(s->contract.clauses);
	memset(s, 0, sizeof *s);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* A member that is absent when the string is NULL (json_string(NULL) is
 * NULL, which json_object_set_new refuses). */
static void set_str(json_t *o, const char *key, const char *s)
{
	json_object_set_new(o, key, json_string(s));
}

/* One test run: whether it passed, its exit status, the tail of its
 * output and where the whole log is. */
static json_t *tests_to_json(const struct gate_tests *t)
{
	if (!t->ran)
		return json_pack("{s:b}", "ran", 0);
	json_t *j = json_pack("{s:b,s:b,s:s,s:s}", "ran", 1, "passed", t->passed, "tail",
	                      or_empty(t->tail), "log", or_empty(t->log));
	json_object_set_new(j, "exit", t->exited ? json_integer(t->code) : json_null());
	if (t->verified)
		json_object_set_new(j, "verified", json_true());
	return j;
}

json_t *gate_summary_to_json(const struct gate_summary *s)
{
	json_t *g = json_object();
	json_object_set_new(g, "round", json_integer(s->round));
	set_str(g, "branch", s->branch);
	set_str(g, "from", s->from);
	set_str(g, "head", s->head);
	set_str(g, "summary", or_empty(s->summary));
	set_str(g, "diffstat", or_empty(s->diffstat));
	json_object_set_new(g, "tests", json_pack("{s:o,s:o,s:o,s:b}",
		"before", tests_to_json(&s->tests.before), "after", tests_to_json(&s->tests.after),
		"agent", tests_to_json(&s->tests.agent), "mismatch", s->tests.mismatch));
	json_t *fa = json_array();
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct gate_finding *f = &s->findings[i];
		json_array_append_new(fa, json_pack("{s:s,s:s,s:s,s:s,s:s}", "name",
		                                    or_empty(f->name), "rule", or_empty(f->rule),
		                                    "action", gate_action_name(f->action),
		                                    "path", or_empty(f->path),
		                                    "detail", or_empty(f->detail)));
	}
	json_object_set_new(g, "findings", fa);
	if (s->has_contract) {
		json_t *c = json_pack("{s:b,s:b,s:b}", "change", s->contract.change, "tests",
		                      s->contract.tests, "bundle", s->contract.bundle);
		if (s->contract.nclauses) {
			json_t *a = json_array();
			for (size_t i = 0; i < s->contract.nclauses; i++)
				json_array_append_new(a, json_pack("{s:s,s:b}", "clause",
					or_empty(s->contract.clauses[i].clause), "held",
					s->contract.clauses[i].held));
			json_object_set_new(c, "clauses", a);
		}
		json_object_set_new(g, "contract", c);
	}
	if (s->fix_rounds > 0)
		json_object_set_new(g, "fix_rounds", json_integer(s->fix_rounds));
	if (s->has_usage)
		json_object_set_new(g, "usage", json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:b,s:f}",
			"input", (json_int_t)s->usage.input, "output", (json_int_t)s->usage.output,
			"cache_read", (json_int_t)s->usage.cache_read,
			"cache_write", (json_int_t)s->usage.cache_write, "cost", s->usage.cost,
			"requests", (json_int_t)s->usage.requests, "priced", s->usage.priced,
			"budget", s->usage.budget));
	if (s->has_egress)
		json_object_set_new(g, "egress", json_pack("{s:I,s:I}",
			"allowed", (json_int_t)s->egress.allowed,
			"refused", (json_int_t)s->egress.refused));
	return g;
}

/* Members of another type read as missing, as they always have. */
static char *get_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? xstrdup(v) : NULL;
}

static int get_bool(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static uint64_t get_count(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}

static void tests_parse(json_t *o, struct gate_tests *t)
{
	t->ran = get_bool(o, "ran");
	t->passed = get_bool(o, "passed");
	json_t *code = json_object_get(o, "exit");
	t->exited = json_is_integer(code);
	t->code = (int)json_integer_value(code);
	t->verified = get_bool(o, "verified");
	t->tail = get_str(o, "tail");
	t->log = get_str(o, "log");
}

static enum policy_action action_parse(const char *a)
{
	return !a ? POLICY_OFF : !strcmp(a, "block") ? POLICY_BLOCK :
	       !strcmp(a, "warn") ? POLICY_WARN : POLICY_OFF;
}

static void summary_parse(json_t *g, struct gate_summary *s)
{
	memset(s, 0, sizeof *s);
	s->round = (int)json_integer_value(json_object_get(g, "round"));
	s->branch = get_str(g, "branch");
	s->from = get_str(g, "from");
	s->head = get_str(g, "head");
	s->summary = get_str(g, "summary");
	s->diffstat = get_str(g, "diffstat");
	json_t *tests = json_object_get(g, "tests");
	tests_parse(json_object_get(tests, "before"), &s->tests.before);
	tests_parse(json_object_get(tests, "after"), &s->tests.after);
	tests_parse(json_object_get(tests, "agent"), &s->tests.agent);
	s->tests.mismatch = get_bool(tests, "mismatch");
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(g, "findings"), i, f) {
		char *name = get_str(f, "name"), *rule = get_str(f, "rule");
		char *path = get_str(f, "path"), *detail = get_str(f, "detail");
		s->findings = xrealloc(s->findings, (s->nfindings + 1) * sizeof *s->findings);
		s->findings[s->nfindings++] = (struct gate_finding){
			.name = name, .rule = rule, .path = path, .detail = detail,
			.action = action_parse(json_string_value(json_object_get(f, "action"))),
			.overridden = get_bool(f, "overridden"),
		};
	}
	json_t *c = json_object_get(g, "contract");
	if (json_object_size(c)) {
		s->has_contract = 1;
		s->contract.change = get_bool(c, "change");
		s->contract.tests = get_bool(c, "tests");
		s->contract.bundle = get_bool(c, "bundle");
		json_t *a = json_object_get(c, "clauses"), *k;
		size_t ki;
		json_array_foreach(a, ki, k) {
			const char *text = json_string_value(json_object_get(k, "clause"));
			if (!text)
				continue;
			s->contract.clauses = xrealloc(s->contract.clauses, (s->contract.nclauses + 1) *
			                               sizeof *s->contract.clauses);
			s->contract.clauses[s->contract.nclauses++] = (struct gate_clause){
				.clause = xstrdup(text), .held = get_bool(k, "held") };
		}
	}
	json_int_t fr = json_integer_value(json_object_get(g, "fix_rounds"));
	s->fix_rounds = fr > 0 && fr < 1000000 ? (int)fr : 0;
	json_t *u = json_object_get(g, "usage");
	if (json_is_object(u)) {
		s->has_usage = 1;
		s->usage.input = get_count(u, "input");
		s->usage.output = get_count(u, "output");
		s->usage.cache_read = get_count(u, "cache_read");
		s->usage.cache_write = get_count(u, "cache_write");
		s->usage.requests = get_count(u, "requests");
		s->usage.cost = json_number_value(json_object_get(u, "cost"));
		s->usage.priced = get_bool(u, "priced");
		s->usage.budget = json_number_value(json_object_get(u, "budget"));
	}
	json_t *eg = json_object_get(g, "egress");
	if (json_is_object(eg)) {
		s->has_egress = 1;
		s->egress.allowed = get_count(eg, "allowed");
		s->egress.refused = get_count(eg, "refused");
	}
}

/* The summary is the "gate" report of the round (report.h). */
static json_t *summary_load(const char *json, struct err *e)
{
	json_error_t je;
	json_t *g = json_loads(json ? json : "", 0, &je);
	if (!json_is_object(g)) {
		err_set(e, _("%s report is not a JSON object: %s"), "gate",
		        g ? _("another JSON value") : je.text);
		json_decref(g);
		return NULL;
	}
	return g;
}

int gate_summary_parse(const char *json, struct gate_summary *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	json_t *g = summary_load(json, e);
	if (!g)
		return -1;
	summary_parse(g, out);
	json_decref(g);
	return 0;
}

/* The latest round's summary; a round whose summary cannot be read
 * counts as having none.  NULL with *rc 0 when there is none, -1 when
 * the store cannot be read. */
/* The summary of round `upto` (0: the latest), or of the latest round
 * before it that has one. */
static json_t *latest_summary(struct store *st, const struct task_row *t, int upto, int *rc,
                              struct err *e)
{
	struct task_round *r;
	size_t n;
	*rc = -1;
	if (store_rounds(st, t->id, &r, &n, e) < 0)
		return NULL;
	*rc = 0;
	json_t *g = NULL;
	struct err ignored;
	for (size_t i = n; i-- > 0 && !g;)
		if (r[i].gate && (upto <= 0 || r[i].n <= upto))
			g = summary_load(r[i].gate, &ignored);
	task_rounds_free(r, n);
	return g;
}

/* Whether the finding named name was overridden in round: an override
 * decision's notes start with the finding's name on a line of its own. */
static int overridden(const struct task_decision *d, size_t nd, int round, const char *name)
{
	int over = 0;
	for (size_t k = 0; k < nd && name; k++) {
		if (d[k].round != round || strcmp(d[k].action, "override") || !d[k].notes)
			continue;
		size_t len = strcspn(d[k].notes, "\n");
		over |= strlen(name) == len && !strncmp(d[k].notes, name, len);
	}
	return over;
}

int gate_summary_load(struct store *st, const struct task_row *t, struct gate_summary *out,
                      struct err *e)
{
	memset(out, 0, sizeof *out);
	int rc;
	json_t *g = latest_summary(st, t, 0, &rc, e);
	if (!g)
		return rc;
	summary_parse(g, out);
	json_decref(g);
	struct task_decision *d;
	size_t nd;
	if (store_decisions(st, t->id, &d, &nd, e) < 0) {
		gate_summary_free(out);
		return -1;
	}
	for (size_t i = 0; i < out->nfindings; i++)
		out->findings[i].overridden = overridden(d, nd, out->round, out->findings[i].name);
	task_decisions_free(d, nd);
	return 1;
}

json_t *gate_summary_json(struct store *st, const struct task_row *t, struct err *e)
{
	return gate_summary_json_round(st, t, 0, e);
}

json_t *gate_summary_json_round(struct store *st, const struct task_row *t, int upto,
                                struct err *e)
{
	int rc;
	json_t *g = latest_summary(st, t, upto, &rc, e);
	if (!g)
		return NULL;
	int round = (int)json_integer_value(json_object_get(g, "round"));
	struct task_decision *d;
	size_t nd;
	if (store_decisions(st, t->id, &d, &nd, e) < 0) {
		json_decref(g);
		return NULL;
	}
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(g, "findings"), i, f)
		json_object_set_new(f, "overridden", json_boolean(overridden(d, nd, round,
			json_string_value(json_object_get(f, "name")))));
	task_decisions_free(d, nd);
	return g;
}

void gate_blocking(const struct gate_summary *s, struct buf *out)
{
	for (size_t i = 0; s && i < s->nfindings; i++) {
		const struct gate_finding *f = &s->findings[i];
		if (f->action != POLICY_BLOCK || f->overridden)
			continue;
		if (out->len)
			buf_adds(out, ", ");
		buf_adds(out, f->name && *f->name ? f->name : "?");
	}
}

const char *gate_mismatch(const struct gate_summary *s)
{
	if (!s || !s->tests.mismatch)
		return NULL;
	/* Short lines: the gate shows them whole at 80 columns. */
	if (s->tests.after.passed)
		return _("the tests failed in the agent's sandbox\n"
		         "but pass on a clean checkout of its commit");
	return _("the tests passed in the agent's sandbox\n"
	         "but FAIL on a clean checkout of its commit:\n"
	         "something the agent left outside the repository\n"
	         "made them pass");
}
