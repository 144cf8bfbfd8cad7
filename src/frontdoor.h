/* frontdoor: the kubernetes backend's front door (DESIGN.md, "Beyond one
 * machine: Kubernetes"), a listener of the process that runs the
 * scheduler: every connection a sandbox pod's runner makes to paddock.
 *
 * Each connection starts with a preamble:
 *     PADDOCK-DOOR 1 <kind> <pod> <port>\n
 *     <token>\n
 *     [<message>\n]          (kind fault only)
 * kind runner or fault (gateway, which earlier runners sent for each
 * agent connection, is refused: the gateway is reached through the
 * runner's own session, runner.h); port 0;
 * pod a DNS-1123 label of at most 63 bytes (door_pod_ok); token 1..8192
 * bytes of [A-Za-z0-9._-] (the pod's projected service-account token);
 * message at most 512 bytes without control characters.  At most
 * FRONTDOOR_PREAMBLE_MAX bytes in all, within FRONTDOOR_PREAMBLE_SECS of
 * the connect.  The preamble is read without reading past it (MSG_PEEK,
 * then exactly its bytes): what follows is the runner protocol, for the
 * hand-off.  Nothing is answered before it.
 *
 * The token is checked by a TokenReview (kube.h) with paddock's audience:
 * authenticated, the user system:serviceaccount:<ns>:paddock-sandbox
 * (KUBE_SPEC_SERVICE_ACCOUNT), and the pod-name extra equal to the
 * preamble's pod: another pod's token is refused.  Reviews run on
 * FRONTDOOR_REVIEWERS threads of their own (each with its own struct kube)
 * from a bounded queue, so a slow API stalls no preamble.  An accepted
 * review is cached per token (its SHA-256) for FRONTDOOR_CACHE_SECS at
 * most, and forgotten once the pod's door is gone (the pod ended).
 *
 * Then the connection is handed to the process that made the pod:
 * door.h's socket <data>/door/<pod>.sock gets one message
 * "<kind> <port> <pod-uid>\n[<message>\n]" with the connection as
 * SCM_RIGHTS.  No socket there: the connection is closed.  The front door
 * relays nothing itself: the pod's gateway traffic comes as streams on
 * its runner's session, which that process relays (runner.h).
 *
 * Every refusal closes the connection without an answer and writes one
 * line to the log: "paddock: front door: refused ADDR[ (pod POD)]: WHY",
 * sanitized, never with the token; at most FRONTDOOR_LOG_BURST lines a
 * second, the rest counted in the next line that is written.
 *
 * Bounds: FRONTDOOR_PENDING connections in preamble at once (the oldest
 * dropped beyond), a connection whose complete preamble waits for its
 * review counting as one; FRONTDOOR_QUEUE reviews queued or under way
 * (more wait their turn). */
#ifndef PADDOCK_FRONTDOOR_H
#define PADDOCK_FRONTDOOR_H

#include <stdio.h>

#include "config.h"
#include "err.h"
#include "kube.h"

#define FRONTDOOR_PREAMBLE_MAX 10240
#define FRONTDOOR_PREAMBLE_SECS 10.0
#define FRONTDOOR_TOKEN_MAX 8192
#define FRONTDOOR_PENDING 512
#define FRONTDOOR_REVIEWERS 4
#define FRONTDOOR_QUEUE 64
#define FRONTDOOR_CACHE_SECS 60.0
#define FRONTDOOR_CACHE_MAX 1024
#define FRONTDOOR_LOG_BURST 20

struct frontdoor_opts {
	const char *listen;         /* ADDRESS:PORT or [ADDRESS]:PORT; port 0:
	                               one the kernel picks (frontdoor_port) */
	const char *data_dir;       /* where door/<pod>.sock are */
	const struct kube_opts *kube; /* how each reviewer opens the API */
	const char *ns;             /* the sandboxes' namespace; NULL: the
	                               API connection's (kube_namespace) */
	const char *audience;       /* NULL: KUBE_SPEC_AUDIENCE */
	FILE *log;                  /* refusals; NULL: stderr */
	double preamble_secs;       /* 0: FRONTDOOR_PREAMBLE_SECS */
	int max_pending;            /* 0: FRONTDOOR_PENDING */
	int max_reviews;            /* 0: FRONTDOOR_QUEUE */
};

struct frontdoor;

/* Opens the reviewers' API connections, listens and starts the threads
 * (all signals blocked in them).  Raises the soft limit of open files
 * toward 4096 where it is lower (a connection in preamble holds one).
 * Strings are copied.  0, or -1 with e set. */
int frontdoor_start(const struct frontdoor_opts *o, struct frontdoor **out, struct err *e);
/* The same from the configuration's [kubernetes] section (kubeconfig,
 * context, namespace, audience, front-door-listen or 0.0.0.0 and
 * front-door's port), logging to stderr. */
int frontdoor_start_config(const struct config *cfg, const char *data_dir, struct frontdoor **out,
                           struct err *e);
/* The port it listens on. */
int frontdoor_port(const struct frontdoor *f);
/* Stops the threads (a review in flight is waited for, within the API
 * timeout), closes every connection not handed on, frees f.  NULL is
 * fine. */
void frontdoor_stop(struct frontdoor *f);

#endif
