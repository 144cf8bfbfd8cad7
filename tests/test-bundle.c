/* test-bundle: the bundle header parser, bundle_import against hostile
 * bundles and a real mirror, and the diff of an imported bundle. */
#include "autoconfig.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "bundle.h"
#include "config.h"
#include "diff.h"
#include "err.h"
#include "mirror.h"
#include "tap.h"
#include "testlib.h"

static char *T;          /* scratch dir */
static char *MIRROR;
static char *WORK;       /* the agent's clone */
static char BASE[41];

#define SHA_A "1111111111111111111111111111111111111111"
#define SHA_B "2222222222222222222222222222222222222222"
#define REF "refs/heads/paddock/x"

/* ---- a filesystem as some report it ----
 *
 * opendir, readdir and closedir of this program wrap libc's, so that
 * bundle_import can be shown directories as a filesystem that reports
 * DT_UNKNOWN for every entry does (XFS without ftype, many FUSE and
 * network filesystems), or a quarantine whose listing shows no pack. */
static int fs_unknown_types;  /* every entry's d_type is DT_UNKNOWN */
static int fs_hide_pack;      /* the next quarantine pack folder opened lists no pack-* */
static DIR *hidden_dir;

static void *libc_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f)
		abort();
	return f;
}

DIR *opendir(const char *name)
{
	DIR *(*real)(const char *);
	void *f = libc_fn("opendir");
	memcpy(&real, &f, sizeof real);
	DIR *d = real(name);
	size_t n = strlen(name);
	if (d && fs_hide_pack && strstr(name, "/objects/incoming-") && n > 5 &&
	    strcmp(name + n - 5, "/pack") == 0) {
		hidden_dir = d;
		fs_hide_pack = 0;
	}
	return d;
}

struct dirent *readdir(DIR *d)
{
	struct dirent *(*real)(DIR *);
	void *f = libc_fn("readdir");
	struct dirent *de;
	memcpy(&real, &f, sizeof real);
	while ((de = real(d))) {
		if (d == hidden_dir && strncmp(de->d_name, "pack-", 5) == 0)
			continue;
		if (fs_unknown_types)
			de->d_type = DT_UNKNOWN;
		return de;
	}
	return NULL;
}

int closedir(DIR *d)
{
	int (*real)(DIR *);
	void *f = libc_fn("closedir");
	memcpy(&real, &f, sizeof real);
	if (d == hidden_dir)
		hidden_dir = NULL;
	return real(d);
}

/* ---- helpers ---- */

/* Everything a bundle import could change in the mirror. */
static char *mirror_state(void)
{
	return testlib_sh_out("cd '%s' && git for-each-ref && find objects | sort && ls", MIRROR);
}

/* 1 if text has a line that starts with prefix and ends with suffix. */
static int has_line(const char *text, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		if (n >= pl + sl && strncmp(text, prefix, pl) == 0 &&
		    strncmp(text + n - sl, suffix, sl) == 0)
			return 1;
		text += n;
		if (*text)
			text++;
	}
	return 0;
}

/* ---- header parser ---- */

static int parse(const char *hdr, size_t hdrlen, unsigned packver, struct bundle_header *h,
                 struct err *e)
{
	struct buf b = {0};
	unsigned char pack[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, (unsigned char)packver, 0, 0, 0, 3 };
	buf_add(&b, hdr, hdrlen);
	buf_add(&b, pack, sizeof pack);
	int rc = bundle_header_parse(b.data, b.len, h, e);
	buf_free(&b);
	return rc;
}

#define PARSE(lit, ver, h, e) parse(lit, sizeof(lit) - 1, ver, h, e)

static void refused(int rc, const struct err *e, const char *want, const char *what)
{
	ok(rc < 0 && strstr(e->msg, want) != NULL, "%s: refused with \"%s\"", what, want);
	printf("#   rc %d, message: %s\n", rc, rc < 0 ? e->msg : "");
}

static void test_header(void)
{
	struct bundle_header h;
	struct err e;
	int rc;

	rc = PARSE("# v2 git bundle\n-" SHA_A " a comment\n" SHA_B " " REF "\n\n", 2, &h, &e);
	ok(rc == 0, "v2 header parses");
	if (rc == 0) {
		is_int(h.version, 2, "v2: version");
		is_int(h.nprereqs, 1, "v2: one prerequisite");
		is_str(h.prereqs[0], SHA_A, "v2: prerequisite id");
		is_int(h.nrefs, 1, "v2: one ref");
		is_str(h.refs[0].name, REF, "v2: ref name");
		is_str(h.refs[0].sha, SHA_B, "v2: ref id");
		is_int(h.pack_offset, 16 + 1 + 40 + 11 + 41 + strlen(REF) + 1 + 1,
		       "v2: pack offset");
		bundle_header_free(&h);
	}

	rc = PARSE("# v3 git bundle\n@object-format=sha1\n" SHA_B " " REF "\n\n", 3, &h, &e);
	ok(rc == 0 && h.version == 3 && h.nrefs == 1 && h.nprereqs == 0,
	   "v3 with @object-format=sha1 and pack v3 parses");
	if (rc == 0)
		bundle_header_free(&h);

	rc = PARSE("# v3 git bundle\n@object-format=sha1\n@filter=blob:none\n" SHA_B " " REF
	           "\n\n", 2, &h, &e);
	refused(rc, &e, "partial bundle (@filter)", "v3 @filter");
	rc = PARSE("# v3 git bundle\n@object-format=sha256\n" SHA_B " " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "sha256 object format", "v3 sha256");
	rc = PARSE("# v3 git bundle\n@unknown=1\n" SHA_B " " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "unknown capability", "v3 unknown capability");
	rc = PARSE("# v2 git bundle\n@object-format=sha1\n" SHA_B " " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "unexpected capability", "capability in a v2 bundle");
	rc = PARSE("# v4 git bundle\n" SHA_B " " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "bad signature", "unknown signature");
	rc = PARSE("# v2 git bundle\n" SHA_B " " REF "\r\n\n", 2, &h, &e);
	refused(rc, &e, "carriage return", "CR in the header");
	rc = PARSE("# v2 git bundle\n" SHA_B " refs/heads/a\0b\n\n", 2, &h, &e);
	refused(rc, &e, "NUL byte", "NUL in the header");

	{
		struct buf b = {0};
		buf_adds(&b, "# v2 git bundle\n" SHA_B " refs/heads/");
		for (int i = 0; i < 2000; i++)
			buf_addc(&b, 'a');
		buf_adds(&b, "\n\n");
		rc = parse(b.data, b.len, 2, &h, &e);
		refused(rc, &e, "is over 1024 bytes", "a 2000-byte ref line");
		buf_reset(&b);
		buf_adds(&b, "# v2 git bundle\n");
		for (int i = 0; i < 1200; i++)
			buf_printf(&b, SHA_B " refs/heads/r%d\n", i);
		buf_adds(&b, "\n");
		rc = parse(b.data, b.len, 2, &h, &e);
		refused(rc, &e, "over 1000 lines", "1200 ref lines");
		buf_free(&b);
	}

	rc = PARSE("# v2 git bundle\nzz22222222222222222222222222222222222222 " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "malformed ref line", "bad sha in a ref line");
	rc = PARSE("# v2 git bundle\n" "2222222222222222222222222222222222222222a " REF "\n\n", 2, &h,
	           &e);
	refused(rc, &e, "malformed ref line", "41-digit sha");
	rc = PARSE("# v2 git bundle\n-" SHA_A "x\n" SHA_B " " REF "\n\n", 2, &h, &e);
	refused(rc, &e, "malformed prerequisite", "bad prerequisite id");
	rc = PARSE("# v2 git bundle\n" SHA_B " refs/heads/../../x\n\n", 2, &h, &e);
	refused(rc, &e, "invalid ref name", "ref name with ..");
	rc = PARSE("# v2 git bundle\n" SHA_B " x\n\n", 2, &h, &e);
	refused(rc, &e, "invalid ref name", "ref name outside refs/");
	rc = PARSE("# v2 git bundle\n" SHA_B " " REF "\n\n", 4, &h, &e);
	refused(rc, &e, "unsupported pack version 4", "pack version 4");

	/* No PACK after the blank line. */
	{
		static const char t[] = "# v2 git bundle\n" SHA_B " " REF "\n\nPACX\0\0\0\2\0\0\0\1";
		rc = bundle_header_parse(t, sizeof t - 1, &h, &e);
		refused(rc, &e, "no pack after the header", "missing PACK");
		static const char t2[] = "# v2 git bundle\n" SHA_B " " REF "\n\n";
		rc = bundle_header_parse(t2, sizeof t2 - 1, &h, &e);
		refused(rc, &e, "no pack after the header", "nothing after the header");
		static const char t3[] = "# v2 git bundle\n" SHA_B " " REF "\n";
		rc = bundle_header_parse(t3, sizeof t3 - 1, &h, &e);
		refused(rc, &e, "header is truncated", "no blank line");
	}
}

