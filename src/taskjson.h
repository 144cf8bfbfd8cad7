/* taskjson: the JSON form of a task, the same for `paddock show --json`,
 * `paddock list --json` and the HTTP API (api.h). */
#ifndef PADDOCK_TASKJSON_H
#define PADDOCK_TASKJSON_H

#include <jansson.h>
#include "config.h"
#include "store.h"

/* json_dumps flags for what carries a task's JSON: 15 significant digits
 * print unix times to the millisecond without jansson's 17-digit noise
 * (1764630126.123, not 1764630126.1230001). */
#define TASKJSON_DUMP (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

/* The budget that applies to t: its own (0: no limit), else the
 * configuration's limits.budget (cfg NULL: not known).  *from is "task",
 * "config", or NULL when neither gives one. */
double taskjson_budget(const struct task_row *t, const struct config *cfg, const char **from);
/* 1 if pause p holds t back: t has not ended and its agent uses p's
 * endpoint. */
int taskjson_pause_applies(const struct config *cfg, const struct task_row *t,
                           const struct pause_row *p);
/* A pull request that failed to open: {"message", "at", "attempts",
 * "retry_at" (null: not by itself)}, or null when none failed (or it has
 * opened since).  New reference. */
json_t *taskjson_pr_error(const struct task_row *t);
/* The task row (list): id, status, steps, branch, usage, ...  New
 * reference; cfg may be NULL. */
json_t *taskjson_task(const struct task_row *t, const struct config *cfg);
/* The list's row (list --json, GET /tasks): taskjson_task, a group
 * member's place ("group_position": {"position", "size", "picked"}, or
 * null) and its pull request's state on GitHub as the last sync read it
 * ("pr_state": open, merged, closed, or null).  New reference. */
json_t *taskjson_row(struct store *s, const struct task_row *t, const struct config *cfg);
/* The row (taskjson_row) with its gate summary, rounds, decisions, egress
 * records, the pauses that hold it back, its webhook deliveries and the
 * decision waiting for the scheduler ("waiting_decision",
 * taskjson_waiting) (show).  New reference. */
json_t *taskjson_full(struct store *s, const struct task_row *t, const struct config *cfg);

/* The task's decision recorded for the scheduler and not carried out yet
 * (store_action_open, decide.h): {"action", "actor", "requested" (unix
 * time), "state" ("pending" or "running"), "by" (the process carrying it
 * out; null while pending)}, or null when none waits.  New reference. */
json_t *taskjson_waiting(struct store *s, const char *id);

/* A task's review draft (paddock draft --json, GET /tasks/{id}/draft):
 * {"id", "comments": [{"n", "round", "path", "line", "old", "text",
 * "comment", "created"}]}, its strings repaired to UTF-8.  New
 * reference. */
json_t *taskjson_draft(const char *id, const struct review_comment *c, size_t n);
/* One comment of it. */
json_t *taskjson_draft_comment(const struct review_comment *c);

/* A recipe (paddock recipe show --json, GET /recipes): its name,
 * description, inputs, defaults (null when unset), contract and prompt.
 * New reference. */
json_t *taskjson_recipe(const struct recipe_conf *r);

#endif
