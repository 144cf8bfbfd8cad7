/* sandbox: where agent and test commands run, behind a small backend
 * interface (create, run a command, copy a file out, destroy) so that other
 * backends (Kubernetes) can be added without touching the scheduler.
 *
 * The bubblewrap backend (sandbox_bwrap.c; what a user is told:
 * paddock(1), THE SANDBOX): the calling process
 * (the task's supervisor, root) unshares a private mount namespace in
 * create(), mounts one size-capped tmpfs for everything writable (overlay
 * upper and work dirs, /home/agent, /tmp, /out) and an overlay of it over
 * the read-only template at `lower`; each run() forks a child that joins the
 * task's cgroups, sets rlimits, closes every inherited fd, drops to the
 * sandbox uid and execs bwrap with an allowlisted root.  All mounts vanish
 * when the supervisor exits; destroy() kills the cgroups and removes them.
 *
 * Inside the sandbox:
 *   /work            the workspace (overlay; or `lower` itself when
 *                    workspace_direct is set), cwd of every command
 *   /paddock/prompt  the task text, $PADDOCK_PROMPT_FILE: read-only, or
 *                    on a session (runner.h) the sandbox's, where its
 *                    runner writes each round's (copy_in)
 *   /out             writable, for files to copy out (the bundle)
 *   /home/agent      tmpfs home ($HOME), /tmp tmpfs
 *   /usr, a few /etc files, /proc, /dev: read-only allowlist
 *   files[i].host    each listed host file, read-only, at the same path
 * The environment is cleared; PATH, HOME, USER, LANG, TMPDIR,
 * PADDOCK_PROMPT_FILE, PADDOCK_TASK_ID, PADDOCK_WORK (/work), PADDOCK_OUT
 * (/out) and cmd->env are set; scripts name /work and /out through the
 * last two, so that they run unchanged where a backend puts them
 * elsewhere.  There is no network (a new, empty network namespace) unless
 * spec->net names the namespace the gateway made (gateway.h), whose only
 * way out is the gateway, or its sockets.  spec->agent_dir, when set, is
 * shown read-only at /opt/paddock/agent, its node_modules/.bin first in
 * PATH. */
#ifndef PADDOCK_SANDBOX_H
#define PADDOCK_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "quota.h"
#include "kube_conf.h"
#include "err.h"

#define SANDBOX_WORKDIR "/work"
#define SANDBOX_PROMPT "/paddock/prompt"
/* The most a prompt may be (the agent's step reads at most this much). */
#define SANDBOX_PROMPT_MAX (1u << 20)
#define SANDBOX_OUTDIR "/out"
#define SANDBOX_HOME "/home/agent"
#define SANDBOX_INNER_UID 1000
#define SANDBOX_AGENT_DIR "/opt/paddock/agent"
#define SANDBOX_GATEWAY_DIR "/paddock/gateway"
#define SANDBOX_BRIDGE "/paddock/bridge"
/* paddock-runner inside, read-only (bwrap's and the kubernetes pod's). */
#define SANDBOX_RUNNER "/paddock/runner"

struct sandbox;

struct sandbox_file {
	const char *host;      /* absolute host path of a regular file */
};

struct sandbox_home_file {
	const char *path;      /* relative, e.g. ".codex/config.toml" */
	const char *content;
};

/* What a backend is set up with, once per process
 * (sandbox_backend_find): configuration's [sandbox] section. */
struct sandbox_options {
	uid_t uid;             /* bwrap: the host uid/gid sandboxes run as (never 0) */
	gid_t gid;
	int unsafe_no_isolation; /* process: 1 allows a backend without isolation */
	int user_mode;         /* bwrap: paddock is not root; each sandbox lives in a
	                          user namespace of its own, as the user (uid and
	                          gid are not used) */
	int cgroups;           /* bwrap: 1 when each sandbox gets cgroups (root
	                          mode, or user mode in a delegated cgroup:
	                          cgroup_delegated), else rlimits and a watch */
	const struct kube_conf *kube; /* kubernetes: [kubernetes]; borrowed */
	const char *data_dir;  /* kubernetes: the data directory (its instance
	                          id, the front door's sockets); borrowed */
	double keep_seconds;   /* kubernetes: how long a task's sandbox may be
	                          kept at its gate (paddock.gate-timeout), which
	                          its pod's deadline allows for */
};

/* The workspace a sandbox starts from: the template of (repo, base), a
 * checkout the template module made (template.h). */
