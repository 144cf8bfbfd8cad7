/* store: the SQLite history (one database file in the data directory).
 *
 * WAL mode, a schema version with migrations, every state change in one
 * transaction.  Several processes may open the same store: the scheduler
 * owner, CLI verbs, dashboards.  A struct store is not shared between
 * processes (open it again after fork).  This header is the whole API;
 * the code is one file per concern (store_int.h names them). */
#ifndef PADDOCK_STORE_H
#define PADDOCK_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "err.h"
#include "task.h"

struct store;

/* A task's model use over all its rounds, as the gateway counts it. */
struct task_usage {
	uint64_t in, out;          /* input and output tokens */
	uint64_t cache_read, cache_write;  /* prompt-cache tokens */
	uint64_t requests;         /* model requests */
	double cost;               /* USD of the priced models */
	int priced;                /* 0 when some model had no price: cost
	                              then covers only the priced ones */
};

struct task_step {
	double at;                 /* seconds since the task was queued */
	double time;               /* unix time (created + at) */
	enum task_status status;
	long long log_off;         /* the log's size just after the step was
	                              made: the lines before it (schema 7); when
	                              not known, the step before it's, or 0 */
	int log_known;             /* log_off was settled (store_steps_settle) */
	int round;                 /* the task's round then; 0 when not known
	                              (older stores) */
};

/* One task row.  Strings are owned by the struct; free with
 * task_row_free. */
struct task_row {
	long long seq;             /* the order tasks were queued in: a cursor
	                              for struct task_query */
	char id[TASK_ID_LEN + 1];
	char *text;
	char *repo;
	char *agent;
	char *base;                /* base commit (hex) once known, else NULL */
	char *branch;              /* "paddock/<id>" */
	char *head;                /* imported tip commit once known, else NULL */
	enum task_status status;
	char *error;               /* "<step>: <why>" on the first line, which is
	                              the whole story for a person; detail such as
	                              the tail of the test output may follow on
	                              further lines.  NULL when none. */
	double created;            /* unix time (seconds, fractional) */
	double updated;
	int cancel_requested;
	struct task_step *steps;
	size_t nsteps;
	/* The gate (schema 2). */
	int round;                 /* 1, then +1 for each request for changes */
	char *summary;             /* the agent's summary of its latest round */
	char *pr_url;              /* the pull request, once opened */
	char *pushed;              /* the commit last pushed to the remote */
	char *reviewed_head;       /* head when changes were last requested */
	int sandbox_kept;          /* the gate sandbox is alive */
	char *pending;             /* "request-changes" waiting for the
	                              scheduler, else NULL */
	/* Egress (schema 3). */
	double budget;             /* USD the task may spend: < 0 when none
	                              was given (the config's limits.budget
	                              applies), 0 for no limit */
	struct task_usage usage;   /* cumulative, over all rounds */
	char *session;             /* the agent's session id, or NULL */
	char *reason;              /* why it failed, one word (budget, model-auth,
	                              rate-limit, overloaded, context, model,
	                              tool, timeout, tests, contract, setup,
	                              crashed), or NULL */
	/* Recovery (schema 5). */
	int attempts;              /* times round 1 was started */
	int failed_round;          /* a later round that failed or was
	                              interrupted, the task back at the round
	                              before it; 0 when none (cleared when the
	                              next round starts) */
	char *failed_head;         /* that round's imported work, or NULL */
	char *failed_why;          /* "<step>: <why>" of that round */
	char *follow_of;           /* the task this one follows up, or NULL */
	/* Integrations (schema 7). */
	char *callback_url;        /* where its webhooks go too, or NULL */
	char *metadata;            /* the client's JSON object, as text, or NULL */
	/* Recipes and workflows (schema 9). */
	char *recipe;              /* the recipe it was made from, or NULL */
	char *inputs;              /* the recipe's inputs, a JSON object of
	                              strings, or NULL */
	char *base_ref;            /* what it starts from as asked (a branch, a
	                              tag, a commit or another ref); NULL: the
	                              repo's branch.  base holds the commit. */
	char *test_cmd;            /* its test command; NULL: the repo's test */
	double timeout;            /* seconds per round; 0: limits.timeout */
	int dry_run;               /* test mode: approve records, pushes nothing */
	char *approval;            /* review, auto, auto-push or never (already
	                              narrowed from the repo's or recipe's);
	                              NULL: review */
	int fix_rounds;            /* tries the agent gets on failing tests;
	                              -1: the repo's fix-rounds */
	char *contract;            /* its output contract, a JSON array of
	                              clauses (recipe.h); NULL: the default one
	                              (a change, and the tests pass) */
	char *group_id;            /* its best-of-N group, or NULL */
	char *confirm;             /* "needed": waits in queued for a person's
	                              confirmation of its cost; "confirmed";
	                              NULL: none was needed */
	double estimate;           /* its estimated cost in USD, when confirm is
	                              set */
	char *dry_run_record;      /* test mode: what approve would have written,
	                              a JSON object, or NULL */
	/* A pull request that failed to open (schema 12). */
	char *pr_error;            /* the last try's message, or NULL: none
	                              failed, or it opened since */
	double pr_error_at;        /* unix time of that try; 0 when none */
	int pr_attempts;           /* tries that failed since the last success */
	double pr_retry_at;        /* when the scheduler tries again; 0: never */
	char *queued_by;           /* who queued it (schema 13): a token's name
	                              or a Unix user; NULL: not known */
	int reminders;             /* reminders sent for the gate it waits at
	                              now (store_reminder.h); 0 when none, or
	                              when it is not at review */
};

