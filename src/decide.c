/* decide: decisions that push, carried out by the scheduler's process
 * (decide.h). */
#include "autoconfig.h"
#include "decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "group.h"
#include "i18n.h"
#include "task.h"

int decide_can_push(const struct repo_conf *r, struct buf *why)
{
	const char *url = r->push_url ? r->push_url : r->url;
	int ok = 1;
	if (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7)) {
		if (!config_repo_token(r)) {
			ok = 0;
			if (why)
				buf_printf(why, _("no token to push to %s (set %s, or token-file in its "
				                  "[repo] section)"), r->name,
				           r->token_env ? r->token_env : "PADDOCK_GIT_TOKEN");
		}
	} else if (strncmp(url, "file://", 7) && url[0] != '/' && url[0] != '.') {
		/* ssh://, git+ssh:// or scp-like: a key, or the agent. */
		const char *sock = getenv("SSH_AUTH_SOCK");
		if (r->ssh_key ? access(r->ssh_key, R_OK) != 0 : !(sock && *sock)) {
			ok = 0;
			if (why)
				buf_printf(why, _("no SSH key to push to %s (%s)"), r->name,
				           r->ssh_key ? r->ssh_key : _("no SSH agent"));
		}
	}
	if (r->pull_request && !config_repo_github_token(r)) {
		if (why)
			buf_printf(why, "%s", ok ? "" : "; ");
		ok = 0;
		if (why)
			buf_printf(why, _("no GitHub token for the pull requests of %s (set %s, or "
			                  "github-token-file)"), r->name,
			           r->github_token_env ? r->github_token_env : "GITHUB_TOKEN");
	}
	return ok;
}

int decide_pushes(const struct task_row *t, const char *action)
{
	if (!strcmp(action, "pick"))
		return 1;
	if (!t->head || (t->base && !strcmp(t->head, t->base)) || t->dry_run)
		return 0;
	if (t->approval && config_approval_parse(t->approval) == APPROVAL_NEVER)
		return 0;
	return 1;
}

int decide_local(const struct gate_ctx *g, const char *action, const char *task,
                 struct buf *why)
{
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(g->st, task, &t, &e) < 0)
		return 1;
	const struct repo_conf *r = config_find_repo(g->cfg, t.repo);
	int here = !r || !decide_pushes(&t, action) || decide_can_push(r, why);
	task_row_free(&t);
	return here;
}

int decide_check(const struct gate_ctx *g, const char *id, const char *action,
                 struct err *e)
{
	if (gate_action_waits(g, id, action, e) < 0)
		return -1;
	return gate_ready(g, id, action, e);
}

/* A task left pushing (by this action's taker that died, say) is settled
 * first: the push finished or undone by gate_recover_push, here or by the
 * scheduler's own recovery (which then holds the push lock a while). */
