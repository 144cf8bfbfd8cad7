#include "autoconfig.h"
#include "bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/alloc.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "buf.h"
#include "child.h"
#include "fsx.h"
#include "gitfsck.h"
#include "gitlib.h"
#include "i18n.h"
#include "mirror.h"

#define BUNDLE_MAX_LINE 1024
#define BUNDLE_MAX_LINES 1000
#define BUNDLE_HEADER_READ (64 * 1024)
/* Seconds of CPU and wall clock for each git command of the check. */
#define BUNDLE_GIT_TIMEOUT 300
/* What one allocation of git's may take at least (arrays for a large
 * repository's trees), whatever the blob cap. */
#define BUNDLE_ALLOC_MIN (64ULL << 20)
/* Memory of a checking git besides its objects in flight. */
#define BUNDLE_MEM_BASE (256ULL << 20)

/* ---- header ---- */

static int bundle_is_hex40(const char *s, size_t n)
{
	if (n != 40)
		return 0;
	for (size_t i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* git check-ref-format rules, plus: must be HEAD or under refs/. */
static int bundle_refname_valid(const char *s, size_t n)
{
	if (n == 4 && memcmp(s, "HEAD", 4) == 0)
		return 1;
	if (n <= 5 || memcmp(s, "refs/", 5) != 0)
		return 0;
	if (s[n - 1] == '/' || s[n - 1] == '.')
		return 0;
	size_t comp = 0;  /* start of the current component */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch <= 0x20 || ch == 0x7f || strchr("~^:?*[\\", ch))
			return 0;
		if (ch == '.' && i + 1 < n && s[i + 1] == '.')
			return 0;
		if (ch == '@' && i + 1 < n && s[i + 1] == '{')
			return 0;
		if (ch == '/' || i + 1 == n) {
			size_t end = ch == '/' ? i : i + 1;
			if (end == comp || s[comp] == '.')
				return 0;
			if (end - comp >= 5 && memcmp(s + end - 5, ".lock", 5) == 0)
				return 0;
			comp = i + 1;
		}
	}
	return 1;
}

static uint32_t bundle_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Refuses a header line that git could read differently from us (overlong,
 * CR, NUL), and a header that ends before its blank line. */
static int header_line_check(const char *line, size_t n, int has_nl, size_t lineno,
                             struct err *e)
{
	if (n > BUNDLE_MAX_LINE) {
		err_set(e, _("bundle refused: header line %zu is over %d bytes"),
		        lineno + 1, BUNDLE_MAX_LINE);
		return -1;
	}
	if (memchr(line, '\r', n)) {
		err_set(e, _("bundle refused: header line %zu contains a carriage return"),
		        lineno + 1);
		return -1;
	}
	if (memchr(line, '\0', n)) {
		err_set(e, _("bundle refused: header line %zu contains a NUL byte"),
		        lineno + 1);
		return -1;
	}
	if (!has_nl) {
		if (lineno == 0)
			err_set(e, _("bundle refused: not a git bundle (no signature line)"));
		else
			err_set(e, _("bundle refused: the header is truncated "
			             "(no blank line before the pack)"));
		return -1;
	}
	return 0;
}

/* The first line; a v3 bundle may list capabilities next. */
static int header_signature(struct bundle_header *h, const char *line, size_t n,
                            int *in_caps, struct err *e)
{
	if (n == 15 && memcmp(line, "# v2 git bundle", 15) == 0)
		h->version = 2;
	else if (n == 15 && memcmp(line, "# v3 git bundle", 15) == 0) {
		h->version = 3;
		*in_caps = 1;
	} else {
		err_set(e, _("bundle refused: not a git v2 or v3 bundle "
		             "(bad signature line)"));
		return -1;
	}
	return 0;
}

/* "@..." lines: only the sha1 object format is accepted, since everything
 * downstream assumes 40-digit ids and a complete pack. */
static int header_capability(const char *line, size_t n, size_t lineno, int in_caps,
                             struct err *e)
{
	if (!in_caps) {
		err_set(e, _("bundle refused: unexpected capability line %zu"), lineno);
		return -1;
	}
	if (n == 19 && memcmp(line, "@object-format=sha1", 19) == 0)
		return 0;
	if (n > 15 && memcmp(line, "@object-format=", 15) == 0) {
		err_set(e, _("bundle refused: it uses the %.*s object format; "
		             "only sha1 is supported"),
		        (int)(n - 15), line + 15);
		return -1;
	}
	if (n >= 7 && memcmp(line, "@filter", 7) == 0 &&
	    (n == 7 || line[7] == '=')) {
		err_set(e, _("bundle refused: it is a partial bundle (@filter); "
		             "a complete bundle is needed"));
		return -1;
	}
	err_set(e, _("bundle refused: unknown capability %.*s"),
	        (int)(n > 64 ? 64 : n), line);
	return -1;
}

/* "-<id>" or "-<id> <comment>"; prerequisites come before any ref. */
static int header_prereq(struct bundle_header *h, const char *line, size_t n,
                         size_t lineno, int *seen_body, struct err *e)
{
	size_t idlen = n - 1;
	const char *sp = memchr(line + 1, ' ', n - 1);
	if (sp)
		idlen = (size_t)(sp - (line + 1));
	if (*seen_body > 1 || !bundle_is_hex40(line + 1, idlen)) {
		err_set(e, _("bundle refused: malformed prerequisite on header line %zu"),
		        lineno);
		return -1;
	}
	*seen_body = 1;
	h->prereqs = xrealloc(h->prereqs, (h->nprereqs + 1) * sizeof *h->prereqs);
	memcpy(h->prereqs[h->nprereqs], line + 1, 40);
	h->prereqs[h->nprereqs][40] = '\0';
	h->nprereqs++;
	return 0;
}

/* "<id> <refname>" */
static int header_ref(struct bundle_header *h, const char *line, size_t n,
                      size_t lineno, int *seen_body, struct err *e)
{
	if (n < 42 || line[40] != ' ' || !bundle_is_hex40(line, 40)) {
		err_set(e, _("bundle refused: malformed ref line %zu "
		             "(expected \"<commit id> <ref name>\")"), lineno);
		return -1;
	}
	if (!bundle_refname_valid(line + 41, n - 41)) {
		err_set(e, _("bundle refused: invalid ref name on header line %zu"), lineno);
		return -1;
	}
	*seen_body = 2;
	h->refs = xrealloc(h->refs, (h->nrefs + 1) * sizeof *h->refs);
	memcpy(h->refs[h->nrefs].sha, line, 40);
	h->refs[h->nrefs].sha[40] = '\0';
	h->refs[h->nrefs].name = xstrndup(line + 41, n - 41);
	h->nrefs++;
	return 0;
}

/* The pack right after the blank line, in a version the indexer reads. */
static int header_pack_check(const char *data, size_t len, size_t pos, struct err *e)
{
	if (len - pos < 12 || memcmp(data + pos, "PACK", 4) != 0) {
		err_set(e, _("bundle refused: there is no pack after the header"));
		return -1;
	}
	uint32_t version = bundle_be32((const unsigned char *)data + pos + 4);
	if (version != 2 && version != 3) {
		err_set(e, _("bundle refused: unsupported pack version %" PRIu32), version);
		return -1;
	}
	return 0;
}

int bundle_header_parse(const char *data, size_t len, struct bundle_header *h,
                        struct err *e)
{
	size_t pos = 0, lineno = 0;
	int in_caps = 0, seen_body = 0;

	memset(h, 0, sizeof *h);
	for (;;) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;
		const char *line = data + pos;

		if (header_line_check(line, n, nl != NULL, lineno, e) < 0)
			goto fail;
		if (++lineno > BUNDLE_MAX_LINES) {
			err_set(e, _("bundle refused: the header has over %d lines"),
			        BUNDLE_MAX_LINES);
			goto fail;
		}
		pos += n + 1;

		if (lineno == 1) {
			if (header_signature(h, line, n, &in_caps, e) < 0)
				goto fail;
			continue;
		}
		if (n == 0)
			break;
		if (line[0] == '@') {
			if (header_capability(line, n, lineno, in_caps, e) < 0)
				goto fail;
			continue;
		}
		in_caps = 0;
		if (line[0] == '-') {
			if (header_prereq(h, line, n, lineno, &seen_body, e) < 0)
				goto fail;
			continue;
		}
		if (header_ref(h, line, n, lineno, &seen_body, e) < 0)
			goto fail;
	}
	if (header_pack_check(data, len, pos, e) < 0)
		goto fail;
	h->pack_offset = pos;
	return 0;