/* One request through the task's gateway. */
struct egress_row {
	long long id;
	int round;
	double time;               /* unix time */
	char *step;                /* agent, setup, tests */
	char *kind;                /* model, tunnel, http */
	char *endpoint;            /* the model endpoint's name, or NULL */
	char *host;
	int port;                  /* 0 when unknown */
	char *method;              /* or NULL */
	char *path;                /* NULL for tunnels */
	int status;                /* HTTP status; 0 when none */
	uint64_t up, down;         /* bytes sent upstream / received */
	double ms;                 /* duration */
	char *verdict;             /* allowed, refused */
	char *reason;              /* why it was refused, or NULL */
};

/* An endpoint that asked paddock to slow down (HTTP 429 and the like):
 * no task whose agent uses it starts before `until`. */
struct pause_row {
	char *endpoint;
	double until;              /* unix time */
	int status;                /* the HTTP status that caused it */
	char *task_id;             /* the task that saw it, or NULL */
	double time;               /* when it was reported */
};

/* One round of a task: the agent's work from `from` to `head`. */
struct task_round {
	int n;
	char *from;                /* the base, or the previous round's head */
	char *head;                /* NULL when the round ended without work */
	char *gate;                /* the gate summary, JSON text (gate.h) */
	double started, ended;     /* unix time; ended 0 while it runs */
	char *kind;                /* what made it (schema 9): "agent" (NULL in
	                              older stores), "changes" (a request for
	                              changes), "fix" (the fix loop), "reviewer"
	                              (a reviewer's shell, kept) */
};

/* One reviewer decision. */
struct task_decision {
	int round;
	char *action;              /* approve, request-changes, push, reject,
	                              override, cancel */
	char *notes;               /* NULL when none */
	char *actor;               /* the user name */
	double at;                 /* unix time */
};

void task_rounds_free(struct task_round *r, size_t n);
void task_decisions_free(struct task_decision *d, size_t n);

void task_row_free(struct task_row *t);
void task_rows_free(struct task_row *t, size_t n);

int store_open(struct store **out, const char *path, struct err *e);
void store_close(struct store *s);
/* Current schema version (after migrations). */
int store_schema_version(struct store *s);

/* Inserts a queued task with a fresh id (written to id_out); its branch is
 * branch_prefix followed by the id ("paddock/" when NULL). */
int store_task_add(struct store *s, const char *repo, const char *agent,
                   const char *text, const char *branch_prefix,
                   char id_out[TASK_ID_LEN + 1], struct err *e);
/* The same with the task's budget in USD (< 0: none given, the config's
 * applies; 0: no limit). */
/* Records where task id's steps made since the last call fall in its log
 * (its size now); called by move.h right after each move's commit, so
 * that a step comes after every log line a reader saw before the step. */
int store_steps_settle(struct store *s, const char *id, struct err *e);

/* What store_task_create adds; strings are borrowed. */
struct task_new {
	const char *repo, *agent, *text;
	const char *branch_prefix; /* NULL: "paddock/" */
	double budget;             /* < 0: none given */
	const char *callback_url;  /* or NULL */
	const char *metadata;      /* a JSON object's text, or NULL */
	size_t max_queued;         /* 0: no limit; else refused when this many
	                              tasks are queued already */
	/* Schema 9 (struct task_row says what each is). */
	const char *recipe, *inputs, *base_ref, *test_cmd;
	double timeout;
	int dry_run;
	const char *approval;
	int fix_rounds_set, fix_rounds;
	const char *contract;
	const char *group_id;
	int confirm;               /* waits for a person's confirmation */
	double estimate;
	const char *queued_by;     /* a token's name or a Unix user, or NULL */
};

/* Adds a queued task in one transaction, the count of queued tasks taken
 * in the same one, so that writers racing for the last place cannot both
 * get it.  -2 with *queued set when max_queued tasks are queued; -1 with e
 * set on other errors. */
