/* test-forge: which branches may be pushed, and forge_push for real to a
 * bare repo by path: creation, no-op, fast-forward, a remote branch moved
 * by someone else, refusals before any network access; the pull request
 * errors that need no server (the HTTP contract is in tests/push.test). */
#include "autoconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "forge.h"
#include "fsx.h"
#include "mirror.h"
#include "tap.h"

static char *T;           /* scratch dir */
static char *DATA;        /* paddock's data dir */
static char *REMOTE;      /* the repo's bare remote */
static char *MIRROR;
static char MAIN[41];     /* the remote's main at the start */

/* libgit2 1.5's git_regexp_match leaks its pcre2 match data when nothing
 * matches (config lookups); not ours to fix. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

/* Runs a shell command (the test's own fixed strings and temp paths). */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

/* The first line of a command's output, in a static buffer ("" on error). */
static const char *out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *out(const char *fmt, ...)
{
	static char line[256];
	va_list ap;
	char *cmd;
	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	line[0] = 0;
	FILE *p = popen(cmd, "r");
	if (p) {
		if (!fgets(line, sizeof line, p))
			line[0] = 0;
		pclose(p);
	}
	line[strcspn(line, "\n")] = 0;
	free(cmd);
	return line;
}

/* The commit refs/heads/<branch> has on the remote ("" when none). */
static const char *remote_at(const char *branch)
{
	return out("git -C '%s' rev-parse -q --verify 'refs/heads/%s^{commit}' 2>/dev/null",
	           REMOTE, branch);
}

/* A new commit on top of `parent` in the mirror, kept under
 * refs/paddock/tasks/<task>, made with the git CLI as the hand-off does. */
static void commit_in_mirror(const char *task, const char *parent, const char *file, char sha[41])
{
	char *work = xasprintf("%s/work-%s", T, task);
	sh("git clone -q '%s' '%s' && git -C '%s' checkout -q %s && echo '%s' >'%s/%s' && "
	   "git -C '%s' add -A && git -C '%s' commit -q -m 'task %s' && "
	   "git -C '%s' push -q origin HEAD:refs/paddock/tasks/%s",
	   MIRROR, work, work, parent, task, work, file, work, work, task, work, task);
	snprintf(sha, 41, "%s", out("git -C '%s' rev-parse refs/paddock/tasks/%s", MIRROR, task));
	free(work);
}

static void repo_init(struct repo_conf *r, const char *url)
{
	static char *prot[] = { "release/*", "paddock/keep/**", "paddock/*-wip" };
	memset(r, 0, sizeof *r);
	r->name = "demo";
	r->url = (char *)url;
	r->branch = "main";
	r->branch_prefix = "paddock/";
	r->protected_ = prot;
	r->nprotected = sizeof prot / sizeof *prot;
}

