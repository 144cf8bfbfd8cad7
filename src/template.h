/* template: read-only checkouts of a base commit, one per (repo, commit),
 * the lower layer of every task's workspace.
 *
 * Built once: a local clone of the mirror without remotes or credentials,
 * checked out detached at the commit, owned by the sandbox uid; then the
 * repo's `setup` command runs in a sandbox with the template writable.
 * Concurrent callers wait on a flock; a failed build leaves nothing. */
#ifndef PADDOCK_TEMPLATE_H
#define PADDOCK_TEMPLATE_H

#include "config.h"
#include "err.h"

/* Where the set-up's gateway sends its egress lines (the supervisor's
 * report pipe, pipeline.h); -1 (the default): the set-up log. */
void template_set_report_fd(int fd);

/* Ensures <data>/templates/<repo>/<sha> exists; *path_out is malloc'd.
 * Set-up output is appended to log_fd. */
int template_ensure(const char *data_dir, const struct config *cfg,
                    const struct repo_conf *r, const char *sha, int log_fd,
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

int template_tests_before(const char *data_dir, const struct config *cfg,
                          const struct repo_conf *r, const char *sha, const char *tpl,
                          struct template_tests *out, struct err *e);
void template_tests_free(struct template_tests *t);

#endif
