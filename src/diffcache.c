#include "autoconfig.h"
#include "diffcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fsx.h"
#include "i18n.h"

/* The header: magic and version, base, head, options, then the numbers. */
#define DC_MAGIC "PADDOCKDIFF\n\0\0\0\1"
#define DC_MAGIC_LEN 16
#define DC_OID_MAX 64
#define DC_OPTS_MAX 48
#define DC_OFF_BASE DC_MAGIC_LEN
#define DC_OFF_HEAD (DC_OFF_BASE + DC_OID_MAX)
#define DC_OFF_OPTS (DC_OFF_HEAD + DC_OID_MAX)
#define DC_OFF_NFILES (DC_OFF_OPTS + DC_OPTS_MAX)
#define DC_OFF_RAW (DC_OFF_NFILES + 8)
#define DC_OFF_ZLEN (DC_OFF_RAW + 8)
#define DC_OFF_CRC (DC_OFF_ZLEN + 8)     /* CRC-32 of the body */
#define DC_OFF_FCRC (DC_OFF_CRC + 4)    /* CRC-32 of the header before it
                                           and of the compressed body */
#define DC_HEADER (DC_OFF_FCRC + 4)
/* A record's fixed part: old_mode, new_mode (4), old_size, new_size (8),
 * binary (4), ins, del (8), old_len, new_len (4), patch_len (8); then
 * the old path, the new path and the patch, each followed by a NUL. */
#define DC_REC 60

_Static_assert(sizeof(DIFFCACHE_OPTIONS) <= DC_OPTS_MAX, "the options fit the header");

static int diffcache_oid_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n != 40 && n != 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

char *diffcache_path(const char *dir, const char *base, const char *head)
{
	if (!dir || !diffcache_oid_ok(base) || !diffcache_oid_ok(head))
		return NULL;
	return xasprintf("%s/%s-%s.%s", dir, base, head, DIFFCACHE_TAG);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------ reading */

/* The fields of a header, laid out as a new file's. */
static void diffcache_header(unsigned char *h, const char *base, const char *head,
                             uint64_t nfiles, uint64_t raw, uint64_t zlen, uint32_t crc)
{
	memset(h, 0, DC_HEADER);
	memcpy(h, DC_MAGIC, DC_MAGIC_LEN);
	memcpy(h + DC_OFF_BASE, base, strlen(base));
	memcpy(h + DC_OFF_HEAD, head, strlen(head));
	memcpy(h + DC_OFF_OPTS, DIFFCACHE_OPTIONS, strlen(DIFFCACHE_OPTIONS));
	put64(h + DC_OFF_NFILES, nfiles);
	put64(h + DC_OFF_RAW, raw);
	put64(h + DC_OFF_ZLEN, zlen);
	put32(h + DC_OFF_CRC, crc);
}

/* One record of body at *off, checked to lie within it; its paths and
 * patch point into body (each NUL-terminated there).  -1 when it does
 * not fit or is malformed. */
static int diffcache_record(const char *body, size_t len, size_t *off, struct diff_file *f,
                            const char **patch, size_t *plen)
{
	const unsigned char *p = (const unsigned char *)body + *off;
	if (len - *off < DC_REC)
		return -1;
	uint32_t bin = get32(p + 24);
	uint64_t ol = get32(p + 44), nl = get32(p + 48), pl = get64(p + 52);
	size_t rest = len - *off - DC_REC;
	if (bin > 1 || ol >= rest || nl >= rest - ol - 1 || pl >= rest - ol - 1 - nl - 1)
		return -1;
	const char *op = body + *off + DC_REC, *np = op + ol + 1, *pp = np + nl + 1;
	if (op[ol] || np[nl] || pp[pl] || memchr(op, 0, ol) || memchr(np, 0, nl))
		return -1;
	*f = (struct diff_file){
		.old_path = op, .new_path = np,
		.old_mode = get32(p), .new_mode = get32(p + 4),
		.old_size = (int64_t)get64(p + 8), .new_size = (int64_t)get64(p + 16),
		.binary = (int)bin, .ins = (size_t)get64(p + 28), .del = (size_t)get64(p + 36),
	};
	*patch = pp;
	*plen = (size_t)pl;
	*off += DC_REC + ol + 1 + nl + 1 + pl + 1;
	return 0;
}

/* The file's bytes, whole, from a regular file that is no link. */
static int diffcache_slurp(const char *path, unsigned char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < DC_HEADER ||
	    (uint64_t)st.st_size > (uint64_t)DIFFCACHE_MAX + DIFFCACHE_MAX / 8 + DC_HEADER) {
		close(fd);
		return -1;
	}
	size_t n = (size_t)st.st_size, got = 0;
	unsigned char *b = xmalloc(n);
	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != n) {
		free(b);
		return -1;
	}
	*out = b;
	*len = n;
	return 0;
}

