/* tarblob: templates as normalised, content-addressed tar blobs.
 *
 * The tar reader is written here rather than taken from libarchive: it
 * accepts only what `tar -c` of a tree writes (ustar, pax 'x' path,
 * linkpath and size, GNU 'L' and 'K' names) and refuses the rest, so it
 * is small enough to read whole, and tests/test-tarblob.c feeds it random
 * and mutated archives.  libarchive reads dozens of formats (and has had
 * memory-safety bugs in its readers) and is no dependency of paddock. */
#define _GNU_SOURCE
#include "tarblob.h"
#include "fsx.h"
#include "i18n.h"
#include "paths.h"
#include "sanitize.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLK 512
#define USTAR_MAX_SIZE 077777777777ULL  /* 11 octal digits */
#define META_MAX (1u << 20)              /* one pax or GNU name entry */
#define META_RUN 8                       /* meta entries before a real one */

void tarblob_limits_default(struct tarblob_limits *l)
{
	l->entries = 500000;
	l->total = 8ULL << 30;
	l->file = 4ULL << 30;
	l->path = 4096;
	l->link = 4096;
	l->names = 64u << 20;
}

/* ---- messages ---- */

/* The entry's name as a message shows it: quoted, at most 200 bytes. */
static char *shown(const char *name, size_t len)
{
	char *q = sanitize_quote(name, len > 200 ? 200 : len);
	if (len <= 200)
		return q;
	char *r = xasprintf("%s...", q);
	free(q);
	return r;
}

static int refuse(struct err *e, const char *name, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(struct err *e, const char *name, size_t len, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	char *q = shown(name, len);
	err_kind_set(e, ERR_INVALID, _("the archive's entry '%s' is refused: %s"), q, why);
	free(q);
	return -1;
}

/* ---- reading a tar stream ---- */

struct rd {
	int fd;
	uint64_t off;               /* bytes consumed */
	size_t have, pos;
	unsigned char buf[65536];
};

/* Reads exactly n bytes (dst NULL: skips them); 1 when the stream ended
 * first, 0 done, -1 a read error. */
static int rd_get(struct rd *r, void *dst, size_t n, struct err *e)
{
	while (n > 0) {
		if (r->pos == r->have) {
			ssize_t got = read(r->fd, r->buf, sizeof r->buf);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				return err_errno(e, _("cannot read the tar archive"));
			if (got == 0)
				return 1;
			r->have = (size_t)got;
			r->pos = 0;
		}
		size_t k = r->have - r->pos < n ? r->have - r->pos : n;
		if (dst) {
			memcpy(dst, r->buf + r->pos, k);
			dst = (char *)dst + k;
		}
		r->pos += k;
		r->off += k;
		n -= k;
	}
	return 0;
}

/* A number field: octal (spaces before, a space or NUL after) or GNU's
 * base-256 (high bit set, positive only). */
static int num_field(const unsigned char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return -1;
		for (size_t i = 1; i < n; i++) {
			if (v >> 56)
				return -1;
			v = v << 8 | f[i];
		}
		*out = v;
		return 0;
	}
	size_t i = 0;
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != 0)
			return -1;
	*out = v;
	return 0;
}

static int checksum_ok(const unsigned char *h)
{
	uint64_t want;
	if (num_field(h + 148, 8, &want) < 0)
		return 0;
	unsigned long u = 0;
	long s = 0;
	for (int i = 0; i < BLK; i++) {
		unsigned char c = i >= 148 && i < 156 ? ' ' : h[i];
		u += c;
		s += (signed char)c;
	}
	return want == u || (s >= 0 && want == (uint64_t)s);
}

static size_t field_len(const unsigned char *f, size_t n)
{
	const unsigned char *z = memchr(f, 0, n);
	return z ? (size_t)(z - f) : n;
}

/* One entry as the stream declares it, the meta entries before it applied. */
struct hdr {
	char type;
	uint64_t size;
	unsigned mode;
	struct buf name, link;
	int pax_name, pax_link, gnu_name, gnu_link, have_size;
	uint64_t pax_size;
};

static void hdr_reset(struct hdr *h)
{
	buf_reset(&h->name);
	buf_reset(&h->link);
	h->pax_name = h->pax_link = h->gnu_name = h->gnu_link = h->have_size = 0;
}

static int meta_read(struct rd *r, uint64_t size, struct buf *out, struct err *e)
{
	if (size > META_MAX)
		return err_kind_set(e, ERR_INVALID,
		                    _("the tar archive holds an extended header of %" PRIu64
		                      " bytes, over the limit of %u"), size, META_MAX);
	buf_reset(out);
	buf_grow(out, (size_t)size + 1);
	int rc = rd_get(r, out->data, (size_t)size, e);
	if (rc == 0)
		rc = rd_get(r, NULL, (size_t)((BLK - size % BLK) % BLK), e);
	if (rc > 0)
		return err_kind_set(e, ERR_INVALID, _("the tar archive ends in an extended header"));
	if (rc < 0)
		return -1;
	out->len = (size_t)size;
	out->data[out->len] = 0;
	return 0;
}

