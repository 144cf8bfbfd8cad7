/* tarblob: normalised, content-addressed tar blobs (tarblob.h).
 *
 * Hostile archives, each refused with the entry named and nothing written
 * (no blob, nothing outside the target): absolute paths, "..", a symlink
 * then a path through it, hard links out of the archive, devices, FIFOs,
 * duplicates, a 10 GB declared size, a 5000-byte name, a pax path
 * override, truncated and empty streams; the same hostile entries handed
 * to tarblob_extract as if they were a blob.  Real tar (GNU: gnu, posix
 * and ustar formats; busybox when $BUSYBOX or PATH has one) of one tree
 * gives one blob, equal to tarblob_from_dir of the tree, and extracting it
 * gives the tree back (files, modes, symlinks).  Then random and mutated
 * archives (TARBLOB_FUZZ rounds, 500 by default): never a crash, never a
 * file outside the target. */
#include "autoconfig.h"
#include "tarblob.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "paths.h"
#include "tap.h"
#include "template.h"
#include "testlib.h"

static char *scratch;

/* ---- archives made by hand ---- */

static void octal(unsigned char *f, size_t n, uint64_t v)
{
	char tmp[32];
	snprintf(tmp, sizeof tmp, "%0*" PRIo64, (int)(n - 1), v);
	memcpy(f, tmp, n);
}

static void checksum(unsigned char *b)
{
	memset(b + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += b[i];
	octal(b + 148, 7, sum);
}

/* A header (GNU magic when gnu) and size bytes of data ('d's), padded;
 * size over 8 GiB goes in base-256 and no data follows. */
static void ent(struct buf *a, const char *name, char type, uint64_t size, const char *link,
                int gnu)
{
	unsigned char b[512] = { 0 };
	memcpy(b, name, strlen(name) < 100 ? strlen(name) : 100);
	octal(b + 100, 8, 0644);
	octal(b + 108, 8, 0);
	octal(b + 116, 8, 0);
	if (size > 077777777777ULL) {
		b[124] = 0x80;
		for (int i = 0; i < 8; i++)
			b[135 - i] = (unsigned char)(size >> (8 * i));
	} else {
		octal(b + 124, 12, size);
	}
	octal(b + 136, 12, 1700000000);
	b[156] = (unsigned char)type;
	if (link)
		memcpy(b + 157, link, strlen(link) < 100 ? strlen(link) : 100);
	memcpy(b + 257, gnu ? "ustar  \0" : "ustar\0" "00", 8);
	checksum(b);
	buf_add(a, b, 512);
	if (size > 077777777777ULL)
		return;
	for (uint64_t i = 0; i < size; i++)
		buf_addc(a, 'd');
	while (a->len % 512)
		buf_addc(a, 0);
}

/* A meta entry ('x', 'L') carrying data. */
static void meta(struct buf *a, char type, const char *data, size_t len)
{
	unsigned char b[512] = { 0 };
	memcpy(b, type == 'L' ? "././@LongLink" : "PaxHeader", type == 'L' ? 13 : 9);
	octal(b + 100, 8, 0644);
	octal(b + 124, 12, len);
	b[156] = (unsigned char)type;
	memcpy(b + 257, type == 'L' ? "ustar  \0" : "ustar\0" "00", 8);
	checksum(b);
	buf_add(a, b, 512);
	buf_add(a, data, len);
	while (a->len % 512)
		buf_addc(a, 0);
}

static void end(struct buf *a)
{
	for (int i = 0; i < 1024; i++)
		buf_addc(a, 0);
}

static int fd_of(const struct buf *a)
{
	char *p = testlib_fmt("%s/in.tar", scratch);
	testlib_write(p, a->len ? a->data : "", a->len);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* Entries of a directory, recursively, as "path mode [-> target]" lines. */
static void listing(const char *dir, const char *rel, struct buf *out)
{
	char *p = testlib_fmt("%s/%s", dir, rel);
	DIR *d = opendir(p);
	if (!d)
		return;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			names = realloc(names, (n + 1) * sizeof *names);
			names[n++] = strdup(de->d_name);
		}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < n; i++) {
		char *r = *rel ? testlib_fmt("%s/%s", rel, names[i]) : testlib_fmt("%s", names[i]);
		char *full = testlib_fmt("%s/%s", dir, r);
		struct stat st;
		lstat(full, &st);
		buf_printf(out, "%s %o", r, (unsigned)st.st_mode);
		if (S_ISLNK(st.st_mode)) {
			char t[4200];
			ssize_t k = readlink(full, t, sizeof t - 1);
			t[k > 0 ? k : 0] = 0;
			buf_printf(out, " -> %s", t);
		} else if (S_ISREG(st.st_mode)) {
			buf_printf(out, " %lld", (long long)st.st_size);
		}
		buf_addc(out, '\n');
		if (S_ISDIR(st.st_mode))
			listing(dir, r, out);
		free(names[i]);
	}
	free(names);
}