fail:
	bundle_header_free(h);
	return -1;
}

void bundle_header_free(struct bundle_header *h)
{
	for (size_t i = 0; i < h->nrefs; i++)
		free(h->refs[i].name);
	free(h->refs);
	free(h->prereqs);
	memset(h, 0, sizeof *h);
}

/* ---- import ---- */

/* "300 MiB", "1.5 GiB", "512 bytes" */
static void bundle_size(uint64_t b, char *out, size_t outlen)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = -1;
	uint64_t div = 1;

	while (u < 3 && b >= div * 1024) {
		div *= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, outlen, "%" PRIu64 " bytes", b);
	else if (b % div == 0)
		snprintf(out, outlen, "%" PRIu64 " %s", b / div, unit[u]);
	else
		snprintf(out, outlen, "%.1f %s", (double)b / (double)div, unit[u]);
}

struct bundle_ctx {
	const char *mirror;
	char *quarantine;
	/* Bounds for the child that checks the bundle's objects (0: none).
	 * alloc_limit is the most one allocation of libgit2's may take, so
	 * that a delta that would unpack to more fails before it is
	 * unpacked (git's GIT_ALLOC_LIMIT); max_memory and max_file are
	 * rlimits. */
	uint64_t alloc_limit;
	uint64_t max_memory;
	uint64_t max_file;
	char **files;           /* the pack files in the quarantine (names) */
	size_t nfiles;
};

/* The bounds for a pack of nobj objects in pack_len bytes. */
static void bundle_set_limits(struct bundle_ctx *cx, const struct bundle_limits *lim,
                              uint32_t nobj, uint64_t pack_len)
{
	uint64_t n = nobj < pack_len ? nobj : pack_len;  /* an object takes a byte at least */

	if (lim->max_blob) {
		/* One blob under the cap (plus the NUL libgit2 adds), or the
		 * indexer's arrays of per-object entries, whichever is more. */
		uint64_t a = BUNDLE_ALLOC_MIN;
		if (lim->max_blob + (1 << 20) > a)
			a = lim->max_blob + (1 << 20);
		if (n * 256 > a)
			a = n * 256;
		cx->alloc_limit = a;
		/* A delta's base and result, and the base cache. */
		cx->max_memory = BUNDLE_MEM_BASE + 3 * a;
	}
	if (lim->max_bytes)
		/* The pack, the bases a thin pack is completed with, the index. */
		cx->max_file = 2 * lim->max_bytes + (64ULL << 20) + n * 512;
}

static void bundle_ctx_free(struct bundle_ctx *cx)
{
	free(cx->quarantine);
	for (size_t i = 0; i < cx->nfiles; i++)
		free(cx->files[i]);
	free(cx->files);
}

static int bundle_killed_by_limit(int ws)
{
	return WIFSIGNALED(ws) && (WTERMSIG(ws) == SIGALRM || WTERMSIG(ws) == SIGXCPU ||
	                           WTERMSIG(ws) == SIGKILL);
}

/* ---- the pack's objects, into the quarantine ----
 *
 * libgit2's indexer, in the checking child: it reads the pack from the
 * bundle file, checks every object's id, completes a thin pack from the
 * mirror's objects and writes the .pack and its .idx into the
 * quarantine.  What it does not check (git's fsck checks) the walk
 * below does.  Its allocations go through bundle_alloc, which refuses
 * one over the limit (as GIT_ALLOC_LIMIT does for git) and notes that it
 * did, so that a delta chain that doubles its way to a gigabyte fails
 * at the first allocation over the limit, with that as its reason. */

static size_t bundle_alloc_limit;   /* in the child only; 0: none */
static int bundle_alloc_hit;

static int bundle_alloc_over(size_t n)
{
	if (bundle_alloc_limit && n > bundle_alloc_limit) {
		bundle_alloc_hit = 1;
		return 1;
	}
	return 0;
}

static void *bundle_malloc(size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return bundle_alloc_over(n) ? NULL : malloc(n);
}

static void *bundle_calloc(size_t nelem, size_t elsize, const char *file, int line)
{
	(void)file, (void)line;
	if (elsize && nelem > SIZE_MAX / elsize)
		return NULL;
	return bundle_alloc_over(nelem * elsize) ? NULL : calloc(nelem, elsize);
}

static char *bundle_strndup(const char *str, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return bundle_alloc_over(n) ? NULL : strndup(str, n);
}

static char *bundle_strdup(const char *str, const char *file, int line)
{
	return bundle_strndup(str, strlen(str), file, line);
}

static char *bundle_substrdup(const char *str, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	if (n == SIZE_MAX || bundle_alloc_over(n + 1))
		return NULL;
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, str, n);
		s[n] = '\0';
	}
	return s;
}

static void *bundle_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file, (void)line;
	return bundle_alloc_over(n) ? NULL : realloc(p, n);
}

static void *bundle_reallocarray(void *p, size_t nelem, size_t elsize, const char *file, int line)
{
	if (elsize && nelem > SIZE_MAX / elsize)
		return NULL;
	return bundle_realloc(p, nelem * elsize, file, line);
}

static void *bundle_mallocarray(size_t nelem, size_t elsize, const char *file, int line)
{
	return bundle_reallocarray(NULL, nelem, elsize, file, line);
}

static void bundle_free(void *p)
{
	free(p);
}

/* Every allocation of libgit2 in this (child) process under limit
 * (malloc and free underneath, as libgit2's own allocator: what it
 * allocated before is freed alike). */
static void bundle_alloc_setup(uint64_t limit)
{
	static git_allocator a = {
		bundle_malloc, bundle_calloc, bundle_strdup, bundle_strndup, bundle_substrdup,
		bundle_realloc, bundle_reallocarray, bundle_mallocarray, bundle_free,
	};
	bundle_alloc_limit = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
	if (limit)
		git_libgit2_opts(GIT_OPT_SET_ALLOCATOR, &a);
}

/* ---- the pack's objects ---- */

/* ---- the walk of the tip's new objects ---- */

/* What the tip brings, found by libgit2 in a child of its own under the
 * bundle's limits (the objects are the sandbox's): every commit from the
 * tip down to the base, and in each commit's tree every entry that is
 * not the same (id and mode) at the same path in one of its parents, a
 * subtree the same in a parent skipped whole.  That is what
 * `git rev-list --objects tip --not base` lists, or a little more (an
 * object the base has at another path), and all of it reachable from the
 * tip; but it reads only the folders that differ, where rev-list reads
 * the base's whole tree.  Each such blob new to the mirror must be under
 * the cap.  The child writes records to the parent: 'B', a size, a
 * path's length and the path (a blob over the cap); 'T' (the tip) and
 * 'U' (unreached objects), below; 'E', a message's length and the
 * message; 'D' at the end. */
struct bundle_walk {
	git_repository *repo;      /* the mirror, with the quarantine's objects */
	git_odb *mirror_odb;       /* the mirror's own objects */
	git_odb *odb;
	uint64_t max_blob;
	int fd;
	int depth;
	struct buf out;
	int stop;
	/* Objects walked already (open addressing): a tree that many
	 * entries name is walked once, as rev-list's marks do, or a bundle
	 * of nested repeated trees would cost the product of their sizes. */
	git_oid *seen;
	signed char *seen_type;    /* what the first to name each took it for */
	size_t nseen, cap;
	/* The .gitmodules and .gitattributes blobs checked already. */
	git_oid *special;
	size_t nspecial;
	uint64_t max_special;      /* a larger one is refused unread */
	int special_failed;        /* walk_special refused (its message names the blob) */
};

static void walk_fsck_fail(struct bundle_walk *w, const git_oid *id, const char *msg);

/* 1 when id was seen before; else notes it and returns 0.  type is what
 * the caller takes it for (a tree entry's mode, a commit's tree line),
 * or GIT_OBJECT_ANY: one id taken for two types is refused (stop set),
 * as git's object table, one type to an id, refuses it ("is a blob, not
 * a tree"), even where the second would be skipped as walked already. */