static void settle(const struct gate_ctx *g, const char *id, struct buf *out)
{
	for (int i = 0; i < 600; i++) {
		struct task_row t;
		struct err e = {{0}};
		if (store_task_get(g->st, id, &t, &e) < 0)
			return;
		int pushing = t.status == TASK_PUSHING;
		task_row_free(&t);
		if (!pushing)
			return;
		if (gate_push_lock_free(g->data_dir, id))
			gate_recover_push(g, id, out, &e);
		else
			nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
}

/* 1 when the task has a decision `action` by a's actor made since a was
 * recorded: the recovery of a push a's taker left half way finished it. */
static int decided_since(const struct gate_ctx *g, const struct store_action *a)
{
	struct task_decision *d;
	size_t n;
	struct err e = {{0}};
	if (store_decisions(g->st, a->task, &d, &n, &e) < 0)
		return 0;
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found |= !strcmp(d[i].action, a->action) && d[i].actor &&
		         !strcmp(d[i].actor, a->actor) && d[i].at >= a->requested - 1;
	task_decisions_free(d, n);
	return found;
}

/* An approve or push whose work was done already (the recovery of a push
 * left half way finished it): its end, from the task; 0 when it was not
 * done, 1 when it was (*result and e set as the gate's call would). */
static int finished_already(const struct gate_ctx *g, const struct store_action *a,
                            int *result, struct err *e)
{
	if (!decided_since(g, a))
		return 0;
	struct task_row t;
	struct err ge = {{0}};
	if (store_task_get(g->st, a->task, &t, &ge) < 0)
		return 0;
	int done = 0;
	*result = 0;
	if (!strcmp(a->action, "approve") && t.status == TASK_DONE) {
		done = 1;
		if (t.pr_error && !t.pr_url) {
			*result = 1;
			err_kind_set(e, ERR_REMOTE, _("task %s: branch %s is pushed, but the pull "
			             "request could not be opened: %s; paddock tries again by itself "
			             "(paddock serve or the dashboard), or now with paddock pr %s"),
			             t.id, t.branch, t.pr_error, t.id);
		}
	} else if (!strcmp(a->action, "push") && t.status == TASK_REVIEW) {
		done = 1;
	}
	task_row_free(&t);
	return done;
}

int decide_carry_out(const struct gate_ctx *g, const struct store_action *a, struct buf *out,
                     struct err *e)
{
	struct gate_ctx ga = *g;
	ga.actor = a->actor;
	struct err de = {{0}};
	struct buf lines = {0};
	int rc;
	settle(&ga, a->task, &lines);
	if (strcmp(a->action, "pick") && finished_already(&ga, a, &rc, &de)) {
		/* rc as the gate's call would have returned it */
	} else if (!strcmp(a->action, "approve")) {
		rc = gate_approve(&ga, a->task, a->notes, &lines, &de);
	} else if (!strcmp(a->action, "push")) {
		rc = gate_push(&ga, a->task, &lines, &de);
	} else if (!strcmp(a->action, "pick") && a->target) {
		rc = group_pick(&ga, a->target, a->task, a->notes, &lines, &de);
	} else {
		rc = err_kind_set(&de, ERR_INVALID, _("decision %lld: unknown action %s"), a->id,
		                  a->action);
	}
	/* done (0, or 1: approved, its pull request failed) or failed. */
	const char *state = rc < 0 ? "failed" : "done";
	int result = rc == 0 ? 0 : 1;
	int src = store_action_end(g->st, a->id, state, result, lines.data,
	                           rc != 0 && *de.msg ? de.msg : NULL, e);
	buf_printf(out, _("decision %lld (%s of task %s by %s): %s\n"), a->id, a->action,
	           a->task, a->actor, rc < 0 ? de.msg : rc > 0 ? de.msg : _("done"));
	buf_free(&lines);
	return src;
}

int decide_run_pending(const struct gate_ctx *g, const char *by, struct buf *out,
                       struct err *e)
{
	for (;;) {
		struct store_action a;
		int rc = store_action_take(g->st, by, &a, e);
		if (rc <= 0)
			return rc;
		rc = decide_carry_out(g, &a, out, e);
		store_action_free(&a);
		if (rc < 0)
			return -1;
	}
}

char *decide_owner_text(const char *by)
{
	const char *sp = by ? strchr(by, ' ') : NULL;
	const char *pid = sp ? sp + 1 : "?";
	if (by && !strncmp(by, "serve ", 6))
		return xasprintf(_("serve (pid %s)"), pid);
	if (by && !strncmp(by, "dashboard ", 10))
		return xasprintf(_("a dashboard (pid %s)"), pid);
	return xasprintf(_("paddock (pid %s)"), pid);
}

/* The task's progress as a watcher says it: pushing, pushed, the pull
 * request. */
static void watch_task(struct decide_watch *w, const struct task_row *t, struct buf *lines)
{
	if (!w->said_pushing && t->status == TASK_PUSHING) {
		w->said_pushing = 1;
		buf_printf(lines, _("pushing branch %s\n"), t->branch);
	}
	if (!w->looked) {
		w->looked = 1;
		snprintf(w->pushed0, sizeof w->pushed0, "%s", t->pushed ? t->pushed : "");
	}
	/* A push since the watch began (one made before is no news). */
	if (!w->said_pushed && t->pushed && t->head && !strcmp(t->pushed, t->head) &&
	    strcmp(t->pushed, w->pushed0)) {
		w->said_pushed = 1;
		buf_printf(lines, _("pushed %.12s to %s\n"), t->head, t->branch);
	}
	if (!w->said_pr && t->pr_url) {
		w->said_pr = 1;
		const char *p = strstr(t->pr_url, "/pull/");
		buf_printf(lines, _("pull request #%s opened: %s\n"), p ? p + 6 : "?", t->pr_url);
	} else if (!w->said_pr && t->pr_error && t->status == TASK_DONE) {
		w->said_pr = 1;
		buf_printf(lines, _("pull request failed: %s\n"), t->pr_error);
	}
}

void decide_watch_init(struct decide_watch *w, struct store *st, const char *task)
{
	memset(w, 0, sizeof *w);
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(st, task, &t, &e) == 0) {
		w->looked = 1;
		snprintf(w->pushed0, sizeof w->pushed0, "%s", t.pushed ? t.pushed : "");
		task_row_free(&t);
	}
}

int decide_watch_step(struct decide_watch *w, struct store *st, const char *owner,
                      struct buf *lines, struct store_action *a, struct err *e)
{
	if (store_action_get(st, w->id, a, e) < 0)
		return -1;
	int pending = !strcmp(a->state, "pending");
	if (pending && owner && w->said_owner != 2) {
		char *who = decide_owner_text(owner);
		buf_printf(lines, _("waiting for the scheduler (%s) to carry it out\n"), who);
		free(who);
		w->said_owner = 2;
	} else if (pending && !owner && w->said_owner != 1) {
		buf_printf(lines, _("no scheduler runs: waiting for one (paddock serve or the "
		                    "dashboard) to carry it out\n"));
		w->said_owner = 1;
	}
	if (!pending && !w->said_taken && a->by) {
		char *who = decide_owner_text(a->by);
		buf_printf(lines, _("carried out by %s\n"), who);
		free(who);
		w->said_taken = 1;
	}
	struct task_row t;
	struct err te = {{0}};
	if (store_task_get(st, a->task, &t, &te) == 0) {
		watch_task(w, &t, lines);
		task_row_free(&t);
	}
	if (!strcmp(a->state, "done") || !strcmp(a->state, "failed"))
		return 1;
	store_action_free(a);
	return 0;
}

int decide_record(const struct gate_ctx *g, const char *action, const char *task,
                  const char *target, const char *notes, struct decide_watch *w,
                  struct err *e)
{
	int pick = !strcmp(action, "pick");
	if (pick ? gate_action_waits(g, task, _("pick"), e) < 0
	         : decide_check(g, task, action, e) < 0)
		return -1;
	long long id;
	decide_watch_init(w, g->st, task);
	if (store_action_add(g->st, task, action, target, notes, g->actor, &id, e) < 0)
		return -1;
	w->id = id;
	return 0;
}
