/* test-treediff: the diff of two trees, computed by walking only what
 * differs, is the diff libgit2 computes over both trees whole. */
#include "autoconfig.h"
#include "treediff.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "tap.h"
#include "testlib.h"

static const char *REPO;

/* The deltas of a diff, one "STATUS old new mode" line each. */
static char *describe(git_diff *d)
{
	struct buf b = {0};
	for (size_t i = 0, n = git_diff_num_deltas(d); i < n; i++) {
		const git_diff_delta *x = git_diff_get_delta(d, i);
		buf_printf(&b, "%c %s %s %o %o\n", git_diff_status_char(x->status),
		           x->old_file.path ? x->old_file.path : "-",
		           x->new_file.path ? x->new_file.path : "-", (unsigned)x->old_file.mode,
		           (unsigned)x->new_file.mode);
	}
	return testlib_keep(b.data ? buf_detach(&b) : strdup(""));
}

static git_tree *tree_of(git_repository *repo, const char *rev)
{
	git_object *o = NULL, *t = NULL;
	if (git_revparse_single(&o, repo, rev) < 0 || git_object_peel(&t, o, GIT_OBJECT_TREE) < 0)
		t = NULL;
	git_object_free(o);
	return (git_tree *)t;
}

/* Commits what the shell command does to the work tree and compares both
 * diffs of HEAD~1..HEAD, with and without rename detection. */
static void check(const char *what, const char *cmd, unsigned flags)
{
	if (testlib_sh("cd '%s' && %s && git add -A && git commit -qm '%s' --allow-empty", REPO,
	               cmd, what) != 0) {
		ok(0, "%s: the change is committed", what);
		return;
	}
	git_repository *repo;
	if (git_repository_open(&repo, REPO) < 0) {
		ok(0, "%s: the repository opens", what);
		return;
	}
	git_tree *a = tree_of(repo, "HEAD~1"), *b = tree_of(repo, "HEAD");
	git_diff_options o;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = flags;
	git_diff *whole = NULL, *walked = NULL;
	int r1 = git_diff_tree_to_tree(&whole, repo, a, b, &o);
	int r2 = treediff_diff(&walked, repo, a, b, &o);
	git_diff_find_options fo;
	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
	fo.flags = GIT_DIFF_FIND_RENAMES;
	if (r1 == 0 && r2 == 0) {
		git_diff_find_similar(whole, &fo);
		git_diff_find_similar(walked, &fo);
		is_str(describe(walked), describe(whole), "%s: the same deltas as libgit2's whole diff",
		       what);
	} else {
		ok(0, "%s: both diffs are computed (%d, %d)", what, r1, r2);
	}
	git_diff_free(whole);
	git_diff_free(walked);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(repo);
}

int main(void)
{
	git_libgit2_init();
	testlib_git_env("t", "t@example.invalid", "1700000000 +0000");
	REPO = testlib_fmt("%s/repo", testlib_tmpdir("treediff"));
	testlib_sh("git init -q -b main '%s' && cd '%s' && mkdir -p a/b/c d e && "
	           "for i in 1 2 3 4 5; do echo $i > a/f$i; echo $i$i > a/b/g$i; "
	           "echo $i > a/b/c/h$i; echo $i > d/k$i; done && "
	           "printf 'x\\ny\\nz\\nw\\nv\\nu\\n' > e/long && echo top > top && "
	           "git add -A && git commit -qm base", REPO, REPO);

	check("nothing changed", "true", 0);
	check("one file deep down", "echo more >> a/b/c/h3", 0);
	check("a file at the top", "echo more >> top", 0);
	check("files in three folders", "echo 9 > a/f1 && echo 9 > a/b/g2 && echo 9 > d/k5", 0);
	check("a new folder", "mkdir -p n/m && echo new > n/m/x && echo new > n/y", 0);
	check("a folder removed", "rm -r a/b/c", 0);
	check("a file becomes a folder", "rm top && mkdir top && echo in > top/inside",
	      GIT_DIFF_INCLUDE_TYPECHANGE);
	check("a folder becomes a file", "rm -r d && echo file > d", GIT_DIFF_INCLUDE_TYPECHANGE);
	check("a folder becomes a file, typechange off", "rm -r n && echo file > n", 0);
	check("the mode only", "chmod +x a/f2", 0);
	check("a symlink", "ln -s a/f3 link", 0);
	check("a file becomes a symlink", "rm a/f4 && ln -s f5 a/f4", GIT_DIFF_INCLUDE_TYPECHANGE);
	check("a rename across folders", "git mv e/long a/b/long", 0);
	check("names that share a prefix", "echo p > a/f1.txt && echo q > a/f1- && echo r > a/f10",
	      0);
	check("a name with spaces and a star", "echo s > 'a/b/with space' && echo t > 'a/st*r'", 0);

	/* A pathspec of the caller's is kept (libgit2's own way). */
	git_repository *repo;
	git_repository_open(&repo, REPO);
	git_tree *a = tree_of(repo, "HEAD~3"), *b = tree_of(repo, "HEAD");
	git_diff_options o;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	char *ps[] = { "a/*" };
	o.pathspec.strings = ps;
	o.pathspec.count = 1;
	git_diff *d = NULL;
	ok(treediff_diff(&d, repo, a, b, &o) == 0 && strstr(describe(d), "a/f1.txt") &&
	   !strstr(describe(d), "e/long"), "a caller's pathspec still limits the diff");
	git_diff_free(d);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(repo);

	testlib_end();
	git_libgit2_shutdown();
	return tap_done();
}
