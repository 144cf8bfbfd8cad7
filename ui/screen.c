#include "autoconfig.h"
#include "screen.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "buf.h"
#include "sanitize.h"

/* One cell: up to one character's UTF-8 bytes (plus combining marks, cut
 * at 15 bytes) and its role.  The right half of a wide character has
 * text[0] == 0 and wide_tail set. */
struct cell {
	char text[16];
	unsigned char role;
	unsigned char wide_tail;
	unsigned sgr;              /* screen.h's packed SGR look, 0: none */
};

struct screen {
	int w, h;
	struct cell *cells;
	int cx, cy;
};

struct screen *screen_new(int w, int h)
{
	struct screen *s = xcalloc(1, sizeof *s);
	screen_resize(s, w, h);
	return s;
}

void screen_free(struct screen *s)
{
	if (!s)
		return;
	free(s->cells);
	free(s);
}

void screen_resize(struct screen *s, int w, int h)
{
	s->w = w < 1 ? 1 : w;
	s->h = h < 1 ? 1 : h;
	free(s->cells);
	s->cells = xcalloc((size_t)s->w * (size_t)s->h, sizeof *s->cells);
	screen_clear(s);
}

int screen_width(const struct screen *s)
{
	return s->w;
}

int screen_height(const struct screen *s)
{
	return s->h;
}

void screen_clear(struct screen *s)
{
	for (int i = 0; i < s->w * s->h; i++) {
		strcpy(s->cells[i].text, " ");
		s->cells[i].role = ROLE_NORMAL;
		s->cells[i].wide_tail = 0;
		s->cells[i].sgr = 0;
	}
	s->cx = s->cy = -1;
}

static struct cell *at(struct screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cells[y * s->w + x];
}

/* Decodes one UTF-8 character (already valid: sanitize_text made it so). */
static size_t utf8_next(const char *p, size_t len, wchar_t *wc)
{
	unsigned char c = (unsigned char)p[0];
	size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (n > len)
		n = len;
	unsigned v = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
	for (size_t i = 1; i < n; i++)
		v = (v << 6) | ((unsigned char)p[i] & 0x3f);
	*wc = (wchar_t)v;
	return n;
}

static int char_width(wchar_t wc)
{
	int w = wcwidth(wc);
	/* Unknown or control: sanitize_text left none of them, but be safe. */
	return w < 0 ? 1 : w;
}

/* Clears whatever wide character the cell at (x, y) is a part of. */
static void unwide(struct screen *s, int x, int y)
{
	struct cell *c = at(s, x, y);
	if (!c)
		return;
	if (c->wide_tail && x > 0) {
		strcpy(at(s, x - 1, y)->text, " ");
	} else {
		struct cell *n = at(s, x + 1, y);
		if (n && n->wide_tail) {
			strcpy(n->text, " ");
			n->wide_tail = 0;
		}
	}
}

