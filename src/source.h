/* source: what the dashboard reads and asks, from the local store or a
 * paddock serve's API.
 *
 * One interface (struct source, a table of operations) and two
 * implementations: source_store_new (the store, the task's log file, the
 * mirror and its kept diffs, gate.h's decisions: what the dashboard always
 * did) and source_api_new (client.h: a serve's HTTP API, for `paddock
 * --server URL`).  The views call only source_* functions; they never see
 * the store, so the same view runs on either.
 *
 * What a function fills (task_row, task_history, review_comment, ...) is
 * the store's structs, freed with their usual functions (task_row_free,
 * task_history_free, ...) or source_*_free where the store has its own:
 * one set of structs, whatever the source.  Errors carry a translated
 * message; the API's come as the server wrote them (client.h), to be
 * sanitized by whoever prints them, like any other text of a task.
 *
 * A source is used by one thread at a time (the dashboard's loop), except
 * that source_diff_each and the gate's slow verbs (source_approve) run in a
 * dashboard job, in a process of their own with a source of their own
 * (source_for_job). */
#ifndef PADDOCK_SOURCE_H
#define PADDOCK_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "config.h"
#include "diff.h"
#include "err.h"
#include "gate.h"
#include "group.h"
#include "reminder.h"
#include "store.h"
#include "store_github.h"
#include "submit.h"
#include "task.h"

struct source;

/* The operations of a source: each as the store function of the same
 * name (store.h, gate.h, group.h, submit.h) without the store.  An
 * implementation may leave one NULL: the call then fails saying that
 * this source cannot do it. */
struct source_ops {
	const char *name;                                  /* "store", "api" */
	void (*close)(struct source *s);
	uint64_t (*data_version)(struct source *s);
	int (*task_get)(struct source *s, const char *id, struct task_row *t, struct err *e);
	int (*task_query)(struct source *s, const struct task_query *q, struct task_row **out,
	                  size_t *n, struct err *e);
	int (*task_count)(struct source *s, const struct task_query *q, size_t *n,
	                  struct err *e);
	int (*task_order)(struct source *s, const struct task_query *q, struct task_key **out,
	                  size_t *n, struct err *e);
	int (*task_rows)(struct source *s, const long long *seqs, size_t n, int no_steps,
	                 struct task_row **out, size_t *nout, struct err *e);
	int (*task_glance)(struct source *s, long long seq, struct task_glance *g,
	                   struct err *e);
	int (*task_counts)(struct source *s, size_t counts[TASK_NSTATUS], struct err *e);
	int (*github_link)(struct source *s, const char *id, struct gh_link *out,
	                   struct err *e);
	char *(*pr_words)(struct source *s, const char *id);
	int (*pauses_active)(struct source *s, double now, struct pause_row **out, size_t *n,
	                     struct err *e);
	int (*gates_count)(struct source *s, struct reminder_gates *g, struct err *e);
	int (*history)(struct source *s, const char *id, struct task_history *h, struct err *e);
	int (*decisions)(struct source *s, const char *id, struct task_decision **out,
	                 size_t *n, struct err *e);
	int (*rounds)(struct source *s, const char *id, struct task_round **out, size_t *n,
	              struct err *e);
	int (*egress_list)(struct source *s, const char *id, struct egress_row **out,
	                   size_t *n, struct err *e);
	int (*egress_count)(struct source *s, const char *id, size_t *n, struct err *e);
	int (*gate_summary)(struct source *s, const struct task_row *t,
	                    struct gate_summary *out, struct err *e);
	char *(*last_notes)(struct source *s, const char *id, struct err *e);
	int (*group_load)(struct source *s, const char *id, double now, int with_diffs,
	                  struct group_info *out, struct err *e);
	int (*group_position)(struct source *s, const struct task_row *t, int *pos, int *n,
	                      struct err *e);
	/* The review draft. */
	int (*draft_list)(struct source *s, const char *id, struct review_comment **out,
	                  size_t *n, struct err *e);
	int (*draft_count)(struct source *s, const char *id, size_t *n, struct err *e);
	int (*draft_add)(struct source *s, const char *id, const struct review_comment *c,
	                 struct err *e);
	int (*draft_discard)(struct source *s, const char *id, long long upto, struct err *e);
	/* The task's log as a local file the log view reads as it grows: the
	 * path (malloc'd), after bringing it up to date (a remote source copies
	 * what is new into a private file); NULL with e set when none. */
	char *(*log_path)(struct source *s, const char *id, struct err *e);
	/* The diff from..to of task t (from NULL: the base), file by file;
	 * which says the same as the API's query: "" (base..head), "round=N"
	 * or "since=review". */
	int (*diff_each)(struct source *s, const struct task_row *t, const char *which,
	                 const char *from, const char *to, diff_file_fn fn, void *arg, struct err *e);
	/* Decisions, each checked for the user (gate_may_decide) first. */
	int (*reject)(struct source *s, const char *id, const char *notes, struct err *e);
	int (*override)(struct source *s, const char *id, const char *finding,
	                const char *notes, struct err *e);
	int (*request_changes)(struct source *s, const char *id, const char *notes,
	                       size_t *sent, struct err *e);
	int (*follow_up)(struct source *s, const char *id, const char *notes,
	                 char id_out[TASK_ID_LEN + 1], struct err *e);
	int (*cancel)(struct source *s, const char *id, struct err *e);
	int (*confirm)(struct source *s, const char *id, struct err *e);
	/* The slow ones, in a dashboard job: verb "approve", "push" or "pr"
	 * (the pull request again); out gets the facts. */
	int (*approve)(struct source *s, const char *verb, const char *id, struct buf *out,
	               struct err *e);
	int (*pick)(struct source *s, const char *group, const char *task, struct buf *out,
	            struct err *e);
	int (*submit)(struct source *s, const struct submit_req *rq, struct submit_result *out,
	              struct err *e);
};