struct sandbox_workspace {
	const char *repo;      /* the repo's name (messages, labels) */
	const char *base;      /* the commit the template is at */
	const char *template_dir; /* where the template is (a host dir for the
	                          backends there are) */
	int direct;            /* 1: the template itself is the workspace,
	                          writable (template set-up), not a copy of it */
};

/* How the sandbox reaches its task's gateway (gateway.h,
 * gateway_attach): the forms a backend lists in `nets`, the gateway
 * picks one.  All empty: no network at all. */
#define SANDBOX_NET_NETNS 1u    /* join the network namespace netns_fd */
#define SANDBOX_NET_BRIDGE 2u   /* a namespace of its own, the gateway's unix
                                   sockets in bridge_dir relayed by
                                   paddock-bridge to 127.0.0.1 ports */
#define SANDBOX_NET_LOOPBACK 4u /* the host's network; the gateway listens on
                                   host loopback ports (its environment says
                                   which); nothing keeps commands to it */
struct sandbox_net {
	int netns_fd;          /* NETNS: borrowed, the sandbox keeps a copy; -1 none */
	const char *bridge_dir;   /* BRIDGE: the host dir of the sockets, or NULL */
	const char *bridge_ports; /* BRIDGE: "8081,3128", the ports relayed */
};

/* The host objects of a spec as descriptors (root's helper, privsep.h):
 * opened by the unprivileged client, or walked by the keeper, and checked
 * there.  A backend given them reads and mounts only through them, never
 * by the paths, which then only name things in messages (and, for
 * files[i].host, where each is shown).  -1: none. */
struct sandbox_fds {
	int template_fd;       /* ws.template_dir, a folder */
	int prompt_fd;         /* prompt_file, a regular file */
	int agent_fd;          /* agent_dir, a folder */
	const int *file_fds;   /* files[i].host, nfiles regular files */
};

struct sandbox_spec {
	const char *task_id;   /* names cgroups and runtime dirs (a task id or "tpl-<sha>") */
	struct sandbox_workspace ws;
	struct limits limits;  /* timeout is not used here: see sandbox_cmd.deadline */
	const struct sandbox_file *files;
	size_t nfiles;
	const char *prompt_file; /* host file shown at /paddock/prompt, or NULL */
	struct sandbox_net net;
	const char *agent_dir; /* host dir of an installed agent, or NULL */
	/* Files written into the home before any command runs (the agent's
	 * settings), owned by the sandbox user: paths relative to the home. */
	const struct sandbox_home_file *home_files;
	size_t nhome_files;
	const struct sandbox_fds *fds; /* bwrap in root mode: NULL, or the
	                          descriptors to use instead of the paths */
};

struct sandbox_cmd {
	const char *const *argv;   /* NULL-terminated; argv[0] looked up in the sandbox PATH */
	const char *const *env;    /* extra NAME=VALUE, NULL-terminated, or NULL */
	int out_fd;                /* stdout and stderr both go here (the task log) */
	uint64_t *output_used;     /* bytes already written to out_fd by earlier
	                              commands; updated; the cap is limits.output */
	double deadline;           /* CLOCK_MONOTONIC seconds; 0 = none */
	int tty;                   /* with term: the command gets a terminal of
	                              rows x cols (its controlling terminal, in a
	                              session of its own), else pipes */
	/* An interactive command (paddock shell, shell.h) on the sandbox's
	 * session, for a backend whose term() says it takes one (NULL: not
	 * one): *term is one end of a SOCK_SEQPACKET socketpair, the
	 * caller's relay at the other (under the root helper, the keeper's
	 * copy of the client's end: privsep.h), over
	 * which the command's terminal (tty) or pipes travel as SANDBOX_TERM_*
	 * frames; out_fd and the output cap are then not used (the caller
	 * reads and logs what it prints).  run() returns once the command
	 * ended, its output sent; the caller closes *term after. */
	const int *term;
	unsigned rows, cols;       /* with term and tty: the window's size */
	const volatile int *stop;  /* NULL, or the run ends as SANDBOX_CANCELLED
	                              once *stop is non-zero (another thread's) */
};

enum sandbox_end {
	SANDBOX_EXITED,        /* code = exit status */
	SANDBOX_SIGNALED,      /* code = signal */
	SANDBOX_TIMEOUT,       /* deadline passed; everything was killed */
	SANDBOX_OUTPUT_LIMIT,  /* output cap reached; everything was killed */
	SANDBOX_CANCELLED      /* sandbox_request_cancel() was called */
};

