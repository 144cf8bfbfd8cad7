#include "autoconfig.h"
#include "diff.h"

#include <git2.h>
#include <string.h>

#include "i18n.h"

static const char *diff_git_errmsg(void)
{
	const git_error *ge = git_error_last();
	return ge && ge->message ? ge->message : _("unknown libgit2 error");
}

static int diff_tree(git_repository *repo, const char *rev, git_tree **out, struct err *e)
{
	git_object *obj = NULL;
	int rc = 0;

	if (git_revparse_single(&obj, repo, rev) < 0)
		return err_set(e, _("commit %s is not in the mirror: %s"), rev, diff_git_errmsg());
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE) < 0)
		rc = err_set(e, _("%s is not a commit: %s"), rev, diff_git_errmsg());
	git_object_free(obj);
	return rc;
}

/* Opens the mirror and computes base..head with rename detection. */
static int diff_open(const char *mirror, const char *base, const char *head,
                     git_repository **repo, git_diff **diff, struct err *e)
{
	git_tree *a = NULL, *b = NULL;
	git_diff_options opts;
	git_diff_find_options fopts;
	int rc = -1;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopts, GIT_DIFF_FIND_OPTIONS_VERSION);
	*repo = NULL;
	*diff = NULL;
	if (git_repository_open_bare(repo, mirror) < 0) {
		err_set(e, _("cannot open the mirror %s: %s"), mirror, diff_git_errmsg());
		return -1;
	}
	if (diff_tree(*repo, base, &a, e) < 0 || diff_tree(*repo, head, &b, e) < 0)
		goto out;
	if (git_diff_tree_to_tree(diff, *repo, a, b, &opts) < 0) {
		err_set(e, _("cannot compute the diff %s..%s: %s"), base, head, diff_git_errmsg());
		goto out;
	}
	fopts.flags = GIT_DIFF_FIND_RENAMES;
	if (git_diff_find_similar(*diff, &fopts) < 0) {
		err_set(e, _("cannot detect renames: %s"), diff_git_errmsg());
		goto out;
	}
	rc = 0;
out:
	git_tree_free(a);
	git_tree_free(b);
	if (rc < 0) {
		git_diff_free(*diff);
		*diff = NULL;
		git_repository_free(*repo);
		*repo = NULL;
	}
	return rc;
}

static int diff_print_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
                           const git_diff_line *line, void *payload)
{
	FILE *out = payload;

	(void)delta;
	(void)hunk;
	/* Like git: content lines carry their origin character. */
	if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
	    line->origin == GIT_DIFF_LINE_DELETION)
		fputc(line->origin, out);
	if (line->content_len && fwrite(line->content, 1, line->content_len, out) != line->content_len)
		return -1;
	return 0;
}

int diff_write(const char *mirror, const char *base, const char *head, FILE *out,
               struct err *e)
{
	git_repository *repo;
	git_diff *diff;
	int rc = -1;

	git_libgit2_init();
	if (diff_open(mirror, base, head, &repo, &diff, e) < 0)
		goto done;
	if (git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, diff_print_line, out) < 0 || ferror(out)) {
		err_set(e, _("cannot write the diff %s..%s: %s"), base, head, diff_git_errmsg());
		goto out;
	}
	rc = 0;
out:
	git_diff_free(diff);
	git_repository_free(repo);
done:
	git_libgit2_shutdown();
	return rc;
}

int diff_stat(const char *mirror, const char *base, const char *head, struct buf *out,
              struct err *e)
{
	git_repository *repo;
	git_diff *diff;
	git_diff_stats *stats = NULL;
	git_buf gb = GIT_BUF_INIT;
	int rc = -1;

	git_libgit2_init();
	if (diff_open(mirror, base, head, &repo, &diff, e) < 0)
		goto done;
	if (git_diff_get_stats(&stats, diff) < 0 ||
	    git_diff_stats_to_buf(&gb, stats, GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY,
	                          80) < 0) {
		err_set(e, _("cannot compute the diffstat %s..%s: %s"), base, head,
		        diff_git_errmsg());
		goto out;
	}
	if (gb.size)
		buf_add(out, gb.ptr, gb.size);
	rc = 0;
out:
	git_buf_dispose(&gb);
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_repository_free(repo);
done:
	git_libgit2_shutdown();
	return rc;
}
