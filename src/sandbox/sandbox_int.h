/* sandbox_int: what the sandbox backends share (sandbox_io.c) and nothing
 * outside them uses: copying a command's output into the task log within
 * the output cap, waiting for a command while enforcing its deadline,
 * cancel and cap, and copying files out of and into a sandbox's
 * directories without following a link the sandbox planted. */
#ifndef PADDOCK_SANDBOX_INT_H
#define PADDOCK_SANDBOX_INT_H

#include <stdint.h>
#include <sys/types.h>
#include "child.h"
#include "err.h"
#include "sandbox.h"

#define SANDBOX_OUTPUT_MARKER "[paddock: output limit reached, the rest was dropped]\n"

/* Our /etc/gitconfig inside a sandbox (the host's is never shown): an
 * identity for commits, any owner trusted (the workspace's owner is
 * mapped), and hooks off (a relative "none" would resolve inside the
 * agent-writable tree). */
extern const char sandbox_gitconfig_data[];

struct sandbox_drain {
	int out_fd;
	uint64_t cap;          /* 0: no cap */
	uint64_t *used;        /* cmd->output_used, or a local counter */
	int capped;            /* cap reached: discard the rest */
	char last;             /* last byte written in this run */
	uint64_t local_used;
};

/* Starts the log of one command within cap (the sandbox's limits.output). */
void sandbox_drain_init(struct sandbox_drain *d, const struct sandbox_cmd *cmd, uint64_t cap);
/* Copies a chunk into the log within the cap; returns 1 when the cap was
 * reached just now. */
int sandbox_drain_chunk(struct sandbox_drain *d, const char *p, size_t n);

/* Looks at the running command between reads (every 200 ms), and may
 * kill it (a limit paddock watches itself). */
typedef void sandbox_watch_fn(void *arg);

/* The processes under root (root included, found through /proc by their
 * parents): how many, and their resident memory in bytes summed into
 * *rss when rss is not NULL.  With kill set, each gets SIGKILL. */
size_t sandbox_tree(pid_t root, uint64_t *rss, int kill);
/* sandbox_tree sparing the pids in spare[] from the kill (their memory
 * still counted), and with list set, *list (the caller's to free) the
 * processes found, as many as the count. */
size_t sandbox_tree_spare(pid_t root, uint64_t *rss, int kill, const pid_t *spare,
                          size_t nspare, pid_t **list);

/* The start of every run(): clears r and checks the command (an argv,
 * NAME=VALUE environment).  -1 with a message for a bad one, 1 when a
 * cancel was asked for (r says SANDBOX_CANCELLED: run nothing), else 0. */
int sandbox_run_begin(const struct sandbox_cmd *cmd, struct sandbox_result *r,
                      struct err *e);

/* RLIMIT_CPU of a command's processes (0: none): no process may use more
 * CPU time than the whole sandbox gets until the deadline (limits.cpus *
 * seconds left, or * limits.timeout without a deadline).  A cgroup's
 * quota makes it unreachable; without a cpu controller it is the limit. */
uint64_t sandbox_cpu_rlimit(const struct limits *l, const struct sandbox_cmd *cmd);

struct runner;
/* run() on a sandbox session (runner.h): cmd's output to its out_fd within
 * the cap l->output, or with cmd->term a terminal (cmd->tty: RP_RUN_PTY,
 * else RP_RUN_STDIN) whose frames travel over *cmd->term uncapped; its
 * deadline, cancel and stop as KILL, r from END.
 * argv, env and cwd are as the sandbox sees them; flags RP_RUN_*; watch
 * (when not NULL) is called with warg every 200 ms while it runs (the
 * host's own limits: what it kills, the runner reports as ended).  After
 * END the run's process group is killed: nothing a command left in it
 * outlives it.  -1 with a message when the runner refused to start it, or
 * with the kind ERR_RUNNER when the runner lied, stalled or died (the
 * session is then over: the agent's failure). */
int sandbox_runner_run(struct runner *rn, const struct sandbox_cmd *cmd, char *const *argv,
                       char *const *env, const char *cwd, const struct limits *l,
                       unsigned flags, sandbox_watch_fn *watch, void *warg,
                       struct sandbox_result *r, struct err *e);

/* How long a file in or out of a session may take before the runner has
 * stalled (runner.h). */
#define SANDBOX_FILE_SECONDS 60.0
/* copy_in on a session: the host's regular file `host` (not a link, at
 * most cap bytes, else refused before anything is sent) written by the
 * runner to `inside` (the runner's path) with mode.  The runner writes it
 * with the sandbox's rights and never follows a link there, so the worst
 * an agent can do to it is the agent's own data.  -1 with a message when
 * the runner refuses (the session goes on), or with the kind ERR_RUNNER
 * when it lied, stalled or died. */
int sandbox_runner_put(struct runner *rn, const char *host, const char *inside, unsigned mode,
                       uint64_t cap, struct err *e);
/* copy_out on a session: `inside` (the runner's path; a regular file, not
 * a link, at most cap bytes) read by the runner into the new host file
 * `host`, which is removed on failure.  -1 as sandbox_runner_put. */
int sandbox_runner_get(struct runner *rn, const char *inside, const char *host, uint64_t cap,
                       struct err *e);

/* Splits an absolute sandbox path under /out or /work: *under is
 * SANDBOX_OUTDIR or SANDBOX_WORKDIR, *rel what follows.  -1 with a
 * message otherwise. */
int sandbox_inside_split(const char *inside, const char **under, const char **rel,
                         struct err *e);

/* copy_out for a backend whose /out or /work is the host dir `base`: the
 * regular file at base/rel, walked one component at a time without
 * following links, to `host`, at most cap bytes.  `inside` names it in
 * messages.  The file must be owner's (the sandbox's user as this
 * process sees it): a file of anyone else's (a hard link to a host file
 * of root's in a template, or overlayfs's copy of one) is refused, so
 * that the copy, made with this process's rights, shows nothing the
 * sandbox could not read. */
int sandbox_copy_out_at(const char *base, const char *rel, const char *inside,
                        const char *host, uint64_t cap, uid_t owner, struct err *e);

/* copy_in for a file directly in /out (the host dir outdir): replaces
 * what is there under that name without following a link, read-only. */
int sandbox_copy_in_at(const char *outdir, const char *host, const char *inside,
                       struct err *e);

/* changes() for a backend whose workspace is an overlay with the upper
 * folder `upper` over `lower` (NULL: unknown) and whose /out is outdir:
 * every entry of the upper layer but .git, a whiteout also as a folder, a
 * folder overlayfs made opaque or redirected also with a trailing '/'
 * (everything under it); and SANDBOX_STAGE and SANDBOX_PATHS. */
int sandbox_changes_at(const char *upper, const char *lower, const char *outdir,
                       struct err *e);

/* branch() for a backend whose workspace is the host dir `work`: its
 * .git's refs/heads/<branch> (one folder at most) at sha and HEAD naming
 * it, each written beside and renamed; with set_owner, what it makes is
 * uid's and gid's. */
int sandbox_branch_at(const char *work, const char *branch, const char *sha, int set_owner,
                      uid_t uid, gid_t gid, struct err *e);

#endif