int screen_text(struct screen *s, int x, int y, int maxw, enum role role, const char *text,
                size_t len)
{
	if (y < 0 || y >= s->h || x >= s->w)
		return 0;
	int limit = maxw < 0 || x + maxw > s->w ? s->w : x + maxw;
	struct buf clean = {0};
	/* Tabs and newlines would move the terminal's cursor: visible text. */
	sanitize_text(text, len, 0, &clean);
	struct buf vis = {0};
	for (size_t i = 0; i < clean.len; i++) {
		if (clean.data[i] == '\n')
			buf_adds(&vis, "^J");
		else if (clean.data[i] == '\t')
			buf_adds(&vis, "  ");
		else
			buf_addc(&vis, clean.data[i]);
	}
	int col = x;
	size_t i = 0;
	while (i < vis.len && col < limit) {
		wchar_t wc;
		size_t n = utf8_next(vis.data + i, vis.len - i, &wc);
		int cw = char_width(wc);
		if (cw == 0) {
			/* A combining mark joins the previous cell. */
			struct cell *prev = at(s, col - 1, y);
			if (prev && col > x && strlen(prev->text) + n < sizeof prev->text)
				strncat(prev->text, vis.data + i, n);
			i += n;
			continue;
		}
		if (col + cw > limit) {
			/* A wide character that does not fit: a space instead. */
			unwide(s, col, y);
			struct cell *c = at(s, col, y);
			strcpy(c->text, " ");
			c->role = (unsigned char)role;
			c->wide_tail = 0;
			c->sgr = 0;
			col++;
			break;
		}
		unwide(s, col, y);
		struct cell *c = at(s, col, y);
		memcpy(c->text, vis.data + i, n < sizeof c->text ? n : sizeof c->text - 1);
		c->text[n < sizeof c->text ? n : sizeof c->text - 1] = '\0';
		c->role = (unsigned char)role;
		c->wide_tail = 0;
		c->sgr = 0;
		if (cw == 2) {
			unwide(s, col + 1, y);
			struct cell *t = at(s, col + 1, y);
			t->text[0] = '\0';
			t->role = (unsigned char)role;
			t->wide_tail = 1;
			t->sgr = 0;
		}
		col += cw;
		i += n;
	}
	buf_free(&clean);
	buf_free(&vis);
	return col - x;
}

/* ---- SGR looks (log lines) ---- */

/* The xterm 256-colour index nearest to an RGB colour: the 6x6x6 cube or
 * the grey ramp. */
static int sgr_rgb_index(int r, int g, int b)
{
	static const int level[6] = { 0, 95, 135, 175, 215, 255 };
	int ci[3], v[3] = { r, g, b }, best, bestd, d;

	for (int k = 0; k < 3; k++) {
		ci[k] = 0;
		for (int l = 1; l < 6; l++)
			if (abs(level[l] - v[k]) < abs(level[ci[k]] - v[k]))
				ci[k] = l;
	}
	best = 16 + 36 * ci[0] + 6 * ci[1] + ci[2];
	bestd = 0;
	for (int k = 0; k < 3; k++)
		bestd += (level[ci[k]] - v[k]) * (level[ci[k]] - v[k]);
	for (int gi = 0; gi < 24; gi++) {
		int gv = 8 + 10 * gi;
		d = (gv - r) * (gv - r) + (gv - g) * (gv - g) + (gv - b) * (gv - b);
		if (d < bestd) {
			bestd = d;
			best = 232 + gi;
		}
	}
	return best;
}

#define SGR_FIELDS 32
#define SGR_SUBS 8

/* One ';'-separated field of an SGR sequence: its ':'-separated numbers
 * (an empty one is 0). */
struct sgr_field {
	int v[SGR_SUBS];
	int n;
};