static int count_files(const char *dir)
{
	struct buf b = { 0 };
	listing(dir, "", &b);
	int n = 0;
	for (size_t i = 0; i < b.len; i++)
		n += b.data[i] == '\n';
	buf_free(&b);
	return n;
}

/* ---- hostile archives ---- */

struct hostile {
	const char *what;
	const char *name;           /* in the message */
	const char *why;            /* in the message */
	void (*make)(struct buf *a);
};

static void h_abs(struct buf *a) { ent(a, "/tmp/tarblob-abs-x", '0', 3, NULL, 0); end(a); }
static void h_dotdot(struct buf *a) { ent(a, "../x", '0', 3, NULL, 0); end(a); }
static void h_dotdot2(struct buf *a)
{
	ent(a, "a/", '5', 0, NULL, 0);
	ent(a, "a/../../x", '0', 3, NULL, 0);
	end(a);
}
static void h_symlink(struct buf *a)
{
	ent(a, "l", '2', 0, "/etc", 0);
	ent(a, "l/passwd", '0', 5, NULL, 0);
	end(a);
}
static void h_hardlink(struct buf *a) { ent(a, "shadow", '1', 0, "/etc/shadow", 0); end(a); }
static void h_hardlink2(struct buf *a)
{
	ent(a, "d/", '5', 0, NULL, 0);
	ent(a, "h", '1', 0, "d", 0);
	end(a);
}
static void h_dev(struct buf *a) { ent(a, "null", '3', 0, NULL, 0); end(a); }
static void h_fifo(struct buf *a) { ent(a, "fifo", '6', 0, NULL, 0); end(a); }
static void h_dup(struct buf *a)
{
	ent(a, "a", '0', 1, NULL, 0);
	ent(a, "./a", '0', 2, NULL, 0);
	end(a);
}
static void h_huge(struct buf *a) { ent(a, "big", '0', 10000000000ULL, NULL, 1); }
static void h_longname(struct buf *a)
{
	char *n = malloc(5001);
	memset(n, 'n', 5000);
	n[5000] = 0;
	memcpy(n, "LONG", 4);
	meta(a, 'L', n, 5001);
	ent(a, "././@LongLink-target", '0', 1, NULL, 1);
	end(a);
	free(n);
}
static void h_pax(struct buf *a)
{
	const char rec[] = "16 path=../evil\n";
	meta(a, 'x', rec, sizeof rec - 1);
	ent(a, "innocent", '0', 4, NULL, 0);
	end(a);
}
static void h_trunc(struct buf *a)
{
	ent(a, "cut", '0', 1000, NULL, 0);
	a->len = 512 + 100;
}
static void h_empty(struct buf *a) { (void)a; }
static void h_garbage(struct buf *a)
{
	for (int i = 0; i < 1024; i++)
		buf_addc(a, (char)('A' + i % 26));
}

static const struct hostile hostile[] = {
	{ "an absolute path", "/tmp/tarblob-abs-x", "an absolute path", h_abs },
	{ "../x", "../x", "\"..\"", h_dotdot },
	{ "a/../../x", "a/../../x", "\"..\"", h_dotdot2 },
	{ "a symlink to /etc, then l/passwd", "l/passwd", "below the symlink 'l'", h_symlink },
	{ "a hard link to /etc/shadow", "shadow", "an absolute path", h_hardlink },
	{ "a hard link to a directory", "h", "no regular file of the archive", h_hardlink2 },
	{ "a character device", "null", "a character device", h_dev },
	{ "a FIFO", "fifo", "a FIFO", h_fifo },
	{ "a duplicate", "a", "a second entry of the same path", h_dup },
	{ "a 10 GB declared size", "big", "10000000000 bytes, over the limit", h_huge },
	{ "a name of 5000 bytes", "LONGnnnn", "its path is 5000 bytes, over the limit of 4096", h_longname },
	{ "a pax path override to ../evil", "../evil", "\"..\"", h_pax },
	{ "a truncated archive", "cut", "ends in the middle", h_trunc },
	{ "a zero-length archive", NULL, "it is empty", h_empty },
	{ "garbage", NULL, "not a tar archive", h_garbage },
};