int store_task_create(struct store *s, const struct task_new *n, char id_out[TASK_ID_LEN + 1],
                      size_t *queued, struct err *e);
int store_task_add_budget(struct store *s, const char *repo, const char *agent,
                          const char *text, const char *branch_prefix, double budget,
                          char id_out[TASK_ID_LEN + 1], struct err *e);
/* Finds a task by id or unique id prefix.  Returns 0 and fills *t, or -1
 * with a message (no such task / ambiguous prefix). */
int store_task_get(struct store *s, const char *id, struct task_row *t, struct err *e);
/* All tasks, oldest first (status < 0: any status). */
int store_task_list(struct store *s, int status, struct task_row **out, size_t *n,
                    struct err *e);

/* Which tasks store_task_each and the counts look at: every condition
 * given holds (a zeroed query: every task, oldest first).  Each condition
 * is answered from an index, so a page of a history of 100,000 tasks costs
 * what a page of 100 does. */
/* The orders a query can read tasks in (struct task_query.order). */
enum task_order {
	TASK_ORDER_QUEUED = 0,     /* seq: the order they were queued in */
	TASK_ORDER_STATUS,         /* failed, lost, review, pushing, testing,
	                              running, preparing, queued, done, rejected,
	                              cancelled; the newest first within each */
	TASK_ORDER_AGE,            /* the newest first */
	TASK_ORDER_TIME,           /* unfinished tasks first, the longest in
	                              their status first; then finished ones,
	                              the longest they took first */
	TASK_ORDER_REPO,           /* by repo, the newest first within each */
};

struct task_query {
	unsigned status_mask;      /* TASK_MASK(status) of each wanted; 0: any */
	int pending;               /* only tasks with a request for changes
	                              waiting (task_row.pending) */
	double since;              /* queued at or after (unix time); 0: any */
	double changed_after;      /* updated after (unix time); 0: any */
	long long after, before;   /* seq bounds, both exclusive; 0: none */
	size_t limit;              /* at most this many; 0: no limit */
	size_t offset;             /* skipping this many first (a cursor,
	                              after/before, costs less) */
	int newest_first;          /* in descending seq (the limit then keeps
	                              the newest) */
	int no_steps;              /* leave steps empty: a list that does not
	                              show them reads one row per task */
	/* Conditions no index answers (each scans the tasks of the statuses
	 * asked for): the dashboard's filters. */
	const char *repo;          /* only this repo's tasks; NULL: any */
	const char *agent;         /* only this agent's; NULL: any */
	const char *text;          /* only those whose id, text, repo, agent or
	                              error contains it (ASCII letters in any
	                              case); NULL or "": any */
	int startable;             /* leave out tasks waiting for a person's
	                              confirmation (task_row.confirm) */
	/* The scheduler's look at the gates (autogate.h), from an index
	 * (schema 11) of the few tasks it may concern, by status: */
	int auto_approval;         /* only tasks of approval auto or auto-push,
	                              or with a pull request (a round asked on
	                              GitHub may be decided as auto's) */
	const char *undecided_by;  /* only tasks whose current round has no
	                              decision of this actor yet */
	const char *group;         /* only this best-of-N group's members */
	int fold_groups;           /* a best-of-N group's members as one: only
	                              the first of them (by seq) that the other
	                              conditions (statuses, repo, agent, text,
	                              startable) select; the bounds and times
	                              are not asked of the others */
	enum task_order order;     /* other than TASK_ORDER_QUEUED: rows are
	                              read by offset in that order (one sort of
	                              the tasks selected; newest_first is
	                              ignored) */
};
#define TASK_MASK(status) (1u << (status))
#define TASK_MASK_ACTIVE (TASK_MASK(TASK_PREPARING) | TASK_MASK(TASK_RUNNING) | \
                          TASK_MASK(TASK_TESTING) | TASK_MASK(TASK_PUSHING))
#define TASK_MASK_ENDED (TASK_MASK(TASK_DONE) | TASK_MASK(TASK_FAILED) | \
                         TASK_MASK(TASK_REJECTED) | TASK_MASK(TASK_CANCELLED) | \
                         TASK_MASK(TASK_LOST))

/* Calls fn for each task q selects, in q's order, as it is read (nothing
 * is kept: a listing of every task streams).  The row is fn's only for the
 * call; fn returns 0 to go on, 1 to stop early, -1 to fail (e set).
 * Returns 0 or -1. */
typedef int (*task_each_fn)(const struct task_row *t, void *arg, struct err *e);
int store_task_each(struct store *s, const struct task_query *q, task_each_fn fn,
                    void *arg, struct err *e);
/* The same, collected: *out (free with task_rows_free). */
int store_task_query(struct store *s, const struct task_query *q, struct task_row **out,
                     size_t *n, struct err *e);