/* A source: its operations and what every implementation has.  Owned by
 * whoever made it: source_close. */
struct source {
	const struct source_ops *ops;
	struct config *cfg;           /* borrowed: the dashboard's (:reload sets it anew) */
	char *data_dir;               /* owned; local store: the data dir, API: "" */
	const char *server;           /* the API's URL as given (the source's own);
	                                 NULL: the local store */
};

/* The local store st (borrowed: the caller closes it after the source; may
 * be NULL in a dashboard job, which only reads diffs and opens a store of
 * its own for a decision) of data_dir, with cfg's gate settings. */
struct source *source_store_new(struct config *cfg, const char *data_dir, struct store *st);
/* A paddock serve's API at url with token (client.h); polls for changes
 * off the caller's thread.  NULL with e set. */
struct source *source_api_new(struct config *cfg, const char *url, const char *token,
                              struct err *e);
/* The same for a dashboard job: no reader thread, no copies of logs; a
 * diff or a decision, once. */
struct source *source_api_job(struct config *cfg, const char *url, const char *token,
                              struct err *e);
/* In a dashboard job: the source the dashboard uses, from the environment
 * it left (PADDOCK_SOURCE_URL, PADDOCK_SOURCE_TOKEN: the API's), else the
 * local store of data_dir (opened by the verbs that need it).  NULL with
 * e set. */
struct source *source_for_job(struct config *cfg, const char *data_dir, struct err *e);
/* The environment source_for_job reads, set by the dashboard before its
 * jobs start (url NULL: the local store). */
void source_job_env(const char *url, const char *token);
void source_close(struct source *s);
/* "store" or "api". */
const char *source_name(const struct source *s);
/* The local store behind s, or NULL (the API): for the dashboard's own
 * setup (the scheduler it hosts, the change watch), never for a view. */
struct store *source_store(struct source *s);

uint64_t source_data_version(struct source *s);
int source_task_get(struct source *s, const char *id, struct task_row *t, struct err *e);
int source_task_query(struct source *s, const struct task_query *q, struct task_row **out,
                      size_t *n, struct err *e);
