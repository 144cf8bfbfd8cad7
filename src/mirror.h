/* mirror: paddock's own bare mirror of each configured repo (libgit2).
 *
 * Fetches (the clone, mirror_update, mirror_resolve_base) use the repo's url
 * with remote's credentials and checks (remote.h), the same as a push: the
 * token of the repo's token-env over https (plain http only to loopback),
 * its ssh-key or the SSH agent over SSH, after the host key is found in its
 * known_hosts.  Credentials come from paddock's environment and are never
 * passed to a sandbox.  Updates of one mirror are
 * serialised with a flock, so concurrent tasks of one repo are safe. */
#ifndef PADDOCK_MIRROR_H
#define PADDOCK_MIRROR_H

#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "err.h"

/* <data>/mirrors/<repo>.git (malloc'd). */
char *mirror_path(const char *data_dir, const char *repo_name);
/* Clones the mirror when missing, else fetches every branch from r->url. */
int mirror_update(const char *data_dir, const struct repo_conf *r, struct err *e);
/* Connects to r->url and lists its refs, with the credentials and checks
 * a fetch uses (remote.h), in a child process killed after timeout
 * seconds (libgit2 1.5 has no network timeout): 0 when the remote
 * answers, -1 with the fetch's message. */
int mirror_probe(const struct repo_conf *r, unsigned timeout, struct err *e);
/* Resolves refs/heads/<branch> in the mirror to a commit id (hex). */
int mirror_resolve_branch(const char *mirror, const char *branch, char sha_out[41],
                          struct err *e);
/* A task's own base (task_row.base_ref): N (up to 6 digits) is pull
 * request N's head, refs/pull/N/head; refs/... is that ref; anything else
 * a branch, else a tag, else a full or abbreviated commit (at least 4 hex
 * digits).  The remote's branches and tags, and the asked ref under its
 * own name, are fetched into the mirror first (under its lock); refs under
 * refs/paddock/ are refused.  sha_out: the commit; *what (malloc'd, NULL
 * on failure): how it was found ("branch x", "tag v1", "pull request 7,
 * refs/pull/7/head", "commit abc1234").  -1 with e naming what is
 * missing and what to do. */
int mirror_resolve_base(const char *data_dir, const struct repo_conf *r, const char *ask,
                        char sha_out[41], char **what, struct err *e);
/* The paths that differ between commits from and to (both sides of a
 * rename), each once: *paths (mirror_paths_free). */
int mirror_changed_paths(const char *mirror, const char *from, const char *to, char ***paths,
                         size_t *n, struct err *e);
void mirror_paths_free(char **paths, size_t n);
/* 1 when commit sha's tree has a file (not a link or a folder) at path. */
int mirror_has_file(const char *mirror, const char *sha, const char *path);
/* The tree of commit sha in the mirror (hex). */
int mirror_tree_of(const char *mirror, const char *sha, char tree_out[41], struct err *e);
/* The ref under which task <id>'s imported work is kept in the mirror:
 * "refs/paddock/tasks/<id>" (malloc'd). */
char *mirror_task_ref(const char *task_id);

/* Takes the mirror's update lock (an flock on <mirror>.lock, waiting for
 * it); returns the fd to close to release it, or -1. */
int mirror_lock(const char *mirror, struct err *e);

/* Runs the git CLI (GIT_PATH) directly, never through a shell, with a clean
 * environment: no system or global config, no prompts, no replace objects,
 * LC_ALL=C, plus c->env; no core dumps.  The template and bundle code use
 * it for what libgit2 1.5 cannot do (checkouts). */
struct mirror_git_cmd {
	const char *const *argv;   /* arguments after "git", NULL-terminated */
	const char *const *env;    /* extra NAME=VALUE, NULL-terminated, or NULL */
	const char *cwd;           /* or NULL */
	int in_fd;                 /* stdin; -1: /dev/null */
	int out_fd;                /* stdout; -1: captured into out */
	struct buf *out;           /* stdout when out_fd is -1; NULL: discarded */
	struct buf *err;           /* stderr (NULL: discarded) */
	unsigned timeout;          /* seconds of CPU time and of wall clock; 0: none */
	/* For a git that reads untrusted data; 0: no limit.  max_memory is
	 * RLIMIT_DATA (heap and other private writable memory): unlike
	 * RLIMIT_AS it leaves out the pack files git maps, which are as large
	 * as the mirror.  max_file is RLIMIT_FSIZE, the largest file git may
	 * write (its stdout into a memory file too); past it git dies of
	 * SIGXFSZ. */
	uint64_t max_memory;
	uint64_t max_file;
};
/* Returns -1 (with e set) only when git could not be started; otherwise 0
 * and *wstatus is the wait status. */
int mirror_git_run(const struct mirror_git_cmd *c, int *wstatus, struct err *e);

/* The URL as shown to people: any user:password@ part is left out
 * (malloc'd). */
char *mirror_url_display(const char *url);
/* Points ref (under refs/paddock/) at sha in the mirror, creating or
 * moving it; paddock's own bookkeeping, never a remote ref. */
int mirror_set_ref(const char *mirror, const char *ref, const char *sha, struct err *e);
/* Renames ref to keep_as (both under refs/paddock/), replacing keep_as;
 * nothing to do (0) when ref does not exist.  A round's ref left by an
 * attempt that did not reach review moves aside this way, so that the
 * round's next attempt can import and the old work stays reachable. */
/* Removes the import quarantines (objects/incoming-*) and the pack-refs
 * lock that a dead process left in the mirrors of data_dir; only while no import can run (the
 * scheduler owner at start-up: imports run in its supervisors).  Returns
 * how many. */
int mirror_janitor(const char *data_dir);
int mirror_retire_ref(const char *mirror, const char *ref, const char *keep_as,
                      struct err *e);

/* Each import adds a pack and a few loose refs to a mirror, and a mirror of
 * thousands of packs makes every import, diff and template slower.  For
 * each mirror of data_dir with more than max_packs packs or ten times as
 * many loose refs:
 * a geometric repack (only the small packs are rewritten) and pack-refs,
 * under the mirror's lock.  Slow on a large mirror: run it off any loop.
 * Returns how many mirrors it packed. */
int mirror_maintain(const char *data_dir, int max_packs);
/* The packs a mirror may have before mirror_maintain repacks it. */
#define MIRROR_MAX_PACKS 50

#endif