static void test_allowed(void)
{
	struct repo_conf r;
	struct err e;

	repo_init(&r, "/nonexistent");
	is_int(forge_branch_allowed(&r, "paddock/t1", &e), 0, "paddock/t1 may be pushed");
	is_int(forge_branch_allowed(&r, "paddock/a/b", &e), 0, "paddock/a/b may be pushed");
	is_int(forge_branch_allowed(&r, "main", &e), -1, "main is refused");
	is_str(e.msg, "refusing to push main: it is the repo's default branch", "... as the default branch");
	is_int(forge_branch_allowed(&r, "release/1", &e), -1, "release/1 is refused");
	is_str(e.msg, "refusing to push release/1: it matches the protected pattern release/*",
	       "... naming the protected pattern");
	is_int(forge_branch_allowed(&r, "foo", &e), -1, "foo is refused");
	is_str(e.msg, "refusing to push foo: paddock pushes only branches under paddock/",
	       "... as outside the prefix");
	forge_branch_allowed(&r, "release/1/x", &e);
	is_str(e.msg, "refusing to push release/1/x: paddock pushes only branches under paddock/",
	       "'*' does not cross '/': release/1/x is refused for the prefix, not the pattern");
	is_int(forge_branch_allowed(&r, "paddock/keep/a/b", &e), -1, "'**' crosses '/'");
	ok(strstr(e.msg, "protected pattern paddock/keep/**") != NULL, "... naming paddock/keep/**");
	is_int(forge_branch_allowed(&r, "paddock/x-wip", &e), -1, "paddock/x-wip matches paddock/*-wip");
	is_int(forge_branch_allowed(&r, "paddock/a/x-wip", &e), 0,
	       "paddock/a/x-wip does not ('*' stays in one component)");
	is_int(forge_branch_allowed(&r, "paddockx", &e), -1, "paddockx is not under paddock/");
	is_int(forge_branch_allowed(&r, "paddock/", &e), -1, "the bare prefix is refused");
	is_int(forge_branch_allowed(&r, "paddock/a..b", &e), -1, "an invalid ref name is refused");
	ok(strstr(e.msg, "not a valid branch name") != NULL, "... as not a valid branch name");
	is_int(forge_branch_allowed(&r, "paddock/x.lock", &e), -1, "x.lock is refused");
	is_int(forge_branch_allowed(&r, "paddock/a b", &e), -1, "a space is refused");
	is_int(forge_branch_allowed(&r, "", &e), -1, "an empty branch is refused");

	static char *cls[] = { "paddock/v[0-9]" };
	r.protected_ = cls;
	r.nprotected = 1;
	is_int(forge_branch_allowed(&r, "paddock/v1", &e), -1, "a [0-9] class matches paddock/v1");
	is_int(forge_branch_allowed(&r, "paddock/vx", &e), 0, "... and not paddock/vx");

	r.branch = "trunk";
	r.branch_prefix = "bot/";
	r.nprotected = 0;
	is_int(forge_branch_allowed(&r, "trunk", &e), -1, "a configured default branch is refused");
	is_str(e.msg, "refusing to push trunk: it is the repo's default branch", "... by name");
	is_int(forge_branch_allowed(&r, "bot/1", &e), 0, "a configured prefix is used");
	forge_branch_allowed(&r, "paddock/1", &e);
	is_str(e.msg, "refusing to push paddock/1: paddock pushes only branches under bot/",
	       "... and the default prefix no longer is");
	r.branch = NULL;
	r.branch_prefix = NULL;
	is_int(forge_branch_allowed(&r, "main", &e), -1, "no branch configured: main is the default");
	is_int(forge_branch_allowed(&r, "paddock/1", &e), 0, "no prefix configured: paddock/");
}