int source_task_count(struct source *s, const struct task_query *q, size_t *n, struct err *e);
int source_task_order(struct source *s, const struct task_query *q, struct task_key **out,
                      size_t *n, struct err *e);
int source_task_rows(struct source *s, const long long *seqs, size_t n, int no_steps,
                     struct task_row **out, size_t *nout, struct err *e);
int source_task_glance(struct source *s, long long seq, struct task_glance *g, struct err *e);
int source_task_counts(struct source *s, size_t counts[TASK_NSTATUS], struct err *e);
int source_github_link(struct source *s, const char *id, struct gh_link *out, struct err *e);
/* ghsync_pr_words: the pull request's state in words, or NULL. */
char *source_pr_words(struct source *s, const char *id);
int source_pauses_active(struct source *s, double now, struct pause_row **out, size_t *n,
                         struct err *e);
void source_pauses_free(struct pause_row *p, size_t n);
/* reminder_count: the tasks at a person's gate, for the review limit's
 * words in the list's title; 0 with none counted where the source cannot
 * tell (a server's API: which gates wait for a person is the scheduler's
 * look at each task's decisions).  Free g with reminder_gates_free. */
int source_gates_count(struct source *s, struct reminder_gates *g, struct err *e);
int source_history(struct source *s, const char *id, struct task_history *h, struct err *e);
int source_decisions(struct source *s, const char *id, struct task_decision **out, size_t *n,
                     struct err *e);
int source_rounds(struct source *s, const char *id, struct task_round **out, size_t *n,
                  struct err *e);
int source_egress_list(struct source *s, const char *id, struct egress_row **out, size_t *n,
                       struct err *e);
void source_egress_free(struct egress_row *r, size_t n);
int source_egress_count(struct source *s, const char *id, size_t *n, struct err *e);
/* gate_summary_load: 1 with out filled, 0 when none (out zeroed), -1. */
int source_gate_summary(struct source *s, const struct task_row *t, struct gate_summary *out,
                        struct err *e);
char *source_last_notes(struct source *s, const char *id, struct err *e);
/* group_load; with_diffs: each member's diff stat too (the group view). */
int source_group_load(struct source *s, const char *id, double now, int with_diffs,
                      struct group_info *out, struct err *e);
int source_group_position(struct source *s, const struct task_row *t, int *pos, int *n,
                          struct err *e);
int source_draft_list(struct source *s, const char *id, struct review_comment **out, size_t *n,
                      struct err *e);
void source_draft_free(struct review_comment *c, size_t n);
int source_draft_count(struct source *s, const char *id, size_t *n, struct err *e);
int source_draft_add(struct source *s, const char *id, const struct review_comment *c,
                     struct err *e);
int source_draft_discard(struct source *s, const char *id, long long upto, struct err *e);
char *source_log_path(struct source *s, const char *id, struct err *e);
int source_diff_each(struct source *s, const struct task_row *t, const char *which,
                     const char *from, const char *to, diff_file_fn fn, void *arg,
                     struct err *e);
int source_reject(struct source *s, const char *id, const char *notes, struct err *e);
int source_override(struct source *s, const char *id, const char *finding, const char *notes,
                    struct err *e);
int source_request_changes(struct source *s, const char *id, const char *notes, size_t *sent,
                           struct err *e);
int source_follow_up(struct source *s, const char *id, const char *notes,
                     char id_out[TASK_ID_LEN + 1], struct err *e);
int source_cancel(struct source *s, const char *id, struct err *e);
int source_confirm(struct source *s, const char *id, struct err *e);
int source_approve(struct source *s, const char *verb, const char *id, struct buf *out,
                   struct err *e);
int source_pick(struct source *s, const char *group, const char *task, struct buf *out,
                struct err *e);
int source_submit(struct source *s, const struct submit_req *rq, struct submit_result *out,
                  struct err *e);

#endif