static int walk_seen(struct bundle_walk *w, const git_oid *id, git_object_t type)
{
	if (2 * (w->nseen + 1) > w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		git_oid *t = xcalloc(cap, sizeof *t);
		signed char *tt = xcalloc(cap, 1);
		for (size_t i = 0; i < w->cap; i++) {
			if (git_oid_is_zero(&w->seen[i]))
				continue;
			size_t h;
			memcpy(&h, w->seen[i].id, sizeof h);
			for (h %= cap; !git_oid_is_zero(&t[h]); h = (h + 1) % cap)
				;
			t[h] = w->seen[i];
			tt[h] = w->seen_type[i];
		}
		free(w->seen);
		free(w->seen_type);
		w->seen = t;
		w->seen_type = tt;
		w->cap = cap;
	}
	size_t h;
	memcpy(&h, id->id, sizeof h);
	for (h %= w->cap; !git_oid_is_zero(&w->seen[h]); h = (h + 1) % w->cap) {
		if (!git_oid_equal(&w->seen[h], id))
			continue;
		git_object_t was = (git_object_t)w->seen_type[h];
		if (type == GIT_OBJECT_ANY || was == GIT_OBJECT_ANY) {
			if (was == GIT_OBJECT_ANY)
				w->seen_type[h] = (signed char)type;
		} else if (was != type) {
			char msg[96];
			snprintf(msg, sizeof msg, "object is a %s, not a %s",
			         git_object_type2string(was), git_object_type2string(type));
			walk_fsck_fail(w, id, msg);
		}
		return 1;
	}
	w->seen[h] = *id;
	w->seen_type[h] = (signed char)type;
	w->nseen++;
	return 0;
}

#define BUNDLE_WALK_MAX_DEPTH 4096

static void walk_flush(struct bundle_walk *w)
{
	if (w->out.len && fsx_write_all(w->fd, w->out.data, w->out.len) < 0)
		w->stop = 1;
	buf_reset(&w->out);
}

static void walk_error(struct bundle_walk *w, const char *msg)
{
	uint32_t n = (uint32_t)strlen(msg);
	buf_addc(&w->out, 'E');
	buf_add(&w->out, (const char *)&n, sizeof n);
	buf_add(&w->out, msg, n);
	w->stop = 1;
}

static void walk_missing(struct bundle_walk *w, const git_oid *id)
{
	char hex[41], msg[128];
	git_oid_tostr(hex, sizeof hex, id);
	snprintf(msg, sizeof msg, "missing %s", hex);
	walk_error(w, msg);
}

/* An object that fails git's strict checks: 'F', the message's length
 * and "<id>: <msgId>: <text>". */
static void walk_fsck_fail(struct bundle_walk *w, const git_oid *id, const char *msg)
{
	char hex[41];
	struct buf m = {0};
	if (id) {
		git_oid_tostr(hex, sizeof hex, id);
		buf_printf(&m, "%s: ", hex);
	}
	buf_adds(&m, msg);
	uint32_t n = (uint32_t)m.len;
	buf_addc(&w->out, 'F');
	buf_add(&w->out, (const char *)&n, sizeof n);
	buf_add(&w->out, m.data, n);
	buf_free(&m);
	w->stop = 1;
}

/* The blob a tree names .gitmodules (or .gitattributes) in any spelling:
 * checked once, as git's fsck_finish does, wherever it is (the mirror's
 * too).  A missing one is the walk's to report, but for an entry the walk
 * does not follow (a gitlink): there git refuses a missing .gitattributes
 * (gitattributesMissing, an error) and lets a missing .gitmodules by
 * (gitmodulesMissing, ignored). */
static int walk_special(enum gitfsck_special kind, const unsigned char *raw, void *arg,
                        char msg[GITFSCK_MSG])
{
	struct bundle_walk *w = arg;
	const char *what = kind == GITFSCK_GITMODULES ? ".gitmodules" : ".gitattributes";
	git_oid id;
	size_t size;
	git_object_t type;
	git_odb_object *o = NULL;
	int rc = 0;

	memcpy(id.id, raw, 20);
	for (size_t i = 0; i < w->nspecial; i++)
		if (git_oid_equal(&w->special[i], &id))
			return 0;
	w->special = xrealloc(w->special, (w->nspecial + 1) * sizeof *w->special);
	w->special[w->nspecial++] = id;
	char hex[41];
	git_oid_tostr(hex, sizeof hex, &id);
	if (git_odb_read_header(&size, &type, w->odb, &id) < 0) {
		if (kind == GITFSCK_GITMODULES)
			return 0;
		w->special_failed = 1;
		snprintf(msg, GITFSCK_MSG, "%s: gitattributesMissing: unable to read "
		         ".gitattributes blob", hex);
		return -1;
	}
	w->special_failed = 1;
	if (type != GIT_OBJECT_BLOB) {
		snprintf(msg, GITFSCK_MSG, "%s: %sBlob: non-blob found at %s", hex,
		         kind == GITFSCK_GITMODULES ? "gitmodules" : "gitattributes", what);
		return -1;
	}
	if (size > w->max_special) {
		snprintf(msg, GITFSCK_MSG, "%s: %sLarge: %s too large to parse", hex,
		         kind == GITFSCK_GITMODULES ? "gitmodules" : "gitattributes", what);
		return -1;
	}
	w->special_failed = 0;
	if (git_odb_read(&o, w->odb, &id) < 0)
		return 0;
	char m[GITFSCK_MSG];
	const char *data = git_odb_object_data(o);
	size_t len = git_odb_object_size(o);
	if ((kind == GITFSCK_GITMODULES ? gitfsck_gitmodules(data, len, m)
	                                : gitfsck_gitattributes(data, len, m)) < 0) {
		snprintf(msg, GITFSCK_MSG, "%s: %.200s", hex, m);
		w->special_failed = 1;
		rc = -1;
	}
	git_odb_object_free(o);
	return rc;
}

/* git's strict checks of a tree or commit the mirror does not have yet
 * (what the mirror has, git checked or fetched itself). */
static void walk_fsck(struct bundle_walk *w, const git_oid *id, git_object_t type)
{
	git_odb_object *o = NULL;
	char msg[GITFSCK_MSG];
	int rc;

	/* (No refresh of the mirror's pack list on a miss, as a plain lookup
	 * does: the mirror is locked, and nearly every object here is new.) */
	if (git_odb_exists_ext(w->mirror_odb, id, GIT_ODB_LOOKUP_NO_REFRESH) ||
	    git_odb_read(&o, w->odb, id) < 0) {
		git_odb_object_free(o);
		return;
	}
	const char *data = git_odb_object_data(o);
	size_t len = git_odb_object_size(o);
	msg[0] = '\0';
	if (type == GIT_OBJECT_TREE) {
		w->special_failed = 0;
		rc = gitfsck_tree(data, len, walk_special, w, msg);
		/* A blob's failure names the blob (walk_special wrote its id). */
		if (rc < 0 && w->special_failed) {
			walk_fsck_fail(w, NULL, msg);
			git_odb_object_free(o);
			return;
		}
	} else {
		rc = gitfsck_commit(data, len, msg);
	}
	if (rc < 0)
		walk_fsck_fail(w, id, msg);
	git_odb_object_free(o);
}

/* An object libgit2 could not read: missing, or there and failing git's
 * checks (an entry with an empty name, a mode that is not a number), or
 * else not readable as its type. */
static void walk_unreadable(struct bundle_walk *w, const git_oid *id, git_object_t type)
{
	char hex[41], msg[96];
	if (!git_odb_exists(w->odb, id)) {
		walk_missing(w, id);
		return;
	}
	walk_fsck(w, id, type);
	if (w->stop)
		return;
	git_oid_tostr(hex, sizeof hex, id);
	snprintf(msg, sizeof msg, "%s: not a valid %s", hex, git_object_type2string(type));
	walk_fsck_fail(w, NULL, msg);
}

/* A blob the tree brings: present, and under the cap unless the mirror
 * had it already. */
static void walk_blob(struct bundle_walk *w, const git_oid *id, const char *path)
{
	size_t size;
	git_object_t type;
	if (walk_seen(w, id, GIT_OBJECT_BLOB))
		return;
	if (git_odb_read_header(&size, &type, w->odb, id) < 0) {
		walk_missing(w, id);
		return;
	}
	if (type != GIT_OBJECT_BLOB) {
		/* (libgit2 reads a tree's entries by their modes alone) */
		char msg[96];
		snprintf(msg, sizeof msg, "expected type blob, found %s",
		         git_object_type2string(type));
		walk_fsck_fail(w, id, msg);
		return;
	}
	if (w->max_blob && size > w->max_blob && !git_odb_exists(w->mirror_odb, id)) {
		uint64_t sz = size;
		uint32_t n = (uint32_t)strlen(path);
		buf_addc(&w->out, 'B');
		buf_add(&w->out, (const char *)&sz, sizeof sz);
		buf_add(&w->out, (const char *)&n, sizeof n);
		buf_add(&w->out, path, n);
		w->stop = 1;
	}
}

