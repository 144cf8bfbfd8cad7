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
			col++;
			break;
		}
		unwide(s, col, y);
		struct cell *c = at(s, col, y);
		memcpy(c->text, vis.data + i, n < sizeof c->text ? n : sizeof c->text - 1);
		c->text[n < sizeof c->text ? n : sizeof c->text - 1] = '\0';
		c->role = (unsigned char)role;
		c->wide_tail = 0;
		if (cw == 2) {
			unwide(s, col + 1, y);
			struct cell *t = at(s, col + 1, y);
			t->text[0] = '\0';
			t->role = (unsigned char)role;
			t->wide_tail = 1;
		}
		col += cw;
		i += n;
	}
	buf_free(&clean);
	buf_free(&vis);
	return col - x;
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
	}
}

void screen_paint(struct screen *s, int x, int y, int w, enum role role)
{
	for (int i = 0; i < w; i++) {
		struct cell *c = at(s, x + i, y);
		if (!c)
			break;
		c->role = (unsigned char)role;
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