/* Applies pax records ("LEN key=value\n"); global: only harmless keys. */
static int pax_apply(struct hdr *h, const struct buf *b, int global, struct err *e)
{
	size_t p = 0;
	while (p < b->len) {
		size_t len = 0, q = p;
		while (q < b->len && b->data[q] >= '0' && b->data[q] <= '9' && len < META_MAX)
			len = len * 10 + (size_t)(b->data[q++] - '0');
		/* "LEN " then at least "k=\n", all of it within the header. */
		if (q == p || q >= b->len || b->data[q] != ' ' || len > b->len - p ||
		    len < q - p + 4 || b->data[p + len - 1] != '\n')
			return err_kind_set(e, ERR_INVALID, _("the tar archive holds a malformed pax header"));
		const char *rec = b->data + q + 1;
		const char *end = b->data + p + len;
		const char *eq = memchr(rec, '=', (size_t)(end - 1 - rec));
		if (!eq)
			return err_kind_set(e, ERR_INVALID, _("the tar archive holds a malformed pax header"));
		size_t klen = (size_t)(eq - rec), vlen = (size_t)(end - 1 - eq - 1);
		const char *val = eq + 1;
		int is_path = klen == 4 && !memcmp(rec, "path", 4);
		int is_link = klen == 8 && !memcmp(rec, "linkpath", 8);
		int is_size = klen == 4 && !memcmp(rec, "size", 4);
		if (klen > 11 && !memcmp(rec, "GNU.sparse.", 11))
			return err_kind_set(e, ERR_INVALID, _("the tar archive holds a sparse file"));
		if (global && (is_path || is_link || is_size))
			return err_kind_set(e, ERR_INVALID,
			                    _("the tar archive's global pax header sets a path, link or size"));
		if (is_path || is_link) {
			struct buf *dst = is_path ? &h->name : &h->link;
			buf_reset(dst);
			buf_add(dst, val, vlen);
			*(is_path ? &h->pax_name : &h->pax_link) = 1;
		} else if (is_size) {
			uint64_t v = 0;
			if (vlen == 0 || vlen > 19)
				return err_kind_set(e, ERR_INVALID, _("the tar archive holds a malformed pax header"));
			for (size_t i = 0; i < vlen; i++) {
				if (val[i] < '0' || val[i] > '9')
					return err_kind_set(e, ERR_INVALID,
					                    _("the tar archive holds a malformed pax header"));
				v = v * 10 + (uint64_t)(val[i] - '0');
			}
			h->pax_size = v;
			h->have_size = 1;
		}
		p += len;
	}
	return 0;
}

/* The name the ustar header itself gives (POSIX prefix joined). */
static void ustar_name(const unsigned char *b, struct buf *out)
{
	buf_reset(out);
	if (!memcmp(b + 257, "ustar\0" "00", 8) && b[345]) {
		buf_add(out, b + 345, field_len(b + 345, 155));
		buf_addc(out, '/');
	}
	buf_add(out, b + 0, field_len(b, 100));
}

/* Reads headers up to the next real entry.  1: *h is one (its data next
 * in the stream), 0: the end marker, -1: e. */
static int rd_next(struct rd *r, struct hdr *h, struct err *e)
{
	unsigned char b[BLK];
	struct buf meta = { 0 };
	hdr_reset(h);
	for (int run = 0;; run++) {
		int rc = rd_get(r, b, BLK, e);
		if (rc > 0 && r->off == 0)
			rc = err_kind_set(e, ERR_INVALID, _("not a tar archive: it is empty"));
		else if (rc > 0)
			rc = err_kind_set(e, ERR_INVALID,
			                  _("the tar archive ends without its end marker (truncated?)"));
		if (rc < 0)
			goto fail;
		static const unsigned char zero[BLK];
		if (!memcmp(b, zero, BLK)) {
			if (run > 0) {
				err_kind_set(e, ERR_INVALID, _("the tar archive ends after an extended header"));
				goto fail;
			}
			buf_free(&meta);
			return 0;
		}
		if ((memcmp(b + 257, "ustar\0" "00", 8) && memcmp(b + 257, "ustar  \0", 8)) ||
		    !checksum_ok(b)) {
			err_kind_set(e, ERR_INVALID,
			             _("not a tar archive: the block at byte %" PRIu64 " is no tar header"),
			             r->off - BLK);
			goto fail;
		}
		uint64_t size, mode;
		if (num_field(b + 124, 12, &size) < 0 || num_field(b + 100, 8, &mode) < 0) {
			err_kind_set(e, ERR_INVALID,
			             _("not a tar archive: the block at byte %" PRIu64 " is no tar header"),
			             r->off - BLK);
			goto fail;
		}
		char t = (char)b[156];
		if (run >= META_RUN) {
			err_kind_set(e, ERR_INVALID, _("the tar archive holds too many extended headers in a row"));
			goto fail;
		}
		if (t == 'x' || t == 'g' || t == 'L' || t == 'K') {
			if (meta_read(r, size, &meta, e) < 0)
				goto fail;
			if ((t == 'x' || t == 'g') && pax_apply(h, &meta, t == 'g', e) < 0)
				goto fail;
			if (t == 'L' || t == 'K') {
				struct buf *dst = t == 'L' ? &h->name : &h->link;
				buf_reset(dst);
				buf_add(dst, meta.data, strnlen(meta.data, meta.len));
				*(t == 'L' ? &h->gnu_name : &h->gnu_link) = 1;
			}
			continue;
		}
		h->type = t;
		h->size = h->have_size ? h->pax_size : size;
		h->mode = (unsigned)(mode & 07777);
		if (!h->pax_name && !h->gnu_name)
			ustar_name(b, &h->name);
		if (!h->pax_link && !h->gnu_link) {
			buf_reset(&h->link);
			buf_add(&h->link, b + 157, field_len(b + 157, 100));
		}
		buf_free(&meta);
		return 1;
	}
fail:
	buf_free(&meta);
	return -1;
}

