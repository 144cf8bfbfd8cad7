/* diff: a task's change, read from the mirror with libgit2. */
#ifndef PADDOCK_DIFF_H
#define PADDOCK_DIFF_H

#include <stdint.h>
#include <stdio.h>
#include "buf.h"
#include "err.h"

/* One file of a diff, as diff_each hands it over. */
struct diff_file {
	const char *old_path, *new_path;
	uint32_t old_mode, new_mode;   /* 0: that side does not exist */
	int64_t old_size, new_size;
	int binary;
	size_t ins, del;               /* '+' and '-' lines */
};

/* fn gets each file with its patch text (as diff_write writes it; whole
 * lines); a non-zero return stops the diff (diff_each returns -1, e set
 * by fn or else a "stopped" message). */
typedef int (*diff_file_fn)(void *arg, const struct diff_file *f, const char *patch, size_t len,
                            struct err *e);

/* Computes base..head (renames detected) once, file by file in the diff's
 * order, spreading the files over a few threads, and hands each file to
 * fn as soon as it and every file before it are done: the first file
 * comes long before the last is computed. */
int diff_each(const char *mirror, const char *base, const char *head, diff_file_fn fn, void *arg,
              struct err *e);

/* The same for a diff's patch text (`git diff`'s, as diff_write writes it;
 * a paddock serve's GET /tasks/ID/diff): parsed by libgit2, each file
 * handed to fn with its patch as libgit2 prints it again.  The sizes of
 * a file's two sides are not in a patch: 0.  -1 with e set (ERR_REMOTE)
 * when text is not a diff. */
int diff_each_buffer(const char *text, size_t len, diff_file_fn fn, void *arg, struct err *e);

/* Writes the unified diff base..head (patch text, as `git diff`) to out,
 * file by file as it is computed. */
int diff_write(const char *mirror, const char *base, const char *head, FILE *out,
               struct err *e);
/* Appends a diffstat (" file | 3 ++-" lines and a summary) to out. */
int diff_stat(const char *mirror, const char *base, const char *head, struct buf *out,
              struct err *e);

/* A diffstat built file by file, for a caller that has the files one at a
 * time (the dashboard, as the diff streams in).  The lines are
 * libgit2's git_diff_stats_to_buf (FULL | INCLUDE_SUMMARY) to the byte;
 * until every file is added the widths are those of the files so far. */
struct diff_stat {
	size_t files, ins, del, renames;
	size_t max_name, max_filestat;
};
void diff_stat_add(struct diff_stat *s, const struct diff_file *f);
/* " path | 12 +++---\n", bars scaled to fit width columns. */
void diff_stat_line(const struct diff_stat *s, const struct diff_file *f, size_t width,
                    struct buf *out);
/* The files of a diff kept for a diffstat of the whole, as diff_stat
 * writes it: diff_stat_list_file is a diff_file_fn (arg: the list, zeroed
 * first); diff_stat_list_write appends the lines; diff_stat_list_free
 * frees what the list holds. */
struct diff_stat_list {
	struct diff_stat st;
	struct diff_file *v;           /* the paths are the list's copies */
	size_t n, cap;
};
int diff_stat_list_file(void *arg, const struct diff_file *f, const char *patch, size_t len,
                        struct err *e);
void diff_stat_list_write(const struct diff_stat_list *l, struct buf *out);
void diff_stat_list_free(struct diff_stat_list *l);
/* " 3 files changed, 5 insertions(+), 2 deletions(-)\n" */
void diff_stat_summary(const struct diff_stat *s, struct buf *out);
/* " create mode 100644 path\n" and the like; 0 (nothing added) when the
 * mode did not change. */
int diff_stat_mode(const struct diff_file *f, struct buf *out);

#endif
