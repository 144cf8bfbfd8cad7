/* github: a client of GitHub's REST API (and GitHub Enterprise's, at a
 * repo's github-api) for the front door (ghsync.h) and the pull requests
 * an approve opens (gate.h), with libcurl and jansson: paddock's one.
 *
 * Every request carries the documented headers (Accept:
 * application/vnd.github+json, X-GitHub-Api-Version: 2022-11-28, a
 * User-Agent, the repo's github token as a Bearer token, never over plain
 * http except to loopback).  GETs are conditional when the store holds an
 * ETag for the URL, and a 304 (which costs no rate limit) answers from
 * the stored body.  Lists follow Link rel="next", only to the same API.
 * A rate limit (403/429 with x-ratelimit-remaining: 0) or a secondary
 * limit (Retry-After) is kept in the store: no request goes to that API
 * before it ends, in this process or another; a short Retry-After (up to
 * github.max_wait) is waited out once, in the calling thread.
 *
 * Calls block on the network (30 s at most each): call them off any UI
 * loop. */
#ifndef PADDOCK_GITHUB_H
#define PADDOCK_GITHUB_H

#include <jansson.h>
#include "config.h"
#include "err.h"
#include "store.h"

struct github;

/* A client for r (its github-repo, github-api, token).  st (kept, not
 * owned; may be NULL) holds the ETags and back-offs.  -1 with a message
 * when r names no repository, has no token, or would send it over plain
 * http to another machine. */
int github_open(struct github **out, const struct repo_conf *r, struct store *st,
                struct err *e);
void github_close(struct github *g);
/* Longest Retry-After waited out in a call (seconds; 60 by default; 0:
 * none, the call fails at once). */
void github_set_max_wait(struct github *g, double secs);

/* GET path (from the API's base: "/repos/o/r/pulls/1"): *out the JSON
 * (new reference).  404 sets ERR_NOT_FOUND. */
int github_get(struct github *g, const char *path, json_t **out, struct err *e);
/* GET a list, every page: *out an array (new reference) of the pages'
 * arrays, or of their items_key arrays (search answers {"items": []}).
 * *unchanged (may be NULL) is 1 when every page was a 304. */
int github_get_list(struct github *g, const char *path, const char *items_key, json_t **out,
                    int *unchanged, struct err *e);
/* POST, PATCH or DELETE with a JSON body (or NULL): 0 and *out (may be
 * NULL; new reference, or NULL for an empty answer) for a 2xx; else -1
 * with GitHub's message, ERR_NOT_FOUND for 404, and *status (may be NULL)
 * the HTTP status (0: none came). */
int github_send(struct github *g, const char *method, const char *path, json_t *body,
                json_t **out, long *status, struct err *e);

/* The rate limit GitHub reported last (x-ratelimit-remaining, -reset):
 * -1 and 0 when none was seen. */
void github_rate(const struct github *g, long *remaining, long long *reset);
/* GitHub's words in an error answer's body: its "message" and the
 * messages (or field and code) of its "errors", without control
 * characters or a final period (malloc'd; "no message" when none). */
char *github_message(const char *body, size_t len);

/* Text from a sandbox (an agent's summary, an error that quotes a file
 * name) for a comment, a review reply or a pull request body on GitHub:
 * a fenced code block the text cannot end, so that nothing in it
 * mentions, links, embeds or renders as HTML.  Controls, bidi controls
 * and invalid UTF-8 show as marks (sanitize_visible), tabs and line
 * breaks pass; at most max bytes of it (cut at a character, then "…");
 * the fence is a run of backticks longer than any in the text (three at
 * least), alone on its first and last line.  Every place paddock posts
 * such text goes through this.  "" for empty text (malloc'd). */
char *github_quote(const char *text, size_t max);

/* URL-encodes s for a query string (malloc'd). */
char *github_escape(const char *s);

/* ---- pull requests ---- */

struct github_pull_request {
	const char *branch;        /* head */
	const char *title;
	const char *body;          /* markdown */
};

/* Opens a pull request for r->github_repo: POST /repos/{owner}/{repo}/pulls
 * with head, base (r->branch), title, body and draft, as every request of
 * this client (the headers, the token, the rate limits and back-offs kept
 * in st, which may be NULL).  So a rate limit the sync was told of delays
 * (or refuses) the pull request, and one the pull request is told of
 * delays the next sync.  Blocks (a request of up to 30 s, and a back-off
 * of up to 60 s waited out): call it off any UI loop.  On success
 * *url_out is the pull request's html_url (malloc'd); on failure it is
 * NULL.  401, 403, 404, 422 (including "A pull request already exists"),
 * rate limits (with the reset time) and network errors get a message a
 * person can act on, never containing the token. */
int github_pull_request_open(const struct repo_conf *r, struct store *st,
                             const struct github_pull_request *pr, char **url_out,
                             struct err *e);
/* When the wait GitHub asked for (a rate limit, Retry-After) at r's API,
 * kept in st, ends: unix time, 0 when none is recorded. */
double github_backoff_until(const struct repo_conf *r, struct store *st);
/* Test mode (paddock add --dry-run): what github_pull_request_open would
 * send, sending nothing: {"method", "url", "body" (the JSON object it
 * would POST), "problem" (why it would refuse to send it before any
 * network access, such as no GitHub token, or null)}; JSON null when pr
 * is NULL or r opens no pull requests.  New reference. */
json_t *github_pull_request_dry_run(const struct repo_conf *r,
                                    const struct github_pull_request *pr);

#endif