/* ---- paths ---- */

/* The normalised path of raw (malloc'd; "" for the root), or NULL with
 * *why the rule it breaks. */
static char *path_norm(const char *raw, size_t len, const char **why)
{
	if (len == 0) {
		*why = N_("an empty path");
		return NULL;
	}
	if (memchr(raw, 0, len)) {
		*why = N_("a NUL byte in its path");
		return NULL;
	}
	if (raw[0] == '/') {
		*why = N_("an absolute path");
		return NULL;
	}
	struct buf b = { 0 };
	buf_adds(&b, "");
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && raw[j] != '/')
			j++;
		size_t n = j - i;
		if (n == 2 && raw[i] == '.' && raw[i + 1] == '.') {
			buf_free(&b);
			*why = N_("a \"..\" component in its path");
			return NULL;
		}
		if (n > 0 && !(n == 1 && raw[i] == '.')) {
			if (b.len)
				buf_addc(&b, '/');
			buf_add(&b, raw + i, n);
		}
		i = j + 1;
	}
	return buf_detach(&b);
}

/* ---- the entries of a normalised tar ---- */

enum { K_FILE = 'f', K_DIR = 'd', K_LINK = 'l', K_HARD = 'h' };

struct ent {
	char *path;
	char *link;                 /* K_LINK: the target; K_HARD: the path it names */
	char kind;
	char exec;
	uint64_t size;
	uint64_t off;               /* in the source fd; UINT64_MAX: open path */
};

struct ents {
	struct ent *v;
	size_t n, cap;
	uint64_t total;
	size_t names;               /* bytes of paths and link targets */
	const struct tarblob_limits *lim;
};

static void ents_free(struct ents *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].link);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Takes path and link (malloc'd) whatever it returns. */
static int ents_add(struct ents *s, char *path, char kind, char *link, struct err *e)
{
	size_t len = strlen(path) + (link ? strlen(link) : 0);
	if (s->n >= s->lim->entries || len > s->lim->names - s->names) {
		free(path);
		free(link);
		return s->n >= s->lim->entries ?
		       err_kind_set(e, ERR_INVALID, _("the archive holds more than %zu entries"),
		                    s->lim->entries) :
		       err_kind_set(e, ERR_INVALID, _("the archive's names add up to more than %zu bytes"),
		                    s->lim->names);
	}
	s->names += len;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = (struct ent){ .path = path, .link = link, .kind = kind, .off = UINT64_MAX };
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->path, ((const struct ent *)b)->path);
}


/* The entry of path among the first n (sorted), or NULL. */
static struct ent *ents_find(struct ents *s, size_t n, const char *path)
{
	struct ent key = { .path = (char *)path };
	return bsearch(&key, s->v, n, sizeof *s->v, ent_cmp);
}

/* The parents of entry i (of the n sorted ones): each a directory of the
 * archive, or added as one when the stream only implies it. */
static int ents_parents(struct ents *s, size_t n, size_t i, struct err *e)
{
	/* A copy: entry i itself is in the array bsearch reads. */
	char *p = xstrdup(s->v[i].path);
	int rc = 0;
	for (char *sl = strchr(p, '/'); sl && rc == 0; sl = strchr(sl + 1, '/')) {
		size_t len = (size_t)(sl - p);
		*sl = 0;
		struct ent *par = ents_find(s, n, p);
		/* Paths below one prefix sort together: the entry before this one
		 * shares the parent when the parent was seen (or added) already. */
		int seen = i > 0 && !strncmp(s->v[i - 1].path, p, len) && s->v[i - 1].path[len] == '/';
		if (par && par->kind != K_DIR) {
			char *q = shown(p, len);
			rc = refuse(e, s->v[i].path, strlen(s->v[i].path),
			            par->kind == K_LINK ? _("it lies below the symlink '%s'") :
			            _("it lies below the file '%s'"), q);
			free(q);
		} else if (!par && !seen) {
			rc = ents_add(s, xstrdup(p), K_DIR, NULL, e);
		}
		*sl = '/';
	}
	free(p);
	return rc;
}

/* Refuses a path twice, checks and adds the parents, makes hard links
 * copies of the files they name, and sorts. */
