/* client: paddock's own client of a `paddock serve` HTTP API
 * (paddock-api(7)), for `paddock --server URL` (the CLI's verbs) and the
 * dashboard's API data source (source.h).
 *
 * Where it connects: URL is http:// or https:// with a host and an
 * optional port and path prefix (https://paddock.example.com/,
 * http://127.0.0.1:8080).  The token (a bearer token of the API's
 * [token] sections) goes only over https, or over plain http only to
 * this machine (127.0.0.0/8, localhost, [::1]): client_open refuses
 * anything else, so a token is never sent in the clear across a network.
 * Redirects are not followed (curlx); TLS is verified with the system's
 * CAs (or PADDOCK_SERVER_CA, a PEM file, for a private CA).
 *
 * What comes back is untrusted: bodies are capped (CLIENT_BODY_MAX), JSON
 * is parsed by jansson, and the API's error messages are passed on as the
 * server wrote them: whoever prints them sanitizes them (sanitize.h), as
 * for anything else from outside.
 *
 * Every call blocks (a dashboard calls them off its loop, or with short
 * timeouts); one struct client is used by one thread at a time. */
#ifndef PADDOCK_CLIENT_H
#define PADDOCK_CLIENT_H

#include <stddef.h>
#include <jansson.h>
#include "buf.h"
#include "err.h"

/* The most a response body may be (a diff, a log range, a list): larger
 * ones fail with ERR_REMOTE instead of filling memory. */
#define CLIENT_BODY_MAX (256u << 20)

struct client;

/* Opens a client of the API at url with token (NULL or "": none).  Both
 * strings are copied.  NULL with e set when url is not an http(s) URL, or
 * when a token would go over plain http to another machine. */
struct client *client_open(const char *url, const char *token, struct err *e);
void client_close(struct client *c);
/* The server's URL as given (borrowed). */
const char *client_url(const struct client *c);

/* A response: the HTTP status and the body, and the body parsed when it
 * is JSON (else json NULL).  Owned by the caller: client_resp_free. */
struct client_resp {
	long status;
	struct buf body;
	json_t *json;
	char *content_type;        /* NULL when none */
};
void client_resp_free(struct client_resp *r);

/* Sends method (GET, POST) to path (starting with "/", with its query
 * already escaped: client_escape), with body as JSON when not NULL, and
 * extra request headers (NULL-terminated "Name: value" strings, or NULL).
 * Returns the HTTP status (also in out->status) for any answer, 2xx or
 * not; -1 with e set only when no answer came (connection refused, TLS,
 * timeout, body over CLIENT_BODY_MAX).  timeout_s 0: 60 s. */
long client_request(struct client *c, const char *method, const char *path, json_t *body,
                    const char *const *headers, double timeout_s, struct client_resp *out,
                    struct err *e);

/* The API's answer as an error: for a status >= 400, sets e from the
 * body's {"error", "code"} (or the status line when the body is not
 * the API's) with the kind that status means (404 ERR_NOT_FOUND, 400/422
 * ERR_INVALID, 409 ERR_WRONG_STATE, ERR_BLOCKED or ERR_CONFLICT by
 * "code" (wrong_state, blocked, else), 401/403
 * ERR_FORBIDDEN, 503/429 ERR_UNAVAILABLE, 502 ERR_REMOTE, else
 * ERR_INTERNAL) and returns -1; 0 for 2xx and 3xx. */
int client_resp_error(const struct client_resp *r, struct err *e);

/* GET path, expecting JSON: the parsed body (new reference), or NULL with
 * e set from the API's error (client_resp_error) or the failure. */
json_t *client_get_json(struct client *c, const char *path, struct err *e);
/* "/tasks/ID" + rest (may be NULL; ID escaped with client_escape): a
 * new string. */
char *client_task_path(const char *id, const char *rest);
/* GET /tasks/ID: the task as a JSON object (new reference), or NULL with
 * e set (the API's error, or ERR_REMOTE when the answer is no object). */
json_t *client_get_task(struct client *c, const char *id, struct err *e);
/* POST body (may be NULL: {}) to path: the parsed answer (new reference;
 * json null for an empty 2xx body) or NULL with e set; *status (may be
 * NULL) gets the HTTP status (0 when none came). */
json_t *client_post_json(struct client *c, const char *path, json_t *body, long *status,
                         struct err *e);

/* One server-sent event of a stream: its id (may be ""), event type
 * ("message" when none) and data. */
struct client_event {
	const char *id, *type, *data;
};
/* Returns 0 to go on, non-zero to stop the stream (client_events returns
 * that value). */
typedef int (*client_event_fn)(void *arg, const struct client_event *ev);
/* Follows the server-sent events of path (GET, Accept: text/event-stream)
 * from last_id (NULL: the start), calling fn for each, until the server
 * ends the stream (0), fn stops it (its value) or it fails (-1, e set).
 * Comments (":ping") are skipped; no timeout while events or pings come. */
int client_events(struct client *c, const char *path, const char *last_id, client_event_fn fn,
                  void *arg, struct err *e);

/* s escaped for a URL's path segment or query value (RFC 3986
 * unreserved kept): a new string. */
char *client_escape(const char *s);

#endif
