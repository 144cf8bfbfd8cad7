#include "autoconfig.h"
#include "lineedit.h"

#include <string.h>
#include "keymap.h"
#include "screen.h"

void lineedit_init(struct lineedit *e, const char *initial, int multiline)
{
	memset(e, 0, sizeof *e);
	e->multiline = multiline;
	e->goal = -1;
	if (initial)
		lineedit_set(e, initial);
}

void lineedit_free(struct lineedit *e)
{
	buf_free(&e->text);
}

void lineedit_set(struct lineedit *e, const char *text)
{
	buf_reset(&e->text);
	buf_adds(&e->text, text);
	e->pos = e->text.len;
	e->goal = -1;
}

const char *lineedit_text(const struct lineedit *e)
{
	return e->text.data ? e->text.data : "";
}

static int cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

static size_t next_char(const struct lineedit *e, size_t i)
{
	if (i < e->text.len)
		i++;
	while (i < e->text.len && cont(e->text.data[i]))
		i++;
	return i;
}

static size_t prev_char(const struct lineedit *e, size_t i)
{
	if (i > 0)
		i--;
	while (i > 0 && cont(e->text.data[i]))
		i--;
	return i;
}

static size_t line_start(const struct lineedit *e, size_t i)
{
	while (i > 0 && e->text.data[i - 1] != '\n')
		i--;
	return i;
}

static size_t line_end(const struct lineedit *e, size_t i)
{
	while (i < e->text.len && e->text.data[i] != '\n')
		i++;
	return i;
}

static int is_word(char c)
{
	return (unsigned char)c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* Back over blanks, then over a word (readline's backward-word). */
static size_t word_back(const struct lineedit *e, size_t i)
{
	while (i > 0 && !is_word(e->text.data[i - 1]))
		i--;
	while (i > 0 && is_word(e->text.data[i - 1]))
		i--;
	return i;
}

static size_t word_fwd(const struct lineedit *e, size_t i)
{
	while (i < e->text.len && !is_word(e->text.data[i]))
		i++;
	while (i < e->text.len && is_word(e->text.data[i]))
		i++;
	return i;
}

/* Removes bytes [a, b); the cursor goes to a. */
static void cut(struct lineedit *e, size_t a, size_t b)
{
	if (b <= a)
		return;
	memmove(e->text.data + a, e->text.data + b, e->text.len - b + 1);
	e->text.len -= b - a;
	e->pos = a;
}

void lineedit_insert(struct lineedit *e, const char *s, size_t n)
{
	if (!n)
		return;
	buf_add(&e->text, s, n);    /* room, and the NUL */
	memmove(e->text.data + e->pos + n, e->text.data + e->pos, e->text.len - n - e->pos);
	memcpy(e->text.data + e->pos, s, n);
	e->text.data[e->text.len] = '\0';
	e->pos += n;
}

static int col_of(const struct lineedit *e, size_t i)
{
	size_t ls = line_start(e, i);
	return screen_textwidth(e->text.data + ls, i - ls);
}

/* The offset in the line starting at ls nearest to column col. */
static size_t at_col(const struct lineedit *e, size_t ls, int col)
{
	size_t le = line_end(e, ls), i = ls;
	while (i < le) {
		size_t n = next_char(e, i);
		if (screen_textwidth(e->text.data + ls, n - ls) > col)
			break;
		i = n;
	}
	return i;
}

/* Up (-1) or Down (1) a line, keeping the column; 0 at the first or
 * last line. */
static int vertical(struct lineedit *e, int dir)
{
	size_t ls = line_start(e, e->pos);
	if (e->goal < 0)
		e->goal = col_of(e, e->pos);
	if (dir < 0) {
		if (ls == 0)
			return 0;
		e->pos = at_col(e, line_start(e, ls - 1), e->goal);
	} else {
		size_t le = line_end(e, e->pos);
		if (le >= e->text.len)
			return 0;
		e->pos = at_col(e, le + 1, e->goal);
	}
	return 1;
}

static int motion(struct lineedit *e, int key)
{
	switch (key) {
	case KEYC_LEFT: e->pos = prev_char(e, e->pos); return 1;
	case KEYC_RIGHT: e->pos = next_char(e, e->pos); return 1;
	case KEYC_HOME: e->pos = line_start(e, e->pos); return 1;
	case KEYC_END: e->pos = line_end(e, e->pos); return 1;
	case KEYC_META + 'b': case KEYC_CLEFT: e->pos = word_back(e, e->pos); return 1;
	case KEYC_META + 'f': case KEYC_CRIGHT: e->pos = word_fwd(e, e->pos); return 1;
	case KEYC_CTRL + 'a': e->pos = line_start(e, e->pos); return 1;
	case KEYC_CTRL + 'e':
		/* In notes <C-e> opens $EDITOR (the caller's). */
		if (e->multiline)
			return 0;
		e->pos = line_end(e, e->pos);
		return 1;
	default: return 0;
	}
}

int lineedit_key(struct lineedit *e, int key)
{
	if ((key == KEYC_UP || key == KEYC_DOWN) && e->multiline)
		return vertical(e, key == KEYC_UP ? -1 : 1) || 1;
	int goal = e->goal;
	e->goal = -1;
	if (motion(e, key))
		return 1;
	switch (key) {
	case KEYC_BACKSPACE: cut(e, prev_char(e, e->pos), e->pos); return 1;
	case KEYC_DELETE: cut(e, e->pos, next_char(e, e->pos)); return 1;
	case KEYC_CTRL + 'u': cut(e, line_start(e, e->pos), e->pos); return 1;
	case KEYC_CTRL + 'k': cut(e, e->pos, line_end(e, e->pos)); return 1;
	case KEYC_CTRL + 'w': cut(e, word_back(e, e->pos), e->pos); return 1;
	case KEYC_META + 'd': cut(e, e->pos, word_fwd(e, e->pos)); return 1;
	case KEYC_ENTER:
		if (!e->multiline)
			break;
		lineedit_insert(e, "\n", 1);
		return 1;
	default:
		if (key >= 32 && key < KEY_CODE_BASE && key != 127) {
			char tmp[8];
			keymap_key_name(key, tmp, sizeof tmp);
			lineedit_insert(e, key == ' ' ? " " : tmp, key == ' ' ? 1 : strlen(tmp));
			return 1;
		}
	}
	e->goal = goal;
	return 0;
}

void lineedit_cursor(const struct lineedit *e, int *line, int *col)
{
	int n = 0;
	for (size_t i = 0; i < e->pos; i++)
		n += e->text.data[i] == '\n';
	*line = n;
	*col = e->pos ? col_of(e, e->pos) : 0;
}