/* Limits that were hit during a run (may be set whatever `end` is). */
#define SANDBOX_HIT_MEMORY 1u  /* the OOM killer killed something */
#define SANDBOX_HIT_PIDS   2u  /* a fork failed at the pids limit */
#define SANDBOX_HIT_DISK   4u  /* the writable tmpfs is full */

/* The frames of sandbox_cmd.term: a type byte, then at most
 * SANDBOX_TERM_MAX bytes of payload.  From the caller: INPUT (bytes
 * typed), WINCH ("ROWS COLS", a terminal's new size), EOF (pipes: the
 * end of the command's input); from the backend: OUTPUT (what the
 * command printed: on a terminal stdout and stderr alike, on pipes its
 * stdout) and ERROR (pipes: its stderr).  Where the relay reads too
 * slowly the backend waits (as a pty's writer would), and gives up on the
 * output once the command is stopped. */
#define SANDBOX_TERM_INPUT 'I'
#define SANDBOX_TERM_WINCH 'W'
#define SANDBOX_TERM_EOF 'E'
#define SANDBOX_TERM_OUTPUT 'O'
#define SANDBOX_TERM_ERROR 'e'
#define SANDBOX_TERM_MAX 16384

struct sandbox_result {
	enum sandbox_end end;
	int code;
	unsigned hit;
};

struct sandbox_backend {
	const char *name;
	unsigned nets;         /* SANDBOX_NET_* forms it can attach to */
	/* bwrap: one sandbox per process at a time (it owns the process's
	 * mount namespace); create() refuses a second. */
	int (*create)(struct sandbox **out, const struct sandbox_spec *spec, struct err *e);
	/* Runs one command to completion; -1 only when it could not be started. */
	int (*run)(struct sandbox *sb, const struct sandbox_cmd *cmd,
	           struct sandbox_result *r, struct err *e);
	/* Copies the regular file at `inside` (an absolute sandbox path under
	 * /out or /work) to `host`, refusing symlinks, FIFOs, directories and
	 * files over cap bytes.  On a live session its runner reads it, with
	 * the sandbox's rights (runner_file_get: the path any engine has);
	 * ERR_RUNNER as run(). */
	int (*copy_out)(struct sandbox *sb, const char *inside, const char *host,
	                uint64_t cap, struct err *e);
	/* Copies the host regular file `host` into the sandbox at `inside`:
	 * SANDBOX_PROMPT (what later commands see there, at most
	 * SANDBOX_PROMPT_MAX bytes; on a live session written by its runner,
	 * which keeps the session: the sandbox's own data, a refusal the
	 * agent's doing), or a file directly in /out (replacing whatever the
	 * sandbox left under that name, without following a link it
	 * planted; read-only inside).  ERR_RUNNER as run(). */
	int (*copy_in)(struct sandbox *sb, const char *host, const char *inside,
	               struct err *e);
	/* Optional: writes SANDBOX_CHANGES, the fsmonitor answer (version 2:
	 * the token and the paths, each ending in NUL) naming every path of
	 * the workspace that may differ from its template; "/" when there are
	 * too many to list.  NULL: the backend cannot tell (git then checks
	 * every file). */
	int (*changes)(struct sandbox *sb, struct err *e);
	/* Optional: makes refs/heads/<branch> (at most one folder deep) of the
	 * workspace's repository point at sha, and HEAD name it, as git
	 * update-ref and symbolic-ref would, from the host: for a workspace
	 * no command ran in yet (nothing of the agent's is there).  NULL:
	 * the caller runs git in the sandbox. */
	int (*branch)(struct sandbox *sb, const char *branch, const char *sha, struct err *e);
	/* Optional: 1 when run() takes sandbox_cmd.term for sb, running the
	 * command on the sandbox's session (runner.h) as a RUN like any other,
	 * whose leftovers the next step's fresh RUN kills; 0 (or NULL) when it
	 * runs no interactive command (paddock shell refuses one there).
	 * Every backend here says 1. */
	int (*term)(struct sandbox *sb);
	/* Optional: for a direct workspace (ws.direct, a template's
	 * set-up), brings what the commands left there back to
	 * ws.template_dir on this host, where it was not written in place
	 * (kubernetes).  -1 with a message: the set-up failed.  NULL: the
	 * backend's commands wrote the host folder itself. */
	int (*finish)(struct sandbox *sb, struct err *e);
	/* Kills everything left, removes cgroups; frees sb.  NULL is fine. */
	void (*destroy)(struct sandbox *sb);
	/* Checks that sandboxes can be made here; fails closed with a
	 * message that says what is missing and what to do. */
	int (*preflight)(struct err *e);
	/* Removes what sandboxes of a process that died left behind
	 * (start-up janitor).  Idempotent. */
	void (*janitor)(void);
	/* Who must own the files of a direct workspace (the template, whose
	 * set-up command writes in it), as this process sees them. */
	void (*owner)(uid_t *uid, gid_t *gid);
	/* Optional: makes the network namespace (NETNS) the gateway listens
	 * in, where this process cannot (root's helper, privsep.h): nports
	 * listeners on its 127.0.0.1 at ports[] and the namespace's fd, the
	 * caller's.  NULL: the gateway makes it itself. */
	int (*netns)(const int *ports, size_t nports, int *listen_fds, int *netns_fd,
	             struct err *e);
};