/* ---- import ---- */

static const struct bundle_limits LIM = {
	.max_bytes = 200 << 20, .max_objects = 100000, .max_blob = 50 << 20,
};

/* Imports path and checks that it was refused with want and that the mirror
 * did not change. */
static void hostile(const char *path, const struct bundle_limits *lim, const char *want,
                    const char *what)
{
	struct err e;
	char head[41] = "";
	char *before = mirror_state();
	int rc = bundle_import(MIRROR, path, REF, BASE, "refs/paddock/tasks/hostile", lim, head,
	                       &e);
	char *after = mirror_state();
	refused(rc, &e, want, what);
	is_str(after, before, "%s: the mirror is unchanged", what);
	/* One that got in does not make the next ones fail. */
	if (rc == 0)
		testlib_sh("git -C '%s' update-ref -d refs/paddock/tasks/hostile", MIRROR);
}

/* A bundle of tip (based on BASE) whose pack also holds the objects named
 * in extra, as a graft in the agent's repository makes `git bundle create`
 * write one. */
static int smuggle_bundle(const char *name, const char *tip, const char *extra)
{
	return testlib_sh("cd '%s' && { printf '# v2 git bundle\\n-%s\\n%s " REF "\\n\\n' && "
	                  "{ git rev-list --objects %s ^main | cut -c1-40; printf '%%s\\n' %s; } | "
	                  "git pack-objects -q --stdout; } > '%s/%s'",
	                  WORK, BASE, tip, tip, extra, T, name);
}

/* A bundle whose pack is a blob of 1 MiB of zeros and a chain of deltas,
 * each twice its base (copies of it), up to 1 GiB: a few KiB in all. */
static const char delta_bomb_py[] =
	"import hashlib, sys, zlib\n"
	"out, base, tip, ref = sys.argv[1:5]\n"
	"def more(b, n):\n"
	"    while n:\n"
	"        b[-1] |= 0x80; b.append(n & 0x7f); n >>= 7\n"
	"    return bytes(b)\n"
	"def varint(n):\n"
	"    return more(bytearray([n & 0x7f]), n >> 7)\n"
	"def obj_header(t, n):\n"
	"    return more(bytearray([(t << 4) | (n & 15)]), n >> 4)\n"
	"def ofs(n):\n"
	"    b = bytearray([n & 0x7f]); n >>= 7\n"
	"    while n:\n"
	"        n -= 1; b.insert(0, 0x80 | (n & 0x7f)); n >>= 7\n"
	"    return bytes(b)\n"
	"def copy(off, size):\n"
	"    cmd, args = 0x80, bytearray()\n"
	"    for i in range(4):\n"
	"        if (off >> 8 * i) & 0xff: cmd |= 1 << i; args.append((off >> 8 * i) & 0xff)\n"
	"    for i in range(3):\n"
	"        if (size >> 8 * i) & 0xff: cmd |= 0x10 << i; args.append((size >> 8 * i) & 0xff)\n"
	"    return bytes([cmd]) + bytes(args)\n"
	"size, depth, chunk = 1 << 20, 10, 8 << 20\n"
	"pack = bytearray(b'PACK' + (2).to_bytes(4, 'big') + (depth + 1).to_bytes(4, 'big'))\n"
	"prev = len(pack)\n"
	"pack += obj_header(3, size) + zlib.compress(bytes(size), 9)\n"
	"for k in range(depth):\n"
	"    here = len(pack)\n"
	"    d = bytearray(varint(size) + varint(2 * size))\n"
	"    for _ in range(2):\n"
	"        for off in range(0, size, chunk):\n"
	"            d += copy(off, min(chunk, size - off))\n"
	"    pack += obj_header(6, len(d)) + ofs(here - prev) + zlib.compress(bytes(d), 9)\n"
	"    prev, size = here, 2 * size\n"
	"pack += hashlib.sha1(pack).digest()\n"
	"with open(out, 'wb') as f:\n"
	"    f.write(('# v2 git bundle\\n-' + base + '\\n' + tip + ' ' + ref + '\\n\\n').encode() + pack)\n";