/* How many tasks q selects (its limit and order aside). */
int store_task_count(struct store *s, const struct task_query *q, size_t *n, struct err *e);
/* SQLite's virtual machine steps of this connection's task queries
 * (store_task_each, _query, _count) so far: how much of the store they
 * read, whatever rows they return.  For tests: a query an index answers
 * takes as many on 10 tasks of other statuses as on 1,000. */
uint64_t store_task_query_steps(struct store *s);
/* The tasks q selects, in q's order (its limit, offset and cursor
 * aside), as their seq and status only: a list in another order than
 * the queued one reads this once (one narrow sort) and then its rows by
 * seq (store_task_rows).  *out (free it) is NULL when there are none. */
struct task_key {
	long long seq;
	enum task_status status;
};
int store_task_order(struct store *s, const struct task_query *q, struct task_key **out,
                     size_t *n, struct err *e);
/* The rows of tasks seqs[0..n), in that order (a task gone since is left
 * out: *nout <= n); free with task_rows_free.  no_steps as in struct
 * task_query. */
int store_task_rows(struct store *s, const long long *seqs, size_t n, int no_steps,
                    struct task_row **out, size_t *nout, struct err *e);
/* What the task list shows of a task beyond its row: a few indexed reads
 * of its steps and rounds, for the rows on screen. */
struct task_glance {
	double started;            /* unix time it first left the queue
	                              (preparing); 0: never */
	double round_started;      /* unix time its latest round began (its
	                              time limit runs from about then); 0: none */
	int round_unchanged;       /* the latest round has no head, or the head
	                              it started from: when the task is no
	                              longer active, that round changed nothing */
};
int store_task_glance(struct store *s, long long seq, struct task_glance *g, struct err *e);
/* How many tasks have each status: counts[status]. */
int store_task_counts(struct store *s, size_t counts[TASK_NSTATUS], struct err *e);
/* A number that changes whenever the store's content may have changed,
 * by this connection or any other process: a view that saw the same
 * number has nothing to reload. */
uint64_t store_data_version(struct store *s);
/* An inotify descriptor (non-blocking, close-on-exec; the caller's to
 * close) that is readable when the store's files change: a loop polls it
 * to wake when another process writes, instead of at its next tick.
 * -1 with e set when inotify is not available. */
int store_watch(struct store *s, struct err *e);
/* Reads what fd (from store_watch) has; 1 when the store changed. */
int store_watch_changed(struct store *s, int fd);
/* The oldest queued task, if any: returns 1 and fills *t, 0 when none. */
int store_task_next_queued(struct store *s, struct task_row *t, struct err *e);

/* Moves a task to `to` in one transaction, appending a step stamped with
 * seconds since queued.  Fails (and changes nothing) when the task is not
 * in a state from which `to` is allowed.  error may be NULL. */
int store_task_transition(struct store *s, const char *id, enum task_status to,
                          const char *error, struct err *e);
/* Records base commit / imported head. */
int store_task_set_base(struct store *s, const char *id, const char *base, struct err *e);
int store_task_set_head(struct store *s, const char *id, const char *head, struct err *e);
/* Cancel, recorded as a decision of actor: a queued task (or one at
 * review) becomes cancelled at once (returns 1); an active
 * task gets cancel_requested set for the scheduler owner (returns 2).
 * A terminal task is refused with a message naming its status. */
int store_task_cancel(struct store *s, const char *id, const char *actor, struct err *e);
/* Sets a text column of the task: "summary", "pr_url", "pushed",
 * "reviewed_head", "pending", "error", "session", "reason" (value NULL
 * clears it). */
int store_task_set(struct store *s, const char *id, const char *column, const char *value,
                   struct err *e);
int store_task_set_sandbox_kept(struct store *s, const char *id, int kept, struct err *e);
/* A pull request that failed to open (issue 36): records why (a
 * translated message), when (at), one more try, and when the scheduler
 * tries again (retry_at; <= 0: not by itself). */
int store_task_pr_failed(struct store *s, const char *id, const char *why, double at,
                         double retry_at, struct err *e);
/* When the scheduler tries the pull request again (<= 0: not by itself). */
int store_task_pr_retry_at(struct store *s, const char *id, double at, struct err *e);
/* The pull request opened: sets pr_url and clears the failure. */
int store_task_pr_opened(struct store *s, const char *id, const char *url, struct err *e);
/* The done tasks whose pull request's retry is due at now (at most 16, the
 * earliest first): *ids malloc'd (free it), *n of them; *next the next
 * retry after now, 0 when none. */
int store_task_pr_due(struct store *s, double now, char (**ids)[TASK_ID_LEN + 1], size_t *n,
                      double *next, struct err *e);
