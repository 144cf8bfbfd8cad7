/* test-diffcache: a range's diff is kept once computed and served from
 * there byte for byte, without the mirror; a short, corrupt or foreign
 * entry is never served but computed again and replaced; each range and
 * only full object ids get an entry. */
#include "autoconfig.h"
#include "diffcache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>
#include "buf.h"
#include "tap.h"
#include "testlib.h"

static const char *MIRROR, *DIR_, *GONE;
static const char *BASE, *MID, *HEAD;

/* Everything a reader gets of each file, one after the other. */
static int record(void *arg, const struct diff_file *f, const char *patch, size_t len,
                  struct err *e)
{
	struct buf *b = arg;
	(void)e;
	buf_printf(b, "[%s|%s|%o|%o|%lld|%lld|%d|%zu|%zu|%zu]", f->old_path, f->new_path,
	           (unsigned)f->old_mode, (unsigned)f->new_mode, (long long)f->old_size,
	           (long long)f->new_size, f->binary, f->ins, f->del, len);
	buf_add(b, patch, len);
	if (patch[len] != '\0')
		buf_adds(b, "<no NUL after the patch>");
	return 0;
}

/* The same without the sizes, which a patch text does not carry. */
static int record_text(void *arg, const struct diff_file *f, const char *patch, size_t len,
                       struct err *e)
{
	struct buf *b = arg;
	(void)e;
	buf_printf(b, "[%s|%s|%o|%o|%d|%zu|%zu|%zu]", f->old_path, f->new_path,
	           (unsigned)f->old_mode, (unsigned)f->new_mode, f->binary, f->ins, f->del, len);
	buf_add(b, patch, len);
	return 0;
}

/* The patches, one after the other: the diff's text. */
static int concat(void *arg, const struct diff_file *f, const char *patch, size_t len,
                  struct err *e)
{
	(void)f, (void)e;
	buf_add(arg, patch, len);
	return 0;
}

static int stop_at_first(void *arg, const struct diff_file *f, const char *patch, size_t len,
                         struct err *e)
{
	(void)arg, (void)f, (void)patch, (void)len;
	return err_set(e, "stopped by the reader");
}

/* What diff_each computes from the mirror (the bytes before the cache). */
static char *computed(const char *base, const char *head)
{
	struct buf b = {0};
	struct err e = {{0}};
	if (diff_each(MIRROR, base, head, record, &b, &e) < 0)
		buf_printf(&b, "error: %s", e.msg);
	return testlib_keep(b.data ? buf_detach(&b) : strdup(""));
}

/* What diffcache_each hands over reading mirror (GONE: none there). */
static char *served(const char *mirror, const char *base, const char *head, int *rc)
{
	struct buf b = {0};
	struct err e = {{0}};
	*rc = diffcache_each(DIR_, mirror, base, head, record, &b, &e);
	if (*rc < 0)
		buf_printf(&b, "error: %s", e.msg);
	return testlib_keep(b.data ? buf_detach(&b) : strdup(""));
}

static int entry_sound(const char *base, const char *head)
{
	char *body;
	size_t len, n;
	if (diffcache_load(DIR_, base, head, &body, &len, &n) < 0)
		return 0;
	free(body);
	return 1;
}

static size_t entries(void)
{
	return (size_t)atoi(testlib_sh_out("ls -A '%s' 2>/dev/null | wc -l", DIR_));
}

/* Damages the entry with a shell command, then: it is not served (the
 * mirror gone, the read fails rather than answer), and with the mirror
 * it is computed again, the same bytes, and the entry is sound again. */
static void damaged(const char *what, const char *cmd)
{
	const char *path = testlib_keep(diffcache_path(DIR_, BASE, HEAD));
	const char *want = computed(BASE, HEAD);
	int rc;
	if (testlib_sh("cd '%s' && f='%s' && %s", DIR_, path, cmd) != 0) {
		ok(0, "%s: the entry is damaged", what);
		return;
	}
	ok(!entry_sound(BASE, HEAD), "%s: the entry is not believed", what);
	const char *got = served(GONE, BASE, HEAD, &rc);
	ok(rc < 0 && strncmp(got, "error: ", 7) == 0,
	   "%s: without the mirror nothing is served from it, not a file", what);
	is_str(served(MIRROR, BASE, HEAD, &rc), want, "%s: computed again, the same bytes", what);
	ok(entry_sound(BASE, HEAD), "%s: and kept again, sound", what);
}

/* Sets a number of the entry's header and its checksum to match, as if
 * the writer had put it there: the checksums hold, the body disagrees. */
