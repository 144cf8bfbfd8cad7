/* privsep: root mode with privilege separation (paddock(1), SERVICES).
 *
 * `serve` started as root with [paddock] user = NAME keeps root mode's
 * sandboxes (the dedicated sandbox uid, cgroups, a network namespace per
 * task) while the scheduler, the store, the HTTP API and every supervisor
 * run as NAME.  Before dropping root, serve starts the root helper
 * (privsep_start): a process that stays root and listens on a unix socket
 * that only NAME may connect to (/run/paddock-privsep.PID/sock, else in
 * /tmp; the folder is root's).
 * Each connection gets a keeper, a root process of its own forked for it,
 * which does for that one client only what needs root, through the
 * bubblewrap backend in root mode:
 *   - one sandbox: create, run (the command's output goes straight to the
 *     client's log descriptor; a shell's command, shell.h, is a RUN on
 *     the session whose terminal or pipes travel as sandbox_cmd.term's
 *     frames over a socketpair the client made and passed: the keeper
 *     takes only an unnamed unix SOCK_SEQPACKET pair of the client's, and
 *     reads from it only typed bytes, an input's end and window sizes
 *     for its own sandbox's command), copy out and in through
 *     descriptors the client opened, destroy.  Its commands run on one
 *     paddock-runner session (runner.h) whose channel the keeper holds:
 *     the client speaks only this helper's checked requests, never the
 *     runner's protocol, and the runner, started as any sandbox command
 *     is (the sandbox uid, its cgroups, its descriptors closed), gets
 *     nothing of the keeper's but its end of the channel;
 *   - the gateway's network namespace and its listeners (the descriptors
 *     go back to the client);
 *   - the bwrap preflight and janitor;
 *   - handing a template checkout to the sandbox uid (its index is then
 *     refreshed by git run as the sandbox uid, never as root) and removing
 *     a template tree; both only below <data>/templates, walked without
 *     following a link.
 * A keeper checks what it is asked: the peer is NAME (SO_PEERCRED), task
 * ids are plain.  It never looks up a path NAME controls (paddock(1),
 * SECURITY): NAME opens the prompt, the host files and the agent's folder
 * and passes the descriptors, which the keeper takes only open for
 * reading, of their type and NAME's (a host file may be root's), and not
 * on a kernel interface filesystem (fsx_kernel_fs: /proc answers root
 * more); a copy in takes the same, no larger than the sandbox's disk; the
 * template is walked below <data>/templates (NAME's) with
 * fsx_open_beneath, and the sandbox is made from the descriptors
 * (sandbox_fds).  A network namespace is taken only when a keeper made it
 * (recorded in the helper's folder) and root's user namespace owns it.
 * It ends with its connection:
 * a client that dies (kill -9) has its sandbox killed and its cgroups
 * removed at once.  The helper and its keepers die with serve.
 *
 * The gateway process of a task runs as NAME in this mode (root mode
 * runs it as gateway.uid): it is the one that holds the keys anyway. */
#ifndef PADDOCK_PRIVSEP_H
#define PADDOCK_PRIVSEP_H

#include <stddef.h>
#include <sys/types.h>
#include "err.h"

struct sandbox_backend;

struct sandbox_options;

/* Root only, before dropping to uid/gid: sets up the bubblewrap backend
 * with o (root mode's options: scheduler_sandbox_options as root) in the
 * helper it starts, and makes this process (and its children) its
 * clients. */
int privsep_start(const struct sandbox_options *o, const char *data_dir, uid_t uid, gid_t gid,
                  struct err *e);
/* 1 in a client of a started helper (serve after the drop, its
 * supervisors). */
int privsep_active(void);
/* What makes a process a client of the running helper, for a supervisor
 * started by exec (supervisor.h), which has none of serve's memory. */
struct privsep_client {
	const char *sock;      /* the helper's socket */
	uid_t uid;             /* the user clients run as */
	gid_t gid;
	uid_t sbx_uid;         /* the sandbox uid */
	gid_t sbx_gid;
};
/* 1 with c filled (its strings this module's) in a client, else 0. */
int privsep_client_get(struct privsep_client *c);
/* Makes this process a client of the helper c describes (copied). */
void privsep_client_adopt(const struct privsep_client *c, const char *data_dir);
/* 1 once the helper ended while serve runs (serve then stops itself
 * with SIGTERM: it cannot make sandboxes without it). */
int privsep_helper_died(void);
/* Forgets the helper (serve's end): the helper sees serve end, removes
 * its socket folder and ends, and its keepers with it. */
void privsep_stop(void);

/* The backend whose sandboxes keepers make (root mode's bwrap, seen from
 * an unprivileged client).  Only while privsep_active(). */
const struct sandbox_backend *sandbox_backend_privsep(void);

/* Gives the template checkout dir (below <data>/templates) to the sandbox
 * uid, its git index refreshed by the sandbox uid. */
int privsep_hand_over(const char *dir, struct err *e);
/* Removes a tree below <data>/templates (fsx_rm_rf, as root).  A missing
 * path is not an error. */
int privsep_remove(const char *path, struct err *e);

#endif
