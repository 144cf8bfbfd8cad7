/* gate: the review gate's actions, the engine calls behind `paddock
 * approve|push|reject|request-changes|override` (and the dashboard's keys).
 *
 * Each action checks the task's state and refuses with a message that
 * names the state and what can be done; each decision is recorded with the
 * round, notes, actor and time.  approve and push run here, in the calling
 * process (a dashboard runs them off its loop); a person's approve, push or
 * pick is usually recorded instead and carried out here by the process that
 * runs the scheduler, with its credentials (decide.h); a request for changes is
 * recorded for the scheduler, which continues the agent in the task's kept
 * sandbox (or a rebuilt one). */
#ifndef PADDOCK_GATE_H
#define PADDOCK_GATE_H

#include <stdint.h>
#include <jansson.h>
#include "buf.h"
#include "config.h"
#include "err.h"
#include "store.h"

struct gate_ctx {
	const struct config *cfg;
	const char *data_dir;
	struct store *st;
	const char *actor;         /* who decides (gate_actor() by default) */
	size_t max_queued;         /* gate_follow_up: refused (-2) when this many
	                              tasks are queued; 0: no limit */
};

/* Takes the task's push lock (held while a process pushes it): an fd to
 * close when done, or -1 when another push holds it. */
int gate_push_lock(const char *data_dir, const char *id, struct err *e);
/* 1 when no process pushes the task now. */
int gate_push_lock_free(const char *data_dir, const char *id);

/* A task left pushing by a process that died (its push lock is free):
 * asks the remote where the branch is.  At the task's head: the push is
 * recorded and what it was for finishes (an approve: the pull request,
 * the decision, done; a push: the decision, back at review).  Anywhere
 * else, or when the remote cannot be asked: back at review with "the
 * push did not complete" as the task's error.  What happened is appended
 * to out.  0 with nothing done when the task is not pushing or its push
 * is alive.  Blocks on the network. */
int gate_recover_push(const struct gate_ctx *g, const char *id, struct buf *out,
                      struct err *e);
/* The user name of this process (for decisions): SUDO_USER, USER or the
 * password database's, found once; safe from any thread. */
const char *gate_actor(void);
/* The context of decisions by actor (NULL: gate_actor()) on the store st
 * of data_dir; the strings are borrowed, not copied.  Set max_queued
 * after, where a limit applies. */
struct gate_ctx gate_ctx_of(const struct config *cfg, const char *data_dir, struct store *st,
                            const char *actor);

/* Whether g->actor may make the decision action ("approve", "push",
 * "request-changes", "reject", "override", "pick", "confirm") on task t,
 * by t's repo's reviewers and four-eyes (an approve or pick by whoever
 * queued t): 0 when so; else -1 with e saying why (kind ERR_FORBIDDEN),
 * the refusal recorded in t's history (gate_refusal).  The CLI's and the
 * API's decisions ask it (the scheduler's and GitHub's do not: they are
 * no person's).  -1 of another kind: the store failed. */
int gate_may_decide(const struct gate_ctx *g, const struct task_row *t, const char *action,
                    struct err *e);
/* The same for the task of id (or a unique prefix of it). */
int gate_may_decide_id(const struct gate_ctx *g, const char *id, const char *action,
                       struct err *e);
/* Records in task id's history that actor was refused action: a decision
 * "refused" whose notes are "ACTION: WHY" (why: one line). */
int gate_refusal(struct store *st, const char *id, const char *actor, const char *action,
                 const char *why, struct err *e);

/* Pushes the branch, opens the pull request when the repo has one
 * configured, and ends the task as done.  What happened is appended to
 * out (one line per fact: pushed, pull request URL).  1 (e set, kind
 * ERR_REMOTE) when the task is done but its pull request failed to open:
 * the failure is on the task (pr_error, store.h), its webhook
 * (pull-request-failed) queued, and the scheduler tries again later
 * (gate_pr_scheduled). */
int gate_approve(const struct gate_ctx *g, const char *id, const char *notes,
                 struct buf *out, struct err *e);
/* Tries the pull request of a done task again now (`paddock pr`, POST
 * /tasks/ID/pull-request, the gate's key): under the task's push lock,
 * so that two tries do not open two.  0 when it opened (out says its
 * URL; the failure is cleared); -1 with e: ERR_WRONG_STATE when the task
 * is not done and pushed, has one already or its repo opens none,
 * ERR_CONFLICT when another process tries it now, ERR_REMOTE when it
 * failed again (recorded as gate_approve's failure is).  Blocks on the
 * network. */
