/* treediff: libgit2's tree-to-tree diff at the cost of what changed.
 *
 * git_diff_tree_to_tree (libgit2 1.5) expands every subtree of both sides,
 * also those the two share, so one changed line in a repository of 4,800
 * files in 200 folders costs 20 ms (`git diff-tree` skips equal subtrees:
 * under 1 ms).  treediff walks the two trees itself, skipping every
 * subtree whose id is the same on both sides, and hands libgit2 the paths
 * that differ as a literal pathspec, so the diff it returns is the same
 * and its cost follows the size of the change. */
#ifndef PADDOCK_TREEDIFF_H
#define PADDOCK_TREEDIFF_H

#include <git2.h>

/* As git_diff_tree_to_tree(out, repo, a, b, opts); opts may be NULL.
 * Options that need the unchanged files too (a pathspec of the caller's,
 * GIT_DIFF_INCLUDE_UNMODIFIED) take libgit2's own way. */
int treediff_diff(git_diff **out, git_repository *repo, git_tree *a, git_tree *b,
                  const git_diff_options *opts);

#endif
