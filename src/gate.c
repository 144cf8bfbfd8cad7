#include "autoconfig.h"
#include "gate.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "forge.h"
#include "fsx.h"
#include "mirror.h"
#include "i18n.h"
#include "task.h"
#include "webhook.h"

const char *gate_actor(void)
{
	static char name[256];
	if (name[0])
		return name;
	struct passwd *pw = getpwuid(getuid());
	const char *u = getenv("USER");
	/* sudo leaves the person's name in SUDO_USER. */
	const char *s = getenv("SUDO_USER");
	snprintf(name, sizeof name, "%s", s && *s ? s : u && *u ? u : pw ? pw->pw_name : "?");
	return name;
}

static char *push_lock_path(const char *data_dir, const char *id)
{
	return xasprintf("%s/tasks/%s/push.lock", data_dir, id);
}

int gate_push_lock(const char *data_dir, const char *id, struct err *e)
{
	char *dir = xasprintf("%s/tasks/%s", data_dir, id);
	char *path = push_lock_path(data_dir, id);
	int fd = -1;
	if (fsx_mkdir_p(dir, 0700, e) == 0) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			err_errno(e, _("cannot open %s"), path);
		} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			err_set(e, _("a push of task %s is already in progress"), id);
			close(fd);
			fd = -1;
		}
	}
	free(dir);
	free(path);
	return fd;
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

/* A string member of a JSON object, "" when absent. */
static const char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
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
		err_set(e, _("cannot %s task %s: it is %s; %s"), action, t->id,
		        task_status_name(t->status), what);
		task_row_free(t);
		return -1;
	}
	if (t->pending) {
		err_set(e, _("cannot %s task %s: changes were requested and the agent is about "
		             "to run round %d"), action, t->id, t->round + 1);
		task_row_free(t);
		return -1;
	}
	if (!t->head) {
		err_set(e, _("cannot %s task %s: it has no work"), action, t->id);
		task_row_free(t);
		return -1;
	}
	return 0;
}

json_t *gate_summary(struct store *st, const struct task_row *t, struct err *e)
{
	struct task_round *r;
	size_t n;
	if (store_rounds(st, t->id, &r, &n, e) < 0)
		return NULL;
	json_t *g = NULL;
	for (size_t i = n; i-- > 0 && !g;)
		if (r[i].gate)
			g = json_loads(r[i].gate, 0, NULL);
	task_rounds_free(r, n);
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
	json_array_foreach(json_object_get(g, "findings"), i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		int over = 0;
		for (size_t k = 0; k < nd && name; k++) {
			if (d[k].round != round || strcmp(d[k].action, "override") || !d[k].notes)
				continue;
			size_t len = strcspn(d[k].notes, "\n");
			over |= strlen(name) == len && !strncmp(d[k].notes, name, len);
		}
		json_object_set_new(f, "overridden", json_boolean(over));
	}
	task_decisions_free(d, nd);
	return g;
}

void gate_blocking(json_t *summary, struct buf *out)
{
	json_t *f;
	size_t i;
	json_array_foreach(json_object_get(summary, "findings"), i, f) {
		if (strcmp(jstr(f, "action"), "block") ||
		    json_is_true(json_object_get(f, "overridden")))
			continue;
		if (out->len)
			buf_adds(out, ", ");
		buf_adds(out, (*jstr(f, "name") ? jstr(f, "name") : "?"));
	}
}

