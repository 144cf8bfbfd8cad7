/* The log view: a task's sandbox output, following it live.
 *
 * The log is never loaded whole: a sparse index keeps the offset of every
 * 256th line, built a slice at a time between key presses, so a 1 GiB log
 * opens at once and memory stays small.  In follow mode (the default
 * while the task runs) the last lines are found by reading backwards from
 * the end.  Lines are drawn through the screen: SGR colours and
 * attributes are drawn as such, every other escape sequence is removed
 * and control characters show in caret notation (screen_text_sgr). */
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
#include "dash.h"
#include "i18n.h"
#include "paths.h"

#define EVERY 256                  /* lines between index entries */
#define SLICE (16u << 20)          /* bytes indexed per refresh */
#define LINE_MAX_SHOWN 4096        /* bytes of one line read for drawing */

struct logv {
	char *path;
	int fd;
	uint64_t size;                 /* bytes known */
	uint64_t *marks;               /* marks[k] = offset of line k * EVERY */
	size_t nmarks, capmarks;
	uint64_t scanned;              /* bytes indexed */
	long lines;                    /* complete lines indexed */
	int follow;
	pcre2_code *re;
	int re_back;
	char *pattern;
	enum task_status status;
};

static void index_more(struct logv *p, uint64_t budget)
{
	char buf[65536];
	while (p->scanned < p->size && budget > 0) {
		size_t want = sizeof buf;
		if (want > p->size - p->scanned)
			want = (size_t)(p->size - p->scanned);
		ssize_t n = pread(p->fd, buf, want, (off_t)p->scanned);
		if (n <= 0)
			return;
		for (char *q = buf, *end = buf + n; (q = memchr(q, '\n', (size_t)(end - q)));) {
			q++;
			p->lines++;
			if (p->lines % EVERY == 0) {
				if (p->nmarks == p->capmarks) {
					p->capmarks = p->capmarks ? p->capmarks * 2 : 1024;
					p->marks = xrealloc(p->marks, p->capmarks * sizeof *p->marks);
				}
				p->marks[p->nmarks++] = p->scanned + (uint64_t)(q - buf);
			}
		}
		p->scanned += (uint64_t)n;
		budget -= (uint64_t)n > budget ? budget : (uint64_t)n;
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
	p->path = paths_task_log(v->d->data_dir, v->task_id);
	p->follow = 1;
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(v->d->st, v->task_id, &t, &e) < 0) {
		snprintf(msg, msglen, "%s", e.msg);
		return -1;
	}
	p->status = t.status;
	task_row_free(&t);
	stat_file(v);
	index_more(p, SLICE);
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
	snprintf(out, len, _("log %s  %s  %s%s"), v->task_id, task_status_name(p->status), count,
	         p->follow ? _("  [following]") : "");
}

static void log_draw(struct view *v, struct screen *s, int y, int h)
{
	struct logv *p = v->priv;
	int w = screen_width(s);
	if (p->fd < 0) {
		screen_str(s, 1, y + 1, w - 1, ROLE_DIM, p->status == TASK_QUEUED ?
		           _("the task is queued; its log starts when it runs") :
		           _("there is no log for this task"));
		return;
	}
	v->lines = (int)(p->lines > INT32_MAX ? INT32_MAX : p->lines);
	uint64_t off;
	if (p->follow) {
		off = tail_offset(p, h);
		v->top = v->lines > h ? v->lines - h : 0;
		v->sel = -1;
	} else {
		if (v->top > v->lines - 1)
			v->top = v->lines > 0 ? v->lines - 1 : 0;
		off = line_offset(p, v->top);
	}
	struct buf line = {0};
	for (int row = 0; row < h && off < p->size; row++) {
		off = read_line(p, off, &line);
		enum role role = ROLE_NORMAL;
		if (line.len >= 9 && !memcmp(line.data, "[paddock ", 9))
			role = ROLE_LOG_MARKER;
		screen_text_sgr(s, 0, y + row, w, role, line.data ? line.data : "", line.len);
		if (p->re && line.len) {
			pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->re, NULL);
			if (pcre2_match(p->re, (PCRE2_SPTR)line.data, line.len, 0, 0, md, NULL) >= 0) {
				PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
				int x0 = screen_textwidth(line.data, ov[0]);
				int mw = screen_textwidth(line.data + ov[0], ov[1] - ov[0]);
				screen_paint(s, x0, y + row, mw ? mw : 1, ROLE_LOG_MATCH);
			}
			pcre2_match_data_free(md);
		}
		if (!p->follow && v->top + row == v->sel)
			screen_paint(s, 0, y + row, w, ROLE_CURSOR);
	}
	buf_free(&line);
}

