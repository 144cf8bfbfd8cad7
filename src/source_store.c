/* source_store: the dashboard's source on the local store (source.h): the
 * store, the task's log file in the data directory, the mirror's diffs
 * (through the kept diffs, diffcache.h) and gate.h's decisions. */
#include "autoconfig.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "decide.h"
#include "diffcache.h"
#include "ghsync.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "scheduler.h"
#include "source.h"

struct source_store {
	struct source s;
	struct store *st;          /* borrowed, or own (owned: opened here) */
	int owned;
};

static struct source_store *of(struct source *s)
{
	return (struct source_store *)s;
}

/* The store, opened on first use where none was given (a dashboard job). */
static struct store *st_of(struct source *s, struct err *e)
{
	struct source_store *ss = of(s);
	if (!ss->st) {
		char *db = paths_db(s->data_dir);
		int rc = store_open(&ss->st, db, e);
		free(db);
		if (rc < 0)
			return NULL;
		ss->owned = 1;
	}
	return ss->st;
}

#define ST (of(s)->st)

static void ss_close(struct source *s)
{
	struct source_store *ss = of(s);
	if (ss->owned)
		store_close(ss->st);
	free(ss);
}

static uint64_t ss_data_version(struct source *s)
{
	return ST ? store_data_version(ST) : 0;
}

static int ss_task_get(struct source *s, const char *id, struct task_row *t, struct err *e)
{
	struct store *st = st_of(s, e);
	return st ? store_task_get(st, id, t, e) : -1;
}

static int ss_task_query(struct source *s, const struct task_query *q, struct task_row **out,
                         size_t *n, struct err *e)
{
	return store_task_query(ST, q, out, n, e);
}

static int ss_task_count(struct source *s, const struct task_query *q, size_t *n,
                         struct err *e)
{
	return store_task_count(ST, q, n, e);
}

static int ss_task_order(struct source *s, const struct task_query *q, struct task_key **out,
                         size_t *n, struct err *e)
{
	return store_task_order(ST, q, out, n, e);
}

static int ss_task_rows(struct source *s, const long long *seqs, size_t n, int no_steps,
                        struct task_row **out, size_t *nout, struct err *e)
{
	return store_task_rows(ST, seqs, n, no_steps, out, nout, e);
}

static int ss_task_glance(struct source *s, long long seq, struct task_glance *g,
                          struct err *e)
{
	return store_task_glance(ST, seq, g, e);
}

static int ss_task_counts(struct source *s, size_t counts[TASK_NSTATUS], struct err *e)
{
	return store_task_counts(ST, counts, e);
}

static int ss_github_link(struct source *s, const char *id, struct gh_link *out,
                          struct err *e)
{
	return store_github_link(ST, id, out, e);
}

static char *ss_pr_words(struct source *s, const char *id)
{
	return ghsync_pr_words(ST, id);
}

static int ss_gates_count(struct source *s, struct reminder_gates *g, struct err *e)
{
	return reminder_count(ST, g, e);
}

static int ss_pauses_active(struct source *s, double now, struct pause_row **out, size_t *n,
                            struct err *e)
{
	return store_pauses_active(ST, now, out, n, e);
}

static int ss_history(struct source *s, const char *id, struct task_history *h,
                      struct err *e)
{
	return store_history(ST, id, h, e);
}

static int ss_decisions(struct source *s, const char *id, struct task_decision **out,
                        size_t *n, struct err *e)
{
	return store_decisions(ST, id, out, n, e);
}

static int ss_rounds(struct source *s, const char *id, struct task_round **out, size_t *n,
                     struct err *e)
{
	return store_rounds(ST, id, out, n, e);
}

static int ss_egress_list(struct source *s, const char *id, struct egress_row **out,
                          size_t *n, struct err *e)
{
	return store_egress_list(ST, id, out, n, e);
}

static int ss_egress_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	return store_egress_count(ST, id, n, e);
}

static int ss_gate_summary(struct source *s, const struct task_row *t,
                           struct gate_summary *out, struct err *e)
{
	return gate_summary_load(ST, t, out, e);
}

static char *ss_last_notes(struct source *s, const char *id, struct err *e)
{
	return gate_last_notes(ST, id, e);
}

