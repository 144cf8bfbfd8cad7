/* shell: a reviewer's shell in a task's kept sandbox at the gate
 * (`paddock shell`, paddock(1), THE SHELL).
 *
 * The design, and why:
 * - The shell runs where the agent ran: the supervisor that holds the
 *   kept sandbox runs it with the backend's run() (sandbox.h), like any
 *   command of the task's: the same uid, cgroups and rlimits, seccomp
 *   filter, network (the gateway's namespace or bridge, with the
 *   gateway's environment: the model endpoints and the allowlisted hosts
 *   through its proxy, nothing else, not the host's loopback), in /work
 *   at the task's head, and the task's time limit (limits.timeout) for the
 *   whole session.  Nothing new enters the sandbox: no credential, no host
 *   file, no host socket; only the bytes typed.
 * - The shell is a RUN on the sandbox's runner session (runner.h; the
 *   backend's term() says it takes one: bwrap as root, in user mode and
 *   under the root helper, the process backend), the one that ran the
 *   agent and its hand-off: no sandbox of its own.  On a terminal the runner makes
 *   its pty inside the sandbox (the command's controlling terminal, in a
 *   session of its own; RP_RUN_PTY), the keys go as STDIN frames, the
 *   window size as RESIZE; on pipes, RP_RUN_STDIN (STDIN, an empty one
 *   for the end of input) and RP_RUN_STDERR (its standard error apart).
 *   The next step's fresh RUN (the reset below) kills what the shell
 *   left.  The relay (a thread, while the supervisor's thread is in
 *   run(), the session's one user) and the backend share only a
 *   socketpair (sandbox_cmd.term): the client's protocol, the log and
 *   sanitizing stay the relay's, the runner's frames the backend's.
 *   Under the root helper the supervisor passes its end to the sandbox's
 *   keeper (privsep.h), which checks it and relays its frames to the
 *   runner as it would its own.  A backend without term() gets no shell.
 * - The CLI (or the dashboard) is not the scheduler's owner and holds no
 *   sandbox: it reaches the supervisor through a unix socket in the
 *   task's directory (paths_task_shell_socket: mode 0600 in a 0700
 *   folder), which the supervisor listens on only while the sandbox waits
 *   at the gate.  Each side checks the other's uid (SO_PEERCRED): the
 *   supervisor takes its own uid and root, the client the task folder's
 *   owner and root.  The supervisor relays: the client's keys and window
 *   size into the pty, what the command prints back to the client and
 *   into the task's log (within limits.output, after which the session
 *   goes on unlogged).  One session at a time; another is refused.
 * - The session changes nothing of the task unless asked: afterwards the
 *   workspace is put back to the task's head (tracked and untracked files;
 *   what git ignores, /tmp and the home stay), so that the next round and
 *   approve see only the agent's work.  A workspace that cannot be put
 *   back ends the kept sandbox (a later round starts in a new one at the
 *   head).  With keep, what changed is committed by the hand-off (the
 *   reviewer as author), checked and imported as a round's bundle is, its
 *   tests verified on a clean checkout, and offered to the client, which
 *   records it in the store as round N+1 of kind "reviewer"
 *   (store_task_reviewer_round), as the gate's verbs write the store; only
 *   then does the supervisor make it the task's head.  A task that moved
 *   on meanwhile (approved, changes requested) is refused and the
 *   workspace goes back.  Input on the scheduler's command pipe (a
 *   teardown, a resume) ends a session at once.
 * - The terminal is an attack surface: what the sandbox prints reaches
 *   the reviewer's terminal only through sanitize_term (sanitize.h), an
 *   allow-list of what a shell needs (text, colours, cursor moves, erase,
 *   the scroll region, cursor keys and keypad modes); titles, clipboard
 *   writes, window operations, mouse and alternate-screen modes, reports
 *   and C1 controls are dropped, and the session's end sends
 *   sanitize_term_restore and puts back the terminal's settings.  What
 *   the client says itself goes through sanitize_quote.  The log keeps
 *   the bytes; `paddock log` sanitizes them.
 * - Nothing the agent left runs by itself: the shell is the read-only
 *   system's /bin/bash (else /bin/sh) by absolute path, without rc or
 *   profile files, with INPUTRC=/dev/null, an empty HISTFILE, a PATH of
 *   the system's folders only, and BASH_ENV, ENV, PROMPT_COMMAND unset
 *   (shell.c, shell_env).  A kept round is recorded only once the
 *   reviewer saw its files and stat and said yes (or gave --yes).
 *
 * The protocol (SOCK_SEQPACKET, one message a frame: a type byte, then
 * its payload) is shell.c's and shell_client.c's alone. */
#ifndef PADDOCK_SHELL_H
#define PADDOCK_SHELL_H