static void forge(size_t off, unsigned width, uint64_t v)
{
	const char *path = testlib_keep(diffcache_path(DIR_, BASE, HEAD));
	FILE *f = fopen(path, "r+b");
	unsigned char h[224];
	if (!f || fread(h, 1, sizeof(h), f) != sizeof(h)) {
		ok(0, "the entry is read");
		if (f)
			fclose(f);
		return;
	}
	for (unsigned i = 0; i < width; i++)
		h[off + i] = (unsigned char)(v >> (8 * i));
	uLong c = crc32(crc32(0L, Z_NULL, 0), h, 220);
	unsigned char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		c = crc32(c, chunk, (uInt)n);
	for (unsigned i = 0; i < 4; i++)
		h[220 + i] = (unsigned char)(c >> (8 * i));
	fseek(f, 0, SEEK_SET);
	fwrite(h, 1, sizeof(h), f);
	fclose(f);
}

/* An entry whose checksums hold but whose body disagrees with its header
 * is found out only as it is read: the reader still gets every file
 * once, the rest computed, and the entry is replaced. */
static void forged(const char *what, size_t off, unsigned width, uint64_t v)
{
	const char *want = computed(BASE, HEAD);
	int rc;
	forge(off, width, v);
	ok(!entry_sound(BASE, HEAD), "%s: the entry is not believed", what);
	is_str(served(MIRROR, BASE, HEAD, &rc), want, "%s: every file once, the same bytes", what);
	ok(rc == 0 && entry_sound(BASE, HEAD), "%s: and the entry replaced", what);
}

static void setup(void)
{
	const char *tmp = testlib_tmpdir("diffcache");
	const char *src = testlib_fmt("%s/src", tmp);
	MIRROR = testlib_fmt("%s/mirror.git", tmp);
	DIR_ = testlib_fmt("%s/task/diffs", tmp);
	GONE = testlib_fmt("%s/no-mirror.git", tmp);
	testlib_sh("mkdir -p '%s/task' '%s' && cd '%s' && git init -q -b main . && "
	           "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
	           "  seq 1 $((i * 10)) >f$i.txt; done && "
	           "seq 1 200 >moved.txt && printf 'x\\0y' >bin && printf 'a' >noeol && "
	           "git add -A && git commit -qm base", tmp, src, src);
	BASE = testlib_sh_out("git -C '%s' rev-parse HEAD", src);
	testlib_sh("cd '%s' && sed -i 's/^5$/five/' f*.txt && git mv moved.txt renamed.txt && "
	           "echo 201 >>renamed.txt && git rm -qf f20.txt && printf 'x\\0z' >bin && "
	           "printf 'b' >noeol && chmod +x f1.txt && "
	           "printf 'esc \\033[31m here\\n' >new.txt && git add -A && git commit -qm mid", src);
	MID = testlib_sh_out("git -C '%s' rev-parse HEAD", src);
	testlib_sh("cd '%s' && echo more >>f2.txt && git commit -qam head", src);
	HEAD = testlib_sh_out("git -C '%s' rev-parse HEAD", src);
	testlib_sh("git clone -q --bare '%s' '%s'", src, MIRROR);
}

