#include "autoconfig.h"
#include "group.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "diffcache.h"
#include "fsx.h"
#include "i18n.h"
#include "paths.h"
#include "task.h"

/* ---- reading a group ---- */

struct change_sum {
	size_t files, ins, del;
};

static int change_add(void *arg, const struct diff_file *f, const char *patch, size_t len,
                      struct err *e)
{
	struct change_sum *c = arg;
	(void)patch, (void)len, (void)e;
	c->files++;
	c->ins += f->ins;
	c->del += f->del;
	return 0;
}

/* The change base..head from the mirror: counted there rather than read
 * from the gate's diffstat text, whose lines hold the paths the agent
 * chose. */
static void member_change(const char *data_dir, struct group_member *m)
{
	const struct task_row *t = &m->t;
	if (!data_dir || !t->base || !t->head)
		return;
	char *mirror = paths_mirror(data_dir, t->repo);
	char *diffs = paths_task_diffs(data_dir, t->id);
	struct change_sum c = {0};
	struct err e = {{0}};
	/* The gate kept this range's diff (diffcache.h). */
	int rc = diffcache_each(diffs, mirror, t->base, t->head, change_add, &c, &e);
	free(diffs);
	if (rc == 0) {
		m->has_change = 1;
		m->files = c.files;
		m->ins = c.ins;
		m->del = c.del;
	}
	free(mirror);
}

/* From its first start to the step it is at now (review, an end), or to
 * now while a process works on it. */
double group_member_seconds(const struct task_row *t, double now)
{
	double start = -1, last = 0;
	for (size_t i = 0; i < t->nsteps; i++) {
		if (start < 0 && t->steps[i].status == TASK_PREPARING)
			start = t->steps[i].time;
		last = t->steps[i].time;
	}
	if (start < 0)
		return -1;
	double end = task_status_is_active(t->status) ? now : last;
	return end > start ? end - start : 0;
}

static void member_gate(struct store *st, struct group_member *m)
{
	struct gate_summary s;
	struct err e = {{0}};
	if (gate_summary_load(st, &m->t, &s, &e) == 1) {
		m->has_gate = 1;
		const struct gate_tests *a = &s.tests.after;
		m->tests = !a->ran ? GROUP_TESTS_NOT_RUN : a->passed ? GROUP_TESTS_PASSED
		                                                    : GROUP_TESTS_FAILED;
		for (size_t i = 0; i < s.nfindings; i++) {
			if (s.findings[i].action == POLICY_BLOCK && !s.findings[i].overridden)
				m->blocks++;
			else if (s.findings[i].action == POLICY_WARN)
				m->warns++;
		}
	}
	gate_summary_free(&s);
}

int group_load(struct store *st, const char *data_dir, const char *id, double now,
               struct group_info *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (store_group_get(st, id, &out->g, e) < 0)
		return -1;
	struct task_query q = { .group = out->g.id };
	struct task_row *rows = NULL;
	size_t n = 0;
	if (store_task_query(st, &q, &rows, &n, e) < 0) {
		task_group_free(&out->g);
		return -1;
	}
	out->m = xcalloc(n ? n : 1, sizeof *out->m);
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		struct group_member *m = &out->m[i];
		m->t = rows[i];
		m->position = (int)i + 1;
		m->picked = out->g.chosen && !strcmp(out->g.chosen, m->t.id);
		m->seconds = group_member_seconds(&m->t, now);
		member_gate(st, m);
		member_change(data_dir, m);
	}
	free(rows);
	return 0;
}

void group_info_free(struct group_info *gi)
{
	if (!gi)
		return;
	for (size_t i = 0; i < gi->n; i++)
		task_row_free(&gi->m[i].t);
	free(gi->m);
	task_group_free(&gi->g);
	memset(gi, 0, sizeof *gi);
}

const struct group_member *group_member_find(const struct group_info *gi, const char *id)
{
	const struct group_member *found = NULL;
	size_t len = strlen(id);
	if (!len)
		return NULL;
	for (size_t i = 0; i < gi->n; i++)
		if (!strncmp(gi->m[i].t.id, id, len)) {
			if (found)
				return NULL;   /* ambiguous */
			found = &gi->m[i];
		}
	return found;
}

const char *group_tests_word(enum group_tests t)
{
	switch (t) {
	case GROUP_TESTS_PASSED: return _("passed");
	case GROUP_TESTS_FAILED: return _("failed");
	default: return _("not run");
	}
}

static const char *tests_name(enum group_tests t)
{
	return t == GROUP_TESTS_PASSED ? "passed" : t == GROUP_TESTS_FAILED ? "failed"
	                                                                 : "not_run";
}

/* What needs a person first: review, then work in progress, then the
 * ends. */
static const enum task_status brief_order[] = {
	TASK_REVIEW, TASK_PUSHING, TASK_TESTING, TASK_RUNNING, TASK_PREPARING, TASK_QUEUED,
	TASK_DONE, TASK_FAILED, TASK_LOST, TASK_REJECTED, TASK_CANCELLED,
};