/* Searches from the selection in the direction asked; wraps once. */
static void find(struct view *v, int backward)
{
	struct logv *p = v->priv;
	if (!p->re) {
		dash_message(v->d, ROLE_ERROR, _("no search yet: / searches"));
		return;
	}
	index_more(p, UINT64_MAX);
	long n = p->lines, start = v->sel >= 0 ? v->sel : v->top;
	struct buf line = {0};
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->re, NULL);
	for (long k = 1; k <= n; k++) {
		long i = backward ? (start - k + n) % n : (start + k) % n;
		read_line(p, line_offset(p, i), &line);
		if (pcre2_match(p->re, (PCRE2_SPTR)(line.data ? line.data : ""), line.len, 0, 0, md,
		                NULL) >= 0) {
			p->follow = 0;
			v->sel = (int)i;
			v->lines = (int)n;
			view_clamp(v);
			pcre2_match_data_free(md);
			buf_free(&line);
			dash_message(v->d, ROLE_NOTICE, _("line %ld"), i + 1);
			return;
		}
	}
	pcre2_match_data_free(md);
	buf_free(&line);
	dash_message(v->d, ROLE_ERROR, _("not found: %s"), p->pattern);
}

static void search_done(struct dash *d, void *arg, const char *text)
{
	struct view *v = arg;
	struct logv *p = v->priv;
	if (!text || !*text)
		return;
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, PCRE2_UTF |
	                               PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR err[256];
		pcre2_get_error_message(code, err, sizeof err);
		dash_message(d, ROLE_ERROR, _("bad pattern at %zu: %s"), (size_t)off, (char *)err);
		return;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	pcre2_code_free(p->re);
	p->re = re;
	free(p->pattern);
	p->pattern = xstrdup(text);
	find(v, p->re_back);
}

static int log_request(struct view *v, enum request req)
{
	struct logv *p = v->priv;
	switch (req) {
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
	case REQ_MOVE_UP: case REQ_PAGE_UP: case REQ_FIRST:
	case REQ_MOVE_DOWN: case REQ_PAGE_DOWN:
		if (p->follow) {
			/* Scrolling stops following, from where the view was. */
			p->follow = 0;
			v->sel = v->top + v->height - 1;
		}
		v->lines = (int)p->lines;
		view_scroll(v, req);
		return 1;
	default:
		return 0;
	}
}

static void log_refresh(struct view *v)
{
	struct logv *p = v->priv;
	stat_file(v);
	index_more(p, SLICE);
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(v->d->st, v->task_id, &t, &e) == 0) {
		p->status = t.status;
		task_row_free(&t);
	}
}

static void log_close(struct view *v)
{
	struct logv *p = v->priv;
	if (p->fd >= 0)
		close(p->fd);
	free(p->path);
	free(p->marks);
	free(p->pattern);
	pcre2_code_free(p->re);
}

const struct view_ops view_log = {
	.name = "log",
	.priv_size = sizeof(struct logv),
	.open = log_open,
	.title = log_title,
	.draw = log_draw,
	.request = log_request,
	.refresh = log_refresh,
	.close = log_close,
};
