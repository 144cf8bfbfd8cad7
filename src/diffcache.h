/* diffcache: a change's diff computed once and kept.
 *
 * A range base..head of two commits never changes, so its diff (diff.h:
 * each file's paths, modes, sizes, line counts and patch text) is
 * computed once, where the gate computes it anyway, and kept in the
 * task's folder (paths_task_diffs): one file per (base, head, diff
 * options), named "<base>-<head>.<options>" with the options' tag
 * (DIFFCACHE_TAG).  `paddock diff`, the dashboard's diff view and
 * GET /tasks/ID/diff hand over what it holds, byte for byte what
 * diff_each computes; they sanitize at output as before, since it holds
 * the raw patch.
 *
 * A file is a header (a magic with the format's version, both commits,
 * the options, the number of files, the body's length before and after
 * compression, the body's CRC-32, and a CRC-32 of the header's numbers
 * and the compressed body), then the body compressed with zlib: per
 * file, its fields in little-endian and its paths and patch.  It is
 * written to a temporary file in the same folder and renamed into place,
 * so a reader sees a whole file or none; it is not synced, so after a
 * crash it may be empty or short.  A reader reads the whole file and
 * checks it before handing anything over (this range and options, the
 * length, the checksum of every byte); a file that fails (short,
 * damaged, another range or options, a link, over the size cap) is
 * ignored, computed again from the mirror and replaced, so a bad file is
 * never partly served.  Then each file goes to the caller as soon as it
 * is inflated (the first screen does not wait for the last file), each
 * record checked to lie within the body; should the body still disagree
 * with its header (the body's checksum, the count, a record), the rest
 * is computed from the mirror past the files handed over, and the entry
 * replaced.
 *
 * Only ranges of two full hexadecimal object ids are kept (a name or a
 * short id may move); others are computed every time. */
#ifndef PADDOCK_DIFFCACHE_H
#define PADDOCK_DIFFCACHE_H

#include <stddef.h>
#include "buf.h"
#include "diff.h"
#include "err.h"

/* The diff options an entry was computed with (diff.h: renames detected,
 * three lines of context, libgit2's patch text), in its header... */
#define DIFFCACHE_OPTIONS "renames;context=3;patch=libgit2"
/* ...and in its name. */
#define DIFFCACHE_TAG "r-u3"
/* Bodies larger than this (uncompressed) are not kept. */
#define DIFFCACHE_MAX ((size_t)512 << 20)

/* As diff_each(mirror, base, head, fn, arg, e) (diff.h), from the entry
 * in dir when a sound one is there (the mirror is not opened); else
 * computed from the mirror, each file handed to fn as soon as it is
 * ready, and, once every file was handed over, kept in dir (created
 * 0700 when missing; a failure to keep it is no error: the next reader
 * computes it again).  dir NULL: diff_each, nothing kept. */
int diffcache_each(const char *dir, const char *mirror, const char *base, const char *head,
                   diff_file_fn fn, void *arg, struct err *e);

/* As diff_write (diff.h), through diffcache_each. */
int diffcache_write(const char *dir, const char *mirror, const char *base, const char *head,
                    FILE *out, struct err *e);

/* As diff_stat (diff.h), through diffcache_each: the gate's one pass that
 * also keeps the entry the views then read. */
int diffcache_stat(const char *dir, const char *mirror, const char *base, const char *head,
                   struct buf *out, struct err *e);

/* The entry's path for base..head in dir (malloc'd), or NULL when the
 * range is not kept (not two full object ids). */
char *diffcache_path(const char *dir, const char *base, const char *head);

/* Reads the entry for base..head in dir and checks all of it, body
 * included (what diffcache_each believes, and more): 0 with
 * *out holding the body (free with free()) and *len, *nfiles set; -1
 * when there is none or it is unsound (missing, short, corrupt, another
 * range or options). */
int diffcache_load(const char *dir, const char *base, const char *head, char **out,
                   size_t *len, size_t *nfiles);

#endif
