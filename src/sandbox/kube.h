/* kube: paddock's one client of the Kubernetes REST API (libcurl,
 * jansson; no kubectl and no client library at run time), for the
 * kubernetes backend (DESIGN.md, "Beyond one machine: Kubernetes").
 *
 * Connection settings come from a kubeconfig file (its semantics: the
 * current context or a named one, that context's cluster, user and
 * namespace; relative file names are relative to the file's folder) or
 * from inside a cluster (KUBERNETES_SERVICE_HOST/PORT and the service
 * account's ca.crt, token and namespace).  Every request goes over https,
 * the server checked against the configured CA (the system's when none
 * is configured); insecure-skip-tls-verify is refused unless the caller
 * allows it.  A bearer token read from a file (tokenFile, the service
 * account's token) is read again whenever the file changes, as it
 * rotates; an exec plugin's credential is kept until its
 * expirationTimestamp, and asked again after a 401.
 *
 * What the server answers is believed only as data: a Status body
 * becomes a one-line message (quoted through sanitize), an event stream
 * is parsed line by line with a bound on a line's length.  No token, key
 * or certificate is ever put in a message: every message is also
 * scrubbed of the current token before it is left in struct err.
 *
 * 429 and 5xx answers (and failed connections) are retried with backoff,
 * a Retry-After honoured up to opts.retry_after_max seconds, at most
 * opts.retries times; 401 and 403 are not retried.  No request waits
 * longer than opts.timeout seconds, and no watch longer than its caller
 * asks.
 *
 * A struct kube is for one thread at a time. */
#ifndef PADDOCK_KUBE_H
#define PADDOCK_KUBE_H

#include <jansson.h>

#include "err.h"

/* The service account's files inside a pod. */
#define KUBE_INCLUSTER_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* The longest line of a watch stream (one event) believed. */
#define KUBE_EVENT_MAX (1024 * 1024)

struct kube_opts {
	/* A kubeconfig file.  NULL: $KUBECONFIG (a list of files, merged
	 * as kubectl merges them), else in
	 * the cluster when KUBERNETES_SERVICE_HOST is set, else
	 * ~/.kube/config. */
	const char *kubeconfig;
	int incluster;             /* 1: in the cluster, whatever is set */
	const char *context;       /* NULL: the kubeconfig's current-context */
	const char *namespace;     /* NULL: the context's (or the service
	                              account's) namespace */
	const char *incluster_dir; /* NULL: KUBE_INCLUSTER_DIR (tests) */
	int allow_insecure;        /* 1: insecure-skip-tls-verify is obeyed */
	double timeout;            /* seconds per request; 0: 30 */
	int retries;               /* retries of a 429, 5xx or failed
	                              connection; 0: 5, -1: none */
	double retry_after_max;    /* the longest wait believed; 0: 30 s */
	double exec_timeout;       /* an exec plugin's time; 0: 30 s */
};

struct kube;

/* Reads the connection settings (files, the exec plugin's definition;
 * the plugin itself runs at the first request).  Returns a struct kube
 * to free with kube_free, or NULL with e set (what is wrong, what to
 * do). */
struct kube *kube_open(const struct kube_opts *o, struct err *e);
void kube_free(struct kube *k);

/* The namespace of the context or the service account ("default" when
 * the context names none); static, owned by k. */
const char *kube_namespace(const struct kube *k);
/* The server's URL, as configured; owned by k. */
const char *kube_server(const struct kube *k);

/* The last answer's HTTP status (0: none came) and its Status reason
 * ("AlreadyExists", "Conflict", "NotFound", ...; "" when none), owned by
 * k until the next request. */
long kube_last_code(const struct kube *k);
const char *kube_last_reason(const struct kube *k);

/* One request: method on path (from /api...; with its query), body
 * (JSON text) or NULL.  Retries as above.  Returns the final HTTP status
 * with *out the parsed body (a new reference, NULL when it is not JSON)
 * when out is given, or -1 with e set when no answer came.  A status of
 * 400 and up is returned as such, e set to the Status body's message
 * with its kind (ERR_NOT_FOUND, ERR_CONFLICT, ERR_INVALID, ...). */
long kube_request(struct kube *k, const char *method, const char *path, const char *body,
                  json_t **out, struct err *e);

/* POSTs pod (a Pod object; borrowed) in kube_namespace().  Returns the
 * created Pod (new reference), or NULL with e set: a 409 is kind
 * ERR_CONFLICT with kube_last_reason() "AlreadyExists" (the caller adopts
 * the pod only when its labels say it is its own). */