/* bubblewrap (sandbox_bwrap.c).  Root mode (paddock runs as root): the
 * sandbox runs as the configured uid, in cgroups for memory and pids, its
 * network the gateway's namespace or bridge.  User mode (not root;
 * options.user_mode): each supervisor enters a user namespace of its own
 * (the user is its root) for the mounts, the agent runs as the user's uid
 * mapped to 1000, its network the gateway's bridge; limits by rlimits
 * (RLIMIT_NPROC, RLIMIT_DATA) and paddock's own watch over the sandbox's
 * memory, no cgroups.  All of a sandbox's commands, a shell's (term())
 * included, run on one paddock-runner session, the runner its PID 1 (in
 * user mode a child of the bridge; without cgroups the host watches the
 * memory of the session's whole tree); so do those of the root helper's
 * keepers (privsep.h), a shell's frames relayed by the keeper.  Its janitor kills
 * and removes the cgroups of tasks of a process that died (mounts vanish
 * with their supervisor). */
const struct sandbox_backend *sandbox_backend_bwrap(void);
/* process (sandbox_process.c): no isolation at all.  Commands run as
 * paddock's own user in a private directory (a copy of the template, a
 * home, /out), with a cleared environment, the task's time, output and
 * file-size limits, killed as a process group; sandbox paths in their
 * arguments and environment are translated to those directories.  They
 * run through one paddock-runner session per sandbox (runner.h), each a
 * fresh RUN: what an earlier command left below the runner is killed
 * first; a runner that lies, stalls or dies fails run() with ERR_RUNNER.
 * A shell's command (term()) is a RUN too.  Its
 * preflight refuses unless unsafe_no_isolation is set: it is for tests
 * and for development where user namespaces are missing. */
const struct sandbox_backend *sandbox_backend_process(void);
/* kubernetes (pods.c; paddock(1), KUBERNETES): each sandbox a
 * Pod whose PID 1 is paddock-runner, dialling paddock's front door
 * (frontdoor.h) with its projected token; its session and its gateway
 * connections come to this process through door.h.  Options: kube and
 * data_dir. */
const struct sandbox_backend *sandbox_backend_kube(void);
/* bwrap's check of user namespaces (its preflight, paddock doctor), made
 * in a child as the sandbox will: root mode, a user namespace made as the
 * sandbox uid; user mode, a user namespace with a private mount namespace,
 * a tmpfs and an overlay in it.  0, or with what failed and what to do
 * SANDBOX_USERNS_NONE (no user namespace at all) or SANDBOX_USERNS_MOUNTS
 * (one, but not its mounts). */
#define SANDBOX_USERNS_NONE (-1)
#define SANDBOX_USERNS_MOUNTS (-2)
int sandbox_bwrap_userns_check(struct err *e);
/* The backend called name (config's [sandbox] backend), set up with o
 * for this process (NULL: as before), or NULL with a message naming the
 * backends there are. */
const struct sandbox_backend *sandbox_backend_find(const char *name,
                                                   const struct sandbox_options *o,
                                                   struct err *e);
/* The options of the last sandbox_backend_find (zeroes before). */
const struct sandbox_options *sandbox_options(void);

/* Async-signal-safe: makes a run() in progress kill its command and return
 * SANDBOX_CANCELLED (the supervisor calls it from its SIGTERM handler). */
void sandbox_request_cancel(void);
/* Also cancels once *flag becomes non-zero (memory another process
 * writes: the gateway's over-budget flag); NULL stops watching. */
void sandbox_cancel_watch(const volatile int *flag);
/* 1 once sandbox_request_cancel() has been called or the watched flag is
 * set (for backends). */