static void test_hostile(void)
{
	char *data = testlib_fmt("%s/data", scratch);
	for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		const struct hostile *h = &hostile[i];
		struct buf a = { 0 };
		h->make(&a);
		int fd = fd_of(&a);
		struct err e = {{ 0 }};
		char hex[TARBLOB_HEX];
		int rc = tarblob_store(data, fd, NULL, hex, &e);
		close(fd);
		ok(rc < 0, "%s: refused", h->what);
		ok(!h->name || strstr(e.msg, h->name), "%s: the message names the entry", h->what);
		ok(strstr(e.msg, h->why) != NULL, "%s: the message says why", h->what);
		if (!strstr(e.msg, h->why) || (h->name && !strstr(e.msg, h->name)))
			printf("#   message: %s\n", e.msg);
		is_int(count_files(testlib_fmt("%s/blobs", data)), 1, "%s: no blob stored", h->what);

		/* The same bytes as a blob: extract refuses them, writing nothing
		 * outside its directory. */
		char *into = testlib_fmt("%s/x%zu/into", scratch, i);
		testlib_sh("mkdir -p '%s'", into);
		fd = fd_of(&a);
		err_clear(&e);
		rc = tarblob_extract(fd, into, (uid_t)-1, (gid_t)-1, &e);
		close(fd);
		ok(rc < 0, "%s: extract refuses it too (%s)", h->what, e.msg);
		is_int(count_files(testlib_fmt("%s/x%zu", scratch, i)), 1 + count_files(into),
		       "%s: nothing written outside the target", h->what);
		buf_free(&a);
	}
	ok(access("/tmp/tarblob-abs-x", F_OK) < 0, "nothing written at the absolute path");
}

/* A tar of the symlink then a file through it, as if normalised: extract
 * must not write through the link. */
static void test_extract_through_link(void)
{
	struct buf a = { 0 };
	char *outside = testlib_fmt("%s/outside", scratch);
	testlib_sh("mkdir -p '%s'", outside);
	ent(&a, "l", '2', 0, outside, 0);
	/* normalise's modes: symlink 0777, file 0644 */
	a.data[100 + 4] = '7';
	a.data[100 + 5] = '7';
	a.data[100 + 6] = '7';
	checksum((unsigned char *)a.data);
	ent(&a, "l/planted", '0', 3, NULL, 0);
	end(&a);
	char *into = testlib_fmt("%s/through", scratch);
	testlib_sh("mkdir -p '%s'", into);
	int fd = fd_of(&a);
	struct err e = {{ 0 }};
	int rc = tarblob_extract(fd, into, (uid_t)-1, (gid_t)-1, &e);
	close(fd);
	ok(rc < 0, "extract: a file below a symlink of the blob is refused (%s)", e.msg);
	ok(access(testlib_fmt("%s/planted", outside), F_OK) < 0, "extract: nothing written through the link");
	buf_free(&a);
}

/* ---- real tar ---- */

static void make_tree(const char *t)
{
	char *deep = testlib_fmt("%s/deep/%s/%s", t,
	                         "a-directory-name-that-is-rather-long-0123456789abcdefghijklmnopqrstuvwxyz",
	                         "and-another-one-that-is-long-too-0123456789abcdefghijklmnopqrstuvwxyz");
	testlib_sh("mkdir -p '%s/src/sub' '%s/empty' '%s' && cd '%s' && "
	           "printf 'int main(void){return 0;}\\n' > src/main.c && "
	           "printf '#!/bin/sh\\necho hi\\n' > src/run.sh && chmod 750 src/run.sh && "
	           "chmod 600 src/main.c && printf 'x' > 'src/sub/a file with spaces' && "
	           "printf 'caf\\303\\251' > src/sub/caf\\303\\251.txt && "
	           "head -c 70000 /dev/urandom > src/blob.bin && "
	           "ln -s ../src/main.c empty/../src/link-rel && ln -s /etc/hostname src/link-abs && ln -s /etc src/link-dir && "
	           "ln src/blob.bin src/hard.bin && echo deep > '%s/file-at-the-bottom-of-a-path-over-a-hundred.txt' && "
	           "ln -s '%s/file-at-the-bottom-of-a-path-over-a-hundred.txt' src/link-long && "
	           "chmod 700 empty",
	           t, t, deep, t, deep, deep);
}

