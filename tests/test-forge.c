/* test-forge: which branches may be pushed, and forge_push for real to a
 * bare repo by path: creation, no-op, fast-forward, a remote branch moved
 * by someone else, refusals before any network access; SSH host keys
 * against known_hosts files made by ssh-keygen (pushes over SSH to a real
 * sshd are in tests/ssh.test).  The pull request's errors are
 * tests/test-ghsync.c's. */
#include "autoconfig.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "forge.h"
#include "mirror.h"
#include "remote.h"
#include "tap.h"
#include "testlib.h"

static char *T;           /* scratch dir */
static char *DATA;        /* paddock's data dir */
static char *REMOTE;      /* the repo's bare remote */
static char *MIRROR;
static char MAIN[41];     /* the remote's main at the start */

/* The commit refs/heads/<branch> has on the remote ("" when none). */
static const char *remote_at(const char *branch)
{
	return testlib_sh_out("git -C '%s' rev-parse -q --verify 'refs/heads/%s^{commit}' "
	                      "2>/dev/null", REMOTE, branch);
}

/* A new commit on top of `parent` in the mirror, kept under
 * refs/paddock/tasks/<task>, made with the git CLI as the hand-off does. */
static void commit_in_mirror(const char *task, const char *parent, const char *file, char sha[41])
{
	char *work = xasprintf("%s/work-%s", T, task);
	testlib_sh("git clone -q '%s' '%s' && git -C '%s' checkout -q %s && echo '%s' >'%s/%s' && "
	           "git -C '%s' add -A && git -C '%s' commit -q -m 'task %s' && "
	           "git -C '%s' push -q origin HEAD:refs/paddock/tasks/%s",
	           MIRROR, work, work, parent, task, work, file, work, work, task, work, task);
	snprintf(sha, 41, "%s",
	         testlib_sh_out("git -C '%s' rev-parse refs/paddock/tasks/%s", MIRROR, task));
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
	is_str(testlib_sh_out("git -C '%s' for-each-ref --format='%%(refname)' | tr '\\n' ' '",
	                      REMOTE),
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
	testlib_sh("git clone -q '%s' '%s/other' && cd '%s/other' && echo x >x && git add x && "
	           "git commit -q -m other && git push -q origin HEAD:refs/heads/paddock/t2",
	           REMOTE, T, T);
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
	is_str(testlib_sh_out("git -C '%s' for-each-ref refs/paddock/push", MIRROR), "",
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

static void test_ssh_port(void)
{
	is_int(remote_ssh_port("ssh://git@example.com:2222/x.git"), 2222, "ssh:// with a port");
	is_int(remote_ssh_port("ssh://example.com/x.git"), 22, "ssh:// without a port: 22");
	is_int(remote_ssh_port("ssh://git@example.com:/x.git"), 22, "an empty port: 22");
	is_int(remote_ssh_port("git@example.com:owner/x.git"), 22, "scp-like syntax: 22");
	is_int(remote_ssh_port("ssh://[::1]:2200/x.git"), 2200, "an IPv6 address with a port");
	is_int(remote_ssh_port("ssh://git@[::1]/x.git"), 22, "an IPv6 address without a port");
	is_int(remote_ssh_port("git+ssh://h:7/x"), 7, "git+ssh://");
	is_int(remote_ssh_port("ssh+git://h:8/x"), 8, "ssh+git://");
	is_int(remote_ssh_port("ssh://a@b@h:5/x"), 5, "the host follows the last '@'");
	is_int(remote_ssh_port("ssh://h:99999/x"), -1, "a port over 65535 is refused");
	is_int(remote_ssh_port("ssh://h:0/x"), -1, "port 0 is refused");
	is_int(remote_ssh_port("ssh://h:22a/x"), -1, "a port that is not a number is refused");
	is_int(remote_ssh_port("ssh://[::1/x"), -1, "an unclosed '[' is refused");
}

/* The raw key blob of an OpenSSH .pub file (the base64 field decoded). */
static size_t pub_blob(const char *pubfile, unsigned char *out, size_t max)
{
	char line[4096];
	FILE *f = fopen(pubfile, "r");
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;
	if (!f)
		return 0;
	if (!fgets(line, sizeof line, f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	char *b = strchr(line, ' ');
	for (b = b ? b + 1 : line; *b && *b != ' ' && *b != '\n' && *b != '='; b++) {
		const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *c = strchr(tab, *b);
		if (!c)
			return 0;
		acc = acc << 6 | (uint32_t)(c - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n < max)
				out[n++] = (unsigned char)(acc >> bits);
		}
	}
	return n;
}

/* "KEYTYPE BASE64" of a .pub file (kept). */
static const char *pub_key(const char *pubfile)
{
	return testlib_sh_out("cut -d' ' -f1,2 '%s'", pubfile);
}

static void test_ssh_host_known(void)
{
	struct repo_conf r;
	struct err e;
	unsigned char hk[2048], other[2048], ec256[2048], ec384[2048], rsa[2048];
	size_t hklen, otherlen, ec256len, ec384len, rsalen;
	char *kh = xasprintf("%s/known_hosts", T);
	char *home = xasprintf("%s/home", T);
	char *want;
	char *K = xasprintf("%s/keys", T);   /* the keys */

	if (testlib_sh("command -v ssh-keygen >/dev/null") != 0) {
		ok(1, "# SKIP ssh-keygen is not installed");
		free(K);
		free(kh);
		free(home);
		return;
	}
	if (testlib_sh("mkdir '%s' && cd '%s' && ssh-keygen -q -t ed25519 -N '' -f hk && "
	               "ssh-keygen -q -t ed25519 -N '' -f other && "
	               "ssh-keygen -q -t ecdsa -b 256 -N '' -f ec256 && "
	               "ssh-keygen -q -t ecdsa -b 384 -N '' -f ec384 && "
	               "ssh-keygen -q -t rsa -b 2048 -N '' -f rsa", K, K) != 0) {
		ok(0, "ssh-keygen makes the test keys");
		free(K);
		free(kh);
		free(home);
		return;
	}
#define BLOB(name, buf, len) do { \
		char *pf = xasprintf("%s/" name ".pub", K); \
		len = pub_blob(pf, buf, sizeof buf); \
		free(pf); \
	} while (0)
	BLOB("hk", hk, hklen);
	BLOB("other", other, otherlen);
	BLOB("ec256", ec256, ec256len);
	BLOB("ec384", ec384, ec384len);
	BLOB("rsa", rsa, rsalen);
#undef BLOB
	is_int(hklen, 51, "an ed25519 key blob is 51 bytes");
	/* 104 and 136 bytes: both base64 padding lengths are exercised. */
	ok(ec256len % 3 != 0 && ec384len % 3 != 0 && ec256len % 3 != ec384len % 3,
	   "the ECDSA blobs need one and two padding characters");

	repo_init(&r, REMOTE);
	r.ssh_known_hosts = kh;
	char *hk_pub = xasprintf("%s/hk.pub", K), *other_pub = xasprintf("%s/other.pub", K);
	char *ec256_pub = xasprintf("%s/ec256.pub", K), *ec384_pub = xasprintf("%s/ec384.pub", K);
	char *rsa_pub = xasprintf("%s/rsa.pub", K);
	char hkline[1024];
	snprintf(hkline, sizeof hkline, "%s", pub_key(hk_pub));

	/* No file at all: the host is not known. */
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), -1,
	       "no known_hosts file: refused");
	want = xasprintf("the SSH host key of 127.0.0.1:2222 is not in %s; check the key "
	                 "(ssh-ed25519) and add it (ssh-keyscan -p 2222 127.0.0.1 >> %s)", kh, kh);
	is_str(e.msg, want, "... naming host:port, the file and the ssh-keyscan command");
	free(want);

	testlib_write_file(kh, "[127.0.0.1]:2222 %s\n", hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), 0,
	       "the key known for [127.0.0.1]:2222 is accepted");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 22, hk, hklen, NULL, &e), -1,
	       "... but not for port 22 (another entry name)");
	ok(strstr(e.msg, "(ssh-keyscan 127.0.0.1 >> ") != NULL, "... with no -p for port 22: %s", e.msg);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.2", 2222, hk, hklen, NULL, &e), -1,
	       "... nor for another host");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, other, otherlen, NULL, &e),
	       -1, "another ed25519 key for the host is refused");
	want = xasprintf("the SSH host key of 127.0.0.1:2222 does not match the key known for it "
	                 "in %s: possible impostor; refusing to push (the server offered ssh-ed25519)",
	                 kh);
	is_str(e.msg, want, "... as a possible impostor");
	free(want);
	is_int(remote_ssh_host_known(&r, REMOTE_FETCH, "127.0.0.1", 2222, other, otherlen, NULL,
	                             &e), -1, "... for a fetch as well");
	ok(strstr(e.msg, "possible impostor; refusing to fetch (the server offered") != NULL,
	   "... saying the fetch is refused: %s", e.msg);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, rsa, rsalen, NULL, &e), -1,
	       "a key of a type the file does not list for the host is refused");
	ok(strstr(e.msg, "is not in") && strstr(e.msg, "only keys of other types"),
	   "... as not known, saying the file has other types: %s", e.msg);

	static const unsigned char fp[32] = { 0xff, 0x01 };
	remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, other, otherlen, fp, &e);
	ok(strstr(e.msg, "(the server offered ssh-ed25519 "
	                 "SHA256:/wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA)") != NULL,
	   "the SHA-256 fingerprint, when given, is shown as ssh-keygen -l does: %s", e.msg);

	/* Lines ssh-keygen itself has to understand. */
	testlib_write_file(kh, "other,[127.0.0.1]:2222 %s comment\n", hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), 0,
	       "a pattern list with a comment is understood");
	testlib_write_file(kh, "[127.0.0.1]:2222 %s\n", hkline);
	testlib_sh("ssh-keygen -q -H -f '%s' >/dev/null 2>&1", kh);
	ok(strncmp(testlib_sh_out("cat '%s'", kh), "|1|", 3) == 0, "ssh-keygen -H hashed the entry");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), 0,
	       "a hashed entry is accepted");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, other, otherlen, NULL, &e), -1,
	       "... and another key against it is a mismatch");
	ok(strstr(e.msg, "possible impostor") != NULL, "... %s", e.msg);
	testlib_write_file(kh, "[127.0.0.*]:2222 %s\n", hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.9", 2222, hk, hklen, NULL, &e), 0,
	       "a wildcard pattern is understood");
	testlib_write_file(kh, "[127.0.0.*]:2222,![127.0.0.9]:2222 %s\n", hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.9", 2222, hk, hklen, NULL, &e), -1,
	       "a negated pattern is understood");
	testlib_write_file(kh, "@cert-authority [127.0.0.1]:2222 %s\n", hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), -1,
	       "a @cert-authority entry is no match for a plain key");
	testlib_write_file(kh, "[127.0.0.1]:2222 %s\n@revoked * %s\n", hkline, hkline);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), -1,
	       "a @revoked key is refused even when listed for the host");
	want = xasprintf("the SSH host key of 127.0.0.1:2222 (ssh-ed25519) is marked @revoked in %s; "
	                 "refusing to push", kh);
	is_str(e.msg, want, "... saying so");
	free(want);
	testlib_write_file(kh, "[127.0.0.1]:2222 %s\n@revoked * %s\n", hkline, pub_key(other_pub));
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), 0,
	       "another key's @revoked entry does not refuse this one");

	/* Base64 with padding. */
	char ecline[1024];
	snprintf(ecline, sizeof ecline, "%s", pub_key(ec256_pub));
	testlib_write_file(kh, "[::1]:2222 %s\n[::1]:2222 %s\n", ecline, pub_key(ec384_pub));
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "::1", 2222, ec256, ec256len, NULL, &e), 0,
	       "an ECDSA P-256 key (one '=') of [::1]:2222 is accepted");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "::1", 2222, ec384, ec384len, NULL, &e), 0,
	       "an ECDSA P-384 key (two '=') is accepted");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "::1", 2222, hk, hklen, NULL, &e), -1,
	       "an ed25519 key for it is not");
	ok(strstr(e.msg, "the SSH host key of [::1]:2222 ") != NULL, "... shown as [::1]:2222: %s", e.msg);
	testlib_write_file(kh, "[::1]:2222 %s\n", pub_key(rsa_pub));
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "::1", 2222, rsa, rsalen, NULL, &e), 0,
	       "an RSA key is accepted");

	/* Refusals before any lookup. */
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "-oProxyCommand=x", 22, hk, hklen, NULL, &e),
	       -1,
	       "a host starting with '-' is refused");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "a,b", 22, hk, hklen, NULL, &e), -1,
	       "a host that is a pattern list is refused");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "*", 22, hk, hklen, NULL, &e), -1,
	       "a wildcard host is refused");
	unsigned char junk[3] = { 0, 0, 0 };
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 22, junk, sizeof junk, NULL, &e), -1,
	       "a blob that is no SSH key is refused");
	ok(strstr(e.msg, "not a valid SSH public key") != NULL, "... saying so: %s", e.msg);

	/* The default files: $HOME/.ssh/known_hosts, then the system's. */
	const char *old_home = getenv("HOME");
	char *saved_home = old_home ? xstrdup(old_home) : NULL;
	setenv("HOME", home, 1);
	r.ssh_known_hosts = NULL;
	testlib_sh("mkdir -p '%s/.ssh'", home);
	char *home_kh = xasprintf("%s/.ssh/known_hosts", home);
	testlib_write_file(home_kh, "git.example,[127.0.0.1]:2222 %s\n", hkline);
	free(home_kh);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, hk, hklen, NULL, &e), 0,
	       "without ssh-known-hosts, ~/.ssh/known_hosts is used");
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "127.0.0.1", 2222, other, otherlen, NULL, &e), -1,
	       "... and refuses another key");
	want = xasprintf("in %s/.ssh/known_hosts: possible impostor", home);
	ok(strstr(e.msg, want) != NULL, "... naming that file: %s", e.msg);
	free(want);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "unknown.example", 22, hk, hklen, NULL, &e), -1,
	       "an unknown host is refused");
	want = xasprintf("the SSH host key of unknown.example:22 is not in %s/.ssh/known_hosts or "
	                 "/etc/ssh/ssh_known_hosts; check the key (ssh-ed25519) and add it "
	                 "(ssh-keyscan unknown.example >> %s/.ssh/known_hosts)", home, home);
	is_str(e.msg, want, "... naming both default files");
	free(want);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	else
		unsetenv("HOME");
	free(saved_home);

	/* No ssh-keygen: refused, saying what to install. */
	r.ssh_known_hosts = kh;
	const char *old_path = getenv("PATH");
	char *saved_path = old_path ? xstrdup(old_path) : NULL;
	setenv("PATH", "/nonexistent", 1);
	is_int(remote_ssh_host_known(&r, REMOTE_PUSH, "::1", 2222, rsa, rsalen, NULL, &e), -1,
	       "without ssh-keygen the key cannot be checked and is refused");
	ok(strstr(e.msg, "ssh-keygen is not installed") != NULL, "... saying so: %s", e.msg);
	if (saved_path)
		setenv("PATH", saved_path, 1);
	free(saved_path);

	/* An SSH push's refusal comes from the host key check, before any
	 * credential: a closed port is a network error, not a key error. */
	struct repo_conf ssh;
	repo_init(&ssh, REMOTE);
	ssh.push_url = "ssh://git@127.0.0.1:1/demo.git";
	ssh.ssh_known_hosts = kh;
	char c[41];
	snprintf(c, sizeof c, "%s", MAIN);
	is_int(forge_push(DATA, &ssh, "paddock/ssh", c, &e), -1, "an SSH push to a closed port fails");
	ok(strstr(e.msg, "ssh://git@") == NULL && strstr(e.msg, "127.0.0.1:1") != NULL,
	   "... naming the URL without the user: %s", e.msg);

	free(hk_pub);
	free(other_pub);
	free(ec256_pub);
	free(ec384_pub);
	free(rsa_pub);
	free(K);
	free(kh);
	free(home);
}