static void test_push(void)
{
	struct repo_conf r;
	struct err e;
	char c1[41], c2[41], c3[41], other[41];

	repo_init(&r, REMOTE);
	if (mirror_update(DATA, &r, &e) < 0) {
		ok(0, "mirror_update: %s", e.msg);
		return;
	}
	commit_in_mirror("t1", "main", "a.txt", c1);
	is_int(strlen(c1), 40, "a task commit in the mirror");

	err_clear(&e);
	is_int(forge_push(DATA, &r, "paddock/t1", c1, &e), 0, "push creates paddock/t1");
	if (*e.msg)
		printf("# %s\n", e.msg);
	is_str(remote_at("paddock/t1"), c1, "the branch arrived at the task's commit");
	is_str(remote_at("main"), MAIN, "the default branch did not move");
	is_str(out("git -C '%s' for-each-ref --format='%%(refname)' | tr '\\n' ' '", REMOTE),
	       "refs/heads/main refs/heads/paddock/t1 ", "nothing else was written to the remote");

	err_clear(&e);
	is_int(forge_push(DATA, &r, "paddock/t1", c1, &e), 0, "pushing again is a success");
	is_str(remote_at("paddock/t1"), c1, "... and leaves the branch");

	commit_in_mirror("t1b", c1, "b.txt", c2);
	is_int(forge_push(DATA, &r, "paddock/t1", c2, &e), 0, "a fast-forward is pushed");
	is_str(remote_at("paddock/t1"), c2, "... and the branch moved forward");

	/* Back to an older commit would be a forced update. */
	is_int(forge_push(DATA, &r, "paddock/t1", c1, &e), -1, "rewinding the branch is refused");
	ok(strstr(e.msg, "paddock never force-pushes") != NULL, "... as a force-push: %s", e.msg);
	is_str(remote_at("paddock/t1"), c2, "... and the remote is unchanged");

	/* Someone else pushes to paddock/t2 a commit the mirror lacks. */
	commit_in_mirror("t2", "main", "c.txt", c3);
	sh("git clone -q '%s' '%s/other' && cd '%s/other' && echo x >x && git add x && "
	   "git commit -q -m other && git push -q origin HEAD:refs/heads/paddock/t2", REMOTE, T, T);
	snprintf(other, sizeof other, "%s", remote_at("paddock/t2"));
	is_int(strlen(other), 40, "someone else pushed paddock/t2");
	is_int(forge_push(DATA, &r, "paddock/t2", c3, &e), -1, "pushing over a moved branch is refused");
	char *want = xasprintf("the remote branch paddock/t2 is at %.12s, not an ancestor of %.12s; "
	                       "someone else pushed to it, and paddock never force-pushes",
	                       other, c3);
	ok(strncmp(e.msg, want, strlen(want)) == 0, "... saying so: %s", e.msg);
	free(want);
	is_str(remote_at("paddock/t2"), other, "... and the remote branch is unchanged");

	/* Refusals come before any network access: the URL does not exist. */
	struct repo_conf gone;
	repo_init(&gone, "/nonexistent/repo.git");
	is_int(forge_push(DATA, &gone, "main", c1, &e), -1, "the default branch is refused");
	is_str(e.msg, "refusing to push main: it is the repo's default branch",
	       "... before any network access");
	is_int(forge_push(DATA, &gone, "release/2", c1, &e), -1, "a protected branch is refused");
	is_str(e.msg, "refusing to push release/2: it matches the protected pattern release/*",
	       "... before any network access");
	is_int(forge_push(DATA, &r, "main", c1, &e), -1, "main is refused with a reachable remote too");
	is_str(remote_at("main"), MAIN, "... and main did not move");

	/* No deletion: there is no API for it, and an empty source is refused. */
	is_int(forge_push(DATA, &r, "paddock/t1", "", &e), -1, "an empty commit is refused");
	is_int(forge_push(DATA, &r, "paddock/t1", NULL, &e), -1, "a NULL commit is refused");
	is_int(forge_push(DATA, &r, "paddock/t1", ":refs/heads/paddock/t1", &e), -1,
	       "a refspec smuggled in as the commit is refused");
	is_int(forge_push(DATA, &r, "paddock/t1", "+refs/paddock/tasks/t1", &e), -1,
	       "a forcing '+' smuggled in as the commit is refused");
	is_str(remote_at("paddock/t1"), c2, "... and paddock/t1 still exists where it was");
	is_int(forge_push(DATA, &r, "paddock/t3", "0123456789012345678901234567890123456789", &e), -1,
	       "a commit the mirror lacks is refused");
	ok(strstr(e.msg, "is not in the mirror") != NULL, "... saying so: %s", e.msg);
	is_str(remote_at("paddock/t3"), "", "... and nothing arrived");

	/* The commit may be named by the task ref. */
	is_int(forge_push(DATA, &r, "paddock/t4", "refs/paddock/tasks/t2", &e), 0,
	       "the task's ref names the commit");
	is_str(remote_at("paddock/t4"), c3, "... and the branch arrived at it");
	is_str(out("git -C '%s' for-each-ref refs/paddock/push", MIRROR), "",
	       "no temporary push ref is left in the mirror");

	/* Credentials in a URL never reach a message. */
	struct repo_conf cred;
	repo_init(&cred, REMOTE);
	cred.push_url = "https://user:hunter2secret@127.0.0.1:1/demo.git";
	is_int(forge_push(DATA, &cred, "paddock/t5", c1, &e), -1, "a push to a closed port fails");
	ok(strstr(e.msg, "hunter2secret") == NULL && strstr(e.msg, "user:") == NULL,
	   "... and the message has no credentials: %s", e.msg);
	ok(strstr(e.msg, "https://127.0.0.1:1/demo.git") != NULL, "... but names the URL");
	is_str(remote_at("paddock/t5"), "", "... and nothing arrived");

	/* A token in the environment changes nothing for a path. */
	struct repo_conf plain;
	repo_init(&plain, REMOTE);
	setenv("FORGE_TEST_PUSH_TOKEN", "tok-never-sent", 1);
	plain.token_env = "FORGE_TEST_PUSH_TOKEN";
	is_int(forge_push(DATA, &plain, "paddock/t5", c1, &e), 0,
	       "a push by path needs no token even when one is set");
	unsetenv("FORGE_TEST_PUSH_TOKEN");
}