/* Tree t at path prefix, against the trees at the same path in the
 * parents (q[i], NULL where a parent has none). */
static void walk_tree(struct bundle_walk *w, git_tree *t, git_tree **q, size_t nq,
                      const char *prefix)
{
	if (++w->depth > BUNDLE_WALK_MAX_DEPTH) {
		walk_error(w, "trees nested too deep");
		return;
	}
	walk_fsck(w, git_tree_id(t), GIT_OBJECT_TREE);
	git_tree **sub = xcalloc(nq ? nq : 1, sizeof *sub);
	for (size_t i = 0, n = git_tree_entrycount(t); i < n && !w->stop; i++) {
		const git_tree_entry *x = git_tree_entry_byindex(t, i);
		const char *name = git_tree_entry_name(x);
		git_object_t type = git_tree_entry_type(x);
		if (type == GIT_OBJECT_COMMIT)
			continue;  /* a submodule's commit: not this repository's */
		int same = 0;
		for (size_t k = 0; k < nq && !same; k++) {
			const git_tree_entry *y = q[k] ? git_tree_entry_byname(q[k], name) : NULL;
			same = y && git_oid_equal(git_tree_entry_id(x), git_tree_entry_id(y)) &&
			       git_tree_entry_filemode(x) == git_tree_entry_filemode(y);
		}
		if (same)
			continue;
		char *path = xasprintf("%s%s", prefix, name);
		if (type == GIT_OBJECT_BLOB) {
			walk_blob(w, git_tree_entry_id(x), path);
		} else if (type == GIT_OBJECT_TREE && walk_seen(w, git_tree_entry_id(x), GIT_OBJECT_TREE)) {
			/* walked already */
		} else if (type == GIT_OBJECT_TREE) {
			git_tree *st = NULL;
			if (git_tree_lookup(&st, w->repo, git_tree_entry_id(x)) < 0) {
				walk_unreadable(w, git_tree_entry_id(x), GIT_OBJECT_TREE);
			} else {
				for (size_t k = 0; k < nq; k++) {
					const git_tree_entry *y =
						q[k] ? git_tree_entry_byname(q[k], name) : NULL;
					sub[k] = NULL;
					if (y && git_tree_entry_type(y) == GIT_OBJECT_TREE &&
					    git_tree_lookup(&sub[k], w->repo, git_tree_entry_id(y)) < 0)
						sub[k] = NULL;
				}
				char *sp = xasprintf("%s/", path);
				walk_tree(w, st, sub, nq, sp);
				free(sp);
				for (size_t k = 0; k < nq; k++)
					git_tree_free(sub[k]);
				git_tree_free(st);
			}
		} else {
			walk_error(w, "an entry of an unknown type");
		}
		free(path);
	}
	free(sub);
	w->depth--;
}

/* One commit: its id, and what its tree brings against its parents'. */
static void walk_commit(struct bundle_walk *w, const git_oid *id)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	walk_seen(w, id, GIT_OBJECT_COMMIT);
	walk_fsck(w, id, GIT_OBJECT_COMMIT);
	if (w->stop)
		return;
	if (git_commit_lookup(&c, w->repo, id) < 0) {
		walk_unreadable(w, id, GIT_OBJECT_COMMIT);
		return;
	}
	if (git_commit_tree(&t, c) < 0) {
		walk_unreadable(w, git_commit_tree_id(c), GIT_OBJECT_TREE);
		git_commit_free(c);
		return;
	}
	size_t np = git_commit_parentcount(c);
	git_tree **q = xcalloc(np ? np : 1, sizeof *q);
	int same = 0;
	for (size_t k = 0; k < np && !w->stop; k++) {
		git_commit *p = NULL;
		if (git_commit_parent(&p, c, (unsigned)k) < 0 || git_commit_tree(&q[k], p) < 0)
			walk_missing(w, git_commit_parent_id(c, (unsigned)k));
		else
			same = same || git_oid_equal(git_tree_id(q[k]), git_tree_id(t));
		git_commit_free(p);
	}
	if (!w->stop && !same && !walk_seen(w, git_tree_id(t), GIT_OBJECT_TREE))
		walk_tree(w, t, q, np, "");
	for (size_t k = 0; k < np; k++)
		git_tree_free(q[k]);
	free(q);
	git_tree_free(t);
	git_commit_free(c);
}

/* The tip: in the bundle, a commit, and the base or a descendant of it.
 * 'T' and a byte: 'm' missing, 'c' a commit it is not (and the type's
 * name), 'a' not based on the base. */
static void walk_history_error(struct bundle_walk *w, int r, const char *what);

static void walk_tip(struct bundle_walk *w, const git_oid *tip, const git_oid *base)
{
	size_t size;
	git_object_t type;
	const char *why = NULL, *type_name = "";
	if (git_odb_read_header(&size, &type, w->odb, tip) < 0)
		why = "m";
	else if (type != GIT_OBJECT_COMMIT)
		why = "c", type_name = git_object_type2string(type);
	else if ((walk_fsck(w, tip, GIT_OBJECT_COMMIT), w->stop))
		return;  /* (git's checks before libgit2 parses it) */
	else if (!git_oid_equal(tip, base)) {
		int d = git_graph_descendant_of(w->repo, tip, base);
		if (d < 0) {
			/* A commit on the way that is nowhere: named as missing. */
			walk_history_error(w, d, "a commit cannot be read");
			return;
		}
		why = d == 1 ? NULL : "a";
	}
	if (!why)
		return;
	uint32_t n = (uint32_t)strlen(type_name);
	buf_addc(&w->out, 'T');
	buf_addc(&w->out, why[0]);
	buf_add(&w->out, (const char *)&n, sizeof n);
	buf_add(&w->out, type_name, n);
	w->stop = 1;
}

/* Every object of the pack (its .idx, version 2) that the walk did not
 * reach must be in the mirror already.  'U': how many are not, and the
 * largest's id, size and type. */
static void walk_unreached(struct bundle_walk *w, const char *idx)
{
	struct buf b = {0};
	struct err ignored = {{0}};
	if (fsx_read_file(idx, 1u << 30, &b, &ignored) < 0 || b.len < 8 + 256 * 4 ||
	    memcmp(b.data, "\377tOc\0\0\0\2", 8) != 0) {
		walk_error(w, "the pack's index is not of version 2");
		buf_free(&b);
		return;
	}
	const unsigned char *fan = (const unsigned char *)b.data + 8 + 255 * 4;
	uint32_t n = (uint32_t)fan[0] << 24 | (uint32_t)fan[1] << 16 | (uint32_t)fan[2] << 8 | fan[3];
	if ((uint64_t)n * 20 > b.len - 8 - 256 * 4) {
		walk_error(w, "the pack's index is not of version 2");
		buf_free(&b);
		return;
	}
	const unsigned char *ids = (const unsigned char *)b.data + 8 + 256 * 4;
	uint64_t missing = 0, big = 0;
	git_oid big_id = {{0}};
	git_object_t big_type = GIT_OBJECT_INVALID;
	for (uint32_t i = 0; i < n; i++) {
		git_oid id;
		memcpy(id.id, ids + 20 * (size_t)i, 20);
		if (walk_seen(w, &id, GIT_OBJECT_ANY) || git_odb_exists(w->mirror_odb, &id))
			continue;
		missing++;
		size_t size = 0;
		git_object_t type = GIT_OBJECT_INVALID;
		if (git_odb_read_header(&size, &type, w->odb, &id) == 0 && size >= big) {
			big = size;
			big_id = id;
			big_type = type;
		}
	}
	buf_free(&b);
	if (!missing)
		return;
	const char *tn = big_type == GIT_OBJECT_INVALID ? "?" : git_object_type2string(big_type);
	uint32_t tl = (uint32_t)strlen(tn);
	buf_addc(&w->out, 'U');
	buf_add(&w->out, (const char *)&missing, 8);
	buf_add(&w->out, (const char *)big_id.id, 20);
	buf_add(&w->out, (const char *)&big, 8);
	buf_add(&w->out, (const char *)&tl, 4);
	buf_add(&w->out, tn, tl);
	w->stop = 1;
}