static int sgr_clamp(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Applies the parameters p[0..n) of one SGR sequence to *fg, *bg and
 * *attrs.  Unknown parameters are ignored; a malformed colour ends the
 * sequence. */
static void sgr_apply(const char *p, size_t n, int *fg, int *bg, unsigned *attrs)
{
	struct sgr_field f[SGR_FIELDS];
	int nf = 0;
	size_t i = 0;

	memset(f, 0, sizeof(f));
	while (nf < SGR_FIELDS) {
		struct sgr_field *cur = &f[nf++];
		cur->n = 1;
		while (i < n && p[i] != ';') {
			if (p[i] == ':') {
				if (cur->n < SGR_SUBS)
					cur->n++;
			} else if (cur->v[cur->n - 1] < 100000) {
				cur->v[cur->n - 1] = cur->v[cur->n - 1] * 10 + (p[i] - '0');
			}
			i++;
		}
		if (i >= n)
			break;
		i++;   /* the ';' */
	}
	for (int k = 0; k < nf; k++) {
		int a = f[k].v[0];
		int *slot = a == 38 ? fg : bg;
		if (f[k].n > 1) {
			/* ITU form: 38:5:N, 38:2::R:G:B (or 38:2:R:G:B), 4:N. */
			const struct sgr_field *c = &f[k];
			if ((a == 38 || a == 48) && c->v[1] == 5 && c->n >= 3)
				*slot = sgr_clamp(c->v[2]);
			else if ((a == 38 || a == 48) && c->v[1] == 2 && c->n >= 5)
				*slot = sgr_rgb_index(sgr_clamp(c->v[c->n - 3]), sgr_clamp(c->v[c->n - 2]),
				                      sgr_clamp(c->v[c->n - 1]));
			else if (a == 4)
				*attrs = c->v[1] ? *attrs | SCREEN_SGR_UNDERLINE
				                 : *attrs & ~SCREEN_SGR_UNDERLINE;
			continue;
		}
		if (a == 38 || a == 48) {
			if (k + 2 < nf && f[k + 1].v[0] == 5) {
				*slot = sgr_clamp(f[k + 2].v[0]);
				k += 2;
			} else if (k + 4 < nf && f[k + 1].v[0] == 2) {
				*slot = sgr_rgb_index(sgr_clamp(f[k + 2].v[0]), sgr_clamp(f[k + 3].v[0]),
				                      sgr_clamp(f[k + 4].v[0]));
				k += 4;
			} else {
				return;
			}
			continue;
		}
		switch (a) {
		case 0: *fg = *bg = -1; *attrs = 0; break;
		case 1: *attrs |= SCREEN_SGR_BOLD; break;
		case 2: *attrs |= SCREEN_SGR_DIM; break;
		case 3: *attrs |= SCREEN_SGR_ITALIC; break;
		case 4: *attrs |= SCREEN_SGR_UNDERLINE; break;
		case 7: *attrs |= SCREEN_SGR_REVERSE; break;
		case 22: *attrs &= ~(SCREEN_SGR_BOLD | SCREEN_SGR_DIM); break;
		case 23: *attrs &= ~SCREEN_SGR_ITALIC; break;
		case 24: *attrs &= ~SCREEN_SGR_UNDERLINE; break;
		case 27: *attrs &= ~SCREEN_SGR_REVERSE; break;
		case 39: *fg = -1; break;
		case 49: *bg = -1; break;
		default:
			if (a >= 30 && a <= 37)
				*fg = a - 30;
			else if (a >= 40 && a <= 47)
				*bg = a - 40;
			else if (a >= 90 && a <= 97)
				*fg = a - 90 + 8;
			else if (a >= 100 && a <= 107)
				*bg = a - 100 + 8;
			/* 5, 6 (blink), 8 (conceal), 9 and the rest: not drawn. */
			break;
		}
	}
}

static unsigned sgr_pack(int fg, int bg, unsigned attrs)
{
	/* Text the colour of its background would be hidden. */
	if (fg >= 0 && fg == bg)
		bg = -1;
	return (unsigned)(fg + 1) | (unsigned)(bg + 1) << 9 | attrs;
}

int screen_text_sgr(struct screen *s, int x, int y, int maxw, enum role role, const char *text,
                    size_t len)
{
	struct buf clean = {0};
	int fg = -1, bg = -1, col = x;
	unsigned attrs = 0, look = 0;
	size_t i = 0, start = 0;

	if (y < 0 || y >= s->h || x >= s->w)
		return 0;
	/* Every ESC that keep_sgr leaves starts a 7-bit SGR: ESC [ [0-9;:]* m. */
	sanitize_text(text, len, 1, &clean);
	for (;;) {
		if (i < clean.len && clean.data[i] != 0x1b) {
			i++;
			continue;
		}
		if (i > start) {
			int room = maxw < 0 ? -1 : maxw - (col - x);
			int used = room == 0 ? 0 : screen_text(s, col, y, room, role, clean.data + start,
			                                       i - start);
			for (int k = 0; look && k < used; k++) {
				struct cell *c = at(s, col + k, y);
				if (c)
					c->sgr = look;
			}
			col += used;
		}
		if (i >= clean.len)
			break;
		size_t end = i + 2;
		while (end < clean.len && clean.data[end] != 'm')
			end++;
		sgr_apply(clean.data + i + 2, end - (i + 2), &fg, &bg, &attrs);
		look = fg < 0 && bg < 0 && !attrs ? 0 : sgr_pack(fg, bg, attrs);
		i = start = end + 1;
	}
	buf_free(&clean);
	return col - x;
}

/* ---- long lines ---- */

/* The widest row a line is drawn into: a wrapped line wider than this
 * shows this much (then "»" when marked). */
#define LINE_COLS_MAX 65536

struct screen *screen_line(struct screen *line, int width)
{
	if (width < 0)
		width = 0;
	if (width > LINE_COLS_MAX)
		width = LINE_COLS_MAX;
	int need = width + 1;
	if (!line || line->w < need || line->h != 1) {
		/* Grown by half again, so that a view's lines do not resize it
		 * one by one. */
		int w = line && line->w * 3 / 2 > need ? line->w * 3 / 2 : need;
		if (w < 256)
			w = 256;
		if (!line)
			line = xcalloc(1, sizeof *line);
		free(line->cells);
		line->w = w;
		line->h = 1;
		line->cells = xcalloc((size_t)w, sizeof *line->cells);
		line->cx = line->cy = -1;
	}
	for (int i = 0; i < need; i++) {
		strcpy(line->cells[i].text, " ");
		line->cells[i].role = ROLE_NORMAL;
		line->cells[i].wide_tail = 0;
		line->cells[i].sgr = 0;
	}
	return line;
}

/* A blank cell at (x, y) in role r. */
static void blank(struct screen *s, int x, int y, unsigned char r)
{
	struct cell *c = at(s, x, y);
	if (!c)
		return;
	unwide(s, x, y);
	strcpy(c->text, " ");
	c->role = r;
	c->wide_tail = 0;
	c->sgr = 0;
}

/* Copies the line's cells [from, to) to (x, y); half of a wide character
 * at either end becomes a blank in its role; columns from `to` up to
 * x + w take the role `fill`. */
static void copy_cells(struct screen *s, int x, int y, int w, const struct screen *line, int from,
                       int to, unsigned char fill)
{
	int k = 0;
	for (int i = from; i < to && k < w; i++, k++) {
		const struct cell *src = &line->cells[i];
		int head = i + 1 < line->w && line->cells[i + 1].wide_tail;
		if ((src->wide_tail && i == from) || (head && (i + 1 >= to || k + 1 >= w))) {
			blank(s, x + k, y, src->role);
			continue;
		}
		struct cell *c = at(s, x + k, y);
		if (!c)
			break;
		if (!src->wide_tail) {
			unwide(s, x + k, y);
		} else {
			/* The right half of what was there is gone too. */
			struct cell *nx = at(s, x + k + 1, y);
			if (nx && nx->wide_tail) {
				strcpy(nx->text, " ");
				nx->wide_tail = 0;
			}
		}
		*c = *src;
	}
	for (; k < w; k++)
		blank(s, x + k, y, fill);
}

/* A continuation mark at (x, y). */
static void mark(struct screen *s, int x, int y, const char *m)
{
	struct cell *c = at(s, x, y);
	if (!c)
		return;
	unwide(s, x, y);
	snprintf(c->text, sizeof c->text, "%s", m);
	c->role = ROLE_DIM;
	c->wide_tail = 0;
	c->sgr = 0;
}

int screen_window(struct screen *s, int x, int y, int w, int rows, const struct screen *line,
                  int width, int left, int flags)
{
	if (w < 1)
		w = 1;
	if (width > line->w)
		width = line->w;
	const struct cell *f = width < line->w ? &line->cells[width] : NULL;
	unsigned char fill = f ? f->role : ROLE_NORMAL;
	int marks = flags & SCREEN_TEXT_MARKS, more = flags & SCREEN_TEXT_MORE;
	if (!(flags & SCREEN_TEXT_WRAP)) {
		if (left < 0)
			left = 0;
		if (s && rows != 0) {
			int to = left + w < width ? left + w : width;
			copy_cells(s, x, y, w, line, left < width ? left : width, to, fill);
			if (marks && left > 0 && width > 0)
				mark(s, x, y, "\u00ab");
			if (marks && (width > left + w || more))
				mark(s, x + w - 1, y, "\u00bb");
		}
		return more && width <= left + w ? left + w + 1 : width;
	}
	int n = 0, start = 0;
	do {
		int end = start + w;
		if (end >= width) {
			end = width;
		} else {
			/* After the row's last blank, so that words stay whole;
			 * with none, at the row's end (a wide character that
			 * would be split starts the next row). */
			int b = end;
			while (b > start + 1 && strcmp(line->cells[b - 1].text, " ") != 0)
				b--;
			if (b > start + 1 && !line->cells[b - 1].wide_tail)
				end = b;
			else if (line->cells[end].wide_tail && end - 1 > start)
				end--;
		}
		if (s && n < rows) {
			copy_cells(s, x, y + n, w, line, start, end, fill);
			if (marks && more && end >= width)
				mark(s, x + w - 1, y + n, "\u00bb");
		}
		n++;
		start = end;
	} while (start < width);
	return n;
}

static struct screen *text_line;   /* screen_text_window's row */

/* Draws text whole (as far as a window of it needs) into text_line;
 * returns its width; *more when it did not all fit. */
static int text_into_line(int w, enum role role, const char *text, size_t len, int left,
                          int flags, int *more)
{
	int width = flags & SCREEN_TEXT_WRAP ? screen_textwidth(text, len) :
	            (left > 0 ? left : 0) + (w > 0 ? w : 1) + 1;
	text_line = screen_line(text_line, width);
	int used = flags & SCREEN_TEXT_SGR ? screen_text_sgr(text_line, 0, 0, -1, role, text, len) :
	           screen_text(text_line, 0, 0, -1, role, text, len);
	screen_fill(text_line, used, 0, 1, role);
	*more = (flags & SCREEN_TEXT_WRAP) && used < width;
	return used;
}

int screen_text_window(struct screen *s, int x, int y, int w, int rows, enum role role,
                       const char *text, size_t len, int left, int flags)
{
	int more;
	int used = text_into_line(w, role, text, len, left, flags, &more);
	return screen_window(s, x, y, w, rows, text_line, used, left,
	                     flags | (more ? SCREEN_TEXT_MORE : 0));
}

int screen_text_rows(const char *text, size_t len, int w, int flags)
{
	return screen_text_window(NULL, 0, 0, w, 0, ROLE_NORMAL, text, len, 0,
	                          flags | SCREEN_TEXT_WRAP);
}

unsigned screen_cell_sgr(const struct screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return 0;
	return s->cells[y * s->w + x].sgr;
}

/* "red", "bright-cyan", "color208": as theme files name colours. */
static void sgr_color_name(int c, struct buf *out)
{
	static const char *const names[8] = { "black", "red", "green", "yellow", "blue",
	                                       "magenta", "cyan", "white" };
	if (c < 8)
		buf_adds(out, names[c]);
	else if (c < 16)
		buf_printf(out, "bright-%s", names[c - 8]);
	else
		buf_printf(out, "color%d", c);
}

static void sgr_describe(unsigned v, struct buf *out)
{
	static const struct { unsigned bit; const char *name; } a[] = {
		{ SCREEN_SGR_BOLD, "bold" }, { SCREEN_SGR_DIM, "dim" },
		{ SCREEN_SGR_ITALIC, "italic" }, { SCREEN_SGR_UNDERLINE, "underline" },
		{ SCREEN_SGR_REVERSE, "reverse" },
	};
	if (SCREEN_SGR_FG(v) >= 0) {
		buf_adds(out, " fg=");
		sgr_color_name(SCREEN_SGR_FG(v), out);
	}
	if (SCREEN_SGR_BG(v) >= 0) {
		buf_adds(out, " bg=");
		sgr_color_name(SCREEN_SGR_BG(v), out);
	}
	for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++)
		if (v & a[k].bit)
			buf_printf(out, " %s", a[k].name);
}