/* mirror_git_run's bounds for a git that reads untrusted data. */
static void test_git_limits(void)
{
	const char *hash[] = { "hash-object", "-t", "blob", "--literally", "--stdin", NULL };
	struct buf errb = {0};
	struct err e;
	int ws = 0, rc;
	/* 96 MiB of zeros, which git reads into memory (--literally). */
	int in = memfd_create("zeros", MFD_CLOEXEC);
	if (in < 0 || ftruncate(in, 96 << 20) < 0) {
		ok(0, "memory file for the limits");
		return;
	}
	struct mirror_git_cmd c = { .argv = hash, .in_fd = in, .out_fd = -1, .err = &errb,
	                            .timeout = 60 };
	rc = mirror_git_run(&c, &ws, &e);
	ok(rc == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
	   "git hashes 96 MiB read into memory without a memory limit");
	lseek(in, 0, SEEK_SET);
	buf_reset(&errb);
	c.max_memory = 32 << 20;
	/* valgrind keeps RLIMIT_DATA for itself (it emulates it), so a child
	 * it does not trace runs without one. */
	const char *preload = getenv("LD_PRELOAD");
	if (preload && strstr(preload, "vgpreload")) {
		ok(1, "with max_memory 32 MiB, git runs out of memory # SKIP under valgrind");
	} else {
		rc = mirror_git_run(&c, &ws, &e);
		ok(rc == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) != 0 && errb.data &&
		   strstr(errb.data, "Out of memory"),
		   "with max_memory 32 MiB, git runs out of memory");
		printf("#   %s", errb.data ? errb.data : "(no message)\n");
	}
	close(in);

	char *blob = testlib_sh_out("head -c 2097152 /dev/urandom | "
	                            "git -C '%s' hash-object -w --stdin", WORK);
	const char *cat[] = { "cat-file", "blob", blob, NULL };
	int out = memfd_create("blob", MFD_CLOEXEC);
	struct mirror_git_cmd c2 = { .argv = cat, .cwd = WORK, .in_fd = -1, .out_fd = out,
	                             .err = &errb, .timeout = 60, .max_file = 1 << 20 };
	rc = mirror_git_run(&c2, &ws, &e);
	ok(rc == 0 && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGXFSZ,
	   "with max_file 1 MiB, git writing 2 MiB to its stdout file dies of SIGXFSZ");
	c2.max_file = 0;
	if (ftruncate(out, 0) < 0 || lseek(out, 0, SEEK_SET) < 0)
		printf("# cannot empty the memory file: %s\n", strerror(errno));
	rc = mirror_git_run(&c2, &ws, &e);
	ok(rc == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && lseek(out, 0, SEEK_END) == 2097152,
	   "without it, the 2 MiB are written");
	close(out);
	buf_free(&errb);
}

/* Points the agent's branch at commit and bundles it (extra: more args). */
static int make_bundle(const char *name, const char *commit, const char *extra)
{
	return testlib_sh("cd '%s' && git update-ref " REF " %s && "
	                  "git bundle create -q '%s/%s' %s 2>/dev/null",
	                  WORK, commit, T, name, extra);
}

/* ---- git's strict checks (gitfsck) ---- */

/* Writes a raw tree from lines "mode<TAB>name<TAB>id" on stdin, the name
 * a Python bytes literal (so that it may hold any byte), @B in the id
 * replaced by the caller. */
static const char rawtree_py[] =
	"import ast, binascii, sys\n"
	"out = b''\n"
	"for line in sys.stdin.read().split('\\n'):\n"
	"    if not line: continue\n"
	"    mode, name, oid = line.split('\\t')\n"
	"    out += mode.encode() + b' ' + ast.literal_eval(name) + b'\\0' + binascii.unhexlify(oid)\n"
	"sys.stdout.buffer.write(out)\n";

/* A bundle (at T/name) of the objects objs (ids, spaces between), its
 * ref naming tip. */
static char *fsck_bundle(const char *name, const char *tip, const char *objs)
{
	testlib_sh("cd '%s' && { printf '# v2 git bundle\\n-%s\\n%s " REF "\\n\\n' && "
	           "printf '%%s\\n' %s | git pack-objects -q --stdout; } > '%s/%s'",
	           WORK, BASE, tip, objs, T, name);
	return testlib_fmt("%s/%s", T, name);
}

/* A commit on main whose tree is main's and sub/, sub the raw tree of
 * entries (rawtree_py's lines; @B: a blob the mirror has, @M: the blob
 * of gitmodules, a .gitmodules file's text).  Returns the bundle. */
static char *fsck_tree_bundle(const char *entries, const char *gitmodules)
{
	testlib_write_file(testlib_fmt("%s/entries", T), "%s", entries);
	testlib_write_file(testlib_fmt("%s/gitmodules", T), "%s", gitmodules ? gitmodules : "");
	char *objs = testlib_sh_out(
		"cd '%s' && b=$(git rev-parse main:a.txt) && "
		"m=$(git hash-object -w '%s/gitmodules') && "
		"s=$(sed -e \"s/@B/$b/g\" -e \"s/@M/$m/g\" '%s/entries' | python3 '%s/rawtree.py' | "
		"git hash-object -t tree --literally -w --stdin) && "
		"t=$( (git ls-tree main; printf '040000 tree %%s\\tsub\\n' $s) | git mktree --missing) && "
		"c=$(git commit-tree $t -p main -m fsck) && echo $c $t $s %s", WORK, T, T, T,
		gitmodules ? "$m" : "");
	char tip[41];
	snprintf(tip, sizeof tip, "%s", objs);
	return fsck_bundle("fsck-tree.bundle", tip, objs);
}

/* A bundle of one commit object written as text (main's tree). */
static char *fsck_commit_bundle(const char *text)
{
	char *f = testlib_fmt("%s/commit.txt", T);
	testlib_write_file(f, "%s", text);
	char *c = testlib_sh_out("cd '%s' && git hash-object -t commit --literally -w '%s'", WORK, f);
	return fsck_bundle("fsck-commit.bundle", c, c);
}

/* What git itself says of the bundle's pack: `git index-pack --strict`
 * into a scratch repository that borrows the mirror's objects, as
 * paddock ran it before it checked packs itself.  1 if git refuses it. */
static int git_refuses(const char *bundle)
{
	return testlib_sh("cd '%s' && { [ -d xcheck ] || { git init -q --bare xcheck && "
	                  "echo '%s/objects' > xcheck/objects/info/alternates; }; } && "
	                  "python3 -c \"import sys; d = open(sys.argv[1], 'rb').read(); "
	                  "sys.stdout.buffer.write(d[d.index(b'\\n\\n') + 2:])\" '%s' | "
	                  "git -C xcheck index-pack --stdin --fix-thin --strict >/dev/null 2>&1",
	                  T, MIRROR, bundle) != 0;
}

/* hostile, and git refuses it too: the same severity as git's. */
static void hostile_fsck(const char *path, const char *want, const char *what)
{
	hostile(path, &LIM, want, what);
	ok(git_refuses(path), "%s: git index-pack --strict refuses it too", what);
}

