/* tarblob: templates as normalised, content-addressed tar blobs.
 *
 * A sandbox elsewhere (a kubernetes pod) hands its workspace back as a tar
 * stream made by whatever tar its image has (GNU or busybox; ustar, pax,
 * GNU long names).  The stream is the agent's: nothing in it is believed.
 * tarblob_normalise reads it and writes the one tar paddock keeps:
 *   - regular files, directories and symlinks only; a hard link becomes a
 *     copy of the regular file it names earlier in the same archive (GNU
 *     tar writes one for every second name of a file, which build caches
 *     have; the copy's bytes come from the archive itself, so it reaches
 *     nothing outside); devices, FIFOs, sparse files and every other type
 *     are refused;
 *   - no absolute path, no ".." component, no entry below a symlink (or a
 *     file) of the same archive, no path twice; "." components, repeated
 *     and trailing slashes are dropped, and the tree's root entry with them;
 *   - owner TARBLOB_OWNER:TARBLOB_OWNER without names (the sandbox uid,
 *     which owns templates), modes 0755 for directories and files with any
 *     x bit, 0644 for other files, 0777 for symlinks, mtime 0;
 *   - sorted by path (bytes), so every directory comes before what is in
 *     it; a directory the stream implies but does not hold is added;
 *   - ustar headers, a pax header before one whose path or link target
 *     does not fit, two zero blocks at the end and nothing after.
 * The same tree gives the same bytes whichever tar made the stream.  Every
 * refusal is one message that names the entry (quoted by sanitize: the
 * name is the agent's) and the rule or limit it broke; nothing is written
 * outside the output fd (and the spool, an unlinked file).
 *
 * Blobs live in <data>/blobs/sha256/<hex> (paths_blob), the hex the sha256
 * of the blob's bytes, made once (temp file, then a link that keeps an
 * existing blob).  The same writer makes the blob of a host directory
 * (tarblob_from_dir), and tarblob_extract writes a blob into an empty
 * host directory without following any link. */
#ifndef PADDOCK_TARBLOB_H
#define PADDOCK_TARBLOB_H

#include "buf.h"
#include "err.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The owner a blob's entries carry: the sandbox's uid and gid inside
 * (SANDBOX_INNER_UID, sandbox.h). */
#define TARBLOB_OWNER 1000
/* A sha256 in hex and its NUL. */
#define TARBLOB_HEX 65

struct tarblob_limits {
	size_t entries;        /* entries in all (the implied directories too) */
	uint64_t total;        /* the files' bytes in all (hard-link copies too) */
	uint64_t file;         /* one file's bytes (at most 8 GiB - 1: ustar's) */
	size_t path;           /* one path's bytes, normalised */
	size_t link;           /* one symlink target's bytes */
	size_t names;          /* the paths and link targets in all: what is
	                          held in memory while the entries are sorted */
};

/* The defaults: 500,000 entries, 8 GiB in all, 4 GiB a file, paths and
 * link targets of 4096 bytes, 64 MiB of them in all. */
void tarblob_limits_default(struct tarblob_limits *l);

/* Reads the tar stream on in (to its end marker; a pipe or a file) and
 * writes the normalised tar to out.  File contents are read from in again
 * when it is a regular file, else spooled first into an unlinked file in
 * spool_dir.  lim NULL: the defaults.  hex, when not NULL, gets the
 * output's sha256.  0, or -1 with e (ERR_INVALID for the archive's fault). */
int tarblob_normalise(int in, int out, const char *spool_dir, const struct tarblob_limits *lim,
                      char *hex, struct err *e);

/* tarblob_normalise of in into <data>/blobs/sha256/<hex> (made 0700; the
 * blob 0600, written to a temp file there and linked in place, so a blob
 * is whole or absent; one there already is kept).  hex gets its name. */
int tarblob_store(const char *data_dir, int in, const struct tarblob_limits *lim,
                  char hex[TARBLOB_HEX], struct err *e);

/* The normalised tar of the host directory dir written to out: the same
 * bytes as tarblob_normalise of `tar -c` of it.  Symlinks are entries,
 * never followed; what normalise would refuse (devices, FIFOs, sockets)
 * is left out, one line each in *refused (sanitized; refused may be
 * NULL); a limit passed fails.  A file that changes while it is read
 * fails too.  hex as for tarblob_normalise. */
int tarblob_from_dir(const char *dir, int out, const struct tarblob_limits *lim,
                     struct buf *refused, char *hex, struct err *e);

/* tarblob_store of the host directory dir: tarblob_from_dir's tar (what
 * it leaves out is not said), stored as it is made, in one pass. */
int tarblob_store_dir(const char *data_dir, const char *dir, const struct tarblob_limits *lim,
                      char hex[TARBLOB_HEX], struct err *e);

/* Writes the normalised blob read from in into dir, which must be an
 * empty directory: every entry created relative to an fd of its parent,
 * opened without following links (a symlink is never written through),
 * owned by uid:gid ((uid_t)-1 and (gid_t)-1: the caller's), with the
 * blob's modes.  A blob that is not normalised (out of order, a type or
 * path normalise never writes) fails; what was written stays for the
 * caller to remove. */
int tarblob_extract(int in, const char *dir, uid_t uid, gid_t gid, struct err *e);

#endif
