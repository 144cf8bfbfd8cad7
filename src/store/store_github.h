/* store_github: the store's GitHub tables (schema 10): which issue and
 * pull request a task belongs to, what GitHub sent and what was done with
 * it, the reviews and comments already acted on, the rounds asked for
 * from GitHub, and the ETags of conditional requests (ghsync.h).
 *
 * Strings in the structs are owned by them (the _free functions). */
#ifndef PADDOCK_STORE_GITHUB_H
#define PADDOCK_STORE_GITHUB_H

#include <stddef.h>
#include "err.h"
#include "store.h"
#include "task.h"

/* A task's place on GitHub. */
struct gh_link {
	char task_id[TASK_ID_LEN + 1];
	char *gh_repo;             /* "owner/name" */
	long long issue;           /* the issue it came from; 0: none */
	long long issue_comment;   /* paddock's comment there; 0: none yet */
	char *issue_comment_body;  /* what that comment says now, or NULL */
	long long pr;              /* its pull request's number; 0: none */
	char *pr_state;            /* "open", "merged", "closed", or NULL */
	char *pr_head;             /* the head commit GitHub has, or NULL */
	char *checks;              /* "success", "failure", "pending", or NULL */
	int branch_deleted;        /* paddock deleted the branch on merge */
	double updated;
};
void gh_link_free(struct gh_link *l);
void gh_links_free(struct gh_link *l, size_t n);

/* 1 and *out when the task has a link, 0 when not, -1 on error. */
int store_github_link(struct store *s, const char *task_id, struct gh_link *out,
                      struct err *e);
/* The task an issue became: 1 and its id, 0 when none, -1. */
int store_github_issue_task(struct store *s, const char *gh_repo, long long issue,
                            char task_out[TASK_ID_LEN + 1], struct err *e);
/* The link of pull request pr of gh_repo, open or not: 1, 0, -1. */
int store_github_pr_link(struct store *s, const char *gh_repo, long long pr, struct gh_link *out,
                         struct err *e);
/* Writes l (insert or replace); -2 (e set) when another task already
 * holds l's issue. */
int store_github_link_put(struct store *s, const struct gh_link *l, struct err *e);
/* The links worth a look on a sync of gh_repo: a pull request not merged
 * or closed, or an issue whose comment may still change (its task not
 * final, or the comment not saying so yet). */
int store_github_links_live(struct store *s, const char *gh_repo, struct gh_link **out,
                            size_t *n, struct err *e);

/* What GitHub sent, or what a poll found, and what paddock did. */
struct gh_event {
	long long id;
	double time;
	char *source;              /* "webhook" or "poll" */
	char *event;               /* issues, issue_comment, pull_request_review, ... */
	char *delivery;            /* X-GitHub-Delivery, or NULL */
	char *actor;               /* the GitHub login, or NULL */
	char *gh_repo;
	long long number;          /* the issue or pull request; 0: none */
	char *verdict;             /* task, round, state, ignored, refused,
	                              duplicate, error */
	char *detail;              /* why, for a person */
	char *task_id;             /* or NULL */
};
void gh_events_free(struct gh_event *ev, size_t n);
/* The sender's fields (event, delivery) are kept as GH_FIELD_MAX printable
 * ASCII bytes at most; of the events refused (a bad or no signature, from
 * anyone), only the newest GH_REFUSED_KEPT stay: the store does not grow
 * with what strangers send. */
#define GH_FIELD_MAX 64
#define GH_REFUSED_KEPT 100
int store_github_event_add(struct store *s, const struct gh_event *ev, struct err *e);
/* Newest first; limit 0: all. */
int store_github_events(struct store *s, size_t limit, struct gh_event **out, size_t *n,
                        struct err *e);
/* 1 when a delivery with this id was recorded and acted on already. */
int store_github_delivery_seen(struct store *s, const char *delivery, struct err *e);

/* Marks a review, review comment or comment (kind, GitHub's id) as acted
 * on: 1 when it is new, 0 when it was seen already, -1. */
int store_github_seen_add(struct store *s, const char *gh_repo, const char *kind,
                          long long gh_id, const char *task_id, struct err *e);
int store_github_seen(struct store *s, const char *gh_repo, const char *kind, long long gh_id,
                      struct err *e);

/* Requests that wait for the task's round to end (seen rows of kind
 * "waiting-..."): _waiting 1 when the task has one, _clear forgets them. */
int store_github_waiting(struct store *s, const char *task_id, struct err *e);
int store_github_waiting_clear(struct store *s, const char *task_id, struct err *e);

/* A round asked for on GitHub: where to answer when it ends. */
struct gh_ask {
	char task_id[TASK_ID_LEN + 1];
	int round;                 /* the round it asked for */
	char *kind;                /* "review_comment" (answered in its thread)
	                              or "review", "issue_comment" (answered on
	                              the pull request's conversation) */
	long long gh_id;
	long long pr;
	char *actor;
};
void gh_asks_free(struct gh_ask *a, size_t n);
int store_github_ask_add(struct store *s, const struct gh_ask *a, struct err *e);
/* The asks not answered yet. */
int store_github_asks_open(struct store *s, struct gh_ask **out, size_t *n, struct err *e);
/* 1 when round `round` of the task was asked for on GitHub. */
int store_github_ask_for(struct store *s, const char *task_id, int round, struct err *e);
int store_github_ask_answered(struct store *s, const char *task_id, int round, struct err *e);

/* The ETag cache: 1 and the last 200 answer's ETag, body and Link header
 * (any may be NULL: *link), 0 when none. */
int store_github_etag(struct store *s, const char *url, char **etag, char **body, char **link,
                      struct err *e);
int store_github_etag_put(struct store *s, const char *url, const char *etag, const char *body,
                          const char *link, struct err *e);

/* GitHub asked paddock to wait (a rate limit): no request to the API at
 * base URL api before unix time until.  _backoff: 1 and until, why
 * (malloc'd) when a wait is recorded (past or not), 0 when none. */
int store_github_backoff_set(struct store *s, const char *api, double until, const char *why,
                             struct err *e);
int store_github_backoff(struct store *s, const char *api, double *until, char **why,
                         struct err *e);

#endif