/* Refuses a push while a block finding stands. */
static int check_findings(const struct gate_ctx *g, const struct task_row *t,
                          const char *action, struct err *e)
{
	json_t *s = gate_summary(g->st, t, e);
	struct buf b = {0};
	if (s)
		gate_blocking(s, &b);
	json_decref(s);
	if (b.len) {
		err_set(e, _("cannot %s task %s: policy findings block it: %s. Look at them with "
		             "'paddock show %s'; override one with 'paddock override %s NAME' if it "
		             "is fine"), action, t->id, b.data, t->id, t->id);
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
		return err_set(e, _("cannot push task %s: repo %s is no longer in the "
		                    "configuration"), t->id, t->repo);
	if (forge_branch_allowed(r, t->branch, e) < 0)
		return -1;
	/* The lock says a push is alive: the scheduler puts a task whose
	 * pusher died back at review (gate_push_lock_free). */
	int lock = gate_push_lock(g->data_dir, t->id, e);
	if (lock < 0)
		return -1;
	push_intent_write(lock, action, g->actor);
	if (store_task_transition(g->st, t->id, TASK_PUSHING, NULL, e) < 0) {
		close(lock);
		return -1;
	}
	struct err pe = {{0}};
	if (forge_push(g->data_dir, r, t->branch, t->head, &pe) < 0) {
		struct err ignored;
		store_task_transition(g->st, t->id, TASK_REVIEW, NULL, &ignored);
		close(lock);
		return err_set(e, _("push of task %s failed: %s (the task is still at review)"),
		               t->id, pe.msg);
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

static char *pr_body(const struct task_row *t, json_t *summary)
{
	struct buf b = {0};
	const char *s = json_string_value(json_object_get(summary, "summary"));
	buf_printf(&b, "%s\n\n", s && *s ? s : t->summary ? t->summary : "");
	json_t *after = json_object_get(json_object_get(summary, "tests"), "after");
	if (json_is_true(json_object_get(after, "ran")))
		buf_printf(&b, "Tests: %s.\n", json_is_true(json_object_get(after, "passed")) ?
		           "passed" : "failed");
	buf_printf(&b, "\nOpened by paddock for task `%s` (round %d).\n", t->id, t->round);
	return buf_detach(&b);
}

static int approve_finish(const struct gate_ctx *g, const struct task_row *tr,
                          const char *notes, const char *actor, struct buf *out,
                          struct err *e);

int gate_approve(const struct gate_ctx *g, const char *id, const char *notes,
                 struct buf *out, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("approve"), &t, e) < 0)
		return -1;
	int rc = -1, lock = -1;
	if (check_findings(g, &t, _("approve"), e) < 0)
		goto out;
	if (push_task(g, &t, "approve", out, &lock, e) < 0)
		goto out;
	rc = approve_finish(g, &t, notes, g->actor, out, e);
out:
	if (lock >= 0)
		close(lock);
	task_row_free(&t);
	return rc;
}

/* After the push of an approve: the pull request (when configured and
 * not open yet), the decision, done. */
static int approve_finish(const struct gate_ctx *g, const struct task_row *tr,
                          const char *notes, const char *actor, struct buf *out, struct err *e)
{
	const struct task_row t = *tr;
	const struct repo_conf *r = config_find_repo(g->cfg, t.repo);
	if (r && r->pull_request && !t.pr_url) {
		struct err pe = {{0}};
		json_t *s = gate_summary(g->st, &t, &pe);
		char *title = pr_title(t.text);
		char *body = pr_body(&t, s);
		struct forge_pull_request pr = { .branch = t.branch, .title = title, .body = body };
		char *url = NULL;
		if (forge_open_pull_request(r, &pr, &url, &pe) == 0) {
			struct err ignored;
			store_task_set(g->st, t.id, "pr_url", url, &ignored);
			buf_printf(out, _("opened pull request %s\n"), url);
		} else {
			/* The push stands: a reviewer can open it by hand. */
			buf_printf(out, _("the branch is pushed, but the pull request failed: %s\n"),
			           pe.msg);
		}
		free(url);
		free(title);
		free(body);
		json_decref(s);
	}
	if (store_decision_add(g->st, t.id, "approve", notes, actor, e) < 0 ||
	    store_task_transition(g->st, t.id, TASK_DONE, NULL, e) < 0)
		return -1;
	/* The "done" webhook: the scheduler owner sends it. */
	struct err we = { { 0 } };
	if (webhook_enqueue(g->cfg, g->st, t.id, TASK_DONE, &we) < 0)
		buf_printf(out, _("the webhook could not be queued: %s\n"), we.msg);
	return 0;
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
			     store_task_transition(g->st, t.id, TASK_REVIEW, NULL, e) == 0 ? 0 : -1;
		}
	} else {
		char *why = found < 0
			? xasprintf(_("pushing: the push did not complete, and whether it arrived "
			              "could not be checked (%s); push again"),
			            r ? ne.msg : _("the repo is no longer in the configuration"))
			: xasprintf(_("pushing: the push did not complete (the remote branch %s is "
			              "%s); push or approve again"), t.branch,
			            found == 1 ? _("somewhere else") : _("not there"));
		rc = store_task_transition(g->st, t.id, TASK_REVIEW, why, e);
		if (rc == 0)
			buf_printf(out, _("task %s: %s\n"), t.id, why);
		free(why);
	}
out:
	close(lock);
	task_row_free(&t);
	return rc;
}