/* The task's budget in USD (< 0: none, the config's applies; 0: no limit). */
int store_task_set_budget(struct store *s, const char *id, double budget, struct err *e);
/* Replaces the task's usage with u (the gateway reports running totals). */
int store_task_set_usage(struct store *s, const char *id, const struct task_usage *u,
                         struct err *e);
/* Parses a usage report, {"input":N,"output":N,"cache_read":N,
 * "cache_write":N,"cost":USD,"requests":N,"priced":BOOL}, into *u (a
 * missing field is 0, a missing priced is 1).  -1 when json is not an
 * object or a field has the wrong type. */
int store_usage_parse(const char *json, struct task_usage *u, struct err *e);

/* Egress records (schema 3).  store_egress_add parses one record as the
 * gateway reports it, {"time":T,"step":S,"kind":K,"endpoint":E,"host":H,
 * "port":P,"method":M,"path":P,"status":N,"up":N,"down":N,"ms":N,
 * "verdict":V,"reason":R} (null or missing fields are NULL or 0; strings
 * are cut to 1 KiB), and stores it for round `round` of task id.  -1 when
 * json is not an object or a field has the wrong type; nothing is stored
 * then. */
int store_egress_add(struct store *s, const char *id, int round, const char *json,
                     struct err *e);
/* The task's records, oldest first; *out (free with store_egress_free) is
 * NULL when there are none. */
int store_egress_list(struct store *s, const char *id, struct egress_row **out, size_t *n,
                      struct err *e);
void store_egress_free(struct egress_row *r, size_t n);
/* How many records the task has (they are never removed: a cheap check
 * for new ones). */
int store_egress_count(struct store *s, const char *id, size_t *n, struct err *e);

/* Pauses an endpoint until unix time `until` (status: the HTTP status;
 * task_id: the task that saw it, may be NULL).  A pause never shortens an
 * active one: an earlier `until` than the stored one is ignored. */
int store_pause_set(struct store *s, const char *endpoint, double until, int status,
                    const char *task_id, struct err *e);
/* The pauses still active at unix time now (until > now), soonest end
 * first; *out (free with store_pauses_free) is NULL when none. */
int store_pauses_active(struct store *s, double now, struct pause_row **out, size_t *n,
                        struct err *e);
void store_pauses_free(struct pause_row *p, size_t n);
/* The webhook queue (schema 4, webhook.h): one row per delivery, kept
 * after it is delivered or given up. */
struct webhook_row {
	long long id;
	char *task_id;
	char *event;               /* review, failed, done */
	char *delivery;            /* the delivery id (in the body and a header) */
	char *body;                /* the JSON sent, byte for byte */
	double created;            /* unix time it was queued */
	int attempts;              /* tries made so far */
	double next_at;            /* unix time of the next try; 0: none (delivered
	                              or given up) */
	char *last_error;          /* why the last failed try failed, or NULL */
	double delivered_at;       /* unix time of the 2xx; 0 while not delivered */
	char *url;                 /* where it goes: the task's callback_url, or
	                              NULL for the configured [webhook] url */
};

/* One try of a delivery. */
struct webhook_attempt {
	double at;                 /* unix time it ended */
	int status;                /* the HTTP status; 0 when there was none */
	char *error;               /* why it failed, or NULL when it did not */
};

/* Queues a delivery to url (NULL: the configured one), due at once.
 * Strings are copied. */
int store_webhook_add(struct store *s, const char *task_id, const char *event,
                      const char *delivery, const char *body, const char *url, struct err *e);
/* Deliveries due at unix time `at` (next_at <= at, not delivered), soonest
 * first, at most 64; *out (free with store_webhooks_free) is NULL when
 * none. */
int store_webhook_due(struct store *s, double at, struct webhook_row **out, size_t *n,
                      struct err *e);
/* The earliest next_at of the deliveries still to try (0: none). */
int store_webhook_next(struct store *s, double *at, struct err *e);
/* A try succeeded with HTTP status: attempts + 1, delivered now, the try
 * logged. */
int store_webhook_done(struct store *s, long long id, int status, struct err *e);
/* A try failed with error (and HTTP status, 0 when none): attempts + 1,
 * next try at unix time next_at, or never again when next_at <= 0 (given
 * up); the try logged. */
int store_webhook_retry(struct store *s, long long id, double next_at, const char *error,
                        int status, struct err *e);
/* The tries of delivery id, oldest first (free with
 * store_webhook_attempts_free). */
int store_webhook_attempts(struct store *s, long long id, struct webhook_attempt **out,
                           size_t *n, struct err *e);
void store_webhook_attempts_free(struct webhook_attempt *a, size_t n);
/* The task's deliveries (task_id NULL: all), oldest first; *out (free
 * with store_webhooks_free) is NULL when none. */
int store_webhook_list(struct store *s, const char *task_id, struct webhook_row **out,
                       size_t *n, struct err *e);
