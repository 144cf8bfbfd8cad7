/* bundle: checks and imports the git bundle a sandbox hands back.
 *
 * The bundle is hostile.  git 2.39 neither fscks bundle fetches nor checks
 * bundle packs in `bundle verify` (a truncated pack and a .git tree entry
 * both pass), and libgit2 1.5
 * cannot read bundles, so: the header is parsed here, strictly; then one
 * child of this process, under limits of memory (one allocation, and in
 * all), CPU time and file size derived from the caps, checks the rest:
 * every object's declared size before anything is unpacked, the pack
 * indexed by libgit2's indexer into a quarantine object directory (ids
 * checked, a thin pack completed from the mirror), then the walk of the
 * tip's new objects (reading only the folders that differ from the
 * parents', each tree once): the ref, base and sizes, git's strict fsck
 * checks on each new commit and tree and on .gitmodules and
 * .gitattributes blobs (gitfsck: what `git index-pack --strict` refused,
 * this refuses), and that the pack holds nothing the ref does not reach.
 * Only then are the objects moved into the mirror and the task ref
 * written.  A pack that is small but unpacks to far more is refused at a
 * bounded cost; any failure leaves the mirror unchanged. */
#ifndef PADDOCK_BUNDLE_H
#define PADDOCK_BUNDLE_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

struct bundle_ref {
	char sha[41];
	char *name;
};

struct bundle_header {
	int version;                 /* 2 or 3 */
	char (*prereqs)[41];         /* prerequisite commit ids */
	size_t nprereqs;
	struct bundle_ref *refs;
	size_t nrefs;
	size_t pack_offset;          /* offset of "PACK" in the file */
};

/* Parses the header at the start of data (len bytes; the whole header must
 * be inside).  Refuses: a wrong signature, v3 capabilities other than
 * @object-format=sha1 (so @filter and sha256 are refused), CR or NUL in
 * the header, lines over 1 KiB, more than 1000 lines, malformed ids or ref
 * names, and a missing or bad PACK header after the blank line. */
int bundle_header_parse(const char *data, size_t len, struct bundle_header *h,
                        struct err *e);
void bundle_header_free(struct bundle_header *h);

/* 0 means no cap. */
struct bundle_limits {
	uint64_t max_bytes;          /* the bundle file (and the indexer's input) */
	uint32_t max_objects;        /* objects in the pack (its header's count) */
	uint64_t max_blob;           /* any one new blob; also bounds what one object
	                              * may unpack to while the pack is checked */
};

/* Checks the bundle at path and imports it into the bare mirror: exactly
 * one ref, equal to expected_ref; prerequisites only `base`; the tip a
 * descendant of base; objects checked strictly (git's fsck checks under
 * --strict: no .git entries, and the others of gitfsck.h); sizes under lim; every object of the pack reachable
 * from the tip or already in the mirror.  On success the tip is written
 * to dest_ref in the mirror and to head_out. */
int bundle_import(const char *mirror, const char *path, const char *expected_ref,
                  const char *base, const char *dest_ref,
                  const struct bundle_limits *lim, char head_out[41], struct err *e);

/* The tip the bundle at path names, from its header alone (the checks of
 * bundle_import's steps 1 and 2: the file, the one expected ref, based on
 * base): what a verification can check out while bundle_import checks
 * the rest. */
int bundle_tip(const char *path, const char *expected_ref, const char *base,
               const struct bundle_limits *lim, char tip_out[41], struct err *e);

#endif
