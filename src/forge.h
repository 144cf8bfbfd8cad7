/* forge: pushes a task's branch from paddock's mirror to the repo's remote;
 * the pull request that follows is github.h's.  Only paddock pushes, with
 * its own credentials: the token (from the environment variable the repo
 * names) never appears in argv, logs, the store or any sandbox.
 *
 * Safe writes, which no task can switch off: only branches under the repo's
 * branch prefix (default "paddock/") are pushed; never the repo's default
 * branch or a branch matching a `protected` pattern; never with force (a
 * remote branch that moved is an error that says so); never a deletion. */
#ifndef PADDOCK_FORGE_H
#define PADDOCK_FORGE_H

#include <stddef.h>

#include <jansson.h>
#include "config.h"
#include "err.h"

/* 0 when `branch` may be pushed for r (under the prefix, not the default
 * branch, no protected pattern matches), else -1 with the reason. */
int forge_branch_allowed(const struct repo_conf *r, const char *branch, struct err *e);

/* Pushes commit `commit` (a commit id or a ref present in the mirror, such
 * as refs/paddock/tasks/<id>) to refs/heads/<branch> on r's push-url (else
 * url) with libgit2, with remote's credentials and checks (remote.h):
 * HTTPS with the token of config_repo_token(r) (user "x-access-token";
 * plain http only to loopback), SSH with r->ssh_key (and its .pub) or the
 * SSH agent, or a local path.  An SSH server must show a host key known
 * for it (remote_ssh_host_known) before any credential is sent; an HTTPS
 * server a certificate libgit2 finds valid.
 * forge_branch_allowed first, before any network access.  Creates the branch, fast-forwards it, or does
 * nothing when it is already at the commit; anything else is refused ("the
 * remote branch paddock/x is at <sha12>, not an ancestor of <sha12>;
 * someone else pushed to it, and paddock never force-pushes"), checked on
 * the remote's refs and again in the push negotiation.  Checks the
 * remote's per-ref answer.  libgit2 1.5 pushes only from a ref, so a
 * temporary refs/paddock/push/<pid>-<n>-<sha> is created in the mirror
 * (under mirror_lock) and removed afterwards.  Messages never contain the
 * token or a URL's user:password.  libgit2 1.5 has no network timeout:
 * call it off any UI loop. */
int forge_push(const char *data_dir, const struct repo_conf *r, const char *branch,
               const char *commit, struct err *e);
/* Where branch is on the push remote (push-url, else url), with the same
 * credentials and checks as forge_push: 1 and its commit in sha_out, 0
 * when the remote has no such branch, -1 on error.  Blocks on the
 * network: call it off any UI loop. */
int forge_remote_branch(const char *data_dir, const struct repo_conf *r, const char *branch,
                        char sha_out[41], struct err *e);

/* Test mode (paddock add --dry-run): what forge_push would send, sending
 * nothing.  A JSON object: "remote" (the push URL without credentials),
 * "refspec" (the exact one, never forced), "commit" and "force": false.
 * The pull request's part is github_pull_request_dry_run's (github.h).
 * New reference. */
json_t *forge_dry_run(const struct repo_conf *r, const char *branch, const char *commit);

#endif