void store_webhooks_free(struct webhook_row *r, size_t n);

/* No sandbox survives its scheduler: clears sandbox_kept everywhere. */
int store_forget_sandboxes(struct store *s, struct err *e);
/* Starts round n (from = where it starts), or updates its head and gate
 * when it exists (head and gate may be NULL to leave them). */
int store_round_begin(struct store *s, const char *id, int n, const char *from,
                      struct err *e);
int store_round_end(struct store *s, const char *id, int n, const char *head,
                    const char *gate, struct err *e);
int store_rounds(struct store *s, const char *id, struct task_round **out, size_t *n,
                 struct err *e);
/* A task's rounds and the decisions on them, listed round by round (show,
 * the gate view).  Owns its arrays; task_history_free frees them. */
struct task_history {
	struct task_round *rounds;
	size_t nrounds;
	struct task_decision *decisions;
	size_t ndecisions;
	int last;                  /* the last round to list; 0: nothing to list */
};
int store_history(struct store *s, const char *id, struct task_history *h, struct err *e);
void task_history_free(struct task_history *h);
/* Round n's line, newly allocated: "N  FROM..HEAD" (12 digits each;
 * a reviewer's round adds "  (reviewer's shell)"), "N  (running)" or
 * "N  (no work)". */
char *task_history_round_text(const struct task_history *h, int n);
/* A decision's line, newly allocated: "YYYY-MM-DD HH:MM  ACTION by ACTOR"
 * in local time; the notes are the caller's to show. */
char *task_decision_text(const struct task_decision *d);
/* Records a decision (for the task's current round). */
int store_decision_add(struct store *s, const char *id, const char *action,
                       const char *notes, const char *actor, struct err *e);
int store_decisions(struct store *s, const char *id, struct task_decision **out,
                    size_t *n, struct err *e);
/* Request for changes, in one transaction: the task must be at review and
 * have nothing pending; records the decision, sets pending and
 * reviewed_head.  Refused with the task's state otherwise. */
int store_task_request_changes(struct store *s, const char *id, const char *notes,
                               const char *actor, struct err *e);
/* The same, sending a review draft: the draft's comments up to n = upto
 * (their text is in notes) are removed in the same transaction, so that a
 * failed request keeps them and a comment added meanwhile stays. */
/* A request for changes from the task's pull request (store_github.h):
 * as store_task_request_changes at review, and also on a done task whose
 * last round was pushed (pushed == head), which goes back to review (a
 * step) with the changes pending: the one way out of done. */
int store_task_reopen_changes(struct store *s, const char *id, const char *notes,
                              const char *actor, struct err *e);
int store_task_request_changes_draft(struct store *s, const char *id, const char *notes,
                                     const char *actor, long long upto, struct err *e);

/* A comment of a task's review draft (schema 8): a reviewer's note on one
 * line of its diff, kept (across views, quits and restarts) until it goes
 * out with a request for changes or the draft is discarded. */
struct review_comment {
	long long n;               /* its place in the draft: only grows */
	int round;                 /* the task's round when it was written */
	char *path;                /* the file (the old path for an old line) */
	long line;                 /* its line number in that file */
	int old;                   /* 1: a line of the old file ('-'); 0: the new */
	char *text;                /* the line as the reviewer saw it */
	char *comment;
	double created;            /* unix time */
};
/* Appends a comment to the task's draft (c's n, round and created are
 * set by the store). */
int store_draft_add(struct store *s, const char *id, const struct review_comment *c,
                    struct err *e);
/* The task's draft, oldest first; *out (free with store_draft_free) is
 * NULL when it is empty. */
int store_draft_list(struct store *s, const char *id, struct review_comment **out, size_t *n,
                     struct err *e);
void store_draft_free(struct review_comment *c, size_t n);
int store_draft_count(struct store *s, const char *id, size_t *n, struct err *e);
/* Discards the task's comments up to n = upto (what the reviewer was
 * shown); returns how many, or -1. */
int store_draft_discard(struct store *s, const char *id, long long upto, struct err *e);
/* The scheduler starts a requested round: review -> running, round + 1,
 * pending cleared, round n+1 begun from the current head. */
int store_task_resume(struct store *s, const char *id, int *round_out, struct err *e);
/* The fix loop (pipeline.h): the verified tests of a running task's round
 * failed and its agent gets round n (its round + 1) to fix them, in the
 * same sandbox: running, round n begun from the task's head (else its
 * base), of kind "fix". */
int store_task_fix_round(struct store *s, const char *id, int n, struct err *e);
/* A new task that follows up a finished one (done, failed, rejected): the
 * same repo, agent, budget, branch, pull request and agent session; its
 * base is the parent's head (or base when it has none), so that the agent
 * continues the conversation on the work.  text is the follow-up's
 * prompt; queued_by (or NULL) is who queued it. */