json_t *kube_pod_create(struct kube *k, json_t *pod, struct err *e);
/* The Pod named name (new reference); NULL with e set, ERR_NOT_FOUND
 * when there is none. */
json_t *kube_pod_get(struct kube *k, const char *name, struct err *e);
/* Deletes the pod named name only while its uid is uid (NULL: any), with
 * grace_seconds (-1: the pod's own).  0 when the API took it; -1 with
 * e set: ERR_NOT_FOUND when it is gone, ERR_CONFLICT when the uid is
 * another's. */
int kube_pod_delete(struct kube *k, const char *name, const char *uid, int grace_seconds,
                    struct err *e);
/* The end of the pod's log (its last 40 lines, at most max bytes)
 * appended to out: what its container printed, the pod's data (sanitize
 * it before it is shown).  For diagnostics only.  0, or -1 with e set. */
struct buf;
int kube_pod_log(struct kube *k, const char *name, size_t max, struct buf *out, struct err *e);
/* The PodList of the pods matching a label selector ("a=b,c=d"; NULL:
 * all) in kube_namespace() (new reference; its metadata.resourceVersion
 * is where a watch of them starts). */
json_t *kube_pod_list(struct kube *k, const char *label_selector, struct err *e);

/* A TokenReview's answer (all owned; kube_review_free). */
struct kube_review {
	int authenticated;
	char *username;  /* user.username, quoted through sanitize; or NULL */
	char *pod_name;  /* extra authentication.kubernetes.io/pod-name, or NULL */
	char *pod_uid;   /* extra authentication.kubernetes.io/pod-uid, or NULL */
	char *error;     /* status.error, quoted and scrubbed; or NULL */
};

/* Asks the API whether token is valid for audience (POST a TokenReview):
 * what a bound (projected) token says about its pod.  Returns 0 with r
 * filled when the API answered (r->authenticated 0 or 1), -1 with e set
 * when it did not (no answer, 403 when paddock's user may not create
 * tokenreviews).  The token is never in a message, r's or e's. */
int kube_token_review(struct kube *k, const char *token, const char *audience, struct kube_review *r,
                      struct err *e);
void kube_review_free(struct kube_review *r);

enum kube_event_type {
	KUBE_EV_ADDED,
	KUBE_EV_MODIFIED,
	KUBE_EV_DELETED,
	KUBE_EV_RELIST,   /* a 410 ended the watch: the pod as listed again
	                     (NULL when the list has none) */
};

/* A watch of one pod.  Zero it, set name (borrowed, kept by the caller
 * while it is used) and, where a list or get gave one, rv (malloc'd, or
 * NULL: the watch starts with the pod as it is now); kube_watch_end frees
 * what kube_watch_pod put in it. */
struct kube_watch {
	const char *name;
	char *rv;            /* the last resourceVersion seen (an event's,
	                        a bookmark's, a re-list's); owned */
	unsigned bookmarks;  /* BOOKMARK events seen */
	unsigned relists;    /* 410s answered by a re-list */
	unsigned reconnects; /* streams that ended early and were opened
	                        again from rv */
	const int *wake_fd;  /* NULL, or a descriptor whose readability ends
	                        kube_watch_pod early (0, woken set): a caller
	                        that waits for something else as well */
	int woken;
};

/* Called with each event; obj is borrowed for the call.  A non-zero
 * return ends kube_watch_pod, which returns it. */
typedef int (*kube_event_fn)(enum kube_event_type type, json_t *obj, void *arg);

/* Watches w->name (fieldSelector=metadata.name=..., allowWatchBookmarks,
 * ended early when w->wake_fd polls readable,
 * from w->rv) for up to seconds: streams that end or drop are opened
 * again from the last resourceVersion seen, a 410 (the HTTP status or an
 * ERROR event with code 410) re-lists the pod and watches from the list's
 * resourceVersion.  Returns what fn returned (> 0), 0 when seconds passed,
 * or -1 with e set (an error answer, a line longer than KUBE_EVENT_MAX, a
 * line that is not a watch event, a stream that keeps dropping). */
int kube_watch_pod(struct kube *k, struct kube_watch *w, double seconds, kube_event_fn fn,
                   void *arg, struct err *e);
void kube_watch_end(struct kube_watch *w);

#endif