int main(void)
{
	int rc;
	git_libgit2_init();
	testlib_git_env("t", "t@example.invalid", "1700000000 +0000");
	setup();

	const char *want = computed(BASE, HEAD);
	ok(strstr(want, "renamed.txt") && strstr(want, "Binary files") && strstr(want, "\033[31m"),
	   "the change has a rename, a binary file and an escape");
	ok(entries() == 0, "nothing is kept before the first read");
	is_str(served(MIRROR, BASE, HEAD, &rc), want, "the first read: the bytes diff_each computes");
	ok(rc == 0 && entry_sound(BASE, HEAD), "and the range is kept, sound");
	ok(entries() == 1, "one file in the folder (no temporary left)");
	is_str(served(GONE, BASE, HEAD, &rc), want,
	       "read again without the mirror: the same bytes, from the entry");
	ok(rc == 0, "that read succeeds");

	struct buf st1 = {0}, st2 = {0};
	struct err e = {{0}};
	diff_stat(MIRROR, BASE, HEAD, &st1, &e);
	diffcache_stat(DIR_, GONE, BASE, HEAD, &st2, &e);
	is_str(st2.data ? st2.data : "", st1.data ? st1.data : "-",
	       "the diffstat from the entry is diff_stat's");
	buf_free(&st1);
	buf_free(&st2);

	/* Another range of the same task: its own entry. */
	const char *round = computed(MID, HEAD);
	is_str(served(MIRROR, MID, HEAD, &rc), round, "a round's range: its own bytes");
	ok(entries() == 2 && entry_sound(MID, HEAD), "kept in an entry of its own");
	is_str(served(GONE, MID, HEAD, &rc), round, "served from it without the mirror");
	is_str(served(GONE, BASE, HEAD, &rc), want, "the whole range's entry is unchanged");

	/* The entry of one range under another's name is not believed. */
	damaged("another range's entry under this name",
	        testlib_fmt("cp '%s' \"$f\"", testlib_keep(diffcache_path(DIR_, MID, HEAD))));
	/* Short files, from empty to one byte less. */
	damaged("an empty entry", ": >\"$f\"");
	damaged("a header cut short", "truncate -s 100 \"$f\"");
	damaged("the header alone", "truncate -s 224 \"$f\"");
	damaged("the body cut in half", "truncate -s $(( $(stat -c %s \"$f\") / 2 )) \"$f\"");
	damaged("the last byte missing", "truncate -s -1 \"$f\"");
	damaged("a byte too many", "printf x >>\"$f\"");
	/* One byte changed, the length the same. */
	damaged("a byte of the body flipped",
	        "printf '\\377' | dd of=\"$f\" bs=1 seek=$(( $(stat -c %s \"$f\") - 40 )) "
	        "conv=notrunc status=none");
	damaged("the file count changed",
	        "printf '\\007' | dd of=\"$f\" bs=1 seek=192 conv=notrunc status=none");
	damaged("the body's length changed",
	        "printf '\\001' | dd of=\"$f\" bs=1 seek=201 conv=notrunc status=none");
	damaged("the checksum changed",
	        "printf '\\001' | dd of=\"$f\" bs=1 seek=216 conv=notrunc status=none");
	damaged("other options",
	        "printf 'X' | dd of=\"$f\" bs=1 seek=144 conv=notrunc status=none");
	damaged("a symlink to a sound entry",
	        "cp \"$f\" ../elsewhere && rm \"$f\" && ln -s ../elsewhere \"$f\"");

	char *body;
	size_t blen, nf = 0;
	if (diffcache_load(DIR_, BASE, HEAD, &body, &blen, &nf) == 0)
		free(body);
	forged("a file count one too many", 192, 8, nf + 1);
	forged("a file count one too few", 192, 8, nf - 1);
	forged("the body's checksum wrong", 216, 4, 12345);

	/* A reader that stops early keeps nothing. */
	testlib_rm_rf(DIR_);
	struct err se = {{0}};
	rc = diffcache_each(DIR_, MIRROR, BASE, HEAD, stop_at_first, NULL, &se);
	ok(rc < 0 && strstr(se.msg, "stopped by the reader"), "a stopped read fails with the reader's error");
	ok(entries() == 0, "and keeps nothing (no entry, no temporary)");

	/* Names that may move are never kept. */
	is_str(served(MIRROR, "HEAD~2", "HEAD", &rc), want, "a range of names: the same bytes");
	ok(entries() == 0, "but no entry");
	ok(diffcache_path(DIR_, testlib_fmt("%.12s", BASE), HEAD) == NULL,
	   "a short id has no entry path");
	ok(diffcache_path(DIR_, "../../../../etc/passwd", HEAD) == NULL,
	   "nor has a path");

	/* The patch text a serve's GET /tasks/ID/diff sends, read back file by
	 * file (the remote dashboard's diff): the same files, counts and
	 * patches; a patch has no sizes. */
	struct buf text = {0}, back = {0}, want2 = {0};
	struct err be = {{0}};
	ok(diff_each(MIRROR, BASE, HEAD, record_text, &want2, &be) == 0, "the files as computed");
	ok(diff_each(MIRROR, BASE, HEAD, concat, &text, &be) == 0, "the patch text");
	ok(diff_each_buffer(text.data, text.len, record_text, &back, &be) == 0,
	   "diff_each_buffer reads the patch text");
	is_str(back.data ? back.data : "", want2.data ? want2.data : "-",
	       "... file by file as diff_each hands them over (paths, modes, counts, patches)");
	struct buf none = {0};
	ok(diff_each_buffer("", 0, record_text, &none, &be) == 0 && none.len == 0,
	   "an empty diff: no file");
	const char *junk = "diff --git a/x b/x\n@@ -1,2 +1,2 @@\n\x1b]52;c;AAAA\x07\n";
	be = (struct err){{0}};
	int jr = diff_each_buffer(junk, strlen(junk), record_text, &none, &be);
	ok(jr < 0 ? be.msg[0] != '\0' : 1, "a hostile or broken patch fails with a message, or is "
	   "read as text (%d: %s)", jr, be.msg);
	ok(diff_each_buffer(text.data, text.len, stop_at_first, NULL, &be) < 0 &&
	   strstr(be.msg, "stopped by the reader"), "a stopped read fails with the reader's error");
	buf_free(&text);
	buf_free(&back);
	buf_free(&want2);
	buf_free(&none);

	testlib_end();
	git_libgit2_shutdown();
	return tap_done();
}