static char *hex_of_cmd(const char *cmd, const char *what)
{
	FILE *p = popen(cmd, "r");
	char hex[TARBLOB_HEX] = "";
	struct err e = {{ 0 }};
	int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int rc = tarblob_normalise(fileno(p), out, scratch, NULL, hex, &e);
	close(out);
	int st = pclose(p);
	ok(rc == 0 && st == 0, "%s: normalised (%s)", what, rc ? e.msg : hex);
	return testlib_fmt("%s", hex);
}

static void test_real_tar(void)
{
	char *t = testlib_fmt("%s/tree", scratch);
	make_tree(t);
	char *gnu = hex_of_cmd(testlib_fmt("tar -C '%s' -cf - .", t), "GNU tar, gnu format, from a pipe");
	char *pax = hex_of_cmd(testlib_fmt("tar --format=posix -C '%s' -cf - .", t), "GNU tar, posix format");
	char *star = hex_of_cmd(testlib_fmt("cd '%s' && tar --format=gnu -cf - src empty deep", t),
	                        "GNU tar, names without ./");
	is_str(pax, gnu, "posix and gnu formats: one blob");
	is_str(star, gnu, "with and without ./: one blob");
	char *bb = getenv("BUSYBOX") ? getenv("BUSYBOX") :
	           testlib_sh_out("command -v busybox || true");
	if (bb && *bb) {
		char *b = hex_of_cmd(testlib_fmt("cd '%s' && '%s' tar -cf - .", t, bb), "busybox tar");
		is_str(b, gnu, "busybox tar: the same blob");
	} else {
		printf("# no busybox here: its tar is not compared\n");
	}

	/* From a regular file (read twice, no spool), into the store. */
	char *tarf = testlib_fmt("%s/tree.tar", scratch);
	testlib_sh("tar -C '%s' -cf '%s' .", t, tarf);
	char *data = testlib_fmt("%s/store", scratch);
	char hex[TARBLOB_HEX] = "", hex2[TARBLOB_HEX] = "";
	struct err e = {{ 0 }};
	int fd = open(tarf, O_RDONLY | O_CLOEXEC);
	ok(tarblob_store(data, fd, NULL, hex, &e) == 0, "stored (%s)", e.msg);
	close(fd);
	is_str(hex, gnu, "the stored blob is the one normalised from the pipe");
	fd = open(tarf, O_RDONLY | O_CLOEXEC);
	ok(tarblob_store(data, fd, NULL, hex2, &e) == 0, "stored again");
	close(fd);
	is_str(hex2, hex, "two runs: the same sha256");
	char *blob = testlib_fmt("%s/blobs/sha256/%s", data, hex);
	is_str(testlib_sh_out("sha256sum '%s' | cut -d' ' -f1", blob), hex, "the blob's name is its sha256");
	char hex3[TARBLOB_HEX] = "";
	ok(tarblob_store_dir(data, t, NULL, hex3, &e) == 0, "the tree stored from the host folder (%s)", e.msg);
	is_str(hex3, hex, "in one pass, the same blob as the tar of it");
	is_int(count_files(testlib_fmt("%s/blobs/sha256", data)), 1, "one file in the store, no temp left");
	is_str(testlib_sh_out("stat -c %%a '%s'", blob), "600", "the blob is 0600");
	is_int(testlib_sh("tar -tvf '%s' | grep -q 'src/hard.bin$'", blob), 0,
	       "GNU tar reads the blob; the hard link is a file of its own");
	is_str(testlib_sh_out("tar -tvf '%s' | awk '{print $2}' | sort -u", blob), "1000/1000",
	       "every entry owned by 1000:1000");
	is_str(testlib_sh_out("tar --full-time -tvf '%s' | awk '{print $4}' | sort -u", blob),
	       "1970-01-01", "every mtime is 0");

	/* from_dir: the same bytes. */
	char fh[TARBLOB_HEX] = "";
	struct buf refused = { 0 };
	int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ok(tarblob_from_dir(t, out, NULL, &refused, fh, &e) == 0, "from_dir (%s)", e.msg);
	close(out);
	is_str(fh, gnu, "from_dir of the tree is the normalised tar -c of it");
	is_int((long long)refused.len, 0, "nothing refused in the tree");

	/* extract: the tree back. */
	char *x = testlib_fmt("%s/extracted", scratch);
	testlib_sh("mkdir -p '%s'", x);
	fd = open(blob, O_RDONLY | O_CLOEXEC);
	ok(tarblob_extract(fd, x, getuid(), getgid(), &e) == 0, "extracted (%s)", e.msg);
	close(fd);
	is_int(testlib_sh("diff -r --no-dereference '%s' '%s'", t, x), 0, "the same files and symlinks");
	struct buf l = { 0 };
	listing(x, "", &l);
	ok(strstr(l.data, "src/run.sh 100755 ") && strstr(l.data, "src/main.c 100644 ") &&
	   strstr(l.data, "empty 40755\n") && strstr(l.data, "src/link-abs 120777 -> /etc/hostname\n") &&
	   strstr(l.data, "src/link-rel 120777 -> ../src/main.c\n"),
	   "modes normalised (x kept), symlinks as they were");
	if (!strstr(l.data, "src/run.sh 100755"))
		printf("# %s\n", l.data);
	char xh[TARBLOB_HEX] = "";
	out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ok(tarblob_from_dir(x, out, NULL, NULL, xh, &e) == 0 && !strcmp(xh, hex),
	   "from_dir of the extracted tree: the same blob");
	close(out);
	char *x2 = testlib_fmt("%s/extracted2", scratch);
	testlib_sh("mkdir -p '%s' && touch '%s/in-the-way'", x2, x2);
	fd = open(blob, O_RDONLY | O_CLOEXEC);
	ok(tarblob_extract(fd, x2, (uid_t)-1, (gid_t)-1, &e) < 0 && strstr(e.msg, "not empty"),
	   "extract refuses a directory that is not empty");
	close(fd);

	/* A FIFO in the tree: left out and named. */
	testlib_sh("mkfifo '%s/src/pipe'", t);
	buf_reset(&refused);
	out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ok(tarblob_from_dir(t, out, NULL, &refused, fh, &e) == 0 && !strcmp(fh, gnu),
	   "from_dir leaves a FIFO out");
	close(out);
	ok(refused.len && strstr(refused.data, "src/pipe") && strstr(refused.data, "a FIFO"),
	   "and says so: %s", refused.len ? refused.data : "");
	struct buf a = { 0 };
	testlib_sh("tar -C '%s' -cf '%s' .", t, tarf);
	fd = open(tarf, O_RDONLY | O_CLOEXEC);
	ok(tarblob_store(data, fd, NULL, hex, &e) < 0 && strstr(e.msg, "src/pipe") &&
	   strstr(e.msg, "a FIFO"), "tar -c with the FIFO: refused, named (%s)", e.msg);
	close(fd);
	buf_free(&a);
	buf_free(&l);
	buf_free(&refused);
}