int store_task_follow_up(struct store *s, const char *parent, const char *text,
                         const char *queued_by, size_t max_queued,
                         char id_out[TASK_ID_LEN + 1], struct err *e);
/* Moves a queued task to preparing and counts the attempt, clearing the
 * last run's error and reason. */
int store_task_start(struct store *s, const char *id, struct err *e);
/* Round N > 1 of an active task failed (why: "<step>: <why>"): the task
 * goes back to review at round N - 1 with its head, summary and gate;
 * failed_round, failed_head and failed_why keep what round N did; round
 * N's row is removed so that it starts afresh.  A fix round (kind "fix")
 * goes back past the fix loop's rounds and the round they tried to fix
 * (to M - 1, M the first of them; failed_round M, the rows from M on
 * removed); refused when M is 1: nothing reached review. */
int store_task_rollback_round(struct store *s, const char *id, const char *why,
                              struct err *e);
/* The process that ran an active task (not pushing) stopped (why says
 * how).  A cancel requested ends it cancelled; a later round goes back to
 * review with the round before (store_task_rollback_round), or to lost
 * when that has no work; a first round (or its fix loop's rounds, set back
 * to round 1) is queued again, or fails with
 * reason "crashed" once it was started max_attempts times (a planned stop
 * does not use an attempt up).  *to (may be NULL) gets the new status. */
int store_task_interrupted(struct store *s, const char *id, int planned, int max_attempts,
                           const char *why, enum task_status *to, struct err *e);
struct store_recovery {
	int queued, review, failed, cancelled, lost;
};
/* store_task_interrupted for every active task but those pushing, in one
 * transaction (start-up of the scheduler owner: their process died). */
int store_recover_active(struct store *s, int max_attempts, const char *why,
                         struct store_recovery *out, struct err *e);

/* Idempotent requests (the API's Idempotency-Key): a request's key, who
 * sent it and where; strings borrowed. */
struct idem_key {
	const char *key, *actor, *route;
	const char *fingerprint;   /* of the request (its method, path and body) */
};

/* The answer stored for a key (owned; free with store_idem_free). */
struct idem_answer {
	int status;                /* 0 while the first request runs */
	char *body;
	char *location;            /* or NULL */
};

enum {
	STORE_IDEM_NEW = 0,        /* the key is taken for this request */
	STORE_IDEM_REPLAY = 1,     /* answered before: *out is that answer */
	STORE_IDEM_BUSY = 2,       /* the first request with it still runs */
	STORE_IDEM_MISMATCH = 3,   /* the key came with another request */
};

/* Takes key k for a request, or says what it was used for in the last 24
 * hours (a key held for over 2 minutes without an answer is taken over:
 * its request's process died).  -1 with e set on a store error. */
int store_idem_begin(struct store *s, const struct idem_key *k, struct idem_answer *out,
                     struct err *e);
/* Stores the answer for a key taken by store_idem_begin; status 0 frees
 * the key instead (the request failed in a way a retry may not repeat). */
int store_idem_finish(struct store *s, const struct idem_key *k, int status, const char *body,
                      const char *location, struct err *e);
void store_idem_free(struct idem_answer *a);

/* ---- best-of-N groups and confirmation (schema 9) ---- */

/* A group of tasks made from one request, run side by side; the reviewer
 * picks one.  Strings are owned. */
struct task_group {
	char id[TASK_ID_LEN + 1];
	char *text;
	double created;
	char *chosen;              /* the member picked, or NULL */
};
void task_group_free(struct task_group *g);
/* Adds the tasks of ns[0..n) as one group, in one transaction, with a
 * fresh group id (id_out) written into each one's group_id; ids_out[i]
 * gets the id of ns[i].  -2 with *queued set when max_queued of ns[0]
 * would be passed; -1 with e set on other errors. */
int store_group_create(struct store *s, const char *text, const struct task_new *ns, size_t n,
                       char id_out[TASK_ID_LEN + 1], char (*ids_out)[TASK_ID_LEN + 1],
                       size_t *queued, struct err *e);
/* The group id (or a unique prefix); -1 with ERR_NOT_FOUND when none. */
int store_group_get(struct store *s, const char *id, struct task_group *g, struct err *e);
/* Records the member picked (once: a second pick is refused). */
int store_group_choose(struct store *s, const char *id, const char *task_id, struct err *e);
/* Confirms the estimated cost of a task waiting in queued for it,
 * recorded as a decision "confirm" of actor; refused when the task needs
 * no confirmation (or has it). */
int store_task_confirm(struct store *s, const char *id, const char *actor, struct err *e);
/* The kind of round n of task id (struct task_round.kind). */
int store_round_set_kind(struct store *s, const char *id, int n, const char *kind,
                         struct err *e);