void group_statuses(const struct group_info *gi, int labels, struct buf *out)
{
	size_t count[TASK_NSTATUS] = {0};
	for (size_t i = 0; i < gi->n; i++)
		count[gi->m[i].t.status]++;
	int first = 1;
	for (size_t k = 0; k < sizeof brief_order / sizeof brief_order[0]; k++) {
		enum task_status s = brief_order[k];
		if (!count[s])
			continue;
		buf_printf(out, "%s%zu %s", first ? "" : ", ", count[s],
		           labels ? task_status_label(s) : task_status_name(s));
		first = 0;
	}
}

enum task_status group_status(const struct group_info *gi)
{
	for (size_t i = 0; i < gi->n; i++)
		if (gi->m[i].picked)
			return gi->m[i].t.status;
	for (size_t k = 0; k < sizeof brief_order / sizeof brief_order[0]; k++)
		for (size_t i = 0; i < gi->n; i++)
			if (gi->m[i].t.status == brief_order[k])
				return brief_order[k];
	return TASK_QUEUED;
}

static json_t *nullable(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *member_json(const struct group_member *m)
{
	const struct task_row *t = &m->t;
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(t->id));
	json_object_set_new(o, "position", json_integer(m->position));
	json_object_set_new(o, "agent", json_string(t->agent));
	json_object_set_new(o, "status", json_string(task_status_name(t->status)));
	json_object_set_new(o, "round", json_integer(t->round));
	json_object_set_new(o, "head", nullable(t->head));
	json_object_set_new(o, "tests", m->has_gate ? json_string(tests_name(m->tests))
	                                            : json_null());
	json_object_set_new(o, "change", m->has_change ?
	                    json_pack("{s:I,s:I,s:I}", "files", (json_int_t)m->files,
	                              "insertions", (json_int_t)m->ins, "deletions",
	                              (json_int_t)m->del) : json_null());
	json_object_set_new(o, "cost", json_real(t->usage.cost));
	json_object_set_new(o, "priced", json_boolean(t->usage.priced));
	json_object_set_new(o, "requests", json_integer((json_int_t)t->usage.requests));
	json_object_set_new(o, "seconds", m->seconds >= 0 ? json_real(m->seconds) : json_null());
	json_object_set_new(o, "findings", json_pack("{s:I,s:I}", "block", (json_int_t)m->blocks,
	                                             "warn", (json_int_t)m->warns));
	json_object_set_new(o, "picked", json_boolean(m->picked));
	json_object_set_new(o, "pending", nullable(t->pending));
	json_object_set_new(o, "error", nullable(t->error));
	json_object_set_new(o, "reason", nullable(t->reason));
	return o;
}

json_t *group_json(const struct group_info *gi)
{
	json_t *j = json_object();
	json_object_set_new(j, "id", json_string(gi->g.id));
	json_object_set_new(j, "text", json_string(gi->g.text ? gi->g.text : ""));
	json_object_set_new(j, "created", json_real(gi->g.created));
	json_object_set_new(j, "size", json_integer((json_int_t)gi->n));
	json_object_set_new(j, "picked", nullable(gi->g.chosen));
	size_t count[TASK_NSTATUS] = {0};
	for (size_t i = 0; i < gi->n; i++)
		count[gi->m[i].t.status]++;
	json_t *sts = json_object();
	for (size_t k = 0; k < sizeof brief_order / sizeof brief_order[0]; k++)
		if (count[brief_order[k]])
			json_object_set_new(sts, task_status_name(brief_order[k]),
			                    json_integer((json_int_t)count[brief_order[k]]));
	json_object_set_new(j, "statuses", sts);
	json_t *a = json_array();
	for (size_t i = 0; i < gi->n; i++)
		json_array_append_new(a, member_json(&gi->m[i]));
	json_object_set_new(j, "members", a);
	return j;
}

int group_position(struct store *st, const struct task_row *t, int *pos, int *n,
                   struct err *e)
{
	*pos = *n = 0;
	if (!t->group_id)
		return 0;
	struct task_query q = { .group = t->group_id, .no_steps = 1 };
	size_t before = 0, all = 0;
	if (store_task_count(st, &q, &all, e) < 0)
		return -1;
	q.before = t->seq;
	if (store_task_count(st, &q, &before, e) < 0)
		return -1;
	*pos = (int)before + 1;
	*n = (int)all;
	return 0;
}

/* ---- the pick ---- */

/* Held while a pick of the group runs: two reviewers picking two members
 * at once would push both. */
static int pick_lock(const char *data_dir, const char *id, struct err *e)
{
	char *dir = paths_groups_dir(data_dir);
	char *path = paths_group_lock(data_dir, id);
	int fd = fsx_lock_try(dir, path, e);
	if (fd == -2)
		err_kind_set(e, ERR_CONFLICT, _("a pick in group %s is already in progress; look "
		                                "again with 'paddock group show %s' when it is done"),
		             id, id);
	free(dir);
	free(path);
	return fd < 0 ? -1 : fd;
}