/* The CRC-32 a file of flen bytes must hold at DC_OFF_FCRC. */
static uint32_t diffcache_fcrc(const unsigned char *file, size_t flen)
{
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, file, DC_OFF_FCRC);
	return (uint32_t)crc32(c, file + DC_HEADER, (uInt)(flen - DC_HEADER));
}

/* The checks on a whole file before any of it is believed: this range
 * and options, the length, and the checksum of every byte (the header's
 * numbers and the compressed body), so that a short or damaged file is
 * refused before anything is handed over. */
static int diffcache_check(const unsigned char *file, size_t flen, const char *base,
                           const char *head)
{
	unsigned char want[DC_HEADER];
	diffcache_header(want, base, head, 0, 0, 0, 0);
	if (memcmp(file, want, DC_OFF_NFILES) != 0)
		return -1;   /* another format, range or options */
	if (get64(file + DC_OFF_RAW) > DIFFCACHE_MAX ||
	    get64(file + DC_OFF_ZLEN) != flen - DC_HEADER)
		return -1;
	return diffcache_fcrc(file, flen) == get32(file + DC_OFF_FCRC) ? 0 : -1;
}

int diffcache_load(const char *dir, const char *base, const char *head, char **out,
                   size_t *len, size_t *nfiles)
{
	char *path = diffcache_path(dir, base, head);
	unsigned char *file = NULL;
	size_t flen = 0;
	char *body = NULL;
	int rc = -1;

	if (!path || diffcache_slurp(path, &file, &flen) < 0 ||
	    diffcache_check(file, flen, base, head) < 0)
		goto out;
	uint64_t nf = get64(file + DC_OFF_NFILES), raw = get64(file + DC_OFF_RAW);
	uint64_t zlen = flen - DC_HEADER;
	body = xmalloc((size_t)raw + 1);
	uLongf dlen = (uLongf)raw;
	uLong slen = (uLong)zlen;
	if (uncompress2((Bytef *)body, &dlen, file + DC_HEADER, &slen) != Z_OK || dlen != raw ||
	    slen != zlen)
		goto out;
	if ((uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)body, (uInt)raw) !=
	    get32(file + DC_OFF_CRC))
		goto out;
	/* Every record within the body, and as many as the header says. */
	size_t off = 0, count = 0;
	while (off < raw) {
		struct diff_file f;
		const char *patch;
		size_t plen;
		if (diffcache_record(body, (size_t)raw, &off, &f, &patch, &plen) < 0)
			goto out;
		count++;
	}
	if (count != nf)
		goto out;
	body[raw] = '\0';
	*out = body;
	*len = (size_t)raw;
	*nfiles = count;
	body = NULL;
	rc = 0;
out:
	free(body);
	free(file);
	free(path);
	return rc;
}

/* How many bytes the record at p (avail of them there) takes: 0 while
 * its fixed part is not all there; SIZE_MAX when it cannot fit a body of
 * raw bytes. */
static size_t diffcache_record_len(const unsigned char *p, size_t avail, uint64_t raw)
{
	if (avail < DC_REC)
		return 0;
	uint64_t ol = get32(p + 44), nl = get32(p + 48), pl = get64(p + 52);
	if (pl > raw)
		return SIZE_MAX;
	uint64_t n = DC_REC + ol + 1 + nl + 1 + pl + 1;
	return n > raw ? SIZE_MAX : (size_t)n;
}

/* Hands over the files of a checked file (diffcache_check) as they are
 * inflated: the first file long before the last is read, as diff_each
 * hands them over.  0: all of them; -1: fn stopped (e set); -2: the body
 * did not hold what the header says (not reached once the checksums
 * matched), *handed files given. */