static int ss_group_load(struct source *s, const char *id, double now, int with_diffs,
                         struct group_info *out, struct err *e)
{
	return group_load(ST, with_diffs ? s->data_dir : NULL, id, now, out, e);
}

static int ss_group_position(struct source *s, const struct task_row *t, int *pos, int *n,
                             struct err *e)
{
	return group_position(ST, t, pos, n, e);
}

static int ss_draft_list(struct source *s, const char *id, struct review_comment **out,
                         size_t *n, struct err *e)
{
	return store_draft_list(ST, id, out, n, e);
}

static int ss_draft_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	return store_draft_count(ST, id, n, e);
}

static int ss_draft_add(struct source *s, const char *id, const struct review_comment *c,
                        struct err *e)
{
	return store_draft_add(ST, id, c, e);
}

static int ss_draft_discard(struct source *s, const char *id, long long upto, struct err *e)
{
	return store_draft_discard(ST, id, upto, e);
}

static char *ss_log_path(struct source *s, const char *id, struct err *e)
{
	(void)e;
	return paths_task_log(s->data_dir, id);
}

static int ss_diff_each(struct source *s, const struct task_row *t, const char *which,
                        const char *from, const char *to, diff_file_fn fn, void *arg,
                        struct err *e)
{
	(void)which;
	char *mirror = mirror_path(s->data_dir, t->repo);
	char *diffs = paths_task_diffs(s->data_dir, t->id);
	int rc = diffcache_each(diffs, mirror, from, to, fn, arg, e);
	free(diffs);
	free(mirror);
	return rc;
}

/* The decisions' context: the user's, on this store. */
static struct gate_ctx ctx(struct source *s, struct store *st)
{
	return gate_ctx_of(s->cfg, s->data_dir, st, NULL);
}

static int ss_reject(struct source *s, const char *id, const char *notes, struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_may_decide_id(&g, id, "reject", e) < 0 ? -1 : gate_reject(&g, id, notes, e);
}

static int ss_override(struct source *s, const char *id, const char *finding,
                       const char *notes, struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_may_decide_id(&g, id, "override", e) < 0 ? -1 :
	       gate_override(&g, id, finding, notes, e);
}

static int ss_request_changes(struct source *s, const char *id, const char *notes,
                              size_t *sent, struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_may_decide_id(&g, id, "request-changes", e) < 0 ? -1 :
	       gate_request_changes_draft(&g, id, notes, sent, e);
}

static int ss_follow_up(struct source *s, const char *id, const char *notes,
                        char id_out[TASK_ID_LEN + 1], struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_follow_up(&g, id, notes, id_out, e);
}

static int ss_cancel(struct source *s, const char *id, struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_cancel(&g, id, e);
}

static int ss_confirm(struct source *s, const char *id, struct err *e)
{
	struct gate_ctx g = ctx(s, ST);
	return gate_may_decide_id(&g, id, "confirm", e) < 0 ? -1 :
	       store_task_confirm(ST, id, gate_actor(), e);
}

/* The pid in a scheduler owner's "ROLE PID" (scheduler_owner). */
static long owner_pid(const char *owner)
{
	const char *sp = strchr(owner, ' ');
	return sp ? strtol(sp + 1, NULL, 10) : 0;
}

/* When another process runs the scheduler (or none does and this one
 * lacks the credentials), the approve or push is recorded for it and
 * waited for (decide.h): what happened goes to out, as the gate's call
 * would put it.  -2 when this process carries it out itself: it, or the
 * dashboard whose job it is (its parent), hosts the scheduler, or none
 * runs and the credentials are here.  Called off the dashboard's loop. */
