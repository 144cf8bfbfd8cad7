/* door: the receiving side of the front door (DESIGN.md, "Beyond one
 * machine: Kubernetes"; frontdoor.h is the other side), in the process
 * that made a pod.
 *
 * A pod's runner dials paddock's front door over TCP; the front door
 * checks its preamble and token, then hands its `runner` or `fault`
 * connection to the pod's door: the front door connects to the unix
 * SOCK_SEQPACKET socket <data>/door/<pod>.sock (paths_door_socket) and
 * sends ONE message
 *     <kind> <port> <pod-uid>\n[<message>\n]
 * with the connection as SCM_RIGHTS; door_runner takes it.  A `runner`
 * connection after the first is the session's next (its connection
 * broke: runner.h, runner_set_resume), and door_runner takes it the same
 * way while the door is open.  The socket is 0600 in a 0700 folder: only
 * paddock's own user hands anything in; a peer of another uid is closed.
 * The pod's gateway traffic needs nothing of the door: it comes as
 * streams on the runner's session (runner.h, runner_gateway), so the pod
 * reaches the same loopback endpoints as under bwrap through its one
 * connection.
 * A hand-off whose pod uid is not door_expect_uid's is closed (a stale
 * pod's).  Whatever the pod sends is passed on as data only; a fault's
 * message is quoted through sanitize.
 *
 * No thread and no process of its own: the process that made the pod
 * (a supervisor, which forks children) takes its runner's connection in
 * door_runner, while it waits for the pod anyway. */
#ifndef PADDOCK_DOOR_H
#define PADDOCK_DOOR_H

#include <stddef.h>
#include <sys/un.h>

#include "err.h"

/* The longest hand-off message: "<kind> <port> <uid>\n<message>\n". */
#define DOOR_MSG_MAX 1024
/* A fault's message, at most (the preamble's bound). */
#define DOOR_FAULT_MAX 512

struct door;

/* Makes <data_dir>/door/ (0700) and listens on <pod>.sock (0600; one
 * left by a dead process is replaced).  Strings are copied.  NULL with e
 * set when it cannot. */
struct door *door_open(const char *data_dir, const char *pod, struct err *e);
/* Once the pod is created (its metadata.uid): hand-offs of any other uid
 * are closed.  -1 with e set when it cannot be. */
int door_expect_uid(struct door *d, const char *pod_uid, struct err *e);
/* Takes the hand-offs until deadline (clock_mono; one in the past: what
 * waits now): returns the first `runner` connection's fd (the caller's
 * from now on, blocking mode; the socket stays, for the session's next
 * connection should this one break), or -1 with e set: a `fault` came
 * first (its message, quoted, copied into fault, which may be NULL) or
 * the deadline passed (ERR_UNAVAILABLE). */
int door_runner(struct door *d, double deadline, char *fault, size_t faultlen, struct err *e);
/* A descriptor that polls readable while a hand-off waits for
 * door_runner (the door's: never read or closed by the caller), so that
 * a caller can wait for it and for something else at once. */
int door_fd(const struct door *d);
/* Closes the socket and removes it.  NULL is fine. */
void door_close(struct door *d);

/* What both sides share. */
/* 1 when pod is a DNS-1123 label (lowercase letters, digits and '-', not
 * at either end) of 1..63 bytes: a pod name that is also a file name. */
int door_pod_ok(const char *pod);

#endif