/* 1 when task t was approved (done, its last decision an approve). */
static int approved(struct store *st, const struct task_row *t)
{
	if (t->status != TASK_DONE)
		return 0;
	struct task_decision *d;
	size_t n;
	struct err e = {{0}};
	if (store_decisions(st, t->id, &d, &n, &e) < 0)
		return 0;
	int yes = 0;
	for (size_t i = n; i-- > 0;) {
		if (!strcmp(d[i].action, "approve")) {
			yes = 1;
			break;
		}
		/* A refusal changed nothing. */
		if (strcmp(d[i].action, "push") && strcmp(d[i].action, "refused"))
			break;
	}
	task_decisions_free(d, n);
	return yes;
}

/* Ends the member that was not picked, when it has not ended: rejected
 * at review (with nothing pending), else cancelled.  What happened goes
 * to out; a member that cannot be ended (it is being pushed) is said
 * there too, and is no failure of the pick. */
static void end_other(const struct gate_ctx *g, const char *gid, const char *picked,
                      const struct task_row *t, struct buf *out)
{
	struct err e = {{0}};
	if (task_status_is_terminal(t->status))
		return;
	if (t->status == TASK_REVIEW && !t->pending) {
		char *notes = xasprintf(_("group %s: task %s was picked"), gid, picked);
		int rc = gate_reject(g, t->id, notes, &e);
		free(notes);
		if (rc == 0) {
			buf_printf(out, _("rejected %s (%s); its sandbox is torn down\n"), t->id,
			           t->agent);
			return;
		}
	} else {
		int rc = gate_cancel(g, t->id, &e);
		if (rc == 1) {
			buf_printf(out, _("cancelled %s (%s)\n"), t->id, t->agent);
			return;
		}
		if (rc == 2) {
			buf_printf(out, _("cancel requested for %s (%s): it stops in a moment\n"),
			           t->id, t->agent);
			return;
		}
	}
	buf_printf(out, _("could not end %s (%s): %s\n"), t->id, t->agent, e.msg);
}

/* Checks the group and the member: *gi loaded, *m the member. */
static int pick_check(const struct gate_ctx *g, const char *id, const char *task,
                      struct group_info *gi, const struct group_member **m, struct err *e)
{
	if (group_load(g->st, NULL, id, 0, gi, e) < 0)
		return -1;
	if (gi->g.chosen) {
		err_kind_set(e, ERR_CONFLICT, _("group %s has a pick already: task %s; a group "
		                                "is picked once"), gi->g.id, gi->g.chosen);
		return -1;
	}
	*m = group_member_find(gi, task);
	if (!*m) {
		struct buf ids = {0};
		for (size_t i = 0; i < gi->n; i++)
			buf_printf(&ids, "%s%s", i ? ", " : "", gi->m[i].t.id);
		err_kind_set(e, ERR_INVALID, _("task %s is not a member of group %s; its members "
		                               "are %s"), task, gi->g.id, ids.data ? ids.data : "-");
		buf_free(&ids);
		return -1;
	}
	return 0;
}

int group_pick(const struct gate_ctx *g, const char *id, const char *task, const char *notes,
               struct buf *out, struct err *e)
{
	struct group_info gi;
	const struct group_member *m;
	if (pick_check(g, id, task, &gi, &m, e) < 0) {
		group_info_free(&gi);
		return -1;
	}
	if (gate_may_decide(g, &m->t, "pick", e) < 0) {
		group_info_free(&gi);
		return -1;
	}
	char gid[TASK_ID_LEN + 1], tid[TASK_ID_LEN + 1];
	memcpy(gid, gi.g.id, sizeof gid);
	memcpy(tid, m->t.id, sizeof tid);
	int rc = -1;
	int lock = pick_lock(g->data_dir, gid, e);
	if (lock < 0)
		goto out;
	/* Read again under the lock: a pick that held it is done now. */
	group_info_free(&gi);
	if (pick_check(g, gid, tid, &gi, &m, e) < 0)
		goto out;
	int arc = approved(g->st, &m->t) ? 0 : gate_approve(g, tid, notes, out, e);
	if (arc < 0)
		goto out;
	/* Approved, but its pull request did not open: on the task, retried. */
	if (arc > 0)
		buf_printf(out, "%s\n", e->msg);
	if (store_group_choose(g->st, gid, tid, e) < 0)
		goto out;
	buf_printf(out, _("picked %s (%s) in group %s\n"), tid, m->t.agent, gid);
	for (size_t i = 0; i < gi.n; i++) {
		if (&gi.m[i] == m)
			continue;
		/* Its state now, not when the pick began. */
		struct task_row t;
		struct err ge = {{0}};
		if (store_task_get(g->st, gi.m[i].t.id, &t, &ge) < 0) {
			buf_printf(out, "%s\n", ge.msg);
			continue;
		}
		end_other(g, gid, tid, &t, out);
		task_row_free(&t);
	}
	rc = 0;
out:
	if (lock >= 0)
		close(lock);
	group_info_free(&gi);
	return rc;
}