static int diffcache_stream(const unsigned char *file, size_t flen, diff_file_fn fn,
                            void *arg, size_t *handed, struct err *e)
{
	uint64_t raw = get64(file + DC_OFF_RAW), nf = get64(file + DC_OFF_NFILES), got = 0;
	uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
	struct buf w = {0};
	size_t start = 0;
	z_stream z;
	int zr = Z_OK, rc = -2;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -2;
	z.next_in = (Bytef *)(uintptr_t)(file + DC_HEADER);
	z.avail_in = (uInt)(flen - DC_HEADER);
	while (zr != Z_STREAM_END) {
		buf_grow(&w, 1 << 16);
		z.next_out = (Bytef *)w.data + w.len;
		z.avail_out = 1 << 16;
		zr = inflate(&z, Z_NO_FLUSH);
		size_t n = (1 << 16) - z.avail_out;
		if ((zr != Z_OK && zr != Z_STREAM_END) || got + n > raw)
			goto out;
		crc = (uint32_t)crc32(crc, (const Bytef *)w.data + w.len, (uInt)n);
		w.len += n;
		got += n;
		/* Every whole record so far. */
		for (;;) {
			size_t need = diffcache_record_len((unsigned char *)w.data + start,
			                                   w.len - start, raw);
			if (need == SIZE_MAX)
				goto out;
			if (!need || need > w.len - start)
				break;
			struct diff_file f;
			const char *patch;
			size_t plen, off = 0;
			if (diffcache_record(w.data + start, need, &off, &f, &patch, &plen) < 0)
				goto out;
			if (fn(arg, &f, patch, plen, e) != 0) {
				rc = e && e->msg[0] ? -1 : err_set(e, _("the diff was stopped"));
				goto out;
			}
			(*handed)++;
			start += need;
		}
		/* Keep only what is not handed over yet. */
		if (start > (1 << 20)) {
			memmove(w.data, w.data + start, w.len - start);
			w.len -= start;
			start = 0;
		}
	}
	if (got == raw && start == w.len && *handed == nf && z.avail_in == 0 &&
	    crc == get32(file + DC_OFF_CRC))
		rc = 0;
out:
	inflateEnd(&z);
	buf_free(&w);
	return rc;
}

/* ------------------------------------------------------------ writing */

/* An entry being written: the body deflated into a temporary file. */
struct diffcache_writer {
	diff_file_fn fn;               /* the caller's */
	void *arg;
	int fd;                        /* -1: nothing is kept */
	char *tmp;
	z_stream z;
	uint32_t crc;                  /* of the body */
	uLong zcrc;                    /* of the compressed body written */
	uint64_t raw, nfiles;
	unsigned char out[1 << 16];
};

static void diffcache_writer_drop(struct diffcache_writer *w)
{
	if (w->fd < 0)
		return;
	deflateEnd(&w->z);
	close(w->fd);
	unlink(w->tmp);
	free(w->tmp);
	w->tmp = NULL;
	w->fd = -1;
}

static void diffcache_writer_open(struct diffcache_writer *w, const char *dir)
{
	unsigned char zero[DC_HEADER] = {0};
	w->fd = -1;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return;
	w->tmp = xasprintf("%s/.tmp-XXXXXX", dir);
	int fd = mkostemp(w->tmp, O_CLOEXEC);
	if (fd < 0) {
		free(w->tmp);
		w->tmp = NULL;
		return;
	}
	memset(&w->z, 0, sizeof(w->z));
	/* The fastest level: the gate pays for it, and diffs compress well. */
	if (deflateInit(&w->z, Z_BEST_SPEED) != Z_OK) {
		close(fd);
		unlink(w->tmp);
		free(w->tmp);
		w->tmp = NULL;
		return;
	}
	w->fd = fd;
	w->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	w->zcrc = crc32(0L, Z_NULL, 0);
	if (fsx_write_all(fd, zero, sizeof(zero)) < 0)
		diffcache_writer_drop(w);
}