int gate_pr_retry(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e);
/* The scheduler's try of a pull request due (store_task_pr_due):
 * gate_pr_retry, a failure or a refusal being only a line in out; -1
 * only when the store fails. */
int gate_pr_scheduled(const struct gate_ctx *g, const char *id, struct buf *out,
                      struct err *e);
/* 0 when no decision of task id that pushes (approve, push, a pick)
 * waits for the scheduler (decide.h); else -1 with e (ERR_CONFLICT)
 * saying that action may not be taken until it has its outcome.  The
 * reject, request-changes, override and cancel here ask it themselves;
 * an approve or push made in serve asks it first (the scheduler's own
 * carrying out of the waiting one must not). */
int gate_action_waits(const struct gate_ctx *g, const char *id, const char *action,
                      struct err *e);
/* Whether approve or push (action) may be made on task id now, as
 * gate_approve and gate_push check it (at review, nothing pending, work,
 * no finding that blocks it), without doing anything: 0, or -1 with e
 * saying why.  A decision recorded for the scheduler (decide.h) is
 * checked so first. */
int gate_ready(const struct gate_ctx *g, const char *id, const char *action, struct err *e);
/* Pushes the branch now; the task stays at review. */
int gate_push(const struct gate_ctx *g, const char *id, struct buf *out, struct err *e);
/* Ends the task without pushing; the branch stays in the mirror. */
int gate_reject(const struct gate_ctx *g, const char *id, const char *notes, struct err *e);
/* Cancels the task (store_task_cancel: 1 cancelled, 2 requested), after
 * recovering a push left by a dead process (gate_recover_push). */
int gate_cancel(const struct gate_ctx *g, const char *id, struct err *e);
/* Queues a follow-up of a finished task (store_task_follow_up) with notes
 * (non-empty) as its prompt; the new id goes to id_out.  -2 (nothing
 * added) when g->max_queued tasks are queued. */
int gate_follow_up(const struct gate_ctx *g, const char *id, const char *notes,
                   char id_out[TASK_ID_LEN + 1], struct err *e);
/* The notes of the task's last request for changes (free them), for
 * sending them again after the round they asked for did not reach
 * review; NULL with a message when there are none. */
char *gate_last_notes(struct store *st, const char *id, struct err *e);
/* Sends the task back to its agent with notes (non-empty). */
int gate_request_changes(const struct gate_ctx *g, const char *id, const char *notes,
                         struct err *e);
/* The same with the task's review draft (store_draft_list): its comments,
 * each as "PATH:LINE: the line's text" (":LINE (removed):" for a line of
 * the old file) and the comment under it, then notes, go out as one
 * request; the comments sent leave the draft in the same transaction.
 * notes may be empty when the draft is not.  *sent: how many comments
 * went. */
int gate_request_changes_draft(const struct gate_ctx *g, const char *id, const char *notes,
                               size_t *sent, struct err *e);
/* The notes gate_request_changes_draft sends for comments c and notes
 * (NULL or blank: none); newly allocated. */
char *gate_draft_notes(const struct review_comment *c, size_t n, const char *notes);
/* Overrides a block finding of the current round by name. */
int gate_override(const struct gate_ctx *g, const char *id, const char *finding,
                  const char *notes, struct err *e);

/* ---- the gate summary of a round ----
 * What the reviewer decides on: the pipeline fills one when a round's
 * work is imported, the store keeps it per round as JSON
 * (gate_summary_to_json), `paddock show --json` and the API print that
 * JSON, and the gate, `paddock show` and the dashboard read it back
 * (gate_summary_load).  Strings are owned (gate_summary_free); NULL reads
 * as "". */

/* One run of the repo's test command. */
struct gate_tests {
	int ran;                   /* 0: no test command (nothing below is set) */
	int passed;
	int exited;                /* 1: it exited with status code; 0: it was
	                              killed or timed out ("exit": null) */
	int code;
	int verified;              /* tests.after: run on a clean checkout of the
	                              head (template_verify) */
	char *tail;                /* the output's last lines, sanitized */
	char *log;                 /* where the whole output is */
};

/* A policy finding (policy.h). */
struct gate_finding {
	char *name;                /* "rule:path", what an override names */
	char *rule;                /* config_policy_rule_name(), or "policy" for
	                              a check that could not run */
	enum policy_action action; /* POLICY_BLOCK or POLICY_WARN */
	char *path;                /* the file concerned ("" for an author) */
	char *detail;
	int overridden;            /* overridden in the summary's round
	                              (gate_summary_load; never stored) */
};