static void test_limits(void)
{
	struct tarblob_limits lim;
	tarblob_limits_default(&lim);
	lim.entries = 3;
	struct buf a = { 0 };
	for (int i = 0; i < 4; i++)
		ent(&a, testlib_fmt("f%d", i), '0', 1, NULL, 0);
	end(&a);
	int fd = fd_of(&a), out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct err e = {{ 0 }};
	ok(tarblob_normalise(fd, out, scratch, &lim, NULL, &e) < 0 && strstr(e.msg, "more than 3 entries"),
	   "the entry limit (%s)", e.msg);
	close(fd);
	buf_reset(&a);
	/* Implied directories count, and are added. */
	ent(&a, "d/e/f", '0', 1, NULL, 0);
	end(&a);
	fd = fd_of(&a);
	ok(tarblob_normalise(fd, out, scratch, &lim, NULL, &e) == 0, "d/e/f alone: three entries");
	close(fd);
	tarblob_limits_default(&lim);
	lim.total = 1500;
	buf_reset(&a);
	ent(&a, "a", '0', 1000, NULL, 0);
	ent(&a, "b", '1', 0, "a", 0);
	end(&a);
	fd = fd_of(&a);
	ok(tarblob_normalise(fd, out, scratch, &lim, NULL, &e) < 0 && strstr(e.msg, "'b'") &&
	   strstr(e.msg, "more than 1500 bytes"), "a hard link's copy counts to the total (%s)", e.msg);
	close(fd);
	tarblob_limits_default(&lim);
	lim.names = 100;
	buf_reset(&a);
	for (int i = 0; i < 30; i++)
		ent(&a, testlib_fmt("name-%02d", i), '0', 0, NULL, 0);
	end(&a);
	fd = fd_of(&a);
	ok(tarblob_normalise(fd, out, scratch, &lim, NULL, &e) < 0 &&
	   strstr(e.msg, "names add up to more than 100 bytes"), "the names' limit (%s)", e.msg);
	close(fd);
	tarblob_limits_default(&lim);
	lim.link = 10;
	buf_reset(&a);
	ent(&a, "l", '2', 0, "0123456789abc", 0);
	end(&a);
	fd = fd_of(&a);
	ok(tarblob_normalise(fd, out, scratch, &lim, NULL, &e) < 0 &&
	   strstr(e.msg, "symlink target is 13 bytes, over the limit of 10"), "the link limit (%s)", e.msg);
	close(fd);
	/* An escape in a name: quoted, never raw. */
	buf_reset(&a);
	ent(&a, "/\033[31mred", '0', 1, NULL, 0);
	end(&a);
	fd = fd_of(&a);
	ok(tarblob_normalise(fd, out, scratch, NULL, NULL, &e) < 0 && !strchr(e.msg, '\033'),
	   "a name's escape never reaches the message (%s)", e.msg);
	close(fd);
	close(out);
	buf_free(&a);
}

