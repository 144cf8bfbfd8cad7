/* The log view: a task's sandbox output, following it live.
 *
 * The log is never loaded whole: a sparse index keeps the offset of every
 * 256th line, built off the key loop (view work, a slice per loop turn)
 * after the first screen, so a 1 GiB log opens at once and memory stays
 * small.  In follow mode (the default while the task runs) the last lines
 * are found by reading backwards from the end.  Lines are drawn through
 * the screen: SGR colours and attributes are drawn as such, every other
 * escape sequence is removed and control characters show in caret
 * notation (screen_text_sgr).
 *
 * A search reads the log a block at a time into one buffer (so memory
 * stays that of the buffer, whatever the log's size) and looks for the
 * pattern over the whole block: memmem for a plain literal or the literal
 * a pattern starts with, one PCRE2 JIT call over many lines for the rest;
 * a match is then mapped back to its line.  It runs in slices between key
 * presses, with its progress in the status bar; q or <Esc> stops it. */
#include "autoconfig.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <fcntl.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "clock.h"
#include "dash.h"
#include "fsx.h"
#include "i18n.h"
#include "sanitize.h"
#include "source.h"

#define EVERY 256                  /* lines between index entries */
#define BLOCK (1u << 20)           /* bytes read at a time (index, search) */
#define OPEN_INDEX (16u << 20)     /* a log this small is indexed before the
                                      first screen: its line count at once */
#define SLICE_BYTES (64u << 20)    /* at most this much per loop turn... */
#define SLICE_SECONDS 0.015        /* ...and this long, so keys stay quick */
#define LINE_MAX_SHOWN 4096        /* bytes of one line read for drawing */

/* How a pattern is looked for over a block. */
enum match_mode {
	MATCH_LITERAL,                 /* no metacharacter: memmem alone */
	MATCH_BLOCK,                   /* one multiline PCRE2 call over the block */
	MATCH_LINES,                   /* one call per line: the pattern looks
	                                  around or anchors at the subject, which
	                                  a block would change */
};

/* A search under way: two legs, from the start line to one end, then from
 * the other end back to it (it wraps once). */
struct search {
	int active;
	int backward;
	int leg;                       /* 0, then 1 after the wrap */
	uint64_t pos;                  /* forward: next byte to look at;
	                                  backward: end of what is left */
	uint64_t end;                  /* forward: where the leg ends;
	                                  backward: its lower bound */
	uint64_t wrap_at;              /* where the second leg stops */
	uint64_t size;                 /* the log's size when it began */
	uint64_t done, total;          /* bytes, for the progress shown */
	int shown;                     /* the percentage last shown */
};

struct logv {
	char *path;
	int fd;
	uint64_t size;                 /* bytes known */
	uint64_t *marks;               /* marks[k] = offset of line (k + 1) * EVERY */
	size_t nmarks, capmarks;
	uint64_t scanned;              /* bytes indexed */
	long lines;                    /* complete lines indexed */
	int follow;
	pcre2_code *re;                /* one line at a time (drawing, checks) */
	pcre2_code *re_ml;             /* the same, multiline, over a block */
	pcre2_match_data *md;
	enum match_mode mode;
	char *lit;                     /* the literal every match starts with */
	size_t litlen, litrare;        /* its length, its rarest byte's index */
	int re_back;
	char *pattern;
	char *blk;                     /* BLOCK bytes, read into by one call at a
	                                  time */
	struct search s;
	enum task_status status;
	struct screen *ls;             /* a line drawn whole (screen_line) */
};

static char *block_buf(struct logv *p)
{
	if (!p->blk)
		p->blk = xmalloc(BLOCK);
	return p->blk;
}

/* Up to want (<= BLOCK) bytes at off, valid until the next call. */
static ssize_t block_read(struct logv *p, uint64_t off, size_t want, const char **out)
{
	char *b = block_buf(p);
	*out = b;
	return pread(p->fd, b, want, (off_t)off);
}

/* Newlines in s[0, n): 16 bytes a step, with byte-wide counters summed
 * every 255 steps (before they could wrap). */
static size_t count_nl(const char *s, size_t n)
{
	typedef unsigned char u8x16 __attribute__((vector_size(16)));
	const u8x16 nl = (u8x16){0} + '\n';
	size_t c = 0;
	while (n >= 16) {
		u8x16 acc = {0};
		size_t steps = n / 16 > 255 ? 255 : n / 16;
		for (size_t i = 0; i < steps; i++) {
			u8x16 x;
			memcpy(&x, s + 16 * i, 16);
			acc -= (u8x16)(x == nl);
		}
		for (int j = 0; j < 16; j++)
			c += acc[j];
		s += 16 * steps;
		n -= 16 * steps;
	}
	while (n--)
		c += *s++ == '\n';
	return c;
}

static void add_mark(struct logv *p, uint64_t off)
{
	if (p->nmarks == p->capmarks) {
		p->capmarks = p->capmarks ? p->capmarks * 2 : 1024;
		p->marks = xrealloc(p->marks, p->capmarks * sizeof *p->marks);
	}
	p->marks[p->nmarks++] = off;
}