static void test_pull_request_errors(void)
{
	struct repo_conf r;
	struct err e;
	char *url = (char *)"unset";
	struct forge_pull_request pr = { "paddock/t1", "Fix it", "body" };

	repo_init(&r, REMOTE);
	r.github_token_env = "FORGE_TEST_GH_TOKEN";
	unsetenv("FORGE_TEST_GH_TOKEN");
	is_int(forge_open_pull_request(&r, &pr, &url, &e), -1, "no github-repo: refused");
	ok(strstr(e.msg, "github-repo") != NULL, "... naming github-repo: %s", e.msg);
	ok(url == NULL, "... and no URL");

	r.github_repo = "acme/widgets";
	is_int(forge_open_pull_request(&r, &pr, &url, &e), -1, "no token: refused");
	ok(strstr(e.msg, "set the environment variable FORGE_TEST_GH_TOKEN") != NULL,
	   "... naming the variable: %s", e.msg);

	setenv("FORGE_TEST_GH_TOKEN", "ghp_sekrit_value_1234", 1);
	r.github_api = "http://example.invalid/api/v3";
	is_int(forge_open_pull_request(&r, &pr, &url, &e), -1, "plain http to another host: refused");
	ok(strstr(e.msg, "plain http") != NULL, "... saying why: %s", e.msg);

	r.github_api = "http://127.0.0.1:1";
	is_int(forge_open_pull_request(&r, &pr, &url, &e), -1, "a closed port: a network error");
	ok(strstr(e.msg, "cannot reach GitHub at http://127.0.0.1:1/repos/acme/widgets/pulls") != NULL,
	   "... naming the URL: %s", e.msg);
	ok(strstr(e.msg, "ghp_sekrit_value_1234") == NULL, "... without the token");

	struct forge_pull_request notitle = { "paddock/t1", "", "body" };
	is_int(forge_open_pull_request(&r, &notitle, &url, &e), -1, "an empty title: refused");
	unsetenv("FORGE_TEST_GH_TOKEN");
}

int main(void)
{
	char tmpl[] = "/tmp/paddock-test-forge.XXXXXX";
	struct err e;

	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_AUTHOR_NAME", "tester", 1);
	setenv("GIT_AUTHOR_EMAIL", "tester@example.invalid", 1);
	setenv("GIT_COMMITTER_NAME", "tester", 1);
	setenv("GIT_COMMITTER_EMAIL", "tester@example.invalid", 1);
	T = mkdtemp(tmpl);
	if (!T) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	DATA = xasprintf("%s/data", T);
	REMOTE = xasprintf("%s/remote.git", T);
	MIRROR = mirror_path(DATA, "demo");
	if (sh("cd '%s' && git init -q -b main src && cd src && echo hello >README && "
	       "git add README && git commit -q -m initial && "
	       "git clone -q --bare . '%s'", T, REMOTE) != 0) {
		printf("Bail out! cannot make the test repo\n");
		return 1;
	}
	snprintf(MAIN, sizeof MAIN, "%s", remote_at("main"));

	test_allowed();
	test_push();
	test_pull_request_errors();

	fsx_rm_rf(T, &e);
	free(DATA);
	free(REMOTE);
	free(MIRROR);
	return tap_done();
}