/* ---- fuzzing ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void mutate(struct buf *a)
{
	int n = 1 + (int)(rnd() % 8);
	for (int i = 0; i < n && a->len; i++) {
		size_t at = rnd() % a->len;
		switch (rnd() % 6) {
		case 0: a->data[at] = (char)rnd(); break;
		case 1: a->data[at] ^= (char)(1 << (rnd() % 8)); break;
		case 2: a->len = at; break;
		case 3: memcpy(a->data + at, "../", a->len - at < 3 ? a->len - at : 3); break;
		case 4: a->data[at] = "/.\0 7x5L1"[rnd() % 9]; break;
		default: break;
		}
		/* Often keep the checksum right, so mutations reach past it. */
		if (rnd() % 4 && a->len >= 512) {
			size_t h = (at / 512) * 512;
			if (h + 512 <= a->len)
				checksum((unsigned char *)a->data + h);
		}
	}
}

static char *slurp_len(const char *path, size_t *len)
{
	struct stat st;
	char *d = testlib_slurp(path);
	*len = d && stat(path, &st) == 0 ? (size_t)st.st_size : 0;
	return d;
}

/* One round: the bytes normalised, and extracted as if they were a blob,
 * each into a fresh directory of its own; 1 when anything lands outside
 * it, or when normalise's output does not extract. */