/* Indexes b[0, n), the bytes at p->scanned.  Pieces without a mark in
 * them are only counted (fast); the piece with the next mark is walked
 * line by line to find it. */
static void index_bytes(struct logv *p, const char *b, size_t n)
{
	enum { PIECE = 1024 };
	size_t i = 0;
	while (i < n) {
		size_t piece = n - i < PIECE ? n - i : PIECE;
		long need = EVERY - p->lines % EVERY;
		long c = (long)count_nl(b + i, piece);
		if (c < need) {
			p->lines += c;
			i += piece;
			continue;
		}
		const char *q = b + i;
		for (long k = 0; k < need; k++)
			q = (const char *)memchr(q, '\n', (size_t)(b + i + piece - q)) + 1;
		p->lines += need;
		i = (size_t)(q - b);
		add_mark(p, p->scanned + i);
	}
	p->scanned += n;
}

/* Indexes up to budget more bytes, stopping at the monotonic time until
 * (0: no limit). */
static void index_more(struct logv *p, uint64_t budget, double until)
{
	const char *buf;
	while (p->scanned < p->size && budget > 0) {
		size_t want = BLOCK;
		if (want > p->size - p->scanned)
			want = (size_t)(p->size - p->scanned);
		if (want > budget)
			want = (size_t)budget;
		ssize_t n = block_read(p, p->scanned, want, &buf);
		if (n <= 0)
			return;
		index_bytes(p, buf, (size_t)n);
		budget -= (uint64_t)n;
		if (until > 0 && clock_mono() > until)
			return;
	}
}

/* Lines there are, counting a last line without its newline. */
static long total_lines(struct logv *p)
{
	/* A last line without its newline counts too. */
	char c = '\n';
	if (p->size > 0 && pread(p->fd, &c, 1, (off_t)p->size - 1) != 1)
		c = '\n';
	return p->lines + (p->scanned == p->size && c != '\n');
}

/* The lines the view scrolls over: all of them once counted. */
static long shown_lines(struct logv *p)
{
	return p->scanned == p->size ? total_lines(p) : p->lines;
}

static void stat_file(struct view *v)
{
	struct logv *p = v->priv;
	if (p->fd < 0)
		p->fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (p->fd >= 0 && fstat(p->fd, &st) == 0)
		p->size = (uint64_t)st.st_size;
}

/* The offset where line n starts (n within the indexed part). */
static uint64_t line_offset(struct logv *p, long n)
{
	size_t k = (size_t)(n / EVERY);
	uint64_t off = k == 0 ? 0 : p->marks[k - 1];
	long line = (long)k * EVERY;
	char buf[65536];
	while (line < n) {
		ssize_t got = pread(p->fd, buf, sizeof buf, (off_t)off);
		if (got <= 0)
			break;
		char *q = buf, *end = buf + got;
		while (line < n && (q = memchr(q, '\n', (size_t)(end - q)))) {
			q++;
			line++;
			if (line == n)
				return off + (uint64_t)(q - buf);
		}
		if (line < n)
			off += (uint64_t)got;
	}
	return off;
}

/* The line that holds byte off (indexed): the last mark at or before
 * it, then the newlines from there. */
