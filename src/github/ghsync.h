/* ghsync: GitHub as a front door.  Issues become tasks, reviews and
 * comments on paddock's pull requests become rounds, and pull requests are
 * followed to their end (github.h speaks the REST API; store_github.h
 * keeps what was seen).
 *
 * A sync of a repo that follows GitHub (config_repo_github_follows):
 *   - its open issues that match github-issues (a conditional request: an
 *     unchanged list costs no rate limit) each become one task, ever,
 *     through the recipe fix-bug when there is one; paddock keeps one
 *     comment on the issue up to date with the task (queued, working, at
 *     the gate, failed, done, merged), editing it rather than adding more;
 *   - each pull request of a task is read: state (open, merged, closed),
 *     its head's check runs; merged marks the task (a decision "merged";
 *     a task at review becomes done), and with github-delete-branch its
 *     branch is deleted (only one under the branch prefix); closed is
 *     recorded;
 *   - on an open pull request, a review that requests changes, or a review
 *     comment or conversation comment that mentions @github-handle, by one
 *     of github-reviewers (a login or an active member of an @org/team),
 *     asks for changes: the line comments go to the agent as
 *     "PATH:LINE: the line" and the comment, as the dashboard's do, and
 *     round N+1 starts (a done task goes back to review for it).  Anyone
 *     else's is ignored and recorded.  The round, when its tests pass and
 *     no policy finding blocks, is pushed to the same branch (autogate.h)
 *     and the task is done again; paddock answers in the thread (or the
 *     conversation) with the round's result.
 * A webhook delivery (ghsync_webhook) acts on its event the same way.
 * Every event, acted on or not, is recorded (store_github_events).
 *
 * Work that decides (an issue's task, a round) runs under an flock of
 * <data>/github.lock, so that a poll and a webhook, in one process or
 * two, make one task of one issue.  Calls block on the network: call
 * them off any UI loop. */
#ifndef PADDOCK_GHSYNC_H
#define PADDOCK_GHSYNC_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "config.h"
#include "err.h"
#include "logger.h"
#include "store.h"

struct ghsync {
	const struct config *cfg;
	const char *data_dir;
	struct store *st;
	const char *source;        /* "poll" or "webhook" (events record it) */
	json_t *actions;           /* what was done, in order: objects {kind,
	                              repo, number, task, detail} (owned) */
	long remaining;            /* the last rate limit seen (-1: none) */
	long long reset;
	double max_wait;           /* longest Retry-After waited out (60 s) */
	unsigned nevents;          /* events recorded so far */
	int outbound_only;         /* read no lists (issues, reviews, comments,
	                              pull requests): only keep paddock's issue
	                              comments and answers up to date, for
	                              github.poll = 0 (the webhook tells) */
};

void ghsync_init(struct ghsync *s, const struct config *cfg, const char *data_dir,
                 struct store *st, const char *source);
void ghsync_free(struct ghsync *s);

/* One pass over repo r.  -1 with e set when GitHub could not be read
 * (what was done before stays done, and is in s->actions). */
int ghsync_repo(struct ghsync *s, const struct repo_conf *r, struct err *e);
/* One pass over every repo that follows GitHub (only: just that one, by
 * name; -2 with e set when it does not exist or does not follow
 * GitHub).  Each repo that fails is an action "error", as is anything
 * that could not be done on the way; -1 (e: the first) when there is
 * one. */
int ghsync_all(struct ghsync *s, const char *only, struct err *e);

/* 1 when header ("sha256=<64 hex>") is the HMAC-SHA256 of body under
 * secret, compared in constant time; 0 otherwise. */
int ghsync_signature_ok(const char *secret, const char *body, size_t len, const char *header);
/* 1 when text mentions @handle (case aside; not as part of a longer
 * login or of an e-mail address). */
int ghsync_mentions(const char *text, const char *handle);
/* The webhook secret of cfg ([github] webhook-secret-env or -file;
 * malloc'd), or NULL when none is set. */
char *ghsync_secret(const struct config *cfg);
/* A delivery whose signature verified: event is X-GitHub-Event, delivery
 * X-GitHub-Delivery (may be NULL).  *answer (new reference): {"event",
 * "delivery", "result" (task, round, state, ignored, duplicate, pong),
 * "task", "detail"}.  -1 with e set (ERR_INVALID) for a body that is not a
 * JSON object. */
int ghsync_webhook(struct ghsync *s, const char *event, const char *delivery,
                   const char *body, size_t len, json_t **answer, struct err *e);
/* Records a delivery refused before it was read (a bad signature): the
 * store keeps only the newest refusals, their fields cut
 * (store_github_event_add). */
void ghsync_refused(struct store *st, const char *event, const char *delivery,
                    const char *why);

/* serve's poller: a thread that runs ghsync_all every cfg->github_poll
 * seconds (the first at once) with its own store connection, saying
 * what it did to log (logger.h, borrowed; may be NULL): event github.KIND
 * for each action, github.error at error; with github.poll = 0 and a
 * webhook secret, every 10 s, outbound only (paddock's comments and
 * answers).  NULL when no repo follows GitHub, or neither polling nor
 * the webhook is on.  _stop ends it (a sync under way finishes
 * first) and frees it. */
struct ghsync_poller;
struct ghsync_poller *ghsync_poller_start(const struct config *cfg, const char *data_dir,
                                          struct logger *log);
void ghsync_poller_stop(struct ghsync_poller *p);

/* The words for a task's pull request in show and the list: "open",
 * "merged", "closed", with "; checks: X" when known (malloc'd), or NULL
 * when the task has no GitHub link. */
char *ghsync_pr_words(struct store *st, const char *task_id);
/* The same words for a link already read (l: its pr_state and checks);
 * NULL when it has no state.  Newly allocated. */
struct gh_link;
char *ghsync_link_words(const struct gh_link *l);

/* How many errors the syncs of this process met since it started (a repo
 * that could not be read, an issue that could not become a task, a
 * branch not deleted): GET /metrics's paddock_github_sync_errors_total. */
unsigned long ghsync_errors(void);

#endif