static int ents_settle(struct ents *s, struct err *e)
{
	qsort(s->v, s->n, sizeof *s->v, ent_cmp);
	for (size_t i = 1; i < s->n; i++)
		if (!strcmp(s->v[i - 1].path, s->v[i].path))
			return refuse(e, s->v[i].path, strlen(s->v[i].path), "%s",
			              _("a second entry of the same path"));
	size_t n = s->n;
	for (size_t i = 0; i < n; i++)
		if (ents_parents(s, n, i, e) < 0)
			return -1;
	for (size_t i = 0; i < n; i++) {
		struct ent *x = &s->v[i];
		if (x->kind != K_HARD)
			continue;
		struct ent *t = ents_find(s, n, x->link);
		if (!t || t->kind != K_FILE) {
			char *q = shown(x->link, strlen(x->link));
			int rc = refuse(e, x->path, strlen(x->path),
			                _("a hard link to '%s', which is no regular file of the archive"), q);
			free(q);
			return rc;
		}
		if (t->size > s->lim->total - s->total)
			return refuse(e, x->path, strlen(x->path),
			              _("the files add up to more than %" PRIu64 " bytes"), s->lim->total);
		s->total += t->size;
		x->kind = K_FILE;
		x->size = t->size;
		x->off = t->off;
		x->exec = t->exec;
		free(x->link);
		x->link = NULL;
	}
	qsort(s->v, s->n, sizeof *s->v, ent_cmp);
	return 0;
}

/* ---- writing a normalised tar ---- */

struct wr {
	int fd;
	EVP_MD_CTX *md;
	size_t n;
	unsigned char buf[65536];
};

static int wr_flush(struct wr *w, struct err *e)
{
	if (w->n && fsx_write_all(w->fd, w->buf, w->n) < 0)
		return err_errno(e, _("cannot write the tar archive"));
	if (w->n)
		EVP_DigestUpdate(w->md, w->buf, w->n);
	w->n = 0;
	return 0;
}

static int wr_put(struct wr *w, const void *p, size_t n, struct err *e)
{
	while (n > 0) {
		if (w->n == sizeof w->buf && wr_flush(w, e) < 0)
			return -1;
		size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
		if (p) {
			memcpy(w->buf + w->n, p, k);
			p = (const char *)p + k;
		} else {
			memset(w->buf + w->n, 0, k);
		}
		w->n += k;
		n -= k;
	}
	return 0;
}

static int wr_pad(struct wr *w, uint64_t size, struct err *e)
{
	return wr_put(w, NULL, (size_t)((BLK - size % BLK) % BLK), e);
}

static void octal(unsigned char *f, size_t n, uint64_t v)
{
	char tmp[24];
	snprintf(tmp, sizeof tmp, "%0*" PRIo64, (int)(n - 1), v);
	memcpy(f, tmp, n);
}

static int wr_header(struct wr *w, const char *name, size_t namelen, char type, unsigned mode,
                     uint64_t size, const char *link, size_t linklen, struct err *e)
{
	unsigned char b[BLK] = { 0 };
	memcpy(b, name, namelen < 100 ? namelen : 100);
	octal(b + 100, 8, mode);
	octal(b + 108, 8, TARBLOB_OWNER);
	octal(b + 116, 8, TARBLOB_OWNER);
	octal(b + 124, 12, size);
	octal(b + 136, 12, 0);
	memset(b + 148, ' ', 8);
	b[156] = (unsigned char)type;
	if (link)
		memcpy(b + 157, link, linklen < 100 ? linklen : 100);
	memcpy(b + 257, "ustar\0" "00", 8);
	unsigned sum = 0;
	for (int i = 0; i < BLK; i++)
		sum += b[i];
	octal(b + 148, 7, sum);
	return wr_put(w, b, BLK, e);
}

static void pax_rec(struct buf *b, const char *key, const char *val, size_t vlen)
{
	size_t base = strlen(key) + vlen + 3, len = base + 1;
	for (;;) {
		size_t want = base + (size_t)snprintf(NULL, 0, "%zu", len);
		if (want == len)
			break;
		len = want;
	}
	buf_printf(b, "%zu %s=", len, key);
	buf_add(b, val, vlen);
	buf_addc(b, '\n');
}

/* A file's bytes: from src at x->off, or opened below root by its path. */
static int wr_data(struct wr *w, const struct ent *x, int src, int root, struct err *e)
{
	int fd = src;
	if (x->off == UINT64_MAX) {
		struct stat st;
		fd = fsx_open_beneath(root, x->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size != x->size) {
			if (fd >= 0)
				close(fd);
			char *q = shown(x->path, strlen(x->path));
			err_set(e, _("'%s' changed while it was read"), q);
			free(q);
			return -1;
		}
	}
	uint64_t at = x->off == UINT64_MAX ? 0 : x->off, left = x->size;
	int rc = 0;
	while (left > 0 && rc == 0) {
		if (w->n == sizeof w->buf && (rc = wr_flush(w, e)) < 0)
			break;
		size_t k = sizeof w->buf - w->n < left ? sizeof w->buf - w->n : (size_t)left;
		ssize_t got = pread(fd, w->buf + w->n, k, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			char *q = shown(x->path, strlen(x->path));
			rc = got < 0 ? err_errno(e, _("cannot read '%s'"), q) :
			     err_set(e, _("'%s' changed while it was read"), q);
			free(q);
			break;
		}
		w->n += (size_t)got;
		at += (uint64_t)got;
		left -= (uint64_t)got;
	}
	if (fd != src)
		close(fd);
	return rc < 0 ? -1 : wr_pad(w, x->size, e);
}