struct gate_summary {
	int round;
	char *branch, *from, *head;  /* NULL: not in the JSON */
	char *summary;             /* the agent's own summary */
	char *diffstat;            /* diff --stat of base..head */
	struct {
		struct gate_tests before;  /* on the base (the template's run) */
		struct gate_tests after;   /* on a clean checkout of the head: the
		                              result the gate and the contract use */
		struct gate_tests agent;   /* in the agent's own sandbox */
		int mismatch;              /* after and agent disagree */
	} tests;
	struct gate_finding *findings;
	size_t nfindings;
	int has_contract;          /* 0: a summary from before the contract */
	struct {
		int change, tests, bundle; /* each part holds (or is not asked for) */
		/* The task's own output contract (recipe.h), each clause and
		 * whether it held; none: the default one (a change, the tests). */
		struct gate_clause {
			char *clause;
			int held;
		} *clauses;
		size_t nclauses;
	} contract;
	int fix_rounds;            /* the fix loop's rounds this round took
	                              (pipeline.h): 0 when none */
	int has_usage;             /* the round ran behind a gateway */
	struct {
		uint64_t input, output, cache_read, cache_write, requests;
		double cost;           /* USD */
		int priced;            /* every model used has a price */
		double budget;         /* USD the task may spend; 0: no limit */
	} usage;
	int has_egress;
	struct {
		uint64_t allowed, refused;
	} egress;
};

/* Appends a finding to s (copies of the strings). */
void gate_summary_add_finding(struct gate_summary *s, const char *name, const char *rule,
                              enum policy_action action, const char *path,
                              const char *detail);
/* The JSON the store keeps (and show --json and the API print), keys in
 * their documented order (doc/paddock-api.json, "Gate"); "overridden" is
 * not part of it.  New reference. */
json_t *gate_summary_to_json(const struct gate_summary *s);
/* Parses a stored summary into out (zeroed first; gate_summary_free it
 * either way).  A missing member takes its default (a summary from an
 * older paddock: no "agent" run, no "mismatch", no "contract", no
 * "usage"), and so does one of another type, as readers have always
 * taken it.  -1 when json is not a JSON object. */
int gate_summary_parse(const char *json, struct gate_summary *out, struct err *e);
void gate_summary_free(struct gate_summary *s);
/* The summary of the task's latest round that has one, each finding's
 * "overridden" set from the decisions of that round: 1 with out filled,
 * 0 when there is none (out is then empty), -1 when the store cannot be
 * read. */
int gate_summary_load(struct store *st, const struct task_row *t, struct gate_summary *out,
                      struct err *e);
/* The same summary as JSON, as stored, with "overridden" (true or false)
 * added to each finding, for the JSON outputs (show --json, the API);
 * NULL (and no error) when there is none.  New reference. */
json_t *gate_summary_json(struct store *st, const struct task_row *t, struct err *e);
/* The same for round `round` (0: the latest): what its gate showed. */
json_t *gate_summary_json_round(struct store *st, const struct task_row *t, int upto,
                                struct err *e);
/* "block", "warn" or "off". */
const char *gate_action_name(enum policy_action a);
/* The order findings are shown in, the same in show and the gate view:
 * 0 for a block that stands, 1 for a warning, 2 for one overridden. */
#define GATE_FINDING_RANKS 3
int gate_finding_rank(const struct gate_finding *f);
/* When the tests' verified result (a clean checkout of the head) and the
 * agent's own run disagree, a sentence that says which way, in lines of
 * at most 60 columns (translated, static); else NULL.  s may be NULL. */
const char *gate_mismatch(const struct gate_summary *s);
/* 1 when the summary's round is a later one that changed nothing: its
 * head is where it started (the agent made no commit). */
int gate_round_unchanged(const struct gate_summary *s);
/* What the fix loop did, a sentence (translated, malloc'd): "tests passed
 * after 2 fix rounds", "tests still failed after 3 fix rounds"; NULL when
 * it did nothing.  s may be NULL. */
char *gate_fix_note(const struct gate_summary *s);
/* The output contract as the gate shows it: "no-change: yes  summary: no"
 * (the task's own clauses, else change, tests, bundle), appended to out;
 * returns 1 when every part held. */
int gate_contract_text(const struct gate_summary *s, struct buf *out);
/* Names of block findings not overridden, ", "-separated (empty: none). */
void gate_blocking(const struct gate_summary *s, struct buf *out);

#endif