static void test_fsck(void)
{
	struct err e_fsck;
	testlib_write_file(testlib_fmt("%s/rawtree.py", T), "%s", rawtree_py);
	char *tree = testlib_sh_out("git -C '%s' rev-parse 'main^{tree}'", WORK);

	/* Tree entries: one hostile tree per check, as git's fsck.c names it. */
	static const struct { const char *entries, *want, *what; } trees[] = {
		{ "100644\tb'.'\t@B\n", "hasDot: contains '.'", "an entry named ." },
		{ "100644\tb'..'\t@B\n", "hasDotdot: contains '..'", "an entry named .." },
		{ "40000\tb'.Git'\t@T\n", "(hasDotgit)", "a folder named .Git" },
		{ "100644\tb'.git.'\t@B\n", "(hasDotgit)", "an entry named .git. (NTFS trailing dot)" },
		{ "100644\tb'.git  '\t@B\n", "(hasDotgit)", "an entry named \".git  \" (NTFS spaces)" },
		{ "100644\tb'.git::$INDEX_ALLOCATION'\t@B\n", "(hasDotgit)",
		  "an entry named .git::$INDEX_ALLOCATION (an NTFS stream)" },
		{ "100644\tb'GIT~1'\t@B\n", "(hasDotgit)", "an entry named GIT~1 (NTFS short name)" },
		{ "100644\tb'.g\\xe2\\x80\\x8cit'\t@B\n", "(hasDotgit)",
		  "an entry named .g<U+200C>it (HFS+ ignores the code point)" },
		{ "100644\tb'.git\\xef\\xbb\\xbf'\t@B\n", "(hasDotgit)",
		  "an entry named .git<U+FEFF> (HFS+)" },
		{ "100644\tb'x\\\\.git'\t@B\n", "(hasDotgit)", "an entry named x\\.git (a Windows path)" },
		{ "100644\tb''\t@B\n", "badTree: cannot be parsed as a tree", "an empty name" },
		{ "100644\tb'a/b'\t@B\n", "fullPathname: contains full pathnames", "a name with a /" },
		{ "0100644\tb'f'\t@B\n", "zeroPaddedFilemode: contains zero-padded file modes",
		  "a zero-padded mode" },
		{ "100644\tb'b'\t@B\n100644\tb'a'\t@B\n", "treeNotSorted: not properly sorted",
		  "entries out of order" },
		{ "100644\tb'a'\t@B\n100644\tb'a'\t@B\n", "duplicateEntries: contains duplicate file entries",
		  "an entry twice" },
		{ "100644\tb'a'\t@B\n100644\tb'a.c'\t@B\n40000\tb'a'\t@T\n",
		  "duplicateEntries: contains duplicate file entries", "a file and a folder of one name, apart" },
		{ "100644\tb'a'\t0000000000000000000000000000000000000000\n",
		  "nullSha1: contains entries pointing to null sha1", "an entry naming the null id" },
		{ "1x0644\tb'a'\t@B\n", "badTree: cannot be parsed as a tree", "a mode that is not octal" },
		{ "120000\tb'.gitmodules'\t@B\n", "gitmodulesSymlink: .gitmodules is a symbolic link",
		  ".gitmodules a symlink" },
		{ "120000\tb'GI7EBA~1'\t@B\n", "gitmodulesSymlink: .gitmodules is a symbolic link",
		  ".gitmodules's NTFS short name a symlink" },
		/* Found by test-fsckdiff: what libgit2 reads by the mode alone. */
		{ "160000\tb'.gitattributes'\t3434343434343434343434343434343434343434\n",
		  "gitattributesMissing: unable to read .gitattributes blob",
		  "a .gitattributes gitlink to nothing (git reads the blob it names)" },
		{ "100644\tb'f'\t@T\n", "expected type blob, found tree", "a file entry naming a tree" },
		{ "100644\tb'a'\t@B\n40000\tb'b'\t@B\n", "object is a blob, not a tree",
		  "one blob as a file and a folder" },
	};
	for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
		/* @T: main's tree */
		struct buf entries = {0};
		for (const char *q = trees[i].entries; *q; q++) {
			if (q[0] == '@' && q[1] == 'T') {
				buf_adds(&entries, tree);
				q++;
			} else {
				buf_addc(&entries, *q);
			}
		}
		char *p = fsck_tree_bundle(entries.data, NULL);
		buf_free(&entries);
		hostile_fsck(p, trees[i].want, trees[i].what);
	}

	/* .gitmodules: what git refuses in one, and what it only notes. */
	static const struct { const char *text, *want, *what; } mods[] = {
		{ "[submodule \"../../x\"]\n\tpath = x\n\turl = https://example.invalid/x\n",
		  "gitmodulesName: disallowed submodule name: ../../x", "a submodule name that climbs out" },
		{ "[submodule \"x\"]\n\turl = --upload-pack=touch${IFS}/tmp/pwned\n",
		  "gitmodulesUrl: disallowed submodule url: --upload-pack", "a URL that is an option" },
		{ "[submodule \"x\"]\n\turl = ../../:evil\n",
		  "gitmodulesUrl: disallowed submodule url: ../../:evil", "a relative URL out of its host" },
		{ "[submodule \"x\"]\n\turl = \"https://example.invalid/x%0a.git\"\n",
		  "gitmodulesUrl: disallowed submodule url", "an http URL with an encoded newline" },
		{ "[submodule \"x\"]\n\turl = https:///x.git\n",
		  "gitmodulesUrl: disallowed submodule url: https:///x.git", "an http URL with no host" },
		{ "[submodule \"x\"]\n\tpath = -x\n\turl = ./x\n",
		  "gitmodulesPath: disallowed submodule path: -x", "a path that is an option" },
		{ "[submodule \"x\"]\n\tupdate = !touch /tmp/pwned\n",
		  "gitmodulesUpdate: disallowed submodule update setting: !touch", "an update command" },
		{ NULL, NULL, NULL },
	};
	for (size_t i = 0; mods[i].want; i++) {
		char *p = fsck_tree_bundle("100644\tb'.gitmodules'\t@M\n", mods[i].text);
		hostile_fsck(p, mods[i].want, mods[i].what);
	}
	{
		char *p = fsck_tree_bundle("100644\tb'.GITMODULES'\t@M\n",
		                           "[submodule \"x\"]\n\tpath = -p\n");
		hostile_fsck(p, "gitmodulesPath: disallowed submodule path: -p",
		        "a .GITMODULES (any case) with a path that is an option");
		p = fsck_tree_bundle("100644\tb'.gitattributes'\t@M\n",
		                     testlib_fmt("%0*d\n", 3000, 0));
		hostile_fsck(p, "gitattributesLineLength: .gitattributes has too long lines to parse",
		        "a .gitattributes line of 3000 bytes");
	}

	/* What git only notes (an info), it imports: so does paddock. */
	static const struct { const char *entries, *gitmodules, *what; } fine[] = {
		{ "100644\tb'.gitmodules'\t@M\n", "[submodule \"x\"\n\turl = -x\n",
		  "a .gitmodules that does not parse (nothing after the error is read)" },
		{ "120000\tb'.gitignore'\t@B\n", NULL, "a .gitignore symlink" },
		{ "100644\tb'.gitmodules'\t@M\n", "[submodule \"a..b\"]\n\turl = ../x\n\tpath = a\n",
		  "a submodule name with .. not a component, a URL one folder up" },
		{ "100644\tb'.github'\t@B\n100644\tb'git~2'\t@B\n", NULL, ".github and git~2" },
	};
	for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
		char *p = fsck_tree_bundle(fine[i].entries, fine[i].gitmodules);
		char head[41] = "";
		char *ref = testlib_fmt("refs/paddock/tasks/fine-%zu", i);
		int rc = bundle_import(MIRROR, p, REF, BASE, ref, &LIM, head, &e_fsck);
		ok(rc == 0, "%s: imported", fine[i].what);
		ok(!git_refuses(p), "%s: git index-pack --strict imports it too", fine[i].what);
		if (rc < 0)
			printf("#   %s\n", e_fsck.msg);
	}

	/* Commits: headers in git's order and form. */
	const char *id = "author A U Thor <a@example.invalid> 1700000000 +0000\n"
	                 "committer C O Mitter <c@example.invalid> 1700000000 +0000\n";
	struct { const char *text, *want, *what; } commits[] = {
		{ testlib_fmt("parent %s\n%s\nmsg\n", BASE, id), "missingTree", "no tree line" },
		{ testlib_fmt("tree %.39s\nparent %s\n%s\nmsg\n", tree, BASE, id), "", "a short tree id" },
		{ testlib_fmt("tree %s\nparent %.39sx\n%s\nmsg\n", tree, BASE, id), "",
		  "a parent id that is not hex" },
		{ testlib_fmt("tree %s\nparent %s\ncommitter C <c@x> 1 +0000\n\nmsg\n", tree, BASE),
		  "missingAuthor", "no author line" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 1 +0000\n%s\nmsg\n", tree, BASE, id),
		  "multipleAuthors", "two author lines" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 1 +0000\n\nmsg\n", tree, BASE),
		  "missingCommitter", "no committer line" },
		{ testlib_fmt("tree %s\nparent %s\nauthor <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "missingNameBeforeEmail", "an author with no name" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "badName", "a name with a >" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A 1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "missingEmail", "no email" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A<a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "missingSpaceBeforeEmail", "no space before the email" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x 1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "badEmail", "an email with no >" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x>1 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "missingSpaceBeforeDate", "no space before the date" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 01 +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "zeroPaddedDate", "a zero-padded date" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 99999999999999999999 +0000\n"
		              "committer C <c@x> 1 +0000\n\n", tree, BASE),
		  "badDateOverflow", "a date past 64 bits" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> soon +0000\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "badDate", "a date that is not a number" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 1 +00\ncommitter C <c@x> 1 +0000\n\n",
		              tree, BASE), "badTimezone", "a short time zone" },
		{ testlib_fmt("tree %s\nparent %s\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 0000\n\n",
		              tree, BASE), "badTimezone", "a committer time zone with no sign" },
		{ testlib_fmt("tree %s\nparent %s\n%s", tree, BASE,
		              "author A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000"),
		  "unterminatedHeader", "a header with no final newline" },
	};
	for (size_t i = 0; i < sizeof commits / sizeof *commits; i++) {
		char *p = fsck_commit_bundle(commits[i].text);
		hostile_fsck(p, *commits[i].want ? commits[i].want : "bundle refused: ",
		        testlib_fmt("a commit with %s", commits[i].what));
	}
	/* NUL bytes: in the header, and in the message. */
	{
		char *f = testlib_fmt("%s/commit.txt", T);
		testlib_sh("printf 'tree %s\\nparent %s\\nauthor A <a@x> 1 +0000\\000\\ncommitter C <c@x> "
		           "1 +0000\\n\\nmsg\\n' > '%s'", tree, BASE, f);
		char *c = testlib_sh_out("cd '%s' && git hash-object -t commit --literally -w '%s'",
		                         WORK, f);
		hostile_fsck(fsck_bundle("nul.bundle", c, c), "nulInHeader", "a NUL in a commit's header");
		testlib_sh("printf 'tree %s\\nparent %s\\nauthor A <a@x> 1 +0000\\ncommitter C <c@x> "
		           "1 +0000\\n\\nmsg\\000more\\n' > '%s'", tree, BASE, f);
		c = testlib_sh_out("cd '%s' && git hash-object -t commit --literally -w '%s'", WORK, f);
		hostile_fsck(fsck_bundle("nul.bundle", c, c), "nulInCommit", "a NUL in a commit's message");
	}
}