int gate_push(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("push"), &t, e) < 0)
		return -1;
	int rc = -1, lock = -1;
	if (check_findings(g, &t, _("push"), e) == 0 &&
	    push_task(g, &t, "push", out, &lock, e) == 0 &&
	    store_decision_add(g->st, t.id, "push", NULL, g->actor, e) == 0 &&
	    store_task_transition(g->st, t.id, TASK_REVIEW, NULL, e) == 0)
		rc = 0;
	if (lock >= 0)
		close(lock);
	task_row_free(&t);
	return rc;
}

int gate_reject(const struct gate_ctx *g, const char *id, const char *notes, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("reject"), &t, e) < 0)
		return -1;
	int rc = store_decision_add(g->st, t.id, "reject", notes, g->actor, e) == 0 &&
	         store_task_transition(g->st, t.id, TASK_REJECTED, _("rejected at review"), e) == 0
	         ? 0 : -1;
	task_row_free(&t);
	return rc;
}

int gate_follow_up(const struct gate_ctx *g, const char *id, const char *notes,
                   char id_out[TASK_ID_LEN + 1], struct err *e)
{
	if (!notes || strspn(notes, " \t\r\n") == strlen(notes))
		return err_set(e, _("the notes are empty; say what the agent should do next"));
	if (store_task_follow_up(g->st, id, notes, id_out, e) < 0)
		return -1;
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
		err_set(e, _("task %s has no earlier notes to send again; give them with --notes"),
		        id);
	return notes;
}

int gate_cancel(const struct gate_ctx *g, const char *id, struct err *e)
{
	struct task_row t;
	if (store_task_get(g->st, id, &t, e) < 0)
		return -1;
	recover_dead_push(g, &t);
	int rc = store_task_cancel(g->st, t.id, g->actor, e);
	task_row_free(&t);
	return rc;
}

int gate_request_changes(const struct gate_ctx *g, const char *id, const char *notes,
                         struct err *e)
{
	if (!notes || strspn(notes, " \t\r\n") == strlen(notes))
		return err_set(e, _("the notes are empty; say what the agent should change"));
	struct task_row t;
	if (at_review(g, id, _("request changes on"), &t, e) < 0)
		return -1;
	task_row_free(&t);
	return store_task_request_changes(g->st, id, notes, g->actor, e);
}

int gate_override(const struct gate_ctx *g, const char *id, const char *finding,
                  const char *notes, struct err *e)
{
	struct task_row t;
	if (at_review(g, id, _("override a finding of"), &t, e) < 0)
		return -1;
	int rc = -1;
	json_t *s = gate_summary(g->st, &t, e);
	json_t *f, *hit = NULL;
	size_t i;
	json_array_foreach(json_object_get(s, "findings"), i, f)
		if (!strcmp(jstr(f, "name"), finding))
			hit = f;
	if (!hit) {
		struct buf names = {0};
		json_array_foreach(json_object_get(s, "findings"), i, f) {
			buf_adds(&names, names.len ? ", " : "");
			buf_adds(&names, (*jstr(f, "name") ? jstr(f, "name") : "?"));
		}
		err_set(e, _("task %s has no finding named '%s' in round %d%s%s"), t.id, finding,
		        t.round, names.len ? _("; its findings are: ") : _("; it has none"),
		        names.len ? names.data : "");
		buf_free(&names);
	} else if (strcmp(jstr(hit, "action"), "block")) {
		err_set(e, _("finding '%s' only warns; it does not block anything"), finding);
	} else if (json_is_true(json_object_get(hit, "overridden"))) {
		err_set(e, _("finding '%s' is already overridden"), finding);
	} else {
		char *text = xasprintf("%s%s%s", finding, notes ? "\n" : "", notes ? notes : "");
		rc = store_decision_add(g->st, t.id, "override", text, g->actor, e);
		free(text);
	}
	json_decref(s);
	task_row_free(&t);
	return rc;
}

const char *gate_mismatch(json_t *summary)
{
	json_t *tests = json_object_get(summary, "tests");
	if (!json_is_true(json_object_get(tests, "mismatch")))
		return NULL;
	json_t *after = json_object_get(tests, "after");
	/* Short lines: the gate shows them whole at 80 columns. */
	if (json_is_true(json_object_get(after, "passed")))
		return _("the tests failed in the agent's sandbox\n"
		         "but pass on a clean checkout of its commit");
	return _("the tests passed in the agent's sandbox\n"
	         "but FAIL on a clean checkout of its commit:\n"
	         "something the agent left outside the repository\n"
	         "made them pass");
}
