/* source: the dispatch to a source's operations (source.h). */
#include "autoconfig.h"
#include <stdlib.h>
#include <string.h>
#include "i18n.h"
#include "source.h"

/* An operation the source has not: says so (a remote dashboard asked for
 * something only the local one does). */
static int missing(const struct source *s, struct err *e)
{
	err_kind_set(e, ERR_INVALID, _("the dashboard's %s source cannot do this; use the "
	                          "dashboard on the machine that runs paddock serve"),
	        s->ops->name);
	return -1;
}

#define CALL(op, ...) (s->ops->op ? s->ops->op(s, __VA_ARGS__) : missing(s, e))

void source_close(struct source *s)
{
	if (!s)
		return;
	char *dir = s->data_dir;
	s->ops->close(s);
	free(dir);
}

const char *source_name(const struct source *s)
{
	return s->ops->name;
}

uint64_t source_data_version(struct source *s)
{
	return s->ops->data_version(s);
}

int source_task_get(struct source *s, const char *id, struct task_row *t, struct err *e)
{
	return CALL(task_get, id, t, e);
}

int source_task_query(struct source *s, const struct task_query *q, struct task_row **out,
                      size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(task_query, q, out, n, e);
}

int source_task_count(struct source *s, const struct task_query *q, size_t *n, struct err *e)
{
	*n = 0;
	return CALL(task_count, q, n, e);
}

int source_task_order(struct source *s, const struct task_query *q, struct task_key **out,
                      size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(task_order, q, out, n, e);
}

int source_task_rows(struct source *s, const long long *seqs, size_t n, int no_steps,
                     struct task_row **out, size_t *nout, struct err *e)
{
	*out = NULL;
	*nout = 0;
	return CALL(task_rows, seqs, n, no_steps, out, nout, e);
}

int source_task_glance(struct source *s, long long seq, struct task_glance *g, struct err *e)
{
	return CALL(task_glance, seq, g, e);
}

int source_task_counts(struct source *s, size_t counts[TASK_NSTATUS], struct err *e)
{
	return CALL(task_counts, counts, e);
}

int source_github_link(struct source *s, const char *id, struct gh_link *out, struct err *e)
{
	return s->ops->github_link ? s->ops->github_link(s, id, out, e) : 0;
}

char *source_pr_words(struct source *s, const char *id)
{
	return s->ops->pr_words ? s->ops->pr_words(s, id) : NULL;
}

int source_pauses_active(struct source *s, double now, struct pause_row **out, size_t *n,
                         struct err *e)
{
	*out = NULL;
	*n = 0;
	return s->ops->pauses_active ? s->ops->pauses_active(s, now, out, n, e) : 0;
}

int source_gates_count(struct source *s, struct reminder_gates *g, struct err *e)
{
	memset(g, 0, sizeof *g);
	return s->ops->gates_count ? s->ops->gates_count(s, g, e) : 0;
}

void source_pauses_free(struct pause_row *p, size_t n)
{
	store_pauses_free(p, n);
}

int source_history(struct source *s, const char *id, struct task_history *h, struct err *e)
{
	return CALL(history, id, h, e);
}

int source_decisions(struct source *s, const char *id, struct task_decision **out, size_t *n,
                     struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(decisions, id, out, n, e);
}

int source_rounds(struct source *s, const char *id, struct task_round **out, size_t *n,
                  struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(rounds, id, out, n, e);
}

int source_egress_list(struct source *s, const char *id, struct egress_row **out, size_t *n,
                       struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(egress_list, id, out, n, e);
}

void source_egress_free(struct egress_row *r, size_t n)
{
	store_egress_free(r, n);
}

int source_egress_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	*n = 0;
	return CALL(egress_count, id, n, e);
}

int source_gate_summary(struct source *s, const struct task_row *t, struct gate_summary *out,
                        struct err *e)
{
	return CALL(gate_summary, t, out, e);
}

