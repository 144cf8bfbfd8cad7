/* test-changes: the lists the host writes from a workspace overlay's
 * upper layer for the hand-off (sandbox.h): SANDBOX_STAGE, the paths its
 * git add stages, written only where that is exact; SANDBOX_PATHS, what
 * is put back after the tests.  Whiteouts (character devices 0/0) need
 * root to make; without it those checks are skipped. */
#include "autoconfig.h"
#include "sandbox_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "fsx.h"
#include "tap.h"
#include "testlib.h"

static char *UP, *LOW, *OUT;
static int can_whiteout;

/* The file name of OUT, its NULs as spaces and the last one dropped;
 * "-" when there is none. */
static const char *list(const char *name)
{
	struct buf b = {0};
	struct err e = {{0}};
	char *path = testlib_fmt("%s/%s", OUT, name);
	if (fsx_read_file(path, 1 << 20, &b, &e) < 0) {
		buf_free(&b);
		return "-";
	}
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] == '\0')
			b.data[i] = ' ';
	if (b.len && b.data[b.len - 1] == ' ')
		b.data[--b.len] = '\0';
	return testlib_keep(b.data ? buf_detach(&b) : strdup(""));
}

/* A fresh upper and lower: the lower has a/f, d/g, d/h and keep. */
static void fresh(void)
{
	testlib_sh("rm -rf '%s' '%s' && mkdir -p '%s' '%s/a' '%s/d' && echo f >'%s/a/f' && "
	           "echo g >'%s/d/g' && echo h >'%s/d/h' && echo k >'%s/keep'",
	           UP, LOW, UP, LOW, LOW, LOW, LOW, LOW, LOW);
}

static int whiteout(const char *rel)
{
	return mknod(testlib_fmt("%s/%s", UP, rel), S_IFCHR | 0600, makedev(0, 0));
}

static int changes(void)
{
	struct err e = {{0}};
	int rc = sandbox_changes_at(UP, LOW, OUT, &e);
	if (rc < 0)
		printf("# sandbox_changes_at: %s\n", e.msg);
	return rc;
}

int main(void)
{
	char *dir = testlib_tmpdir("changes");
	UP = testlib_fmt("%s/upper", dir);
	LOW = testlib_fmt("%s/lower", dir);
	OUT = testlib_fmt("%s/out", dir);
	testlib_sh("mkdir -p '%s'", OUT);
	fresh();
	can_whiteout = whiteout("probe") == 0;
	unlink(testlib_fmt("%s/probe", UP));

	/* Files made and changed, a folder made: each file staged; the
	 * folder put back whole after the tests. */
	testlib_sh("mkdir -p '%s/a' '%s/n/m' && echo f2 >'%s/a/f' && echo x >'%s/n/m/x' && "
	           "ln -s a/f '%s/link'", UP, UP, UP, UP, UP);
	ok(changes() == 0, "changes are listed");
	is_str(testlib_sh_out("printf '%%s\\n' %s | sort | tr '\\n' ' '", list(".paddock-stage")),
	       "a/f link n/m/x ", "the files made and changed are staged, one by one");
	is_str(testlib_sh_out("printf '%%s\\n' %s | sort | tr '\\n' ' '", list(".paddock-paths")),
	       "a/f link n/ n/m/ n/m/x ",
	       "the folders made are put back whole (n/, n/m/), the files too");

	/* A .gitignore touched: git's scan (what it ignores may change for
	 * files nobody touched), and the paths to put back still listed. */
	testlib_sh("echo '*.o' >'%s/.gitignore'", UP);
	changes();
	is_str(list(".paddock-stage"), "-", "a .gitignore touched: no list to stage, git scans");
	ok(strstr(list(".paddock-paths"), ".gitignore") != NULL,
	   "and what to put back is still listed");

	/* The index: staged from the list only while it is the copy the
	 * last hand-off saved. */
	fresh();
	testlib_sh("mkdir -p '%s/.git/paddock' '%s/a' && echo new >'%s/a/f' && echo I1 >'%s/.git/index'",
	           UP, UP, UP, UP);
	changes();
	is_str(list(".paddock-stage"), "-", "an index with no saved copy: git scans");
	testlib_sh("echo I1 >'%s/.git/paddock/index'", UP);
	changes();
	is_str(list(".paddock-stage"), "a/f", "the index as the last hand-off saved it: the list");
	testlib_sh("echo I2 >'%s/.git/index'", UP);
	changes();
	is_str(list(".paddock-stage"), "-", "an index rewritten since (the agent's git): git scans");
	/* The copy's folder a link to a host folder holding the same bytes:
	 * never followed, so never believed. */
	char *host = testlib_fmt("%s/host", dir);
	testlib_sh("mkdir -p '%s' && echo I2 >'%s/index' && rm -rf '%s/.git/paddock' && "
	           "ln -s '%s' '%s/.git/paddock'", host, host, UP, host, UP);
	changes();
	is_str(list(".paddock-stage"), "-", "a link planted for the saved copy is not followed");
	testlib_sh("rm -f '%s/.git/paddock' && mkdir '%s/.git/paddock' && echo I2 >'%s/.git/paddock/index' "
	           "&& mkdir -p '%s/.git/info' && echo '*' >'%s/.git/info/exclude'", UP, UP, UP, UP, UP);
	changes();
	is_str(list(".paddock-stage"), "-", "an info/exclude written: git scans");

	/* A list the sandbox planted (a link to a host file) is replaced,
	 * never written through. */
	fresh();
	char *victim = testlib_fmt("%s/victim", dir);
	testlib_sh("echo keep-me >'%s' && ln -sf '%s' '%s/.paddock-stage' && echo y >'%s/keep'",
	           victim, victim, OUT, UP);
	ok(changes() == 0, "changes over a planted link");
	is_str(testlib_sh_out("cat '%s'", victim), "keep-me", "the planted link's target is untouched");
	is_str(list(".paddock-stage"), "keep", "the list is the host's");

	if (!can_whiteout) {
		for (int i = 0; i < 3; i++)
			ok(1, "# SKIP whiteouts need root (mknod)");
	} else {
		/* A removed file: staged, and put back by name. */
		fresh();
		whiteout("keep");
		changes();
		is_str(list(".paddock-stage") , "keep", "a removed file is staged");
		/* A removed folder of the template: staged whole; its files
		 * are not listed, so after the tests every file is put back. */
		whiteout("d");
		changes();
		is_str(testlib_sh_out("printf '%%s\\n' %s | sort | tr '\\n' ' '",
		                      list(".paddock-stage")), "d keep ", "a removed folder is staged whole");
		is_str(list(".paddock-paths"), "-",
		       "a removed folder of the template: no list to put back, every file is");
	}
	testlib_end();
	return tap_done();
}
