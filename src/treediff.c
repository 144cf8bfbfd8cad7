#include "autoconfig.h"
#include "treediff.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* The paths found so far; each malloc'd. */
struct treediff_paths {
	char **v;
	size_t n, cap;
};

static void paths_add(struct treediff_paths *p, const char *prefix, const char *name)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xrealloc(p->v, p->cap * sizeof *p->v);
	}
	p->v[p->n++] = xasprintf("%s%s", prefix, name);
}

/* Deeper than this, libgit2's own diff is used: a hostile tree nested
 * without end costs no stack here. */
#define TREEDIFF_MAX_DEPTH 256

/* Adds the paths under prefix where trees a and b differ: a name on one
 * side only, or whose entries differ, is one literal path (libgit2 takes
 * a folder's name for everything under it); a folder on both sides with
 * other contents is walked.  -1 when too deep or a tree cannot be read. */
static int treediff_walk(git_repository *repo, git_tree *a, git_tree *b, const char *prefix,
                         int depth, struct treediff_paths *out)
{
	if (depth > TREEDIFF_MAX_DEPTH)
		return -1;
	for (int side = 0; side < 2; side++) {
		git_tree *t = side ? b : a, *other = side ? a : b;
		for (size_t i = 0, n = git_tree_entrycount(t); i < n; i++) {
			const git_tree_entry *x = git_tree_entry_byindex(t, i);
			const char *name = git_tree_entry_name(x);
			const git_tree_entry *y = git_tree_entry_byname(other, name);
			if (side && y)
				continue;  /* on both sides: seen from a */
			if (!y) {
				paths_add(out, prefix, name);
				continue;
			}
			if (git_oid_equal(git_tree_entry_id(x), git_tree_entry_id(y)) &&
			    git_tree_entry_filemode(x) == git_tree_entry_filemode(y))
				continue;
			if (git_tree_entry_type(x) != GIT_OBJECT_TREE ||
			    git_tree_entry_type(y) != GIT_OBJECT_TREE) {
				paths_add(out, prefix, name);
				continue;
			}
			git_tree *sa = NULL, *sb = NULL;
			int rc = -1;
			if (git_tree_lookup(&sa, repo, git_tree_entry_id(x)) == 0 &&
			    git_tree_lookup(&sb, repo, git_tree_entry_id(y)) == 0) {
				char *sub = xasprintf("%s%s/", prefix, name);
				rc = treediff_walk(repo, sa, sb, sub, depth + 1, out);
				free(sub);
			}
			git_tree_free(sa);
			git_tree_free(sb);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

int treediff_diff(git_diff **out, git_repository *repo, git_tree *a, git_tree *b,
                  const git_diff_options *opts)
{
	git_diff_options o;
	if (opts)
		o = *opts;
	else
		git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (!a || !b || o.pathspec.count || (o.flags & GIT_DIFF_INCLUDE_UNMODIFIED))
		return git_diff_tree_to_tree(out, repo, a, b, opts);
	struct treediff_paths p = {0};
	int rc;
	if (treediff_walk(repo, a, b, "", 0, &p) < 0) {
		rc = git_diff_tree_to_tree(out, repo, a, b, opts);
	} else {
		/* No path differs: a pathspec no tree entry can match (an empty
		 * one would match everything). */
		static char none[] = "/";
		char *nonev[] = { none };
		o.pathspec.strings = p.n ? p.v : nonev;
		o.pathspec.count = p.n ? p.n : 1;
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		rc = git_diff_tree_to_tree(out, repo, a, b, &o);
	}
	for (size_t i = 0; i < p.n; i++)
		free(p.v[i]);
	free(p.v);
	return rc;
}
