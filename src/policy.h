/* policy: checks on what an agent's commits bring, before anything is
 * pushed.  Each finding is `block` or `warn` by the repo's configuration
 * (config.h: policy-<rule>, deny, max-file-size); a block finding stops
 * approve and push until a reviewer overrides it by name. */
#ifndef PADDOCK_POLICY_H
#define PADDOCK_POLICY_H

#include <stddef.h>
#include "config.h"
#include "diff.h"
#include "err.h"

struct policy_finding {
	enum policy_rule rule;
	enum policy_action action;     /* POLICY_WARN or POLICY_BLOCK */
	char *path;                    /* the file concerned ("" for a commit
	                                  author), rendered by sanitize_visible:
	                                  safe to print, every byte shown */
	char *detail;                  /* what was found, one line, safe to print
	                                  (never the secret itself) */
	char *name;                    /* "<rule>:<path>" (or "authors:<email>"),
	                                  what a reviewer names to override it;
	                                  unique among one call's findings (":2",
	                                  ":3" appended if needed) */
};

/* Secrets paddock holds, to find their literal values in added lines. */
struct policy_secrets {
	const char *const *values;
	size_t n;
};

/* Checks base..head in the bare mirror (libgit2 for trees and diffs, pcre2
 * for patterns):
 *   paths      a changed path matching the deny list: the defaults (CI
 *              definitions: everything under .github/workflows,
 *              .github/actions, .circleci and .buildkite, .gitlab-ci.yml,
 *              Jenkinsfile, .travis.yml, azure-pipelines.yml; build
 *              output: __pycache__ directories, .pyc files, node_modules
 *              directories, .DS_Store) and r->deny;
 *   secrets    added lines that look like private keys, cloud and forge
 *              tokens (AWS, GitHub, GitLab, Slack, OpenAI, Anthropic, ...),
 *              or contain any of `secrets`;
 *   size       a new or changed blob over r->max_file_size;
 *   symlinks   a symlink whose target is absolute or leaves the repository;
 *   submodules a gitlink added, changed or removed, or .gitmodules added
 *              or changed;
 *   controls   an added line or an added path that holds an escape
 *              sequence (ESC, or a C1 introducer such as U+009B), another
 *              control character (a CR inside a line, backspace, NUL, any
 *              C1 control, DEL; not tab, form feed or the CR of a CRLF
 *              line; in a path every control counts) or a bidi control
 *              (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C);
 *   invisible  an added line or an added path that holds an invisible
 *              character (zero-width, word joiner, BOM, soft hyphen, tag
 *              characters, variation selectors: sanitize.h's list);
 *   authors    a commit whose author is not "paddock agent
 *              <agent@paddock.invalid>" (the sandbox's identity).
 * The line scans read the patches of base..head as diff.h computes it
 * (renames detected): a renamed file's added lines are the lines the
 * change adds to it.
 * Deny globs match the whole path: `**` is any number of components, `*`
 * and `?` do not cross '/', `[...]` is a set; a leading '/' is ignored and
 * a trailing '/' means everything below.  Added, changed and deleted paths
 * count.  The line scans (secrets, controls, invisible) read added lines
 * of text files (binary files and blobs over 64 MiB are not read), at most
 * one finding per rule and file (the first line, what it holds, and the
 * number of lines); literal values shorter than 8 bytes are not looked
 * for.  Paths and details show what they hold in sanitize_visible's
 * rendering (an ESC as "^[", a bidi control as "<U+202E>").  Authors: one finding per distinct author email.
 * Rules set to off are skipped.  Findings are appended to *out (realloc'd;
 * *n updated), sorted by rule, then path.  On error *out and *n are
 * unchanged. */
int policy_check(const char *mirror, const char *base, const char *head,
                 const struct repo_conf *r, const struct policy_secrets *secrets,
                 struct policy_finding **out, size_t *n, struct err *e);

/* policy_check in parts, for a caller that has the diff's patches anyway
 * (the gate's one pass, diffcache.h): policy_begin runs every check that
 * needs no patch (a tree diff of the deltas only, and the authors) and
 * returns the run in *run; policy_file, a diff_file_fn (diff.h) given the
 * run, scans the added lines of each file of diff_each(mirror, base,
 * head), as policy_check does; policy_end appends the findings to *out
 * and *n as policy_check does and frees the run.  policy_run_free frees
 * a run that does not reach policy_end.  On error policy_begin sets e and
 * leaves *run NULL. */
struct policy_run;
int policy_begin(const char *mirror, const char *base, const char *head,
                 const struct repo_conf *r, const struct policy_secrets *secrets,
                 struct policy_run **run, struct err *e);
int policy_file(void *run, const struct diff_file *f, const char *patch, size_t len,
                struct err *e);
int policy_end(struct policy_run *run, struct policy_finding **out, size_t *n);
void policy_run_free(struct policy_run *run);
void policy_findings_free(struct policy_finding *f, size_t n);
/* 1 if path matches the deny glob pattern (syntax above). */
int policy_glob_match(const char *pattern, const char *path);
/* Every secret paddock holds for cfg: the values of each repo's token and
 * GitHub token variables, PADDOCK_GIT_TOKEN, GITHUB_TOKEN, and the model
 * API key variables (ANTHROPIC_API_KEY, OPENAI_API_KEY).  Strings point
 * into the environment; free((void *)s.values) only.  Empty values are
 * left out and duplicates listed once. */
struct policy_secrets policy_secrets_collect(const struct config *cfg);

#endif