int main(void)
{
	struct err e;

	testlib_git_env("Test", "test@example.invalid", "2024-01-01T00:00:00Z");

	test_header();

	T = testlib_tmpdir("bundle");
	char *data = testlib_fmt("%s/data", T);
	WORK = testlib_fmt("%s/work", T);

	/* Upstream with two commits on main. */
	if (testlib_sh("set -e; cd '%s' && git init -q -b main up && cd up && "
	               "printf 'one\\ntwo\\nthree\\n' > a.txt && "
	               "printf 'line 1\\nline 2\\nline 3\\nline 4\\nline 5\\nline 6\\n' > b.txt && "
	               "git add . && git commit -q -m first && "
	               "echo 4 >> a.txt && git commit -qam second", T) != 0) {
		printf("Bail out! cannot create the upstream repo\n");
		return 1;
	}

	/* mirror_update: clone, then fetch. */
	char *upurl = testlib_fmt("%s/up", T);
	struct repo_conf rc_demo = { .name = "demo", .url = upurl, .branch = "main" };
	MIRROR = testlib_keep(mirror_path(data, "demo"));
	is_str(MIRROR, testlib_sh_out("printf %%s '%s/mirrors/demo.git'", data), "mirror_path");
	int rc = mirror_update(data, &rc_demo, &e);
	ok(rc == 0, "mirror_update clones the mirror");
	if (rc < 0)
		printf("# %s\n", e.msg);
	char sha[41] = "";
	rc = mirror_resolve_branch(MIRROR, "main", sha, &e);
	char *up_main = testlib_sh_out("git -C '%s/up' rev-parse main", T);
	ok(rc == 0, "mirror_resolve_branch main");
	is_str(sha, up_main, "the mirror's main is upstream's main");
	is_str(testlib_sh_out("git -C '%s' rev-parse --is-bare-repository", MIRROR), "true",
	       "the mirror is bare");
	testlib_sh("cd '%s/up' && echo five >> a.txt && git commit -qam third && "
	           "git branch feature", T);
	up_main = testlib_sh_out("git -C '%s/up' rev-parse main", T);
	testlib_sh("git -C '%s' update-ref refs/paddock/tasks/old main~1", MIRROR);
	rc = mirror_update(data, &rc_demo, &e);
	ok(rc == 0, "mirror_update fetches");
	rc = mirror_resolve_branch(MIRROR, "main", sha, &e);
	is_str(sha, up_main, "the fetch moved main");
	ok(mirror_resolve_branch(MIRROR, "feature", sha, &e) == 0, "the fetch brought a new branch");
	is_str(testlib_sh_out("git -C '%s' for-each-ref --format='%%(refname)' refs/paddock/",
	                      MIRROR), "refs/paddock/tasks/old", "the fetch kept refs/paddock/*");
	testlib_sh("git -C '%s' update-ref -d refs/paddock/tasks/old", MIRROR);
	rc = mirror_resolve_branch(MIRROR, "nope", sha, &e);
	refused(rc, &e, "branch nope was not found", "resolving a missing branch");
	{
		struct repo_conf bad = { .name = "gone", .url = "/nonexistent/x.git", .branch = "main" };
		rc = mirror_update(data, &bad, &e);
		refused(rc, &e, "repo gone: no repository at /nonexistent/x.git; ", "a missing remote");
		ok(rc < 0 && strstr(e.msg, "fix url in [repo \"gone\"]") &&
		   !strstr(e.msg, "unsupported URL protocol"),
		   "the message says which config entry to fix, not libgit2's protocol error");
		struct stat st;
		ok(stat(testlib_keep(mirror_path(data, "gone")), &st) < 0 && errno == ENOENT,
		   "a failed clone leaves no mirror");
	}
	char *task_ref = testlib_keep(mirror_task_ref("t1"));
	is_str(task_ref, "refs/paddock/tasks/t1", "mirror_task_ref");

	strcpy(BASE, up_main);

	/* The agent's work: modify a.txt, rename b.txt, add c.txt. */
	if (testlib_sh("set -e; cd '%s' && git clone -q up work && cd work && "
	               "git checkout -q -b paddock/x && sed -i 's/two/TWO/' a.txt && "
	               "git mv b.txt d.txt && echo new > c.txt && git add . && "
	               "git commit -q -m 'agent work' && echo more >> c.txt && "
	               "git commit -qam 'more work'", T) != 0) {
		printf("Bail out! cannot create the work repo\n");
		return 1;
	}
	char *good = testlib_sh_out("git -C '%s' rev-parse HEAD", WORK);
	char *good1 = testlib_sh_out("git -C '%s' rev-parse HEAD~1", WORK);
	make_bundle("good.bundle", good, REF " ^" "main");
	test_git_limits();

	/* Wrong ref, extra ref. */
	testlib_sh("cd '%s' && git branch other %s && "
	           "git bundle create -q '%s/wrongref.bundle' other ^main 2>/dev/null",
	           WORK, good, T);
	char *p = testlib_fmt("%s/wrongref.bundle", T);
	hostile(p, &LIM, "it carries refs/heads/other; expected only " REF, "wrong ref");
	testlib_sh("cd '%s' && git checkout -q -b extra main && echo x > x.txt && git add x.txt && "
	           "git commit -qm extra && git checkout -q paddock/x", WORK);
	make_bundle("extraref.bundle", good, REF " extra ^main");
	p = testlib_fmt("%s/extraref.bundle", T);
	hostile(p, &LIM, "it carries 2 refs (", "an extra ref");
	{
		char head[41];
		bundle_import(MIRROR, p, REF, BASE, "refs/paddock/tasks/hostile", &LIM, head, &e);
		ok(strstr(e.msg, "refs/heads/extra") && strstr(e.msg, "; expected only " REF),
		   "the message lists the refs and the expected one");
	}

	/* Wrong base: a prerequisite that is not the base; unrelated history. */
	make_bundle("wrongbase.bundle", good, REF " ^" "HEAD~1");
	p = testlib_fmt("%s/wrongbase.bundle", T);
	hostile(p, &LIM, "not based on the task's base commit", "a prerequisite that is not the base");
	testlib_sh("set -e; cd '%s' && git init -q -b paddock/x unrel && cd unrel && "
	           "echo z > z && git add z && git commit -qm unrelated && "
	           "git bundle create -q ../unrelated.bundle paddock/x 2>/dev/null", T);
	p = testlib_fmt("%s/unrelated.bundle", T);
	hostile(p, &LIM, "not based on the task's base commit", "unrelated history");

	/* Truncated. */
	testlib_sh("cd '%s' && head -c $(( $(stat -c %%s good.bundle) - 40 )) good.bundle "
	           "> truncated.bundle", T);
	p = testlib_fmt("%s/truncated.bundle", T);
	hostile(p, &LIM, "bundle refused: truncated pack", "a truncated bundle");

	/* A tree with a .git entry and its case and NTFS short-name variants,
	 * which git 2.39's `bundle verify` and fetch let through. */
	static const char *const dotgits[] = { ".git", ".GIT", "git~1" };
	for (size_t i = 0; i < sizeof dotgits / sizeof *dotgits; i++) {
		char *dotgit = testlib_sh_out(
			"cd '%s' && b=$(printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' | git hash-object -w --stdin) && "
			"t1=$(printf '100644 blob %%s\\tconfig\\n' $b | git mktree) && "
			"t2=$( (git ls-tree main; printf '040000 tree %%s\\t%s\\n' $t1) | git mktree) && "
			"git commit-tree $t2 -p main -m dotgit", WORK, dotgits[i]);
		make_bundle("dotgit.bundle", dotgit, REF " ^main");
		p = testlib_fmt("%s/dotgit.bundle", T);
		char *what = testlib_fmt("a tree entry named %s", dotgits[i]);
		hostile(p, &LIM, "a tree contains a .git entry (hasDotgit)", what);
	}

	/* Over the caps. */
	char *big = testlib_sh_out(
		"cd '%s' && b=$(head -c 3000 /dev/urandom | git hash-object -w --stdin) && "
		"t=$( (git ls-tree main; printf '100644 blob %%s\tbig.bin\n' $b) | git mktree) && "
		"git commit-tree $t -p main -m big", WORK);
	make_bundle("big.bundle", big, REF " ^main");
	p = testlib_fmt("%s/big.bundle", T);
	{
		struct bundle_limits l = LIM;
		l.max_bytes = 2048;
		hostile(p, &l, "KiB is over the 2 KiB cap", "a bundle over the byte cap");
		l = LIM;
		l.max_blob = 1024;
		hostile(p, &l, "file big.bin is 2.9 KiB, over the 1 KiB cap", "a blob over the cap");
		l = LIM;
		l.max_objects = 2;
		hostile(p, &l, "its pack holds 3 objects; the cap is 2", "too many objects");
	}

	/* Objects the tip does not reach: the whole pack moves into the mirror,
	 * so none of them may come in, whatever its size. */
	{
		char *junk = testlib_sh_out(
			"cd '%s' && b=$(printf 'smuggled\\n' | git hash-object -w --stdin) && "
			"t=$(printf '100644 blob %%s\\tpayload\\n' $b | git mktree) && "
			"c=$(git commit-tree $t -m junk) && echo $c $t $b", WORK);
		smuggle_bundle("junk.bundle", good, junk);
		p = testlib_fmt("%s/junk.bundle", T);
		hostile(p, &LIM, "bundle refused: " REF " does not reach 3 of the objects in its pack",
		        "an unreachable commit, tree and blob in the pack");
		char *blob = testlib_sh_out("cd '%s' && head -c 3145728 /dev/urandom | "
		                            "git hash-object -w --stdin", WORK);
		smuggle_bundle("unreachable-blob.bundle", good, blob);
		p = testlib_fmt("%s/unreachable-blob.bundle", T);
		struct bundle_limits l = LIM;
		l.max_blob = 2 << 20;
		hostile(p, &l, testlib_fmt("does not reach 1 of the objects in its pack "
		                           "(the largest, %.12s, is a blob of 3 MiB)", blob),
		        "an unreachable 3 MiB blob under a 2 MiB cap");
	}

	/* Small bundles that unpack to far more: refused before they are
	 * unpacked (git's allocations are capped), at a bounded cost. */
	{
		struct bundle_limits l = { .max_bytes = 1 << 20, .max_objects = 100000,
		                           .max_blob = 2 << 20 };
		struct stat st;
		char *zeros = testlib_sh_out(
			"cd '%s' && z=$(head -c 83886080 /dev/zero | git hash-object -w --stdin) && "
			"t=$( (git ls-tree main; printf '100644 blob %%s\\tzeros.bin\\n' $z) | git mktree) && "
			"git commit-tree $t -p main -m zeros", WORK);
		make_bundle("zeros.bundle", zeros, REF " ^main");
		p = testlib_fmt("%s/zeros.bundle", T);
		if (stat(p, &st) < 0)
			st.st_size = -1;
		ok(st.st_size >= 0 && st.st_size < 1 << 20,
		   "a blob of 80 MiB of zeros makes a bundle under 1 MiB (%lld bytes)",
		   (long long)st.st_size);
		hostile(p, &l, "bundle refused: an object in its pack unpacks to more than 64 MiB",
		        "an 80 MiB blob of zeros under a 2 MiB blob cap");

		char *py = testlib_fmt("%s/delta-bomb.py", T);
		testlib_write_file(py, "%s", delta_bomb_py);
		p = testlib_fmt("%s/delta-bomb.bundle", T);
		testlib_sh("python3 '%s' '%s' %s %s " REF, py, p, BASE, good);
		if (stat(p, &st) < 0)
			st.st_size = -1;
		ok(st.st_size >= 0 && st.st_size < 16 << 10,
		   "a chain of deltas that doubles 1 MiB to 1 GiB makes a bundle under 16 KiB "
		   "(%lld bytes)", (long long)st.st_size);
		hostile(p, &l, "bundle refused: an object in its pack unpacks to more than 64 MiB",
		        "a doubling chain of deltas");
	}

	/* Not a regular file. */
	p = testlib_fmt("%s/link.bundle", T);
	char *goodpath = testlib_fmt("%s/good.bundle", T);
	ok(symlink(goodpath, p) == 0, "symlink created");
	hostile(p, &LIM, "is a symlink", "a symlink at the bundle path");
	p = testlib_fmt("%s/fifo.bundle", T);
	ok(mkfifo(p, 0600) == 0, "FIFO created");
	hostile(p, &LIM, "is not a regular file (a FIFO)", "a FIFO at the bundle path");
	p = testlib_fmt("%s/missing.bundle", T);
	hostile(p, &LIM, "cannot open", "a missing bundle");

	/* The good one. */
	char head[41] = "";
	char *before = mirror_state();
	rc = bundle_import(MIRROR, goodpath, REF, BASE, task_ref, &LIM, head, &e);
	ok(rc == 0, "a good bundle is imported");
	if (rc < 0)
		printf("# %s\n", e.msg);
	is_str(head, good, "head_out is the bundle's tip");
	is_str(testlib_sh_out("git -C '%s' rev-parse %s", MIRROR, task_ref), good,
	       "the task ref is written");
	is_str(testlib_sh_out("git -C '%s' for-each-ref --format='%%(refname)' "
	                      "refs/heads/paddock refs/paddock", MIRROR), task_ref,
	       "no other ref is written");
	is_str(testlib_sh_out("git -C '%s' fsck --strict --no-dangling 2>&1 && echo fsck-ok",
	                      MIRROR), "fsck-ok",
	       "the mirror passes git fsck");
	is_str(testlib_sh_out("cd '%s/objects' && ls -d incoming-* 2>/dev/null", MIRROR), "",
	       "no quarantine is left");
	before = mirror_state();
	rc = bundle_import(MIRROR, goodpath, REF, BASE, task_ref, &LIM, head, &e);
	refused(rc, &e, "already exists in the mirror", "importing onto an existing task ref");
	char *after = mirror_state();
	is_str(after, before, "a refused re-import leaves the mirror unchanged");
	/* A second round on the same base with only the newer commit. */
	make_bundle("round1.bundle", good1, REF " ^main");
	p = testlib_fmt("%s/round1.bundle", T);
	rc = bundle_import(MIRROR, p, REF, BASE, "refs/paddock/tasks/t1-r1", &LIM, head, &e);
	ok(rc == 0, "a bundle whose objects are partly in the mirror is imported");

	/* Objects the mirror already has may come along (a thin pack's bases
	 * are added to it): imported. */
	{
		char *dup = testlib_sh_out(
			"cd '%s' && b=$(printf 'dup\\n' | git hash-object -w --stdin) && "
			"t=$( (git ls-tree %s; printf '100644 blob %%s\\tdup.txt\\n' $b) | git mktree) && "
			"git commit-tree $t -p %s -m dup", WORK, good, good);
		char *extra = testlib_sh_out("git -C '%s' rev-parse 'main^{tree}' main:a.txt | "
		                             "tr '\\n' ' '", WORK);
		smuggle_bundle("dup.bundle", dup, extra);
		p = testlib_fmt("%s/dup.bundle", T);
		rc = bundle_import(MIRROR, p, REF, BASE, "refs/paddock/tasks/t1-dup", &LIM, head, &e);
		ok(rc == 0, "a pack that also holds objects the mirror has is imported");
		if (rc < 0)
			printf("# %s\n", e.msg);
	}

	/* A ref that names a tree, and one that names an object the bundle
	 * does not have. */
	{
		char *tree = testlib_sh_out("cd '%s' && printf 'odd\\n' > odd.txt && "
		                            "b=$(git hash-object -w odd.txt) && rm odd.txt && "
		                            "printf '100644 blob %%s\\todd.txt\\n' $b | git mktree", WORK);
		testlib_sh("cd '%s' && { printf '# v2 git bundle\\n-%s\\n%s " REF "\\n\\n' && "
		           "git rev-list --objects %s | cut -c1-40 | git pack-objects -q --stdout; } "
		           "> '%s/tree.bundle'", WORK, BASE, tree, tree, T);
		hostile(testlib_fmt("%s/tree.bundle", T), &LIM, "its ref points to a tree, not a commit",
		        "a ref to a tree");
		testlib_sh("cd '%s' && { printf '# v2 git bundle\\n-%s\\n%s " REF "\\n\\n' && "
		           "git rev-list --objects %s | cut -c1-40 | git pack-objects -q --stdout; } "
		           "> '%s/absent.bundle'", WORK, BASE, "0123456789abcdef0123456789abcdef01234567",
		           tree, T);
		hostile(testlib_fmt("%s/absent.bundle", T), &LIM, "which is not in the bundle",
		        "a ref to an object the bundle does not have");
	}

	/* A commit whose parent is in neither the pack nor the mirror. */
	{
		char *c1 = testlib_sh_out("cd '%s' && git commit-tree $(git rev-parse %s^{tree}) -p %s "
		                          "-m one", WORK, good, good);
		char *c2 = testlib_sh_out("cd '%s' && git commit-tree $(git rev-parse %s^{tree}) -p %s "
		                          "-m two", WORK, good, c1);
		testlib_sh("cd '%s' && { printf '# v2 git bundle\\n-%s\\n%s " REF "\\n\\n' && "
		           "git rev-list --objects %s ^%s | cut -c1-40 | git pack-objects -q --stdout; } "
		           "> '%s/orphan.bundle'", WORK, BASE, c2, c2, c1, T);
		p = testlib_fmt("%s/orphan.bundle", T);
		hostile(p, &LIM, testlib_fmt("bundle refused: object %s is missing", c1),
	        "a parent commit that is nowhere");
	}

	/* Trees that name the same tree over and over, five levels deep:
	 * 300^5 paths, five trees.  The check walks each tree once (as
	 * rev-list does), so the bundle is imported at once. */
	{
		char *nest = testlib_sh_out(
			"cd '%s' && t=$(printf 'leaf\\n' | git hash-object -w --stdin) && "
			"t=$(printf '100644 blob %%s\\tleaf\\n' $t | git mktree) && "
			"for d in 1 2 3 4 5; do "
			"t=$(i=0; while [ $i -lt 300 ]; do printf '040000 tree %%s\\td%%d\\n' $t $i; "
			"i=$((i + 1)); done | git mktree); done && "
			"t=$( (git ls-tree %s; printf '040000 tree %%s\\tnest\\n' $t) | git mktree) && "
			"git commit-tree $t -p %s -m nested", WORK, good, good);
		make_bundle("nest.bundle", nest, REF " ^main");
		p = testlib_fmt("%s/nest.bundle", T);
		rc = bundle_import(MIRROR, p, REF, BASE, "refs/paddock/tasks/t1-nest", &LIM, head, &e);
		ok(rc == 0, "trees that repeat one tree 300 times, five levels deep, are imported "
		   "(each tree is walked once)");
		if (rc < 0)
			printf("# %s\n", e.msg);
	}

	/* A filesystem that reports DT_UNKNOWN for every directory entry. */
	{
		char *unk = testlib_sh_out(
			"cd '%s' && b=$(printf 'unknown d_type\\n' | git hash-object -w --stdin) && "
			"t=$( (git ls-tree %s; printf '100644 blob %%s\\tunknown.txt\\n' $b) | git mktree) && "
			"git commit-tree $t -p %s -m unknown", WORK, good, good);
		make_bundle("unknown.bundle", unk, REF " ^main");
		p = testlib_fmt("%s/unknown.bundle", T);
		fs_unknown_types = 1;
		rc = bundle_import(MIRROR, p, REF, BASE, "refs/paddock/tasks/t1-unknown", &LIM, head, &e);
		fs_unknown_types = 0;
		ok(rc == 0, "DT_UNKNOWN: the bundle is imported");
		if (rc < 0)
			printf("# %s\n", e.msg);
		is_str(testlib_sh_out("git -C '%s' cat-file -t %s 2>&1", MIRROR, unk), "commit",
		       "DT_UNKNOWN: its commit is in the mirror");
		is_str(testlib_sh_out("git -C '%s' fsck --strict --no-dangling 2>&1 && "
		                      "echo fsck-ok", MIRROR), "fsck-ok",
		       "DT_UNKNOWN: the mirror passes git fsck");
	}

	test_fsck();

	/* A quarantine whose listing shows no pack: refused, no ref. */
	{
		char *hid = testlib_sh_out(
			"cd '%s' && b=$(printf 'hidden\\n' | git hash-object -w --stdin) && "
			"t=$( (git ls-tree %s; printf '100644 blob %%s\\thidden.txt\\n' $b) | git mktree) && "
			"git commit-tree $t -p %s -m hidden", WORK, good, good);
		make_bundle("hidden.bundle", hid, REF " ^main");
		p = testlib_fmt("%s/hidden.bundle", T);
		fs_hide_pack = 1;
		hostile(p, &LIM, "the pack's check left 0 packs and 0 pack indexes",
		        "pack files missing from the quarantine's listing");
		fs_hide_pack = 0;
	}

	/* diff_write and diff_stat of the import. */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		rc = diff_write(MIRROR, BASE, good, f, &e);
		fclose(f);
		ok(rc == 0, "diff_write");
		ok(text && strstr(text, "diff --git a/a.txt b/a.txt\n"), "diff names a.txt");
		ok(text && strstr(text, "\n-two\n+TWO\n"), "diff shows the changed line");
		ok(text && strstr(text, "\n three\n"), "diff shows context lines with a space");
		ok(text && strstr(text, "rename from b.txt\nrename to d.txt\n"), "diff detects the rename");
		ok(text && strstr(text, "+++ b/c.txt\n@@ -0,0 +1,2 @@\n+new\n+more\n"),
		   "diff shows the new file");
		char *git_diff = testlib_sh_out("git -C '%s' diff -M %s %s", MIRROR, BASE, good);
		size_t tl = text ? strlen(text) : 0;
		while (tl && text[tl - 1] == '\n')
			text[--tl] = '\0';
		is_str(text, git_diff, "diff_write matches git diff -M");
		free(text);

		struct buf st = {0};
		rc = diff_stat(MIRROR, BASE, good, &st, &e);
		ok(rc == 0, "diff_stat");
		ok(has_line(st.data, " a.txt ", "| 2 +-"), "diffstat line for a.txt");
		ok(has_line(st.data, " c.txt ", "| 2 ++"), "diffstat line for c.txt");
		ok(st.data && strstr(st.data, "b.txt => d.txt"), "diffstat shows the rename");
		ok(st.data && strstr(st.data, "3 files changed, 3 insertions(+), 1 deletion(-)"),
		   "diffstat summary");
		for (char *l = st.data; l && *l;) {
			size_t n = strcspn(l, "\n");
			printf("# %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
		buf_free(&st);
		rc = diff_stat(MIRROR, BASE, "0123456789012345678901234567890123456789", &st, &e);
		refused(rc, &e, "is not in the mirror", "diff of a missing commit");
		buf_free(&st);
	}

	testlib_end();
	return tap_done();
}
