/* template: read-only checkouts of a base commit, one per (repo, commit,
 * set-up), the lower layer of every task's workspace.
 *
 * Built once: a repository holding only the base commit's history (fetched
 * from the mirror, so no other task's work is in it), checked out detached
 * at the commit, owned by the sandbox uid; then the repo's `setup` command
 * runs in a sandbox with the template writable, and what it left (build
 * output, caches) is recorded as the baseline that no task commits.
 * Concurrent callers wait on a flock; a failed build leaves nothing.
 * Layout: <data>/templates/<repo>/<sha>-<key> (key: a hash of the set-up
 * command and its allowlist), beside it <name>.lock (building), <name>.use
 * (a shared lock per process that uses it; its mtime is the last use),
 * <name>.tests-<test key> and its .log (the tests before, per test
 * command: a hash of it). */
#ifndef PADDOCK_TEMPLATE_H
#define PADDOCK_TEMPLATE_H

#include "config.h"
#include "err.h"
#include "sandbox.h"
#include <time.h>

/* "<sha>-<key>": the template's name for the repo's set-up.  Malloc'd. */
char *template_name(const struct repo_conf *r, const char *sha);

/* Where templates are built and used; borrowed. */
struct template_ctx {
	const char *data_dir;
	const struct config *cfg;
	const struct sandbox_backend *be;  /* makes the throwaway sandboxes */
	int log_fd;            /* set-up and verification output is appended here */
	int report_fd;         /* the set-up gateway's egress lines (the
	                          supervisor's report pipe, report.h); -1: log_fd */
};

/* Ensures the template of sha exists; *path_out is malloc'd.  The calling
 * process holds it (template prune keeps it) until it exits. */
int template_ensure(const struct template_ctx *tc, const struct repo_conf *r, const char *sha,
                    char **path_out, struct err *e);

/* The repo's tests on the base commit ("tests before"), run once per base
 * commit in a throwaway overlay of the template and cached beside it. */
struct template_tests {
	int ran;                   /* 0: the repo has no test command */
	int exited;                /* 1: the command exited (code is valid) */
	int code;
	int passed;
	char *tail;                /* the output's last lines, sanitized */
	char *log;                 /* path of the whole output */
};

int template_tests_before(const struct template_ctx *tc, const struct repo_conf *r,
                          const char *sha, const char *tpl, struct template_tests *out,
                          struct err *e);
void template_tests_free(struct template_tests *t);

/* Verifies an imported commit: the repo's test command on a clean
 * checkout of a commit in a fresh sandbox over the template tpl (its own
 * throwaway overlay, an empty home, no network, the same limits), the
 * bundle at `bundle` (refs/heads/paddock/...) unbundled and checked out by
 * git with paddock's configuration only (sandbox_git_env).  Output goes to
 * tc->log_fd.  It runs in a child of its own, in two halves, so that the
 * fresh sandbox is made while the supervisor does other work: prepare
 * starts the child, which makes the sandbox and starts its first process,
 * then waits, and returns at once with *out (the caller's until finish,
 * which frees it); go hands it the commit, `head` (the bundle at `bundle`
 * by then), and the caller goes on (checking and importing the same
 * bundle, say).  round names the sandbox.  finish waits, stopping it
 * first when stop is set (its result is not wanted), when go never came
 * (nothing runs) or when the task is cancelled (sandbox_cancel_requested).
 * finish: 0 with *res the tests' end; -1 with e when the tests could not
 * be run (the checkout failed, the sandbox could not be made).  It
 * returns with the result, while the child may still be removing the
 * sandbox: free waits for that and frees v (after finish; NULL is fine). */
struct template_verify;
int template_verify_prepare(const struct template_ctx *tc, const struct repo_conf *r,
                            const char *tpl, const char *bundle, int round,
                            struct template_verify **out, struct err *e);
int template_verify_go(struct template_verify *v, const char *head, struct err *e);
int template_verify_finish(struct template_verify *v, int stop, struct sandbox_result *res,
                           struct err *e);
void template_verify_free(struct template_verify *v);

struct template_info {
	char *repo;
	char *name;                /* <sha>-<key> (or <sha>: made before keys) */
	char sha[41];
	char *path;
	time_t last_used;
	uint64_t bytes;            /* disk used (with_size), else 0 */
	int in_use;                /* a process builds or uses it now */
};
/* Every template under data_dir; *out is malloc'd (template_list_free). */
int template_list(const char *data_dir, int with_size, struct template_info **out,
                  size_t *nout, struct err *e);
void template_list_free(struct template_info *t, size_t n);
/* 1 when prune may remove t at `now`: no process holds it and it was last
 * used max_age seconds ago or longer. */
int template_stale(const struct template_info *t, time_t now, double max_age);
/* Removes the unfinished builds (<name>.tmp) whose builder died (its
 * lock is free); returns how many. */
int template_janitor(const char *data_dir);
/* Removes every stale template (serve's janitor), and the blobs no
 * template names any more (template_prune_blobs); returns how many
 * templates. */
size_t template_prune_unused(const char *data_dir, double max_age);
/* Removes the blobs of <data>/blobs/sha256 (tarblob.h) older than
 * min_age seconds that no template's or agent install's <name>.blob
 * names; returns how many. */
size_t template_prune_blobs(const char *data_dir, double min_age);
/* Removes one template (and its tests cache) unless a process holds it. */
int template_remove(const char *data_dir, const struct template_info *t, struct err *e);

#endif