static int wr_entry(struct wr *w, const struct ent *x, int src, int root, struct err *e)
{
	struct buf name = { 0 }, pax = { 0 };
	buf_adds(&name, x->path);
	if (x->kind == K_DIR)
		buf_addc(&name, '/');
	size_t linklen = x->kind == K_LINK ? strlen(x->link) : 0;
	int rc = 0;
	if (name.len > 100 || linklen > 100) {
		if (name.len > 100)
			pax_rec(&pax, "path", name.data, name.len);
		if (linklen > 100)
			pax_rec(&pax, "linkpath", x->link, linklen);
		static const char pax_name[] = "././@PaxHeader";
		rc = wr_header(w, pax_name, sizeof pax_name - 1, 'x', 0644, pax.len, NULL, 0, e);
		if (rc == 0)
			rc = wr_put(w, pax.data, pax.len, e);
		if (rc == 0)
			rc = wr_pad(w, pax.len, e);
	}
	char type = x->kind == K_DIR ? '5' : x->kind == K_LINK ? '2' : '0';
	unsigned mode = x->kind == K_LINK ? 0777 : x->kind == K_DIR || x->exec ? 0755 : 0644;
	if (rc == 0)
		rc = wr_header(w, name.data, name.len, type, mode, x->kind == K_FILE ? x->size : 0,
		               x->link, linklen, e);
	if (rc == 0 && x->kind == K_FILE)
		rc = wr_data(w, x, src, root, e);
	buf_free(&name);
	buf_free(&pax);
	return rc;
}