char *source_last_notes(struct source *s, const char *id, struct err *e)
{
	return s->ops->last_notes ? s->ops->last_notes(s, id, e) : NULL;
}

int source_group_load(struct source *s, const char *id, double now, int with_diffs,
                      struct group_info *out, struct err *e)
{
	return CALL(group_load, id, now, with_diffs, out, e);
}

int source_group_position(struct source *s, const struct task_row *t, int *pos, int *n,
                          struct err *e)
{
	*pos = *n = 0;
	return CALL(group_position, t, pos, n, e);
}

int source_draft_list(struct source *s, const char *id, struct review_comment **out, size_t *n,
                      struct err *e)
{
	*out = NULL;
	*n = 0;
	return CALL(draft_list, id, out, n, e);
}

void source_draft_free(struct review_comment *c, size_t n)
{
	store_draft_free(c, n);
}

int source_draft_count(struct source *s, const char *id, size_t *n, struct err *e)
{
	*n = 0;
	return CALL(draft_count, id, n, e);
}

int source_draft_add(struct source *s, const char *id, const struct review_comment *c,
                     struct err *e)
{
	return CALL(draft_add, id, c, e);
}

int source_draft_discard(struct source *s, const char *id, long long upto, struct err *e)
{
	return CALL(draft_discard, id, upto, e);
}

char *source_log_path(struct source *s, const char *id, struct err *e)
{
	if (!s->ops->log_path) {
		missing(s, e);
		return NULL;
	}
	return s->ops->log_path(s, id, e);
}

int source_diff_each(struct source *s, const struct task_row *t, const char *which,
                     const char *from, const char *to, diff_file_fn fn, void *arg,
                     struct err *e)
{
	return CALL(diff_each, t, which, from, to, fn, arg, e);
}

int source_reject(struct source *s, const char *id, const char *notes, struct err *e)
{
	return CALL(reject, id, notes, e);
}

int source_override(struct source *s, const char *id, const char *finding, const char *notes,
                    struct err *e)
{
	return CALL(override, id, finding, notes, e);
}

int source_request_changes(struct source *s, const char *id, const char *notes, size_t *sent,
                           struct err *e)
{
	*sent = 0;
	return CALL(request_changes, id, notes, sent, e);
}

int source_follow_up(struct source *s, const char *id, const char *notes,
                     char id_out[TASK_ID_LEN + 1], struct err *e)
{
	return CALL(follow_up, id, notes, id_out, e);
}

int source_cancel(struct source *s, const char *id, struct err *e)
{
	return CALL(cancel, id, e);
}

int source_confirm(struct source *s, const char *id, struct err *e)
{
	return CALL(confirm, id, e);
}

int source_approve(struct source *s, const char *verb, const char *id, struct buf *out,
                   struct err *e)
{
	return CALL(approve, verb, id, out, e);
}

int source_pick(struct source *s, const char *group, const char *task, struct buf *out,
                struct err *e)
{
	return CALL(pick, group, task, out, e);
}

int source_submit(struct source *s, const struct submit_req *rq, struct submit_result *out,
                  struct err *e)
{
	return CALL(submit, rq, out, e);
}

/* The dashboard's jobs are programs of their own (dash.h): they learn the
 * source from the environment the dashboard leaves them. */
#define ENV_URL "PADDOCK_SOURCE_URL"
#define ENV_TOKEN "PADDOCK_SOURCE_TOKEN"

void source_job_env(const char *url, const char *token)
{
	if (url) {
		setenv(ENV_URL, url, 1);
		setenv(ENV_TOKEN, token ? token : "", 1);
	} else {
		unsetenv(ENV_URL);
		unsetenv(ENV_TOKEN);
	}
}

struct source *source_for_job(struct config *cfg, const char *data_dir, struct err *e)
{
	const char *url = getenv(ENV_URL);
	if (url && *url)
		return source_api_job(cfg, url, getenv(ENV_TOKEN), e);
	return source_store_new(cfg, data_dir, NULL);
}