/* A reviewer's round (paddock shell --keep, shell.h): task id, at review
 * with no changes requested at round n - 1 with head `from`, gets round n
 * of kind "reviewer" from `from` to `head` with its gate summary (JSON)
 * and summary, started at unix time `started`; the task's head, round
 * and summary follow it, and a failed later round's record is cleared.
 * ERR_WRONG_STATE or ERR_CONFLICT, nothing changed, when the task moved
 * on meanwhile. */
int store_task_reviewer_round(struct store *s, const char *id, int n, const char *from,
                              const char *head, const char *gate, const char *summary,
                              double started, struct err *e);
/* The mean cost in USD of the tasks made from recipe that ended (done,
 * failed, rejected), and how many there were (*n 0: none, *mean 0). */
int store_recipe_spend(struct store *s, const char *recipe, double *mean, size_t *n,
                       struct err *e);

/* ---- decisions carried out by the scheduler (schema 14) ---- */

/* A decision that pushes (approve, push, a group's pick), recorded by
 * whoever made it and carried out by the process that runs the scheduler,
 * with that process's credentials (decide.h).  Strings are owned. */
struct store_action {
	long long id;
	char task[TASK_ID_LEN + 1];
	char *action;              /* "approve", "push" or "pick" */
	char *target;              /* pick: the group id; else NULL */
	char *notes;               /* NULL: none */
	char *actor;               /* who decided */
	double requested;
	char *state;               /* "pending", "running", "done", "failed" */
	char *by;                  /* running or ended: the process that took
	                              it ("serve (pid 12)"); else NULL */
	int result;                /* ended: 0 done, 1 the push or the pull
	                              request failed */
	char *outcome;             /* ended: the lines of what happened */
	char *error;               /* ended: why it failed, or NULL */
	double finished;
};
void store_action_free(struct store_action *a);
/* Records a pending action; its id goes to *id. */
int store_action_add(struct store *s, const char *task, const char *action, const char *target,
                     const char *notes, const char *actor, long long *id, struct err *e);
/* Action id; ERR_NOT_FOUND when none. */
int store_action_get(struct store *s, long long id, struct store_action *a, struct err *e);
/* Takes the oldest pending action for process `by` (pending -> running, in
 * one transaction, so that two takers never take one): 1 with a filled,
 * 0 when none is pending. */
int store_action_take(struct store *s, const char *by, struct store_action *a, struct err *e);
/* Ends a running action: state "done" or "failed", result, outcome (may
 * be NULL) and error (NULL: none). */
int store_action_end(struct store *s, long long id, const char *state, int result,
                     const char *outcome, const char *error, struct err *e);
/* Actions left running by a scheduler that died go back to pending (the
 * new owner calls it while it holds the scheduler's lock, before it takes
 * any); *n gets how many. */
int store_action_requeue(struct store *s, size_t *n, struct err *e);
/* The oldest action of task that has not ended (pending or running): 1
 * with a filled, 0 when none. */
int store_action_open(struct store *s, const char *task, struct store_action *a,
                      struct err *e);
/* How many actions are pending (not yet taken). */
int store_action_pending(struct store *s, size_t *n, struct err *e);

/* ---- GET /metrics (store_metrics.c) ---- */

/* One number of the store for metrics.h: key names it, label[] are its
 * labels' values in order ("" past the key's), value[] its values. */
struct store_metric {
	char *key;
	char *label[3];
	double value[3];
};
/* All of them, read in one transaction (one snapshot); the caller frees
 * them with store_metrics_free.  The keys:
 *   the counters of schema 16 (table metric_counts), value[0] the count:
 *     tasks (repo, status; a gauge), started (repo), ended (repo, status),
 *     failures (repo, reason), interrupted (repo, status: queued or lost),
 *     tokens (repo, agent, kind: input, output, cache_read, cache_write),
 *     cost (repo, agent; USD), rounds (repo), egress (endpoint, kind,
 *     verdict), webhook_failures, github_waits (api), step_seconds (step,
 *     le: a bucket's bound, not cumulative), step_seconds_sum (step);
 *   queue_oldest, gate_oldest: value[0] the unix time the longest waiting
 *     queued task was queued, or task at review came there (0: none),
 *     value[1] how many wait;
 *   kept: value[0] sandboxes kept for tasks that are not working;
 *   github_wait (api): value[0] the unix time GitHub's wait ends;
 *   open_task (id, repo, agent), each task between its start and its end:
 *     value[0] its cost (USD), [1] its tokens, [2] its own budget (-1:
 *     none of its own, the configuration's holds). */
int store_metrics_read(struct store *s, struct store_metric **out, size_t *n, struct err *e);
void store_metrics_free(struct store_metric *m, size_t n);

#endif