static void hex_of(const unsigned char *md, unsigned n, char *hex)
{
	for (unsigned i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* Writes the settled entries to out, two zero blocks after them. */
static int ents_write(const struct ents *s, int out, int src, int root, char *hex, struct err *e)
{
	struct wr *w = xcalloc(1, sizeof *w);
	w->fd = out;
	w->md = EVP_MD_CTX_new();
	if (!w->md || !EVP_DigestInit_ex(w->md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(w->md);
		free(w);
		return err_set(e, _("cannot compute a sha256"));
	}
	int rc = 0;
	for (size_t i = 0; i < s->n && rc == 0; i++)
		rc = wr_entry(w, &s->v[i], src, root, e);
	if (rc == 0)
		rc = wr_put(w, NULL, 2 * BLK, e);
	if (rc == 0)
		rc = wr_flush(w, e);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_DigestFinal_ex(w->md, md, &mdlen);
	if (rc == 0 && hex)
		hex_of(md, mdlen, hex);
	EVP_MD_CTX_free(w->md);
	free(w);
	return rc;
}

/* ---- normalise ---- */

static const char *type_refused(char t)
{
	switch (t) {
	case '3': return N_("a character device");
	case '4': return N_("a block device");
	case '6': return N_("a FIFO");
	case 'S': return N_("a sparse file");
	default: return NULL;
	}
}

/* The data of a file entry: spooled (spool >= 0) or skipped. */
static int take_data(struct rd *r, const struct hdr *h, int spool, struct err *e)
{
	unsigned char chunk[16384];
	uint64_t left = h->size + (BLK - h->size % BLK) % BLK, data = h->size;
	while (left > 0) {
		size_t k = left < sizeof chunk ? (size_t)left : sizeof chunk;
		int rc = rd_get(r, spool >= 0 ? chunk : NULL, k, e);
		if (rc > 0)
			return refuse(e, h->name.data, h->name.len, "%s",
			              _("the archive ends in the middle of its data (truncated?)"));
		if (rc < 0)
			return -1;
		size_t use = data < k ? (size_t)data : k;
		if (spool >= 0 && use && fsx_write_all(spool, chunk, use) < 0)
			return err_errno(e, _("cannot write the tar archive's spool"));
		data -= use;
		left -= k;
	}
	return 0;
}

/* Refuses what a file entry may not be, and counts its size. */
static int check_file(struct ents *s, const struct hdr *h, struct err *e)
{
	const struct tarblob_limits *l = s->lim;
	if (h->size > l->file)
		return refuse(e, h->name.data, h->name.len,
		              _("it declares %" PRIu64 " bytes, over the limit of %" PRIu64 " for one file"),
		              h->size, l->file);
	if (h->size > l->total - s->total)
		return refuse(e, h->name.data, h->name.len,
		              _("the files add up to more than %" PRIu64 " bytes"), l->total);
	s->total += h->size;
	return 0;
}

static int take_link(struct ents *s, const struct hdr *h, char *p, struct err *e)
{
	const char *why;
	if (h->type == '1') {
		char *t = path_norm(h->link.data, h->link.len, &why);
		if (!t || !*t) {
			free(p);
			free(t);
			return refuse(e, h->name.data, h->name.len, _("a hard link with %s"),
			              _(t ? N_("an empty path") : why));
		}
		return ents_add(s, p, K_HARD, t, e);
	}
	if (h->link.len == 0 || h->link.len > s->lim->link || memchr(h->link.data, 0, h->link.len)) {
		free(p);
		return h->link.len > s->lim->link ?
		       refuse(e, h->name.data, h->name.len,
		              _("its symlink target is %zu bytes, over the limit of %zu"),
		              h->link.len, s->lim->link) :
		       refuse(e, h->name.data, h->name.len, "%s", _("a symlink with no target or a NUL byte in it"));
	}
	return ents_add(s, p, K_LINK, xstrndup(h->link.data, h->link.len), e);
}

static int take_entry(struct rd *r, const struct hdr *h, struct ents *s, int spool,
                      uint64_t base, struct err *e)
{
	const char *why;
	char t = h->type;
	int file = t == '0' || t == 0 || t == '7';
	if (!file && t != '5' && t != '2' && t != '1') {
		why = type_refused(t);
		if (why)
			return refuse(e, h->name.data, h->name.len, "%s", _(why));
		return refuse(e, h->name.data, h->name.len, _("an entry of type %#o"), (unsigned char)t);
	}
	if (!file && h->size != 0)
		return refuse(e, h->name.data, h->name.len, "%s",
		              _("a directory or link that declares a size"));
	if (h->name.len > s->lim->path)
		return refuse(e, h->name.data, h->name.len,
		              _("its path is %zu bytes, over the limit of %zu"), h->name.len, s->lim->path);
	char *p = path_norm(h->name.data, h->name.len, &why);
	if (!p)
		return refuse(e, h->name.data, h->name.len, "%s", _(why));
	if (!*p && t == '5') {
		free(p);   /* the tree's root: the directory it is extracted into */
		return 0;
	}
	if (!*p) {
		free(p);
		return refuse(e, h->name.data, h->name.len, "%s", _("an empty path"));
	}
	if (t == '5')
		return ents_add(s, p, K_DIR, NULL, e);
	if (!file)
		return take_link(s, h, p, e);
	if (check_file(s, h, e) < 0) {
		free(p);
		return -1;
	}
	if (ents_add(s, p, K_FILE, NULL, e) < 0)
		return -1;
	struct ent *x = &s->v[s->n - 1];
	x->size = h->size;
	x->exec = (h->mode & 0111) != 0;
	off_t at = spool >= 0 ? lseek(spool, 0, SEEK_CUR) : 0;
	if (at < 0)
		return err_errno(e, _("cannot write the tar archive's spool"));
	x->off = spool >= 0 ? (uint64_t)at : base + r->off;
	return take_data(r, h, spool, e);
}

static int read_entries(struct rd *r, struct ents *s, int spool, uint64_t base, struct err *e)
{
	struct hdr h = { 0 };
	int rc;
	while ((rc = rd_next(r, &h, e)) > 0)
		if ((rc = take_entry(r, &h, s, spool, base, e)) < 0)
			break;
	buf_free(&h.name);
	buf_free(&h.link);
	return rc < 0 ? -1 : 0;
}

static int spool_open(const char *dir, struct err *e)
{
	if (!dir)
		dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char *t = paths_join(dir, ".tarblob-XXXXXX", NULL);
	fd = mkostemp(t, O_CLOEXEC);
	if (fd >= 0)
		unlink(t);
	else
		err_errno(e, _("cannot make a spool file in %s"), dir);
	free(t);
	return fd;
}

static const struct tarblob_limits *limits(const struct tarblob_limits *lim,
                                           struct tarblob_limits *own)
{
	if (lim)
		*own = *lim;
	else
		tarblob_limits_default(own);
	if (own->file > USTAR_MAX_SIZE)
		own->file = USTAR_MAX_SIZE;
	return own;
}

int tarblob_normalise(int in, int out, const char *spool_dir, const struct tarblob_limits *lim,
                      char *hex, struct err *e)
{
	struct tarblob_limits own;
	struct ents s = { .lim = limits(lim, &own) };
	struct stat st;
	off_t base = -1;
	int spool = -1;
	if (fstat(in, &st) == 0 && S_ISREG(st.st_mode))
		base = lseek(in, 0, SEEK_CUR);
	if (base < 0 && (spool = spool_open(spool_dir, e)) < 0)
		return -1;
	struct rd *r = xcalloc(1, sizeof *r);
	r->fd = in;
	int rc = read_entries(r, &s, spool, base < 0 ? 0 : (uint64_t)base, e);
	free(r);
	if (rc == 0)
		rc = ents_settle(&s, e);
	if (rc == 0)
		rc = ents_write(&s, out, spool >= 0 ? spool : in, -1, hex, e);
	ents_free(&s);
	if (spool >= 0)
		close(spool);
	return rc;
}

/* ---- the store ---- */

static int store_link(int fd, const char *tmp, const char *final, struct err *e)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	int rc = tmp ? link(tmp, final) : linkat(AT_FDCWD, proc, AT_FDCWD, final, AT_SYMLINK_FOLLOW);
	if (rc < 0 && errno != EEXIST)
		return err_errno(e, _("cannot store the blob %s"), final);
	return 0;
}

/* What a blob is made of, written to out (spool: a folder for a
 * spool file): normalised input, or a host directory's tar. */
struct store_src {
	int in;                /* -1: dir */
	const char *dir;
	const struct tarblob_limits *lim;
};

/* Writes src, normalised, into <data>/blobs/sha256/<hex> (see
 * tarblob_store). */
static int store_from(const char *data_dir, const struct store_src *src, char hex[TARBLOB_HEX],
                      struct err *e)
{
	char *dir = paths_blobs_dir(data_dir), *tmp = NULL;
	if (fsx_mkdir_p(dir, 0700, e) < 0) {
		free(dir);
		return -1;
	}
	/* An unnamed file linked in when whole: a crash leaves nothing. */
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		tmp = paths_join(dir, ".tmp-XXXXXX", NULL);
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	int rc = fd < 0 ? err_errno(e, _("cannot make a file in %s"), dir) : 0;
	if (rc == 0)
		rc = src->in >= 0 ? tarblob_normalise(src->in, fd, dir, src->lim, hex, e)
		                  : tarblob_from_dir(src->dir, fd, src->lim, NULL, hex, e);
	if (rc == 0 && fsync(fd) < 0)
		rc = err_errno(e, _("cannot write the blob"));
	if (rc == 0) {
		char *final = paths_blob(data_dir, hex);
		rc = store_link(fd, tmp, final, e);
		free(final);
	}
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(dir);
	return rc;
}

int tarblob_store(const char *data_dir, int in, const struct tarblob_limits *lim,
                  char hex[TARBLOB_HEX], struct err *e)
{
	struct store_src src = { .in = in, .lim = lim };
	return store_from(data_dir, &src, hex, e);
}

int tarblob_store_dir(const char *data_dir, const char *dir, const struct tarblob_limits *lim,
                      char hex[TARBLOB_HEX], struct err *e)
{
	struct store_src src = { .in = -1, .dir = dir, .lim = lim };
	return store_from(data_dir, &src, hex, e);
}

/* ---- a host directory ---- */

static const char *kind_refused(mode_t m)
{
	return S_ISCHR(m) ? N_("a character device") : S_ISBLK(m) ? N_("a block device") :
	       S_ISFIFO(m) ? N_("a FIFO") : N_("a socket");
}

/* Adds what is in the directory rel (below root). */
static int dir_scan(int root, const char *rel, struct ents *s, struct buf *refused, struct err *e)
{
	int fd = fsx_open_beneath(root, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		char *q = shown(rel, strlen(rel));
		int rc = err_errno(e, _("cannot read the directory '%s'"), q);
		free(q);
		return rc;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		size_t plen = strlen(p);
		struct stat st;
		struct hdr h = { .size = 0 };
		buf_add(&h.name, p, plen);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = err_errno(e, _("cannot read '%s'"), p);
		} else if (plen > s->lim->path) {
			rc = refuse(e, p, plen, _("its path is %zu bytes, over the limit of %zu"), plen,
			            s->lim->path);
		} else if (S_ISDIR(st.st_mode)) {
			rc = ents_add(s, p, K_DIR, NULL, e);
			p = NULL;
		} else if (S_ISREG(st.st_mode)) {
			h.size = (uint64_t)st.st_size;
			rc = check_file(s, &h, e);
			if (rc == 0) {
				rc = ents_add(s, p, K_FILE, NULL, e);   /* takes p */
				p = NULL;
			}
			if (rc == 0) {
				s->v[s->n - 1].size = h.size;
				s->v[s->n - 1].exec = (st.st_mode & 0111) != 0;
			}
		} else if (S_ISLNK(st.st_mode)) {
			h.type = '2';
			buf_grow(&h.link, s->lim->link + 2);
			ssize_t n = readlinkat(dirfd(d), de->d_name, h.link.data, s->lim->link + 1);
			h.link.len = n > 0 ? (size_t)n : 0;
			rc = n < 0 ? err_errno(e, _("cannot read '%s'"), p) : take_link(s, &h, p, e);
			p = NULL;
		} else if (refused) {
			char *q = shown(p, plen);
			buf_printf(refused, _("'%s' is left out: %s\n"), q, _(kind_refused(st.st_mode)));
			free(q);
		}
		free(p);
		buf_free(&h.name);
		buf_free(&h.link);
	}
	closedir(d);
	return rc;
}

int tarblob_from_dir(const char *dir, int out, const struct tarblob_limits *lim,
                     struct buf *refused, char *hex, struct err *e)
{
	struct tarblob_limits own;
	struct ents s = { .lim = limits(lim, &own) };
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return err_errno(e, _("cannot open the directory %s"), dir);
	int rc = dir_scan(root, "", &s, refused, e);
	/* s grows while it is walked: each directory is scanned once, after
	 * the one it is in. */
	for (size_t i = 0; rc == 0 && i < s.n; i++)
		if (s.v[i].kind == K_DIR)
			rc = dir_scan(root, s.v[i].path, &s, refused, e);
	if (rc == 0)
		rc = ents_settle(&s, e);
	if (rc == 0)
		rc = ents_write(&s, out, -1, root, hex, e);
	ents_free(&s);
	close(root);
	return rc;
}

/* ---- extracting a blob ---- */

struct xt {
	int root;
	uid_t uid;
	gid_t gid;
	char *parent;               /* the cached parent's path, and its fd */
	int pfd;
	char *prev;                 /* the entry before: paths must ascend */
	struct rd r;
};

static int xt_bad(struct err *e, const struct hdr *h, const char *why)
{
	return refuse(e, h->name.data, h->name.len, _("not a normalised blob: %s"), _(why));
}

/* The fd of path's parent directory (never through a link); base gets
 * where its last component starts. */
static int xt_parent(struct xt *x, const char *path, const char **base)
{
	const char *sl = strrchr(path, '/');
	*base = sl ? sl + 1 : path;
	size_t len = sl ? (size_t)(sl - path) : 0;
	if (!sl)
		return x->root;
	if (x->parent && strlen(x->parent) == len && !memcmp(x->parent, path, len))
		return x->pfd;
	if (x->pfd >= 0)
		close(x->pfd);
	free(x->parent);
	x->parent = xstrndup(path, len);
	x->pfd = fsx_open_beneath(x->root, x->parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	return x->pfd;
}

static int xt_file(struct xt *x, int pfd, const char *base, const struct hdr *h, struct err *e)
{
	int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	unsigned char chunk[65536];
	uint64_t left = h->size;
	int rc = 0;
	while (left > 0 && rc == 0) {
		size_t k = left < sizeof chunk ? (size_t)left : sizeof chunk;
		rc = rd_get(&x->r, chunk, k, e);
		if (rc > 0)
			rc = xt_bad(e, h, N_("it ends in the middle of a file"));
		else if (rc == 0 && fsx_write_all(fd, chunk, k) < 0)
			rc = -1;
		left -= k;
	}
	if (rc == 0 && rd_get(&x->r, NULL, (size_t)((BLK - h->size % BLK) % BLK), e) != 0)
		rc = xt_bad(e, h, N_("it ends in the middle of a file"));
	if (rc == 0 && (fchown(fd, x->uid, x->gid) < 0 || fchmod(fd, h->mode) < 0))
		rc = -1;
	int keep = errno;
	close(fd);
	errno = keep;
	return rc;
}

static int xt_dir(struct xt *x, int pfd, const char *base, const struct hdr *h)
{
	if (mkdirat(pfd, base, 0700) < 0)
		return -1;
	int fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 || fchown(fd, x->uid, x->gid) < 0 || fchmod(fd, h->mode) < 0 ? -1 : 0;
	int keep = errno;
	if (fd >= 0)
		close(fd);
	errno = keep;
	return rc;
}

/* Checks that h is an entry normalise writes, in order. */
static int xt_check(struct xt *x, const struct hdr *h, char **path, struct err *e)
{
	const char *why = NULL;
	char *p = path_norm(h->name.data, h->name.len, &why);
	size_t n = p ? strlen(p) : 0;
	int dir = h->type == '5';
	if (!p)
		return xt_bad(e, h, why);
	if (!n || h->name.len != n + (size_t)dir || memcmp(h->name.data, p, n) ||
	    (dir && h->name.data[n] != '/'))
		why = N_("a path that is not in its normal form");
	else if (x->prev && strcmp(x->prev, p) >= 0)
		why = N_("its entries are out of order");
	else if (!(h->type == '0' && (h->mode == 0644 || h->mode == 0755)) &&
	         !(dir && h->mode == 0755 && h->size == 0) &&
	         !(h->type == '2' && h->mode == 0777 && h->size == 0 && h->link.len > 0 &&
	           !memchr(h->link.data, 0, h->link.len)))
		why = N_("an entry normalise does not write");
	if (why) {
		free(p);
		return xt_bad(e, h, why);
	}
	*path = p;
	return 0;
}

static int xt_entry(struct xt *x, const struct hdr *h, struct err *e)
{
	char *p = NULL;
	if (xt_check(x, h, &p, e) < 0)
		return -1;
	free(x->prev);
	x->prev = p;
	const char *base;
	int pfd = xt_parent(x, p, &base), rc = -1;
	if (pfd >= 0 && h->type == '5')
		rc = xt_dir(x, pfd, base, h);
	else if (pfd >= 0 && h->type == '0')
		rc = xt_file(x, pfd, base, h, e);
	else if (pfd >= 0 && symlinkat(h->link.data, pfd, base) == 0)
		rc = fchownat(pfd, base, x->uid, x->gid, AT_SYMLINK_NOFOLLOW);
	if (rc < 0 && !e->msg[0]) {
		char *q = shown(p, strlen(p));
		err_errno(e, _("cannot extract '%s'"), q);
		free(q);
	}
	return rc;
}

static int dir_empty(int root)
{
	int fd = dup(root);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct dirent *de;
	int empty = 1;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

int tarblob_extract(int in, const char *dir, uid_t uid, gid_t gid, struct err *e)
{
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return err_errno(e, _("cannot open the directory %s"), dir);
	int empty = dir_empty(root);
	if (empty <= 0) {
		close(root);
		return empty < 0 ? err_errno(e, _("cannot read the directory %s"), dir) :
		       err_set(e, _("cannot extract into %s: it is not empty"), dir);
	}
	struct xt *x = xcalloc(1, sizeof *x);
	*x = (struct xt){ .root = root, .uid = uid, .gid = gid, .pfd = -1 };
	x->r.fd = in;
	struct hdr h = { 0 };
	int rc;
	err_clear(e);
	while ((rc = rd_next(&x->r, &h, e)) > 0)
		if ((rc = xt_entry(x, &h, e)) < 0)
			break;
	buf_free(&h.name);
	buf_free(&h.link);
	if (x->pfd >= 0)
		close(x->pfd);
	free(x->parent);
	free(x->prev);
	free(x);
	close(root);
	return rc < 0 ? -1 : 0;
}