int screen_str(struct screen *s, int x, int y, int maxw, enum role role, const char *text)
{
	return screen_text(s, x, y, maxw, role, text, strlen(text));
}

void screen_fill(struct screen *s, int x, int y, int w, enum role role)
{
	for (int i = 0; i < w; i++) {
		struct cell *c = at(s, x + i, y);
		if (!c)
			break;
		unwide(s, x + i, y);
		strcpy(c->text, " ");
		c->role = (unsigned char)role;
		c->wide_tail = 0;
		c->sgr = 0;
	}
}

void screen_paint(struct screen *s, int x, int y, int w, enum role role)
{
	for (int i = 0; i < w; i++) {
		struct cell *c = at(s, x + i, y);
		if (!c)
			break;
		c->role = (unsigned char)role;
		c->sgr = 0;
	}
}

void screen_cursor(struct screen *s, int x, int y)
{
	s->cx = x;
	s->cy = y;
}

void screen_get_cursor(const struct screen *s, int *x, int *y)
{
	*x = s->cx;
	*y = s->cy;
}

const char *screen_cell(const struct screen *s, int x, int y, enum role *role)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h) {
		if (role)
			*role = ROLE_NORMAL;
		return "";
	}
	const struct cell *c = &s->cells[y * s->w + x];
	if (role)
		*role = (enum role)c->role;
	return c->text;
}