int sandbox_cancel_requested(void);

/* The environment for every git command paddock itself runs in a
 * workspace (hand-off, rebuild, verification, template baseline): no
 * home, no global or system configuration or attributes, hooks, fsmonitor
 * and pager off, no automatic gc or maintenance, paddock's identity.  Nothing the agent left in $HOME or
 * ~/.config reaches these commands.  NULL-terminated, static. */
const char *const *sandbox_git_env(void);

/* git's fsmonitor, as paddock's own git uses it in a workspace: it makes
 * the cost of `git add -A` and `git checkout` follow what changed, not the
 * number of files.  A template's index records that each file is as
 * checked out (its last refresh ran with this hook and no answer file:
 * the answer "/", everything may have changed, and the refresh saw none
 * had).  A command over a workspace then asks the hook, which answers
 * with SANDBOX_CHANGES, the paths that may differ from the template, as
 * the backend's changes() listed them from the overlay's upper layer
 * (the index of each other file still holds).  A workspace whose index
 * the agent rewrote has no such record, and git checks every file. */
#define SANDBOX_FSMONITOR_TOKEN "paddock"
#define SANDBOX_CHANGES_NAME ".paddock-changes"
#define SANDBOX_CHANGES SANDBOX_OUTDIR "/" SANDBOX_CHANGES_NAME
#define SANDBOX_FSMONITOR_HOOK \
	"{ cat " SANDBOX_CHANGES " || printf '" SANDBOX_FSMONITOR_TOKEN "\\0/\\0'; } 2>/dev/null; :"

/* What the hand-off stages (pipeline_handoff.c): beside SANDBOX_CHANGES,
 * changes() writes SANDBOX_STAGE, the paths of the overlay's upper layer
 * for `git add -A` as literal pathspecs, each ending in NUL (a file made,
 * changed or removed; a folder made over a removed one, or renamed,
 * whole), so that git reads only those folders for new files instead of
 * every folder of the workspace.  It writes none (git scans) where the
 * list would not be exact: too many paths, a .gitignore among them, or a
 * .git whose info/ or commondir changed, or whose index is not the one
 * the last hand-off staged (its copy SANDBOX_STAGED_INDEX, in the git
 * dir: the agent's own git, or its tests, rewrote it, or the set-up's
 * baseline was put back). */
#define SANDBOX_STAGE_NAME ".paddock-stage"
#define SANDBOX_STAGED_DIR "paddock"
#define SANDBOX_STAGED_INDEX SANDBOX_STAGED_DIR "/index"
/* And SANDBOX_PATHS, the same paths whatever the index and .gitignore
 * files say, for the hand-off after the tests: what it puts back as the
 * agent left it (every other file is as the tests found it), with the
 * folders the upper layer made that the template lacks.  None (every file
 * put back) where a removed or hiding path was a folder of the template:
 * its files are not listed. */
#define SANDBOX_PATHS_NAME ".paddock-paths"

/* The hook's answer "everything may have changed", for a refresh that
 * records the files of a template as they are (no answer file asked). */
#define SANDBOX_FSMONITOR_ALL "printf '" SANDBOX_FSMONITOR_TOKEN "\\0/\\0'; :"

/* The hook's answer "nothing changed since the template", for a workspace
 * no command wrote in yet (a fresh verification's): printf, a shell
 * builtin, so the hook costs git one process, not a shell and a cat. */
#define SANDBOX_FSMONITOR_NONE "printf '" SANDBOX_FSMONITOR_TOKEN "\\0'; :"

/* sandbox_git_env() with paddock's fsmonitor hook (above).  NULL-terminated,
 * static. */
const char *const *sandbox_git_env_fsmonitor(void);

/* sandbox_git_env() with the hook SANDBOX_FSMONITOR_NONE: for paddock's
 * own git in a workspace nothing changed yet.  NULL-terminated, static. */
const char *const *sandbox_git_env_unchanged(void);

/* The paddock-bridge program: next to the running paddock (a build tree),
 * else in PKGLIBEXECDIR.  Newly allocated. */
char *sandbox_bridge_path(void);
/* The paddock-runner program (runner.h), found as paddock-bridge is.
 * Newly allocated. */
char *sandbox_runner_path(void);

/* A human phrase for a result, e.g. "exited with status 1", "killed by
 * signal 9", "timed out". */
const char *sandbox_end_describe(const struct sandbox_result *r, char *buf, size_t len);

#endif
