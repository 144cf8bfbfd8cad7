/* shell_int: the protocol between a shell's client (shell_client.c) and
 * the supervisor that serves it (shell.c); nothing else uses it.
 *
 * A SOCK_SEQPACKET unix socket; each message is one frame: a type byte,
 * then its payload (at most SHELL_FRAME_MAX bytes).
 *   client                         supervisor
 *   R {request}            ->
 *                          <-      A {"round","head"}  or  X TEXT (refused)
 *   I BYTES (typed) ...    ->      ...  O BYTES (printed), e BYTES (stderr, pipes)
 *   W "ROWS COLS", E (stdin ended, pipes)
 *                          <-      S {"end","code","status","why","hit"}
 *   (keep:)                <-      P {"round","from","head","summary","tests"}
 *                                  (the gate summary in paths_task_shell_gate)
 *   K {"ok","error"}       ->
 *                          <-      D {"kept","round","head","tests","error"}
 * The request: {"argv": [...] or absent for a shell, "keep", "tty",
 * "rows", "cols", "term", "actor"}.  D's "kept": "reset" (the workspace is
 * back at the head), "none" (keep, and nothing changed), "round" (kept
 * as that round), "failed" (keep refused or failed: "error"), "broken"
 * (the workspace could not be put back; the sandbox goes). */
#ifndef PADDOCK_SHELL_INT_H
#define PADDOCK_SHELL_INT_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include "buf.h"
#include "err.h"

#define SHELL_FRAME_MAX 16384

enum shell_msg {
	SHELL_REQUEST = 'R',
	SHELL_INPUT = 'I',
	SHELL_WINCH = 'W',
	SHELL_EOF = 'E',
	SHELL_ANSWER = 'K',
	SHELL_ACCEPT = 'A',
	SHELL_REFUSE = 'X',
	SHELL_STDOUT = 'O',
	SHELL_STDERR = 'e',
	SHELL_END = 'S',
	SHELL_OFFER = 'P',
	SHELL_DONE = 'D',
};

/* D's "kept" words. */
#define SHELL_KEPT_RESET "reset"
#define SHELL_KEPT_NONE "none"
#define SHELL_KEPT_ROUND "round"
#define SHELL_KEPT_FAILED "failed"
#define SHELL_KEPT_BROKEN "broken"

/* S's "why": who ended the session when the command did not. */
#define SHELL_WHY_DECIDED "decided"    /* the scheduler's command: a decision */
#define SHELL_WHY_GONE "gone"          /* the client went away */
#define SHELL_WHY_CANCELLED "cancelled" /* the task's cancel, its budget */

/* Sends one frame (waits up to timeout_ms for room; MSG_NOSIGNAL): 0, or
 * -1 (errno set). */
int shell_send(int fd, int type, const void *payload, size_t len, int timeout_ms);
/* Receives one frame into *type and payload (reset first, NUL-ended):
 * 1, 0 when none came within timeout_ms (-1: wait), -1 at the end of the
 * connection or on an error. */
int shell_recv(int fd, int *type, struct buf *payload, int timeout_ms);

/* The uid at the other end of a unix socket, or -1. */
long shell_peer_uid(int fd);

#endif
