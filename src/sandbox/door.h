/* door: the receiving side of the front door (DESIGN.md, "Beyond one
 * machine: Kubernetes"; frontdoor.h is the other side), in the process
 * that made a pod.
 *
 * A pod's runner dials paddock's front door over TCP; the front door
 * checks its preamble and token and hands the TCP connection to the pod's
 * door: it connects to the unix SOCK_SEQPACKET socket
 * <data>/door/<pod>.sock (paths_door_socket) and sends ONE message
 *     <kind> <port> <pod-uid>\n[<message>\n]
 * with the connection as SCM_RIGHTS (kind runner, gateway or fault; port
 * the gateway port, 0 otherwise; message a fault's).  The socket is
 * 0600 in a 0700 folder: only paddock's own user hands anything in.
 *
 * door_open starts one thread (all signals blocked) that takes the
 * hand-offs: `gateway` ones are connected to the unix socket
 * <bridge_dir>/<port> (the task's gateway, gateway.h "The bridge") and
 * relayed there both ways by that thread (at most DOOR_RELAYS at once,
 * DOOR_RELAY_BUF bytes buffered each way, half-closes passed on; a
 * gateway whose listen backlog is full is not waited for: that connection
 * is closed, as one beyond DOOR_RELAYS is); `runner`
 * and `fault` ones are kept for door_runner.  A hand-off whose pod uid is
 * not door_expect_uid's is closed (a stale pod's), as is a gateway
 * hand-off before the uid is known.  Whatever the pod sends is relayed or
 * passed on as data only; a fault's message is quoted through sanitize. */
#ifndef PADDOCK_DOOR_H
#define PADDOCK_DOOR_H

#include <stddef.h>
#include <sys/un.h>

#include "err.h"

/* The longest hand-off message: "<kind> <port> <uid>\n<message>\n". */
#define DOOR_MSG_MAX 1024
/* A fault's message, at most (the preamble's bound). */
#define DOOR_FAULT_MAX 512
/* Gateway connections relayed at once per pod; beyond, closed. */
#define DOOR_RELAYS 256
/* Bytes buffered per direction of a relay. */
#define DOOR_RELAY_BUF 16384

struct door;

/* Makes <data_dir>/door/ (0700) and listens on <pod>.sock (0600; one
 * left by a dead process is replaced), and starts the thread.
 * bridge_dir: the gateway's socket folder, or NULL (gateway hand-offs are
 * closed).  Strings are copied.  NULL with e set when it cannot. */
struct door *door_open(const char *data_dir, const char *pod, const char *bridge_dir, struct err *e);
/* Once the pod is created (its metadata.uid): hand-offs of any other uid
 * are closed from now on, and those kept with another are closed now. */
void door_expect_uid(struct door *d, const char *pod_uid);
/* Waits until deadline (clock_mono) for the first `runner` hand-off:
 * returns its fd (the caller's from now on, blocking mode), or -1 with e
 * set: a `fault` came first (its message, quoted, copied into fault,
 * which may be NULL) or the deadline passed.  Later `runner` hand-offs
 * are closed (one session per pod). */
int door_runner(struct door *d, double deadline, char *fault, size_t faultlen, struct err *e);
/* Stops the thread, closes every relay and kept connection, unlinks the
 * socket.  NULL is fine. */
void door_close(struct door *d);

/* What both sides share. */
/* 1 when pod is a DNS-1123 label (lowercase letters, digits and '-', not
 * at either end) of 1..63 bytes: a pod name that is also a file name. */
int door_pod_ok(const char *pod);
/* sa for the unix socket path, through /proc/self/fd/<dirfd> when the
 * path is longer than sun_path holds (*dirfd then open: the caller closes
 * it after connect or bind; else -1).  0, or -1 with e set. */
int door_addr(const char *path, struct sockaddr_un *sa, int *dirfd, struct err *e);

#endif