#include <stdint.h>
#include "err.h"
#include "sandbox.h"

/* ---- the client (paddock shell, the dashboard) ---- */

/* Opens a shell (argv NULL) or runs argv in the kept sandbox of task
 * task_id (an id or a unique prefix) of the data directory data_dir, with
 * keep (SHELL_KEEP, SHELL_KEEP_YES): the changes kept as a reviewer's
 * round once the reviewer saw their files and stat and said yes on the
 * terminal (fd 0 and 2; SHELL_KEEP_YES: without asking; without it and
 * without a terminal on fd 0, ERR_INVALID before anything ran).  It uses the caller's
 * terminal, fds 0, 1 and 2: when fds 0 and 1 are terminals, fd 0's is
 * put in raw mode for the session (and always restored, on a signal too: SIGHUP,
 * SIGTERM and SIGINT end the session), the window size goes along and
 * SIGWINCH is followed (its handler is the session's, the caller's put
 * back after); else standard input, output and error are pipes to the
 * command's.  A caller in curses mode must have left it (endwin) and
 * redraws afterwards.  It blocks until the session ends: a caller that
 * hosts the scheduler runs it in a child of its own (child_start with fn)
 * and keeps its loop going without touching the terminal meanwhile.
 * What it has to say (the session's end, the round kept or why not) goes
 * to fd 2, "paddock: ..." lines.  Returns the exit status of the shell or
 * argv (128 + N for signal N; 124 when it ran out of time, 1 when paddock
 * ended it), or -1 with e when no session ran (e's kind: ERR_INVALID,
 * ERR_NOT_FOUND, ERR_WRONG_STATE for a task not at review or without a
 * kept sandbox, ERR_UNAVAILABLE when the supervisor does not answer),
 * nothing changed.  A session whose keep failed returns 1 (the message
 * says why; the workspace is back at the head). */
#define SHELL_KEEP 1               /* keep: a reviewer's round, asked first */
#define SHELL_KEEP_YES 2           /* with SHELL_KEEP: recorded without asking */
int shell_run(const char *data_dir, const char *task_id, int keep, const char *const *argv,
              struct err *e);

/* ---- the supervisor, while its sandbox waits at the gate ---- */

/* Listens on the task's socket (made anew, 0600): the fd, non-blocking,
 * or -1 with e. */
int shell_listen(const char *data_dir, const char *task_id, struct err *e);
/* Stops listening: closes fd (-1 is fine) and removes the socket. */
void shell_unlisten(const char *data_dir, const char *task_id, int fd);

/* A reviewer's round the host made (keep): not yet the task's. */
struct shell_round {
	int round;                 /* the task's round + 1 */
	char from[41], head[41];   /* the task's head; the round's */
	char *gate;                /* its gate summary, JSON (gate.h) */
	char *summary;             /* what the round is, for the task's summary */
	int tests;                 /* verified tests: -1 none ran, 0 failed, 1 passed */
};
void shell_round_free(struct shell_round *k);

/* What the supervisor lends a session. */
struct shell_host {
	const struct sandbox_backend *be;
	struct sandbox *sb;
	const char *data_dir, *task_id;
	const char *head;          /* the task's head now */
	int round;                 /* the task's round now */
	int log_fd;                /* the task's log */
	uint64_t *output_used;     /* what the log holds of limits.output */
	uint64_t output_cap;       /* limits.output; 0: none */
	const char *const *env;    /* NAME=VALUE for the shell: the gateway's and
	                              the agent's; NULL-terminated */
	double timeout;            /* seconds a session may last; 0: none */
	int cmd_fd;                /* the scheduler's commands, watched, never read:
	                              input there ends the session */
	void *arg;
	/* A marker line for the task's log. */
	void (*note)(void *arg, const char *line);
	/* Puts /work back at the task's head: 0, or -1 with e. */
	int (*reset)(void *arg, struct err *e);
	/* Commits what the session changed (author: actor) and imports it as
	 * the next round's work, the task's head still the old one: 0 with k
	 * filled, 1 when nothing changed, -1 with e. */
	int (*keep)(void *arg, const char *actor, struct shell_round *k, struct err *e);
	/* The client recorded k (recorded 1: now the task's head and round)
	 * or did not (0: undone, the mirror back at the old head). */
	void (*kept)(void *arg, const struct shell_round *k, int recorded);
};

/* Serves one connection that waits on lfd (shell_listen's): a session,
 * or a refusal (a peer of another uid, a malformed request).  0 when the
 * workspace is at the task's head afterwards (or a kept round's), -1
 * with e when it could not be put back: the caller tears the sandbox
 * down. */
int shell_serve(int lfd, const struct shell_host *h, struct err *e);

#endif