struct walk_arg {
	const char *mirror, *quarantine, *tip, *base;
	int check_unreached;       /* every object of the pack reached (see walk_unreached) */
	uint64_t max_blob;
	int fd;
	/* The pack to index into the quarantine first (pack_fd -1: none). */
	int pack_fd;
	uint64_t pack_offset, cap, alloc_limit;
};

/* The indexer's failure: 'P', a kind ('s' over the cap, 'a' an
 * allocation over the limit, 'm' out of memory, 't' truncated, 'i'
 * invalid), the message's length and libgit2's message. */
static void walk_pack_fail(struct bundle_walk *w, char kind)
{
	const git_error *ge = git_error_last();
	const char *msg = ge && ge->message ? ge->message : "";
	if (kind == 'i' && bundle_alloc_hit)
		kind = 'a';
	else if (kind == 'i' && ge && ge->klass == GIT_ERROR_NOMEMORY)
		kind = 'm';
	else if (kind == 'i' && (strstr(msg, "EOF") || strstr(msg, "truncated") ||
	                         strstr(msg, "too short") || strstr(msg, "incomplete") ||
	                         strstr(msg, "missing trailer") ||
	                         strstr(msg, "unexpected end")))
		kind = 't';
	uint32_t n = (uint32_t)strlen(msg);
	buf_addc(&w->out, 'P');
	buf_addc(&w->out, kind);
	buf_add(&w->out, (const char *)&n, sizeof n);
	buf_add(&w->out, msg, n);
	w->stop = 1;
}

#define BUNDLE_CHUNK (256 * 1024)

/* The pack file read forward (walk_prescan). */
struct prescan {
	int fd;
	uint64_t off;              /* of buf[0] in the file */
	unsigned char buf[65536];
	size_t pos, len;
};