static void test_config_known_hosts(void)
{
	struct config c;
	struct err e;
	char *path = xasprintf("%s/config", T);
	testlib_write_file(path, "[repo \"demo\"]\n\turl = %s\n"
	                   "\tssh-known-hosts = /etc/paddock/known_hosts\n", REMOTE);
	is_int(config_load(&c, path, &e), 0, "ssh-known-hosts with an absolute path loads");
	const struct repo_conf *r = config_find_repo(&c, "demo");
	is_str(r && r->ssh_known_hosts ? r->ssh_known_hosts : "", "/etc/paddock/known_hosts",
	       "... and is the repo's ssh_known_hosts");
	config_free(&c);

	testlib_write_file(path, "[repo \"demo\"]\n\turl = %s\n\tssh-known-hosts = known_hosts\n",
	                   REMOTE);
	is_int(config_load(&c, path, &e), -1, "a relative ssh-known-hosts is an error");
	char *want = xasprintf("%s:3: repo.demo.ssh-known-hosts: 'known_hosts' is not an absolute "
	                       "path to a known_hosts file", path);
	is_str(e.msg, want, "... at its file:line");
	free(want);
	config_free(&c);
	free(path);
}

int main(void)
{
	testlib_git_env("tester", "tester@example.invalid", NULL);
	T = testlib_tmpdir("forge");
	DATA = testlib_fmt("%s/data", T);
	REMOTE = testlib_fmt("%s/remote.git", T);
	MIRROR = testlib_keep(mirror_path(DATA, "demo"));
	if (testlib_sh("cd '%s' && git init -q -b main src && cd src && echo hello >README && "
	               "git add README && git commit -q -m initial && "
	               "git clone -q --bare . '%s'", T, REMOTE) != 0) {
		printf("Bail out! cannot make the test repo\n");
		return 1;
	}
	snprintf(MAIN, sizeof MAIN, "%s", remote_at("main"));

	test_allowed();
	test_push();
	test_ssh_port();
	test_ssh_host_known();
	test_config_known_hosts();

	testlib_end();
	return tap_done();
}