void screen_dump(const struct screen *s, FILE *out, int roles)
{
	for (int y = 0; y < s->h; y++) {
		struct buf line = {0};
		for (int x = 0; x < s->w; x++)
			buf_adds(&line, s->cells[y * s->w + x].text);
		while (line.len && line.data[line.len - 1] == ' ')
			line.data[--line.len] = '\0';
		fprintf(out, "%s\n", line.data ? line.data : "");
		buf_free(&line);
	}
	if (!roles)
		return;
	fprintf(out, "--\n");
	for (int y = 0; y < s->h; y++) {
		int x = 0;
		while (x < s->w) {
			int r = s->cells[y * s->w + x].role;
			int end = x;
			while (end + 1 < s->w && s->cells[y * s->w + end + 1].role == r)
				end++;
			if (r != ROLE_NORMAL)
				fprintf(out, "%d:%d-%d %s\n", y, x, end, role_name((enum role)r));
			x = end + 1;
		}
	}
	for (int y = 0; y < s->h; y++) {
		int x = 0;
		while (x < s->w) {
			unsigned v = s->cells[y * s->w + x].sgr;
			int end = x;
			while (end + 1 < s->w && s->cells[y * s->w + end + 1].sgr == v)
				end++;
			if (v) {
				struct buf d = {0};
				sgr_describe(v, &d);
				fprintf(out, "%d:%d-%d sgr%s\n", y, x, end, d.data ? d.data : "");
				buf_free(&d);
			}
			x = end + 1;
		}
	}
}

int screen_textwidth(const char *text, size_t len)
{
	struct buf clean = {0};
	sanitize_text(text, len, 0, &clean);
	int w = 0;
	for (size_t i = 0; i < clean.len;) {
		wchar_t wc;
		size_t n = utf8_next(clean.data + i, clean.len - i, &wc);
		w += clean.data[i] == '\n' ? 2 : clean.data[i] == '\t' ? 2 : char_width(wc);
		i += n;
	}
	buf_free(&clean);
	return w;
}

int screen_strwidth(const char *s)
{
	return screen_textwidth(s, strlen(s));
}

size_t screen_fit(const char *text, size_t n, int w)
{
	size_t i = 0;
	while (i < n) {
		size_t j = i + 1;
		while (j < n && ((unsigned char)text[j] & 0xc0) == 0x80)
			j++;
		if (i && screen_textwidth(text, j) > w)
			break;
		i = j;
	}
	if (i < n) {
		size_t sp = i;
		while (sp > i / 2 && text[sp] != ' ')
			sp--;
		if (text[sp] == ' ')
			i = sp + 1;
	}
	return i;
}