static int prescan_fill(struct prescan *r)
{
	if (r->pos < r->len)
		return 0;
	r->off += r->len;
	r->pos = r->len = 0;
	for (;;) {
		ssize_t n = pread(r->fd, r->buf, sizeof r->buf, (off_t)r->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		r->len = (size_t)n;
		return 0;
	}
}

static int prescan_byte(struct prescan *r)
{
	return prescan_fill(r) < 0 ? -1 : r->buf[r->pos++];
}

/* Inflates one object's data, the output discarded but for its first
 * bytes (head, up to 20); stops past want bytes.  0 at its end. */
static int prescan_inflate(struct prescan *r, uint64_t want, unsigned char head[20],
                           size_t *nhead)
{
	unsigned char out[65536];
	uint64_t total = 0;
	z_stream z;
	int zr = Z_OK;

	memset(&z, 0, sizeof z);
	if (inflateInit(&z) != Z_OK)
		return -1;
	*nhead = 0;
	while (zr != Z_STREAM_END) {
		if (prescan_fill(r) < 0)
			break;
		z.next_in = r->buf + r->pos;
		z.avail_in = (uInt)(r->len - r->pos);
		z.next_out = out;
		z.avail_out = sizeof out;
		zr = inflate(&z, Z_NO_FLUSH);
		r->pos = r->len - z.avail_in;
		size_t got = sizeof out - z.avail_out;
		for (size_t i = 0; i < got && *nhead < 20; i++)
			head[(*nhead)++] = out[i];
		total += got;
		if ((zr != Z_OK && zr != Z_STREAM_END) || total > want)
			break;
	}
	inflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -1;
}

/* A delta's data begins with its base's size and its result's. */
static uint64_t prescan_delta_result(const unsigned char *h, size_t n)
{
	size_t i = 0;
	for (int v = 0; v < 2; v++) {
		uint64_t x = 0;
		for (int shift = 0; i < n && shift < 64; shift += 7) {
			unsigned char c = h[i++];
			x |= (uint64_t)(c & 0x7f) << shift;
			if (!(c & 0x80)) {
				if (v == 1)
					return x;
				break;
			}
		}
	}
	return 0;
}

/* Before the indexer: every object's declared size (a delta's result
 * size), so that one over the allocation limit is refused before it is
 * unpacked, as git's GIT_ALLOC_LIMIT did (libgit2's indexer streams an
 * object whole through its hash: the limit on its allocations alone
 * would let a small pack of zeros inflate for minutes).  Each object is
 * inflated to find the next, its output discarded, never past its
 * declared size.  A pack this cannot read is the indexer's to refuse. */
static void walk_prescan(struct bundle_walk *w, const struct walk_arg *a)
{
	struct prescan *r = xcalloc(1, sizeof *r);
	unsigned char hdr[12], head[20];
	size_t nhead;

	r->fd = a->pack_fd;
	r->off = a->pack_offset;
	for (int i = 0; i < 12; i++) {
		int c = prescan_byte(r);
		if (c < 0)
			goto out;
		hdr[i] = (unsigned char)c;
	}
	uint32_t nobj = bundle_be32(hdr + 8);
	for (uint32_t k = 0; k < nobj; k++) {
		int c = prescan_byte(r);
		if (c < 0)
			goto out;
		int type = (c >> 4) & 7, shift = 4;
		uint64_t size = (uint64_t)(c & 15);
		while (c & 0x80) {
			if ((c = prescan_byte(r)) < 0 || shift > 57)
				goto out;
			size |= (uint64_t)(c & 0x7f) << shift;
			shift += 7;
		}
		if (type == 6) {
			do {
				if ((c = prescan_byte(r)) < 0)
					goto out;
			} while (c & 0x80);
		} else if (type == 7) {
			for (int i = 0; i < 20; i++)
				if (prescan_byte(r) < 0)
					goto out;
		}
		if (type < 6 && size > a->alloc_limit)
			goto over;
		if (prescan_inflate(r, size, head, &nhead) < 0)
			goto out;
		if (type >= 6 && prescan_delta_result(head, nhead) > a->alloc_limit)
			goto over;
	}
	goto out;
over:
	bundle_alloc_hit = 1;
	git_error_clear();
	walk_pack_fail(w, 'a');
out:
	free(r);
}

/* The pack, read from the bundle file, into the quarantine by libgit2's
 * indexer (a thin pack completed from the mirror's objects).  Sets
 * *idx_out to the path of its index. */
static void walk_index(struct bundle_walk *w, const struct walk_arg *a, char **idx_out)
{
	git_indexer *ix = NULL;
	git_indexer_options o;
	git_indexer_progress st;
	char *dir = xasprintf("%s/pack", a->quarantine);
	char *chunk = xmalloc(BUNDLE_CHUNK);
	uint64_t total = 0;

	memset(&st, 0, sizeof st);
	git_indexer_options_init(&o, GIT_INDEXER_OPTIONS_VERSION);
	bundle_alloc_setup(a->alloc_limit);
	if (a->alloc_limit)
		walk_prescan(w, a);
	if (w->stop)
		goto out;
	if (git_indexer_new(&ix, dir, 0444, w->mirror_odb, &o) < 0) {
		walk_pack_fail(w, 'i');
		goto out;
	}
	for (;;) {
		ssize_t n = pread(a->pack_fd, chunk, BUNDLE_CHUNK, (off_t)(a->pack_offset + total));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			git_error_set_str(GIT_ERROR_OS, strerror(errno));
			walk_pack_fail(w, 'i');
			goto out;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (a->cap && total > a->cap) {
			git_error_clear();
			walk_pack_fail(w, 's');
			goto out;
		}
		if (git_indexer_append(ix, chunk, (size_t)n, &st) < 0) {
			walk_pack_fail(w, 'i');
			goto out;
		}
	}
	if (git_indexer_commit(ix, &st) < 0) {
		walk_pack_fail(w, 'i');
		goto out;
	}
	*idx_out = xasprintf("%s/pack-%s.idx", dir, git_indexer_name(ix));
out:
	git_indexer_free(ix);
	free(chunk);
	free(dir);
}

/* A history walk's failure: a commit the pack and the mirror do not
 * have is reported as missing (the id libgit2 names), anything else as
 * a commit that cannot be read. */
static void walk_history_error(struct bundle_walk *w, int r, const char *what)
{
	const git_error *ge = git_error_last();
	const char *msg = ge && ge->message ? ge->message : what;
	if (r == GIT_ENOTFOUND) {
		for (const char *p = msg; *p; p++) {
			size_t n = strspn(p, "0123456789abcdef");
			if (n == 40) {
				git_oid id;
				if (git_oid_fromstrn(&id, p, 40) == 0) {
					walk_missing(w, &id);
					return;
				}
			}
			if (n)
				p += n - 1;
		}
	}
	/* A commit libgit2 cannot parse: the sandbox's, refused as such. */
	walk_fsck_fail(w, NULL, msg);
}

/* The checking child: the pack into the quarantine (when given), then
 * the walk, reading the mirror and the quarantine (or the mirror alone:
 * after the move). */
static int bundle_walk_child(void *arg)
{
	const struct walk_arg *a = arg;
	struct bundle_walk w = { .fd = a->fd, .max_blob = a->max_blob };
	git_revwalk *rw = NULL;
	git_repository *own = NULL;
	git_oid tip, base, id;
	char *idx = NULL;
	int r = 0;

	w.max_special = a->alloc_limit ? a->alloc_limit : BUNDLE_ALLOC_MIN;
	/* Each object read is not hashed again: the indexer computed every
	 * id of the pack from its content, in this process, and the
	 * quarantine and the mirror are paddock's, locked (a third of the
	 * walk's time went to hashing each object it read). */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	if (git_repository_open_bare(&own, a->mirror) < 0 ||
	    git_repository_odb(&w.mirror_odb, own) < 0) {
		const git_error *ge = git_error_last();
		walk_error(&w, ge && ge->message ? ge->message : "cannot open the objects");
	} else if (a->pack_fd >= 0) {
		walk_index(&w, a, &idx);
	}
	if (!w.stop && (git_repository_open_bare(&w.repo, a->mirror) < 0 ||
	                git_repository_odb(&w.odb, w.repo) < 0 ||
	                (a->quarantine && git_odb_add_disk_alternate(w.odb, a->quarantine) < 0) ||
	                git_oid_fromstr(&tip, a->tip) < 0 || git_oid_fromstr(&base, a->base) < 0)) {
		const git_error *ge = git_error_last();
		walk_error(&w, ge && ge->message ? ge->message : "cannot open the objects");
	} else if (!w.stop && a->quarantine) {
		walk_tip(&w, &tip, &base);
	}
	if (!w.stop && ((r = git_revwalk_new(&rw, w.repo)) < 0 ||
	                (r = git_revwalk_push(rw, &tip)) < 0 ||
	                (r = git_revwalk_hide(rw, &base)) < 0))
		walk_history_error(&w, r, "cannot walk the history");
	while (!w.stop && (r = git_revwalk_next(&id, rw)) == 0)
		walk_commit(&w, &id);
	/* The end of the history, or a commit that could not be read (a
	 * parent the pack does not have): refused. */
	if (!w.stop && r != GIT_ITEROVER)
		walk_history_error(&w, r, "a commit cannot be read");
	if (!w.stop && a->check_unreached && idx)
		walk_unreached(&w, idx);
	if (!w.stop)
		buf_addc(&w.out, 'D');
	walk_flush(&w);
	buf_free(&w.out);
	free(w.seen);
	free(w.seen_type);
	free(w.special);
	free(idx);
	git_revwalk_free(rw);
	git_odb_free(w.odb);
	git_odb_free(w.mirror_odb);
	git_repository_free(w.repo);
	git_repository_free(own);
	return 0;
}

/* A 'P' record: what the indexer refused the pack for. */
static int walk_read_pack(const struct bundle_ctx *cx, char kind, const char *msg, int n,
                          uint64_t cap, struct err *e)
{
	char sz[32];
	if (kind == 's') {
		bundle_size(cap, sz, sizeof sz);
		return err_set(e, _("bundle refused: the pack is over the %s cap"), sz);
	}
	if (kind == 'a') {
		bundle_size(cx->alloc_limit, sz, sizeof sz);
		return err_set(e, _("bundle refused: an object in its pack unpacks to more than %s"),
		               sz);
	}
	if (kind == 'm') {
		bundle_size(cx->max_memory, sz, sizeof sz);
		return err_set(e, _("bundle refused: checking its pack needs more than %s of memory"),
		               sz);
	}
	if (kind == 't')
		return err_set(e, _("bundle refused: truncated pack"));
	return err_set(e, _("bundle refused: the pack is not valid (%.*s)"), n, msg);
}

/* The child ended without its last record: a limit it ran into, or a
 * crash. */
static int walk_read_died(const struct bundle_ctx *cx, int ws, const char *tip, struct err *e)
{
	char sz[32];
	if (bundle_killed_by_limit(ws))
		return err_set(e, _("bundle refused: checking the pack took over %d seconds"),
		               BUNDLE_GIT_TIMEOUT);
	if (cx->max_file && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGXFSZ) {
		bundle_size(cx->max_file, sz, sizeof sz);
		return err_set(e, _("bundle refused: checking its pack writes more than %s"), sz);
	}
	return err_set(e, _("bundle check: the walk of %.12s's objects ended early (a limit, "
	                    "or a crash); nothing was imported"), tip);
}

/* Reads the child's records (ws: its wait status): 0, or -1 with e. */
static int walk_read(const struct bundle_ctx *cx, const struct buf *in, int ws, const char *tip,
                     const char *base, const char *ref, uint64_t max_blob, uint64_t cap,
                     struct err *e)
{
	for (size_t i = 0; i < in->len;) {
		char k = in->data[i++];
		if (k == 'F' && i + 4 <= in->len) {
			uint32_t n;
			memcpy(&n, in->data + i, 4);
			i += 4;
			if (n > in->len - i)
				break;
			const char *m = in->data + i;
			if (memmem(m, n, ": hasDotgit: ", 13))
				return err_set(e, _("bundle refused: a tree contains a .git entry "
				                    "(hasDotgit)"));
			return err_set(e, _("bundle refused: an object fails git's strict checks (%.*s)"),
			               (int)n, m);
		} else if (k == 'P' && i + 5 <= in->len) {
			char kind = in->data[i];
			uint32_t n;
			memcpy(&n, in->data + i + 1, 4);
			i += 5;
			if (n > in->len - i)
				break;
			return walk_read_pack(cx, kind, in->data + i, (int)n, cap, e);
		} else if (k == 'B' && i + 12 <= in->len) {
			uint64_t size;
			uint32_t n;
			memcpy(&size, in->data + i, 8);
			memcpy(&n, in->data + i + 8, 4);
			i += 12;
			if (n > in->len - i)
				break;
			char sz[32], capb[32];
			bundle_size(size, sz, sizeof sz);
			bundle_size(max_blob, capb, sizeof capb);
			return err_set(e, _("bundle refused: file %.*s is %s, over the %s cap for one "
			                    "file"), (int)n, in->data + i, sz, capb);
		} else if (k == 'E' && i + 4 <= in->len) {
			uint32_t n;
			memcpy(&n, in->data + i, 4);
			i += 4;
			if (n > in->len - i)
				break;
			if (n > 8 && !memcmp(in->data + i, "missing ", 8))
				return err_set(e, _("bundle refused: object %.*s is missing"), (int)(n - 8),
				               in->data + i + 8);
			return err_set(e, _("bundle check: reading the objects of %.12s: %.*s"), tip,
			               (int)n, in->data + i);
		} else if (k == 'T' && i + 5 <= in->len) {
			char why = in->data[i];
			uint32_t n;
			memcpy(&n, in->data + i + 1, 4);
			i += 5;
			if (n > in->len - i)
				break;
			if (why == 'm')
				return err_set(e, _("bundle refused: its ref points to %.12s, which is not "
				                    "in the bundle"), tip);
			if (why == 'c')
				return err_set(e, _("bundle refused: its ref points to a %.*s, not a "
				                    "commit"), (int)n, in->data + i);
			return err_set(e, _("bundle refused: it is not based on the task's base commit "
			                    "%.12s"), base);
		} else if (k == 'U' && i + 40 <= in->len) {
			uint64_t nmissing, big;
			uint32_t tl;
			char hex[41];
			git_oid id;
			memcpy(&nmissing, in->data + i, 8);
			memcpy(id.id, in->data + i + 8, 20);
			memcpy(&big, in->data + i + 28, 8);
			memcpy(&tl, in->data + i + 36, 4);
			i += 40;
			if (tl > in->len - i)
				break;
			git_oid_tostr(hex, sizeof hex, &id);
			char sz[32];
			bundle_size(big, sz, sizeof sz);
			return err_set(e, _("bundle refused: %s does not reach %zu of the objects in its pack "
			                    "(the largest, %.12s, is a %.*s of %s); a bundle may carry only "
			                    "the objects of its new commits"), ref, (size_t)nmissing, hex,
			               (int)tl, in->data + i, sz);
		} else if (k == 'D' && i == in->len) {
			return 0;
		} else {
			break;
		}
	}
	return walk_read_died(cx, ws, tip, e);
}

/* The pack of the bundle: where it is in the file, and the most of it
 * that is read. */
struct bundle_pack {
	int fd;
	uint64_t offset, cap;
};

/* Runs the check in a child.  With pack (the import's check of its ref
 * and pack): the pack into the quarantine, then the walk reading the
 * mirror with the quarantine's objects, every object of the pack
 * checked.  Without (ref NULL: after the move): the walk of the mirror
 * alone. */
static int bundle_walk(struct bundle_ctx *cx, const char *ref, const char *tip, const char *base,
                       uint64_t max_blob, const struct bundle_pack *pack, struct err *e)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, _("cannot create a pipe"));
	struct walk_arg a = { .mirror = cx->mirror, .quarantine = pack ? cx->quarantine : NULL,
	                      .tip = tip, .base = base, .max_blob = max_blob, .fd = p[1],
	                      .check_unreached = pack != NULL, .pack_fd = pack ? pack->fd : -1,
	                      .pack_offset = pack ? pack->offset : 0, .cap = pack ? pack->cap : 0,
	                      .alloc_limit = cx->alloc_limit };
	struct child_limit limits[4];
	size_t nl = 0;
	limits[nl++] = (struct child_limit){ RLIMIT_CPU, BUNDLE_GIT_TIMEOUT, BUNDLE_GIT_TIMEOUT + 1 };
	if (cx->max_file)
		limits[nl++] = (struct child_limit){ RLIMIT_FSIZE, cx->max_file, cx->max_file };