static int recorded(const struct gate_ctx *g, const char *verb, const char *id,
                    const char *group, struct buf *out, struct err *e)
{
	char owner[64];
	int held = scheduler_owner(g->data_dir, owner, sizeof owner);
	if (held ? owner_pid(owner) == (long)getppid() || owner_pid(owner) == (long)getpid()
	         : decide_local(g, verb, id, NULL))
		return -2;
	struct decide_watch w;
	if (decide_record(g, verb, id, group, NULL, &w, e) < 0)
		return -1;
	for (;;) {
		struct store_action a;
		struct buf lines = {0};
		held = scheduler_owner(g->data_dir, owner, sizeof owner);
		int ended = decide_watch_step(&w, g->st, held ? owner : NULL, &lines, &a, e);
		buf_free(&lines);
		if (ended < 0)
			return -1;
		if (ended) {
			char *who = decide_owner_text(a.by);
			buf_printf(out, _("carried out by %s\n"), who);
			free(who);
			buf_adds(out, a.outcome ? a.outcome : "");
			int rc = !strcmp(a.state, "failed") ? -1 : a.result;
			if (rc)
				err_set(e, "%s", a.error ? a.error : _("the decision failed"));
			store_action_free(&a);
			return rc;
		}
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
}

static int ss_approve(struct source *s, const char *verb, const char *id, struct buf *out,
                      struct err *e)
{
	struct store *st = st_of(s, e);
	if (!st)
		return -1;
	struct gate_ctx g = ctx(s, st);
	if (!strcmp(verb, "pr"))
		return gate_pr_retry(&g, id, out, e);
	int approve = !strcmp(verb, "approve");
	if (gate_may_decide_id(&g, id, approve ? "approve" : "push", e) < 0)
		return -1;
	int rc = recorded(&g, verb, id, NULL, out, e);
	if (rc != -2)
		return rc;
	return approve ? gate_approve(&g, id, NULL, out, e) : gate_push(&g, id, out, e);
}

static int ss_pick(struct source *s, const char *group, const char *task, struct buf *out,
                   struct err *e)
{
	struct store *st = st_of(s, e);
	if (!st)
		return -1;
	struct gate_ctx g = ctx(s, st);
	/* The pick's own checks (the group, reviewers, four-eyes) first:
	 * they are group_pick's, which refuses before it acts. */
	if (gate_may_decide_id(&g, task, "pick", e) < 0)
		return -1;
	int rc = recorded(&g, "pick", task, group, out, e);
	if (rc != -2)
		return rc;
	return group_pick(&g, group, task, NULL, out, e);
}

static int ss_submit(struct source *s, const struct submit_req *rq, struct submit_result *out,
                     struct err *e)
{
	return submit_tasks(ST, s->cfg, rq, out, e);
}

static const struct source_ops store_ops = {
	.name = "store",
	.close = ss_close,
	.data_version = ss_data_version,
	.task_get = ss_task_get,
	.task_query = ss_task_query,
	.task_count = ss_task_count,
	.task_order = ss_task_order,
	.task_rows = ss_task_rows,
	.task_glance = ss_task_glance,
	.task_counts = ss_task_counts,
	.github_link = ss_github_link,
	.pr_words = ss_pr_words,
	.pauses_active = ss_pauses_active,
	.gates_count = ss_gates_count,
	.history = ss_history,
	.decisions = ss_decisions,
	.rounds = ss_rounds,
	.egress_list = ss_egress_list,
	.egress_count = ss_egress_count,
	.gate_summary = ss_gate_summary,
	.last_notes = ss_last_notes,
	.group_load = ss_group_load,
	.group_position = ss_group_position,
	.draft_list = ss_draft_list,
	.draft_count = ss_draft_count,
	.draft_add = ss_draft_add,
	.draft_discard = ss_draft_discard,
	.log_path = ss_log_path,
	.diff_each = ss_diff_each,
	.reject = ss_reject,
	.override = ss_override,
	.request_changes = ss_request_changes,
	.follow_up = ss_follow_up,
	.cancel = ss_cancel,
	.confirm = ss_confirm,
	.approve = ss_approve,
	.pick = ss_pick,
	.submit = ss_submit,
};

struct source *source_store_new(struct config *cfg, const char *data_dir, struct store *st)
{
	struct source_store *ss = xcalloc(1, sizeof *ss);
	ss->s.ops = &store_ops;
	ss->s.cfg = cfg;
	ss->s.data_dir = xstrdup(data_dir);
	ss->st = st;
	return &ss->s;
}

struct store *source_store(struct source *s)
{
	return s && s->ops == &store_ops ? of(s)->st : NULL;
}