/* Deflates n bytes of the body (flush: Z_NO_FLUSH or Z_FINISH). */
static void diffcache_writer_add(struct diffcache_writer *w, const void *p, size_t n, int flush)
{
	if (w->fd < 0)
		return;
	if (w->raw + n > DIFFCACHE_MAX) {
		diffcache_writer_drop(w);
		return;
	}
	w->crc = (uint32_t)crc32(w->crc, p, (uInt)n);
	w->raw += n;
	w->z.next_in = (Bytef *)(uintptr_t)p;
	w->z.avail_in = (uInt)n;
	int zr;
	do {
		w->z.next_out = w->out;
		w->z.avail_out = sizeof(w->out);
		zr = deflate(&w->z, flush);
		size_t have = sizeof(w->out) - w->z.avail_out;
		if (zr == Z_STREAM_ERROR || (have && fsx_write_all(w->fd, w->out, have) < 0)) {
			diffcache_writer_drop(w);
			return;
		}
		w->zcrc = crc32(w->zcrc, w->out, (uInt)have);
	} while (w->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
}

static int diffcache_writer_file(void *arg, const struct diff_file *f, const char *patch,
                                 size_t len, struct err *e)
{
	struct diffcache_writer *w = arg;
	int rc = w->fn(w->arg, f, patch, len, e);
	if (rc != 0 || w->fd < 0)
		return rc;
	unsigned char h[DC_REC];
	size_t ol = strlen(f->old_path), nl = strlen(f->new_path);
	put32(h, f->old_mode);
	put32(h + 4, f->new_mode);
	put64(h + 8, (uint64_t)f->old_size);
	put64(h + 16, (uint64_t)f->new_size);
	put32(h + 24, f->binary ? 1 : 0);
	put64(h + 28, f->ins);
	put64(h + 36, f->del);
	put32(h + 44, (uint32_t)ol);
	put32(h + 48, (uint32_t)nl);
	put64(h + 52, len);
	diffcache_writer_add(w, h, sizeof(h), Z_NO_FLUSH);
	diffcache_writer_add(w, f->old_path, ol + 1, Z_NO_FLUSH);
	diffcache_writer_add(w, f->new_path, nl + 1, Z_NO_FLUSH);
	diffcache_writer_add(w, patch, len, Z_NO_FLUSH);
	diffcache_writer_add(w, "", 1, Z_NO_FLUSH);
	w->nfiles++;
	return 0;
}

/* Finishes the body, writes the header and renames the file into place. */
static void diffcache_writer_commit(struct diffcache_writer *w, const char *path,
                                    const char *base, const char *head)
{
	unsigned char h[DC_HEADER];
	diffcache_writer_add(w, "", 0, Z_FINISH);
	if (w->fd < 0)
		return;
	diffcache_header(h, base, head, w->nfiles, w->raw, (uint64_t)w->z.total_out, w->crc);
	uLong hcrc = crc32(crc32(0L, Z_NULL, 0), h, DC_OFF_FCRC);
	put32(h + DC_OFF_FCRC, (uint32_t)crc32_combine(hcrc, w->zcrc, (z_off_t)w->z.total_out));
	if (pwrite(w->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || rename(w->tmp, path) < 0) {
		diffcache_writer_drop(w);
		return;
	}
	deflateEnd(&w->z);
	close(w->fd);
	free(w->tmp);
	w->tmp = NULL;
	w->fd = -1;
}

/* ------------------------------------------------------------ serving */

/* The caller's fn, past the files it already has. */
struct diffcache_skip {
	diff_file_fn fn;
	void *arg;
	size_t skip;
};

static int diffcache_skip_file(void *arg, const struct diff_file *f, const char *patch,
                               size_t len, struct err *e)
{
	struct diffcache_skip *s = arg;
	if (s->skip) {
		s->skip--;
		return 0;
	}
	return s->fn(s->arg, f, patch, len, e);
}

int diffcache_each(const char *dir, const char *mirror, const char *base, const char *head,
                   diff_file_fn fn, void *arg, struct err *e)
{
	char *path = diffcache_path(dir, base, head);
	if (!path)
		return diff_each(mirror, base, head, fn, arg, e);
	unsigned char *file;
	size_t flen, handed = 0;
	int rc;
	struct diffcache_skip skip = { fn, arg, 0 };
	if (diffcache_slurp(path, &file, &flen) == 0) {
		rc = diffcache_check(file, flen, base, head) == 0
		     ? diffcache_stream(file, flen, fn, arg, &handed, e) : -2;
		free(file);
		if (rc != -2) {
			free(path);
			return rc;
		}
		/* Refused: computed again and replaced, past what was handed
		 * over (nothing, unless the body disagreed with checksums that
		 * matched). */
		skip.skip = handed;
	}
	struct diffcache_writer *w = xcalloc(1, sizeof(*w));
	w->fn = diffcache_skip_file;
	w->arg = &skip;
	diffcache_writer_open(w, dir);
	rc = diff_each(mirror, base, head, diffcache_writer_file, w, e);
	if (rc == 0)
		diffcache_writer_commit(w, path, base, head);
	diffcache_writer_drop(w);
	free(w);
	free(path);
	return rc;
}

struct diffcache_out {
	FILE *out;
	const char *base, *head;
};

static int diffcache_write_file(void *arg, const struct diff_file *f, const char *patch,
                                size_t len, struct err *e)
{
	struct diffcache_out *c = arg;
	(void)f;
	if (len && fwrite(patch, 1, len, c->out) != len)
		return err_errno(e, _("cannot write the diff %s..%s"), c->base, c->head);
	return 0;
}

int diffcache_write(const char *dir, const char *mirror, const char *base, const char *head,
                    FILE *out, struct err *e)
{
	struct diffcache_out c = { out, base, head };
	if (diffcache_each(dir, mirror, base, head, diffcache_write_file, &c, e) < 0)
		return -1;
	if (ferror(out))
		return err_set(e, _("cannot write the diff %s..%s"), base, head);
	return 0;
}

int diffcache_stat(const char *dir, const char *mirror, const char *base, const char *head,
                   struct buf *out, struct err *e)
{
	struct diff_stat_list c = {0};
	int rc = diffcache_each(dir, mirror, base, head, diff_stat_list_file, &c, e);
	if (rc == 0)
		diff_stat_list_write(&c, out);
	diff_stat_list_free(&c);
	return rc;
}