#ifndef __SANITIZE_ADDRESS__
	/* (AddressSanitizer's shadow memory is over any such limit: the
	 * sanitizer build, for tests, walks without it.) */
	if (cx->max_memory)
		limits[nl++] = (struct child_limit){ RLIMIT_DATA, cx->max_memory, cx->max_memory };
#endif
	struct child ch = { .fn = bundle_walk_child, .arg = &a, .limits = limits, .nlimits = nl,
	                    .alarm = BUNDLE_GIT_TIMEOUT, .flags = CHILD_DIE_WITH_PARENT };
	if (child_start(&ch, e) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	struct buf in = {0};
	char chunk[65536];
	for (;;) {
		ssize_t n = read(p[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(&in, chunk, (size_t)n);
	}
	close(p[0]);
	int ws = child_finish(&ch);
	int rc = walk_read(cx, &in, ws, tip, base, ref ? ref : "", max_blob, pack ? pack->cap : 0, e);
	buf_free(&in);
	return rc;
}

/* Order: the pack before its .rev, the .idx last, so that a reader never
 * sees an index without its pack. */
static int bundle_pack_rank(const char *name)
{
	size_t n = strlen(name);
	if (n > 5 && strcmp(name + n - 5, ".pack") == 0)
		return 0;
	if (n > 4 && strcmp(name + n - 4, ".idx") == 0)
		return 2;
	return 1;
}

/* The files the indexer wrote into the quarantine: regular files only,
 * asked with fstatat where the filesystem does not say (DT_UNKNOWN);
 * exactly one pack and its index. */
static int bundle_list_pack(struct bundle_ctx *cx, struct err *e)
{
	char *src = xasprintf("%s/pack", cx->quarantine);
	size_t npack = 0, nidx = 0;
	int rc = -1;
	DIR *d = opendir(src);
	struct dirent *de;

	if (!d) {
		err_errno(e, _("cannot read %s"), src);
		goto out;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (strncmp(de->d_name, "pack-", 5) != 0)
			continue;
		if (de->d_type != DT_REG &&
		    (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     !S_ISREG(st.st_mode)))
			continue;
		int rank = bundle_pack_rank(de->d_name);
		npack += rank == 0;
		nidx += rank == 2;
		cx->files = xrealloc(cx->files, (cx->nfiles + 1) * sizeof *cx->files);
		cx->files[cx->nfiles++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (npack != 1 || nidx != 1) {
		err_set(e, _("bundle check: the pack's check left %zu packs and %zu pack indexes in %s; "
		             "expected one of each"), npack, nidx, src);
		goto out;
	}
	rc = 0;
out:
	free(src);
	return rc;
}

static void bundle_unmove(char **moved, size_t nmoved)
{
	for (size_t i = nmoved; i-- > 0;)
		unlink(moved[i]);
}

/* Moves the quarantine's pack files into <mirror>/objects/pack.  The paths
 * moved (and not there before) are returned for a roll-back. */
static int bundle_move_pack(struct bundle_ctx *cx, char ***moved_out, size_t *nmoved_out,
                            struct err *e)
{
	char *src = xasprintf("%s/pack", cx->quarantine);
	char *dst = xasprintf("%s/objects/pack", cx->mirror);
	char **moved = NULL;
	size_t nmoved = 0;
	int rc = -1;

	if (fsx_mkdir_p(dst, 0755, e) < 0)
		goto out;
	moved = xcalloc(cx->nfiles + 1, sizeof *moved);
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; i < cx->nfiles; i++) {
			if (bundle_pack_rank(cx->files[i]) != rank)
				continue;
			char *from = xasprintf("%s/%s", src, cx->files[i]);
			char *to = xasprintf("%s/%s", dst, cx->files[i]);
			struct stat st;
			if (lstat(to, &st) == 0) {
				/* The same pack (same name, same content) is already there. */
				free(from);
				free(to);
				continue;
			}
			if (rename(from, to) < 0) {
				err_errno(e, _("cannot move %s into the mirror"), from);
				free(from);
				free(to);
				bundle_unmove(moved, nmoved);
				goto out;
			}
			free(from);
			moved[nmoved++] = to;
		}
	}
	*moved_out = moved;
	*nmoved_out = nmoved;
	moved = NULL;
	rc = 0;
out:
	if (moved) {
		for (size_t i = 0; i < nmoved; i++)
			free(moved[i]);
		free(moved);
	}
	free(src);
	free(dst);
	return rc;
}

/* After the move, before the ref: the mirror itself (no quarantine) has
 * every object the tip needs, so that the ref never names missing ones
 * (the same walk, on the mirror alone). */
static int bundle_check_moved(struct bundle_ctx *cx, const char *tip, const char *base,
                              struct err *e)
{
	struct err we = {{0}};
	int rc = bundle_walk(cx, NULL, tip, base, 0, NULL, &we);
	if (rc < 0)
		return err_set(e, _("bundle check: after the move into the mirror, objects of %.12s "
		                    "are missing (%s); nothing was imported"), tip, we.msg);
	return 0;
}

static int bundle_refuse_refs(const struct bundle_header *h, const char *expected,
                              struct err *e)
{
	struct buf list = {0};
	size_t i;

	if (h->nrefs == 1 && strcmp(h->refs[0].name, expected) == 0)
		return 0;
	if (h->nrefs == 0)
		return err_set(e, _("bundle refused: it carries no ref; expected %s"), expected);
	for (i = 0; i < h->nrefs && i < 5; i++)
		buf_printf(&list, "%s%s", i ? ", " : "", h->refs[i].name);
	if (i < h->nrefs)
		buf_printf(&list, ", ...");
	if (h->nrefs == 1)
		err_set(e, _("bundle refused: it carries %s; expected only %s"), list.data, expected);
	else
		err_set(e, _("bundle refused: it carries %zu refs (%s); expected only %s"),
		        h->nrefs, list.data, expected);
	buf_free(&list);
	return -1;
}

/* What the caller names must be exact before anything is read. */
static int import_check_args(const char *base, const char *dest_ref, struct err *e)
{
	int valid = 0;

	if (!bundle_is_hex40(base, strlen(base))) {
		err_set(e, _("bundle check: the base %s is not a full commit id"), base);
		return -1;
	}
	if (git_reference_name_is_valid(&valid, dest_ref) < 0 || !valid) {
		err_set(e, _("bundle check: %s is not a valid ref name"), dest_ref);
		return -1;
	}
	return 0;
}

/* A regular file under the cap, never through a symlink, never blocking
 * on a FIFO.  Returns the open file, or -1. */
static int import_open(const char *path, const struct bundle_limits *lim, struct stat *st,
                       struct err *e)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			err_set(e, _("bundle refused: %s is a symlink"), path);
		else
			err_errno(e, _("bundle refused: cannot open %s"), path);
		return -1;
	}
	if (fstat(fd, st) < 0) {
		err_errno(e, _("cannot read %s"), path);
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		err_set(e, _("bundle refused: %s is not a regular file (%s)"), path,
		        S_ISFIFO(st->st_mode) ? _("a FIFO") : S_ISDIR(st->st_mode) ? _("a directory") :
		        S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? _("a device") : _("special"));
		goto fail;
	}
	if (lim->max_bytes && (uint64_t)st->st_size > lim->max_bytes) {
		char sz[32], cap[32];
		bundle_size((uint64_t)st->st_size, sz, sizeof sz);
		bundle_size(lim->max_bytes, cap, sizeof cap);
		err_set(e, _("bundle refused: %s is over the %s cap"), sz, cap);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* The first BUNDLE_HEADER_READ bytes (fewer for a small file). */
static int import_read_head(int fd, const char *path, struct buf *hdr, struct err *e)
{
	buf_grow(hdr, BUNDLE_HEADER_READ);
	while (hdr->len < BUNDLE_HEADER_READ) {
		ssize_t n = pread(fd, hdr->data + hdr->len, BUNDLE_HEADER_READ - hdr->len,
		                  (off_t)hdr->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_errno(e, _("cannot read %s"), path);
			return -1;
		}
		if (n == 0)
			break;
		hdr->len += (size_t)n;
	}
	return 0;
}

/* The header, strictly: the one expected ref, based on the task's base,
 * and a pack under the object cap.  Sets *nobj to the pack's count. */
static int import_check_header(const struct buf *hdr, struct bundle_header *h,
                               const char *expected_ref, const char *base,
                               const struct bundle_limits *lim, uint32_t *nobj,
                               struct err *e)
{
	if (bundle_header_parse(hdr->data, hdr->len, h, e) < 0)
		return -1;
	if (bundle_refuse_refs(h, expected_ref, e) < 0)
		return -1;
	for (size_t i = 0; i < h->nprereqs; i++) {
		if (strcmp(h->prereqs[i], base) != 0) {
			err_set(e, _("bundle refused: it is not based on the task's base commit %.12s "
			             "(it needs %.12s)"), base, h->prereqs[i]);
			return -1;
		}
	}
	*nobj = bundle_be32((const unsigned char *)hdr->data + h->pack_offset + 8);
	if (lim->max_objects && *nobj > lim->max_objects) {
		err_set(e, _("bundle refused: its pack holds %" PRIu32 " objects; the cap is %" PRIu32),
		        *nobj, lim->max_objects);
		return -1;
	}
	return 0;
}

/* Under the mirror lock: an import never replaces a ref. */
static int import_check_dest(const char *mirror, const char *dest_ref, struct err *e)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	int rc = -1;

	if (git_repository_open_bare(&repo, mirror) < 0) {
		const git_error *ge = git_error_last();
		err_set(e, _("cannot open the mirror %s: %s"), mirror,
		        ge && ge->message ? ge->message : "?");
		goto out;
	}
	if (git_reference_lookup(&ref, repo, dest_ref) == 0) {
		err_set(e, _("bundle check: %s already exists in the mirror"), dest_ref);
		goto out;
	}
	rc = 0;
out:
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

/* A quarantine inside the mirror's objects (a rename away from the real
 * thing), where the pack is written. */
static int import_quarantine(struct bundle_ctx *cx, const char *mirror, struct err *e)
{
	cx->quarantine = xasprintf("%s/objects/incoming-XXXXXX", mirror);
	if (!mkdtemp(cx->quarantine)) {
		err_errno(e, _("cannot create a quarantine directory in %s/objects"), mirror);
		free(cx->quarantine);
		cx->quarantine = NULL;
		return -1;
	}
	char *packdir = xasprintf("%s/pack", cx->quarantine);
	int mk = mkdir(packdir, 0755);
	free(packdir);
	if (mk < 0) {
		err_errno(e, _("cannot create a quarantine directory in %s/objects"), mirror);
		return -1;
	}
	return 0;
}

/* Into the mirror: objects, then the ref (never overwritten); the objects
 * go back out if the ref cannot follow. */
static int import_publish(struct bundle_ctx *cx, const char *tip, const char *base,
                          const char *dest_ref, struct err *e)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	git_oid oid;
	char **moved = NULL;
	size_t nmoved = 0;
	int rc = -1;

	if (bundle_move_pack(cx, &moved, &nmoved, e) < 0)
		goto out;
	if (bundle_check_moved(cx, tip, base, e) < 0) {
		bundle_unmove(moved, nmoved);
		goto out;
	}
	if (git_repository_open_bare(&repo, cx->mirror) < 0 || git_oid_fromstr(&oid, tip) < 0 ||
	    git_reference_create(&ref, repo, dest_ref, &oid, 0, "paddock: import bundle") < 0) {
		const git_error *ge = git_error_last();
		err_set(e, _("bundle check: cannot write %s in the mirror: %s"), dest_ref,
		        ge && ge->message ? ge->message : "?");
		bundle_unmove(moved, nmoved);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < nmoved; i++)
		free(moved[i]);
	free(moved);
	git_reference_free(ref);
	git_repository_free(repo);
	return rc;
}

int bundle_tip(const char *path, const char *expected_ref, const char *base,
               const struct bundle_limits *lim, char tip_out[41], struct err *e)
{
	struct bundle_header h = {0};
	struct buf hdr = {0};
	struct stat st;
	uint32_t nobj;
	int rc = -1, fd = import_open(path, lim, &st, e);
	if (fd >= 0 && import_read_head(fd, path, &hdr, e) == 0 &&
	    import_check_header(&hdr, &h, expected_ref, base, lim, &nobj, e) == 0) {
		memcpy(tip_out, h.refs[0].sha, 41);
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	buf_free(&hdr);
	bundle_header_free(&h);
	return rc;
}

int bundle_import(const char *mirror, const char *path, const char *expected_ref,
                  const char *base, const char *dest_ref,
                  const struct bundle_limits *lim, char head_out[41], struct err *e)
{
	struct bundle_header h = {0};
	struct bundle_ctx cx = { .mirror = mirror };
	struct buf hdr = {0};
	struct stat st;
	int fd = -1, lockfd = -1, rc = -1;
	uint32_t nobj;
	char tip[41];

	gitlib_init();
	if (import_check_args(base, dest_ref, e) < 0)
		goto out;

	/* 1. The file; 2. its header. */
	fd = import_open(path, lim, &st, e);
	if (fd < 0)
		goto out;
	if (import_read_head(fd, path, &hdr, e) < 0)
		goto out;
	if (import_check_header(&hdr, &h, expected_ref, base, lim, &nobj, e) < 0)
		goto out;
	memcpy(tip, h.refs[0].sha, 41);
	bundle_set_limits(&cx, lim, nobj, (uint64_t)st.st_size - h.pack_offset);

	lockfd = mirror_lock(mirror, e);
	if (lockfd < 0)
		goto out;
	if (import_check_dest(mirror, dest_ref, e) < 0)
		goto out;

	/* 3. The pack into a quarantine; 4. tip, ancestry, sizes, git's
	 * strict checks of the new objects, and nothing the tip does not
	 * reach, reading the quarantine and the mirror: one child. */
	if (import_quarantine(&cx, mirror, e) < 0)
		goto out;
	struct bundle_pack pack = { .fd = fd, .offset = h.pack_offset,
	                            .cap = lim->max_bytes ? lim->max_bytes : (uint64_t)st.st_size };
	if (bundle_walk(&cx, expected_ref, tip, base, lim->max_blob, &pack, e) < 0)
		goto out;
	if (bundle_list_pack(&cx, e) < 0)
		goto out;

	/* 5. Into the mirror. */
	if (import_publish(&cx, tip, base, dest_ref, e) < 0)
		goto out;
	memcpy(head_out, tip, 41);
	rc = 0;
out:
	if (cx.quarantine) {
		struct err ignored;
		fsx_rm_rf(cx.quarantine, &ignored);
	}
	if (lockfd >= 0)
		close(lockfd);
	if (fd >= 0)
		close(fd);
	bundle_ctx_free(&cx);
	buf_free(&hdr);
	bundle_header_free(&h);
	return rc;
}