static long line_of(struct logv *p, uint64_t off)
{
	size_t lo = 0, hi = p->nmarks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->marks[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t at = lo ? p->marks[lo - 1] : 0;
	long line = (long)lo * EVERY;
	const char *buf;
	while (at < off) {
		size_t want = off - at > BLOCK ? BLOCK : (size_t)(off - at);
		ssize_t n = block_read(p, at, want, &buf);
		if (n <= 0)
			break;
		line += (long)count_nl(buf, (size_t)n);
		at += (uint64_t)n;
	}
	return line;
}

/* Reads the line at off (at most LINE_MAX_SHOWN bytes of it); returns
 * the offset of the next line. */
static uint64_t read_line(struct logv *p, uint64_t off, struct buf *out)
{
	char buf[LINE_MAX_SHOWN];
	buf_reset(out);
	ssize_t n = pread(p->fd, buf, sizeof buf, (off_t)off);
	if (n <= 0)
		return p->size;
	char *nl = memchr(buf, '\n', (size_t)n);
	if (nl) {
		buf_add(out, buf, (size_t)(nl - buf));
		return off + (uint64_t)(nl - buf) + 1;
	}
	buf_add(out, buf, (size_t)n);
	/* A long line: skip to its end without keeping it. */
	uint64_t at = off + (uint64_t)n;
	char skip[65536];
	while (at < p->size) {
		ssize_t m = pread(p->fd, skip, sizeof skip, (off_t)at);
		if (m <= 0)
			return p->size;
		char *e = memchr(skip, '\n', (size_t)m);
		if (e)
			return at + (uint64_t)(e - skip) + 1;
		at += (uint64_t)m;
	}
	return p->size;
}

/* The offset of the start of the line `back` lines before the end. */
static uint64_t tail_offset(struct logv *p, int back)
{
	uint64_t end = p->size;
	if (end && end > 0) {
		char c;
		if (pread(p->fd, &c, 1, (off_t)end - 1) == 1 && c == '\n')
			end--;  /* the last newline ends the last line */
	}
	uint64_t at = end;
	int found = 0;
	char buf[65536];
	while (at > 0) {
		size_t want = at > sizeof buf ? sizeof buf : (size_t)at;
		ssize_t n = pread(p->fd, buf, want, (off_t)(at - want));
		if (n <= 0)
			break;
		for (ssize_t i = n - 1; i >= 0; i--) {
			if (buf[i] == '\n' && ++found == back)
				return at - want + (uint64_t)i + 1;
		}
		at -= want;
	}
	return 0;
}

static int log_open(struct view *v, char *msg, size_t msglen)
{
	struct logv *p = v->priv;
	p->fd = -1;
	p->follow = 1;
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(v->d->src, v->task_id, &t, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	/* A local file, as it grows: the task's own, or the copy a remote
	 * source keeps up to date. */
	p->path = source_log_path(v->d->src, t.id, &e);
	if (!p->path) {
		snprintf(msg, msglen, "%s", e.msg);
		task_row_free(&t);
		return -1;
	}
	p->status = t.status;
	task_row_free(&t);
	stat_file(v);
	if (p->fd < 0) {
		/* Nothing to show yet: the view that was there stays. */
		if (p->status == TASK_QUEUED)
			snprintf(msg, msglen, _("task %s is queued: its log starts when it runs"),
			         v->task_id);
		else
			snprintf(msg, msglen, _("task %s has no log yet"), v->task_id);
		return -1;
	}
	/* A large log is indexed after the first screen. */
	if (p->fd >= 0 && p->size <= OPEN_INDEX)
		index_more(p, OPEN_INDEX, 0);
	return 0;
}

static void log_title(struct view *v, char *out, size_t len)
{
	struct logv *p = v->priv;
	char count[64];
	if (p->scanned < p->size)
		snprintf(count, sizeof count, _("%ld+ lines"), p->lines);
	else
		snprintf(count, sizeof count, _("%ld lines"), total_lines(p));
	char side[64] = "";
	if (v->wrap)
		snprintf(side, sizeof side, "%s", _("  [wrap]"));
	else if (v->left > 0)
		snprintf(side, sizeof side, _("  [from column %d]"), v->left + 1);
	snprintf(out, len, _("log %s  %s  %s%s%s"), v->task_id, task_status_label(p->status), count,
	         p->follow ? _("  [following]") : "", side);
}

/* ---- drawing: long lines cut (scrolled sideways) or wrapped ---- */

/* Reads the line at off for drawing; *cut when it is longer than what
 * was read (LINE_MAX_SHOWN).  Returns the next line's offset. */
static uint64_t read_shown(struct logv *p, uint64_t off, struct buf *line, int *cut)
{
	uint64_t next = read_line(p, off, line);
	*cut = next - off > line->len + 1;
	return next;
}

/* Draws a line into the view's line row (p->ls) whole, or as far as the
 * window needs, its SGR colours and its search match included; returns
 * its width. */
static int log_render(struct view *v, const struct buf *line, int w)
{
	struct logv *p = v->priv;
	const char *t = line->data ? line->data : "";
	enum role role = ROLE_NORMAL;
	if (line->len >= 9 && !memcmp(t, "[paddock ", 9))
		role = ROLE_LOG_MARKER;
	int width = v->wrap ? screen_textwidth(t, line->len) : v->left + w + 1;
	p->ls = screen_line(p->ls, width);
	int used = screen_text_sgr(p->ls, 0, 0, -1, role, t, line->len);
	if (p->re && line->len) {
		pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->re, NULL);
		if (pcre2_match(p->re, (PCRE2_SPTR)t, line->len, 0, 0, md, NULL) >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			int x0 = screen_textwidth(t, ov[0]);
			int mw = screen_textwidth(t + ov[0], ov[1] - ov[0]);
			screen_paint(p->ls, x0, 0, mw ? mw : 1, ROLE_LOG_MATCH);
		}
		pcre2_match_data_free(md);
	}
	return used;
}

static int log_flags(const struct view *v, int cut)
{
	return SCREEN_TEXT_MARKS | (v->wrap ? SCREEN_TEXT_WRAP : 0) | (cut ? SCREEN_TEXT_MORE : 0);
}

/* The rows the line at off takes (1 unless wrapping); *next its end. */
static int log_rows_at(struct view *v, uint64_t off, int w, uint64_t *next, struct buf *line)
{
	struct logv *p = v->priv;
	int cut;
	*next = read_shown(p, off, line, &cut);
	if (!v->wrap)
		return 1;
	int used = log_render(v, line, w);
	return screen_window(NULL, 0, 0, w, 0, p->ls, used, 0, log_flags(v, cut));
}

/* Wrapped, the first line to draw so that the selection's rows (or, when
 * following, the last line's) are all on the screen: lines top..last take
 * more rows than lines.  Moves v->top; returns its offset. */
static uint64_t wrap_fit(struct view *v, uint64_t off, long last, int h, int w)
{
	struct logv *p = v->priv;
	long n = last - v->top + 1;
	if (n <= 0 || n > h)
		return off;
	uint64_t *offs = xmalloc((size_t)n * sizeof *offs);
	int *rows = xmalloc((size_t)n * sizeof *rows), sum = 0;
	struct buf line = {0};
	uint64_t at = off;
	for (long k = 0; k < n && at < p->size; k++) {
		offs[k] = at;
		rows[k] = log_rows_at(v, at, w, &at, &line);
		sum += rows[k];
	}
	long k = 0;
	while (sum > h && k + 1 < n && offs[k + 1] < p->size)
		sum -= rows[k++];
	v->top += (int)k;
	off = offs[k];
	buf_free(&line);
	free(offs);
	free(rows);
	return off;
}

static void log_draw(struct view *v, struct screen *s, int y, int h)
{
	struct logv *p = v->priv;
	int w = screen_width(s);
	v->width = w;
	v->height = h;
	if (p->fd < 0) {
		screen_str(s, 1, y + 1, w - 1, ROLE_DIM, p->status == TASK_QUEUED ?
		           _("the task is queued; its log starts when it runs") :
		           _("there is no log for this task"));
		return;
	}
	long lines = shown_lines(p);
	v->lines = (int)(lines > INT32_MAX ? INT32_MAX : lines);
	uint64_t off;
	if (p->follow) {
		off = tail_offset(p, h);
		v->top = v->lines > h ? v->lines - h : 0;
		v->sel = -1;
		if (v->wrap)
			off = wrap_fit(v, off, v->lines - 1, h, w);
	} else {
		if (v->top > v->lines - 1)
			v->top = v->lines > 0 ? v->lines - 1 : 0;
		off = line_offset(p, v->top);
		if (v->wrap && v->sel >= v->top)
			off = wrap_fit(v, off, v->sel, h, w);
	}
	struct buf line = {0};
	v->more_right = 0;
	for (int row = 0, i = v->top; row < h && off < p->size; i++) {
		int cut;
		off = read_shown(p, off, &line, &cut);
		int used = log_render(v, &line, w);
		int r = screen_window(s, 0, y + row, w, h - row, p->ls, used, v->left,
		                      log_flags(v, cut));
		if (!v->wrap) {
			v->more_right |= r > v->left + w;
			r = 1;
		}
		if (r > h - row)
			r = h - row;
		for (int k = 0; !p->follow && i == v->sel && k < r; k++)
			screen_paint(s, 0, y + row + k, w, ROLE_CURSOR);
		row += r;
	}
	buf_free(&line);
}

/* ---- matching over a block ---- */

/* The start (in b) of the line that holds b[at], not before from (a line
 * start). */
static size_t line_start_in(const char *b, size_t from, size_t at)
{
	const char *q = at > from ? memrchr(b + from, '\n', at - from) : NULL;
	return q ? (size_t)(q - b) + 1 : from;
}

/* The end (its newline, or len) of the line that holds b[at]. */
static size_t line_end_in(const char *b, size_t len, size_t at)
{
	const char *q = memchr(b + at, '\n', len - at);
	return q ? (size_t)(q - b) : len;
}

/* How rare a byte is in text, roughly: higher is rarer. */
static int byte_rarity(unsigned char c)
{
	static const char common[] = " etaoinsrhldcumfpgwybvkxjqz";
	const char *q = c ? strchr(common, c) : NULL;
	if (q)
		return (int)(q - common);
	if (c >= '0' && c <= '9')
		return 20;
	if (strchr(".,:;-_/=()[]'\"\t", c))
		return 15;
	return 30;
}

/* Where the literal next occurs in b[from, len), or NULL.  memchr for its
 * rarest byte and a compare there is several times faster than memmem
 * when that byte is rare; when it is not (it keeps finding the byte but
 * not the literal), memmem for the rest. */
static const char *lit_find(struct logv *p, const char *b, size_t from, size_t len)
{
	const char *q = b + from, *end = b + len;
	size_t k = p->litrare;
	for (int misses = 0; (size_t)(end - q) >= p->litlen; misses++) {
		if (misses >= 16 && (size_t)(q - (b + from)) < (size_t)misses * 256)
			return memmem(q, (size_t)(end - q), p->lit, p->litlen);
		const char *r = memchr(q + k, (unsigned char)p->lit[k], (size_t)(end - q) - k);
		if (!r || (size_t)(end - (r - k)) < p->litlen)
			return NULL;
		if (!memcmp(r - k, p->lit, p->litlen))
			return r - k;
		q = r - k + 1;
	}
	return NULL;
}

static int line_matches(struct logv *p, const char *b, size_t ls, size_t le)
{
	return pcre2_match(p->re, (PCRE2_SPTR)b + ls, le - ls, 0, 0, p->md, NULL) >= 0;
}

/* The start (in b) of the first line at or after from that matches, or
 * -1.  b[0, len) holds whole lines and from is a line start.  A block
 * match that spans lines (\s matched a newline) is checked on its first
 * line alone; one within its line is a match of that line, since the
 * patterns matched over a block neither look around nor anchor at the
 * subject (pattern_mode). */
static long region_first(struct logv *p, const char *b, size_t len, size_t from)
{
	int misses = 0, per_line = p->mode == MATCH_LINES;
	while (from < len) {
		/* The literal skips the lines that cannot match, unless it
		 * keeps finding lines that do not (then it only costs). */
		if (p->litlen && (p->mode == MATCH_LITERAL || misses < 64)) {
			const char *q = lit_find(p, b, from, len);
			if (!q)
				return -1;
			size_t at = (size_t)(q - b), ls = line_start_in(b, from, at);
			if (p->mode == MATCH_LITERAL)
				return (long)ls;
			size_t le = line_end_in(b, len, at);
			if (line_matches(p, b, ls, le))
				return (long)ls;
			misses++;
			from = le + 1;
			continue;
		}
		if (per_line) {
			size_t le = line_end_in(b, len, from);
			if (line_matches(p, b, from, le))
				return (long)from;
			from = le + 1;
			continue;
		}
		int rc = pcre2_match(p->re_ml, (PCRE2_SPTR)b, len, from, 0, p->md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			return -1;
		if (rc < 0) {
			/* A limit hit over a large subject: go on a line at a time. */
			per_line = 1;
			continue;
		}
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
		size_t ls = line_start_in(b, from, ov[0]), le = line_end_in(b, len, ov[0]);
		if (ov[1] <= le || line_matches(p, b, ls, le))
			return (long)ls;
		from = le + 1;
	}
	return -1;
}

/* The start of the last line in b[0, len) that matches, or -1. */
static long region_last(struct logv *p, const char *b, size_t len)
{
	long last = -1, h;
	size_t from = 0;
	while (from < len && (h = region_first(p, b, len, from)) >= 0) {
		last = h;
		from = line_end_in(b, len, (size_t)h) + 1;
	}
	return last;
}

static void lit_rarest(struct logv *p)
{
	p->litrare = 0;
	for (size_t i = 1; i < p->litlen; i++)
		if (byte_rarity((unsigned char)p->lit[i]) >
		    byte_rarity((unsigned char)p->lit[p->litrare]))
			p->litrare = i;
}

/* How the pattern can be looked for, and the literal its matches start
 * with: its characters up to the first metacharacter (after a leading ^),
 * less the last one when a quantifier may make it optional; none when an
 * alternation could start a match with something else. */
static void pattern_mode(struct logv *p, const char *pat)
{
	static const char meta[] = "\\^$.|?*+()[]{}";
	free(p->lit);
	p->lit = NULL;
	p->litlen = 0;
	size_t n = strcspn(pat, meta);
	if (!pat[n]) {
		p->mode = MATCH_LITERAL;
		p->lit = xstrdup(pat);
		p->litlen = n;
		lit_rarest(p);
		return;
	}
	/* Over a block, lookarounds would see the lines around, and \A, \G,
	 * \z, \Z and (*VERBS) would mean the block, \K would move the start
	 * to another line: those are matched a line at a time. */
	static const char *const per_line[] = {
		"(?=", "(?!", "(?<=", "(?<!", "(?(", "(*", "\\A", "\\G", "\\z", "\\Z", "\\K",
	};
	p->mode = MATCH_BLOCK;
	for (size_t i = 0; i < sizeof per_line / sizeof per_line[0]; i++)
		if (strstr(pat, per_line[i]))
			p->mode = MATCH_LINES;
	if (strchr(pat, '|'))
		return;
	const char *s = pat + (*pat == '^');
	n = strcspn(s, meta);
	if (s[n] == '?' || s[n] == '*' || s[n] == '{') {
		/* The whole UTF-8 character the quantifier applies to. */
		while (n > 0 && ((unsigned char)s[--n] & 0xc0) == 0x80)
			;
	}
	/* A literal of a byte or two finds most lines: no help. */
	if (n >= 3) {
		p->lit = xstrndup(s, n);
		p->litlen = n;
	}
	lit_rarest(p);
}

/* ---- the search, in slices ---- */

static void search_found(struct view *v, uint64_t off)
{
	struct logv *p = v->priv;
	long line = line_of(p, off);
	int wrapped = p->s.leg == 1;
	p->s.active = 0;
	p->follow = 0;
	v->lines = (int)(p->lines > line ? p->lines : line + 1);
	v->sel = (int)line;
	view_clamp(v);
	if (!wrapped)
		dash_message(v->d, ROLE_NOTICE, _("line %ld"), line + 1);
	else if (p->s.backward)
		dash_message(v->d, ROLE_NOTICE, _("line %ld (search hit the top, continued at the "
		                                  "bottom)"), line + 1);
	else
		dash_message(v->d, ROLE_NOTICE, _("line %ld (search hit the bottom, continued at the "
		                                  "top)"), line + 1);
}

/* Moves to the second leg (the wrap); 0 when both are done. */
static int search_wrap(struct logv *p)
{
	struct search *s = &p->s;
	if (s->leg == 1)
		return 0;
	s->leg = 1;
	if (s->backward) {
		s->pos = s->size;
		s->end = s->wrap_at;
	} else {
		s->pos = 0;
		s->end = s->wrap_at;
	}
	return 1;
}

/* One block forward: [pos, end) read a block at a time, cut at its last
 * newline so that a line is never split (a line longer than the block is
 * looked at in pieces); what the index has not seen yet is indexed from
 * the same bytes.  Returns the bytes looked at; *found and *hit when a
 * line matched. */
static size_t search_block_fwd(struct logv *p, uint64_t *hit, int *found)
{
	struct search *s = &p->s;
	const char *b;
	size_t want = s->end - s->pos > BLOCK ? BLOCK : (size_t)(s->end - s->pos);
	ssize_t n = block_read(p, s->pos, want, &b);
	if (n <= 0) {
		s->pos = s->end;
		return 0;
	}
	size_t len = (size_t)n;
	if (s->pos + len < s->end) {
		const char *nl = memrchr(b, '\n', len);
		if (nl)
			len = (size_t)(nl - b) + 1;
	}
	if (p->scanned >= s->pos && p->scanned < s->pos + len)
		index_bytes(p, b + (p->scanned - s->pos), (size_t)(s->pos + len - p->scanned));
	long h = region_first(p, b, len, 0);
	if (h >= 0) {
		*hit = s->pos + (uint64_t)h;
		*found = 1;
	}
	s->pos += len;
	return len;
}

/* One block backward: the whole lines of [pos - BLOCK, pos), down to end;
 * returns as search_block_fwd. */
static size_t search_block_back(struct logv *p, uint64_t *hit, int *found)
{
	struct search *s = &p->s;
	const char *b;
	uint64_t lo = s->pos - s->end > BLOCK ? s->pos - BLOCK : s->end;
	ssize_t n = block_read(p, lo, (size_t)(s->pos - lo), &b);
	if (n <= 0 || (uint64_t)n != s->pos - lo) {
		s->pos = s->end;
		return 0;
	}
	size_t skip = 0, len = (size_t)n;
	if (lo > s->end) {
		/* The first line may start before the block: the next block's. */
		const char *nl = memchr(b, '\n', len);
		if (nl && (size_t)(nl - b) + 1 < len)
			skip = (size_t)(nl - b) + 1;
	}
	long h = region_last(p, b + skip, len - skip);
	if (h >= 0) {
		*hit = lo + skip + (uint64_t)h;
		*found = 1;
	}
	s->pos = lo + skip;
	return len - skip;
}

/* The status bar says how far the search is (again after a key cleared
 * it: force). */
static void search_progress(struct view *v, int force)
{
	struct logv *p = v->priv;
	struct search *s = &p->s;
	int pct = s->total ? (int)(s->done * 100 / s->total) : 0;
	if (pct > 99)
		pct = 99;
	if (force || pct != s->shown || !v->d->message[0]) {
		s->shown = pct;
		dash_message(v->d, ROLE_NOTICE, _("searching... %d%%"), pct);
	}
}

/* Runs the search for at most SLICE_BYTES and SLICE_SECONDS; 1 while it
 * goes on. */
static int search_slice(struct view *v)
{
	struct logv *p = v->priv;
	struct search *s = &p->s;
	double until = clock_mono() + SLICE_SECONDS;
	uint64_t budget = SLICE_BYTES;
	while (s->active) {
		int done = s->backward ? s->pos <= s->end : s->pos >= s->end;
		if (done && !search_wrap(p)) {
			s->active = 0;
			dash_message(v->d, ROLE_ERROR, _("not found: %s"), p->pattern);
			return 0;
		}
		if (done)
			continue;
		/* A match's line number comes from the index: it is built up to
		 * where the search looks (forwards, the search's blocks carry it
		 * on from there). */
		if (p->scanned < s->pos && p->scanned < s->size) {
			uint64_t before = p->scanned;
			index_more(p, s->pos - p->scanned < BLOCK ? s->pos - p->scanned : BLOCK, 0);
			if (p->scanned == before) {
				s->active = 0;  /* the log shrank or cannot be read */
				dash_message(v->d, ROLE_ERROR, _("not found: %s"), p->pattern);
				return 0;
			}
			s->done += p->scanned - before;
			budget -= p->scanned - before < budget ? p->scanned - before : budget;
		} else {
			uint64_t hit = 0;
			int found = 0;
			size_t n = s->backward ? search_block_back(p, &hit, &found) :
			           search_block_fwd(p, &hit, &found);
			if (found) {
				search_found(v, hit);
				return 0;
			}
			s->done += n;
			budget -= n < budget ? n : budget;
		}
		if (budget == 0 || clock_mono() > until)
			break;
	}
	search_progress(v, 0);
	return s->active;
}

/* Searches from the selection in the direction asked; wraps once.  The
 * first slice runs at once: a small log has its answer before the next
 * screen. */
static void find(struct view *v, int backward)
{
	struct logv *p = v->priv;
	struct search *s = &p->s;
	if (!p->re) {
		dash_message(v->d, ROLE_ERROR, _("no search yet: / searches"));
		return;
	}
	stat_file(v);
	if (p->fd < 0) {
		dash_message(v->d, ROLE_ERROR, _("not found: %s"), p->pattern);
		return;
	}
	/* From the selection, or the top line shown when following. */
	uint64_t origin;
	if (p->follow)
		origin = tail_offset(p, v->height > 0 ? v->height : 1);
	else
		origin = line_offset(p, v->sel >= 0 ? v->sel : v->top);
	memset(s, 0, sizeof *s);
	s->active = 1;
	s->backward = backward;
	s->size = p->size;
	s->shown = -1;
	if (backward) {
		s->pos = origin;
		s->end = 0;
		s->wrap_at = origin;
		s->total = s->size + (s->size - p->scanned);
	} else {
		struct buf line = {0};
		uint64_t next = origin < s->size ? read_line(p, origin, &line) : s->size;
		buf_free(&line);
		s->pos = next;
		s->end = s->size;
		s->wrap_at = next;
		s->total = s->size + (next > p->scanned ? next - p->scanned : 0);
	}
	search_slice(v);
}

static void search_done(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct logv *p = v->priv;
	if (!text || !*text)
		return;
	int code;
	PCRE2_SIZE off;
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, opts, &code, &off,
	                               NULL);
	if (!re) {
		PCRE2_UCHAR err[256];
		pcre2_get_error_message(code, err, sizeof err);
		dash_message(d, ROLE_ERROR, _("bad pattern at %zu: %s"), (size_t)off, (char *)err);
		return;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	pcre2_code_free(p->re);
	pcre2_code_free(p->re_ml);
	p->re = re;
	p->re_ml = NULL;
	pattern_mode(p, text);
	if (p->mode == MATCH_BLOCK) {
		/* ^ and $ at each line of the block, as on a line alone. */
		p->re_ml = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED,
		                         opts | PCRE2_MULTILINE, &code, &off, NULL);
		if (p->re_ml)
			pcre2_jit_compile(p->re_ml, PCRE2_JIT_COMPLETE);
		else
			p->mode = MATCH_LINES;
	}
	if (!p->md)
		p->md = pcre2_match_data_create(1, NULL);
	free(p->pattern);
	p->pattern = xstrdup(text);
	find(v, p->re_back);
}

/* ---- y and o ---- */

/* y: the selected line as shown (its SGR and every other sequence
 * removed, controls as text), when there is one (following, there is
 * none: the id or the branch). */
static void log_copy(struct view *v)
{
	struct logv *p = v->priv;
	if (p->follow || v->sel < 0 || p->fd < 0) {
		dash_copy_menu(v->d, v->task_id, NULL);
		return;
	}
	struct buf line = {0}, shown = {0};
	read_line(p, line_offset(p, v->sel), &line);
	sanitize_text(line.data ? line.data : "", line.len, 0, &shown);
	dash_copy_menu(v->d, v->task_id, shown.data ? shown.data : "");
	buf_free(&line);
	buf_free(&shown);
}

/* The most of a log the pager gets: past it, the end. */
#define PAGER_MAX (64u << 20)

/* Writes the log from off as `paddock log` prints it on a terminal (SGR
 * kept, every other sequence removed), cut at lines so that no sequence
 * is split; -1 when it cannot be written. */
static int log_write_clean(struct logv *p, uint64_t off, int fd)
{
	const char *b;
	while (off < p->size) {
		size_t want = p->size - off > BLOCK ? BLOCK : (size_t)(p->size - off);
		ssize_t n = block_read(p, off, want, &b);
		if (n <= 0)
			break;
		size_t len = (size_t)n;
		const char *nl = off + len < p->size ? memrchr(b, '\n', len) : NULL;
		if (nl)
			len = (size_t)(nl - b) + 1;
		struct buf clean = {0};
		sanitize_text(b, len, 1, &clean);
		int bad = clean.len && fsx_write_all(fd, clean.data, clean.len) < 0;
		buf_free(&clean);
		if (bad)
			return -1;
		off += len;
	}
	return 0;
}

/* o: the log in $PAGER, from a copy that holds only what the view would
 * show (an agent's escape sequences never reach the pager raw; SGR
 * colours do, for less -R), removed after. */
static void log_pager(struct view *v)
{
	struct logv *p = v->priv;
	stat_file(v);
	if (p->fd < 0) {
		dash_message(v->d, ROLE_ERROR, _("task %s has no log yet"), v->task_id);
		return;
	}
	const char *tmp = getenv("TMPDIR");
	char *path = xasprintf("%s/paddock-log-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", v->task_id);
	int fd = mkstemp(path);
	if (fd < 0) {
		dash_message(v->d, ROLE_ERROR, _("cannot write a copy of the log for the pager: %s"),
		             strerror(errno));
		free(path);
		return;
	}
	uint64_t from = 0;
	if (p->size > PAGER_MAX) {
		/* From the first whole line of its last PAGER_MAX bytes. */
		struct buf skip = {0};
		from = read_line(p, p->size - PAGER_MAX, &skip);
		buf_free(&skip);
	}
	int rc = log_write_clean(p, from, fd);
	if (close(fd) < 0)
		rc = -1;
	if (rc < 0)
		dash_message(v->d, ROLE_ERROR, _("cannot write a copy of the log for the pager: %s"),
		             strerror(errno));
	else if (dash_pager(v->d, path) == 0 && from > 0)
		dash_message(v->d, ROLE_NOTICE, _("the pager showed the last %u MiB of the log; the "
		                                  "log view has all of it"), PAGER_MAX >> 20);
	unlink(path);
	free(path);
}

static int request_one(struct view *v, enum request req)
{
	struct logv *p = v->priv;
	switch (req) {
	case REQ_QUIT:
		/* q or <Esc> stops a search first; again, it goes back. */
		if (!p->s.active)
			return 0;
		p->s.active = 0;
		dash_message(v->d, ROLE_NOTICE, _("search stopped"));
		return 1;
	case REQ_FOLLOW:
	case REQ_LAST:
		p->follow = 1;
		return 1;
	case REQ_SEARCH:
	case REQ_SEARCH_BACK:
		p->re_back = req == REQ_SEARCH_BACK;
		dash_ask(v->d, p->re_back ? "?" : "/", 0, NULL, search_done, v);
		return 1;
	case REQ_FIND_NEXT:
	case REQ_FIND_PREV:
		find(v, (req == REQ_FIND_PREV) != p->re_back);
		return 1;
	case REQ_COPY:
		log_copy(v);
		return 1;
	case REQ_PAGER:
		log_pager(v);
		return 1;
	case REQ_MOVE_UP: case REQ_PAGE_UP: case REQ_FIRST:
	case REQ_MOVE_DOWN: case REQ_PAGE_DOWN:
		if (p->follow) {
			/* Scrolling stops following, from where the view was:
			 * its line number needs the whole index (rarely: it is
			 * built right after the first screen). */
			if (req != REQ_FIRST && p->fd >= 0)
				index_more(p, UINT64_MAX, 0);
			p->follow = 0;
			v->lines = (int)shown_lines(p);
			v->top = v->lines > v->height ? v->lines - v->height : 0;
			v->sel = v->top + v->height - 1;
		}
		v->lines = (int)shown_lines(p);
		view_scroll(v, req);
		return 1;
	default:
		return 0;
	}
}

static int log_request(struct view *v, enum request req)
{
	struct logv *p = v->priv;
	int searching = p->s.active;
	int handled = request_one(v, req);
	/* A key cleared the status bar: the search still runs. */
	if (handled && searching && p->s.active)
		search_progress(v, 1);
	return handled;
}

static void log_refresh(struct view *v)
{
	struct logv *p = v->priv;
	stat_file(v);
	struct task_row t;
	struct err e = {{0}};
	if (source_task_get(v->d->src, v->task_id, &t, &e) == 0) {
		p->status = t.status;
		task_row_free(&t);
	}
}

/* Between key presses: a slice of the search, or of the index.  1 when
 * it did some: the loop turns again at once, which also draws at once
 * what the last slice found. */
static int log_work(struct view *v)
{
	struct logv *p = v->priv;
	if (p->s.active) {
		search_slice(v);
		return 1;
	}
	if (p->fd >= 0 && p->scanned < p->size) {
		index_more(p, SLICE_BYTES, clock_mono() + SLICE_SECONDS);
		return 1;
	}
	return 0;
}

static void log_close(struct view *v)
{
	struct logv *p = v->priv;
	if (p->fd >= 0)
		close(p->fd);
	free(p->path);
	free(p->marks);
	free(p->pattern);
	free(p->lit);
	free(p->blk);
	screen_free(p->ls);
	pcre2_match_data_free(p->md);
	pcre2_code_free(p->re);
	pcre2_code_free(p->re_ml);
}

const struct view_ops view_log = {
	.name = "log",
	.priv_size = sizeof(struct logv),
	.open = log_open,
	.title = log_title,
	.draw = log_draw,
	.request = log_request,
	.refresh = log_refresh,
	.work = log_work,
	.close = log_close,
	.next_pane = &view_diff,
};