static int fuzz_round(const struct buf *a, const char *base, int i, int *accepted, int *extracted)
{
	char *outp = testlib_fmt("%s/fuzz-out.tar", scratch);
	char *dir = testlib_fmt("%s/%d", base, i), *into = testlib_fmt("%s/%d/into", base, i);
	char *into2 = testlib_fmt("%s/%d/into2", base, i);
	mkdir(dir, 0700);
	mkdir(into, 0700);
	mkdir(into2, 0700);
	int fd = fd_of(a);
	int out = open(outp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct err e = {{ 0 }};
	int rc = tarblob_normalise(fd, out, scratch, NULL, NULL, &e), bad = 0;
	close(fd);
	*accepted += rc == 0;
	fd = fd_of(a);
	*extracted += tarblob_extract(fd, into, (uid_t)-1, (gid_t)-1, &e) == 0;
	close(fd);
	if (rc == 0) {
		lseek(out, 0, SEEK_SET);
		if (tarblob_extract(out, into2, (uid_t)-1, (gid_t)-1, &e) < 0) {
			printf("# round %d: normalise's output not extracted: %s\n", i, e.msg);
			bad = 1;
		}
	}
	close(out);
	if (count_files(dir) != 2 + count_files(into) + count_files(into2)) {
		printf("# round %d: something outside the target\n", i);
		bad = 1;
	}
	return bad;
}

static void test_fuzz(void)
{
	/* Under valgrind (tests/valgrind.test runs every unit test) a round
	 * costs 25 times as much: fewer there; the sanitizer build
	 * runs them all. */
	char *maps = testlib_slurp("/proc/self/maps");
	int vg = maps && strstr(maps, "vgpreload");
	free(maps);
	const char *env = getenv("TARBLOB_FUZZ");
	int rounds = env ? atoi(env) : vg ? 60 : 500;
	/* Seeds: GNU's format (long names as 'L' and 'K'), pax's, and a blob
	 * (pax headers for its long paths and link). */
	char *gnuf = testlib_fmt("%s/fuzz-gnu.tar", scratch), *paxf = testlib_fmt("%s/fuzz-pax.tar", scratch);
	char *blobf = testlib_fmt("%s/fuzz-blob", scratch);
	testlib_sh("tar -C '%s/tree' --exclude=pipe --exclude=blob.bin --exclude=hard.bin -cf '%s' . && "
	           "tar -C '%s/tree' --exclude=pipe --exclude=blob.bin --exclude=hard.bin --format=posix "
	           "-cf '%s' .", scratch, gnuf, scratch, paxf);
	int in = open(paxf, O_RDONLY | O_CLOEXEC), out = open(blobf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	struct err e = {{ 0 }};
	ok(tarblob_normalise(in, out, scratch, NULL, NULL, &e) == 0, "fuzz: the seeds");
	close(in);
	close(out);
	size_t lens[3];
	char *seeds[3] = { slurp_len(gnuf, &lens[0]), slurp_len(paxf, &lens[1]), slurp_len(blobf, &lens[2]) };
	char *base = testlib_fmt("%s/fuzz", scratch);
	mkdir(base, 0700);
	int accepted = 0, extracted = 0, bad = 0;
	for (int i = 0; i < rounds; i++) {
		struct buf a = { 0 };
		if (i % 10 == 0) {
			size_t n = rnd() % 3000;
			for (size_t k = 0; k < n; k++)
				buf_addc(&a, (char)rnd());
		} else {
			buf_add(&a, seeds[i % 3], lens[i % 3]);
			mutate(&a);
		}
		bad += fuzz_round(&a, base, i, &accepted, &extracted);
		buf_free(&a);
	}
	for (int k = 0; k < 3; k++)
		free(seeds[k]);
	ok(bad == 0 && (rounds < 100 || (accepted > 0 && extracted > 0)),
	   "fuzz: %d rounds (%d normalised, %d extracted as blobs), nothing outside "
	   "the target, every normalised one extracts", rounds, accepted, extracted);
	testlib_sh("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", base, base);
}

/* template_prune_blobs: a blob a template's or an agent install's
 * <name>.blob names stays; one no name names goes, unless it is younger
 * than the age asked. */
static void test_prune(void)
{
	char *data = testlib_fmt("%s/prune-data", scratch);
	const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	const char *g = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	const char *x = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
	testlib_write_file(testlib_fmt("%s/templates/r/abc-key.blob", data), "%s 12 34.5\n", a);
	testlib_write_file(testlib_fmt("%s/agents/claude.blob", data), "%s 56 78.9\n", g);
	for (const char *h = a; h; h = h == a ? g : h == g ? x : NULL)
		testlib_write_file(testlib_fmt("%s/blobs/sha256/%s", data, h), "tar");
	tap_ok(template_prune_blobs(data, 3600) == 0, "a blob younger than the age asked stays");
	tap_ok(template_prune_blobs(data, 0) == 1, "with age 0, one blob removed");
	tap_ok(access(testlib_fmt("%s/blobs/sha256/%s", data, a), F_OK) == 0 &&
	           access(testlib_fmt("%s/blobs/sha256/%s", data, g), F_OK) == 0,
	       "the blobs a template and an agent install name stay");
	tap_ok(access(testlib_fmt("%s/blobs/sha256/%s", data, x), F_OK) != 0, "the one nothing names goes");
}

int main(void)
{
	scratch = testlib_tmpdir("tarblob");
	test_hostile();
	test_extract_through_link();
	test_real_tar();
	test_limits();
	test_fuzz();
	test_prune();
	testlib_end();
	return tap_done();
}
