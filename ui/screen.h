/* screen: what the dashboard shows, as a grid of cells in memory.
 *
 * Views draw into a screen; the terminal (term.h) copies it to curses, and
 * script mode dumps it to a file (text, plus the role of each cell) for
 * golden-file tests.  Text written here is untrusted: control characters
 * show as visible text and escape sequences are removed (sanitize_text;
 * a log line's SGR colours become the cells' look, screen_text_sgr),
 * invalid UTF-8 becomes U+FFFD, and wide characters take their real width
 * (wcwidth), so nothing an agent prints reaches the terminal raw.  Views
 * that show what a reviewer approves render it with sanitize_visible
 * first, so that nothing is dropped. */
#ifndef PADDOCK_UI_SCREEN_H
#define PADDOCK_UI_SCREEN_H

#include <stddef.h>
#include <stdio.h>
#include "role.h"

struct screen;

/* A blank screen of w columns and h rows (at least 1 x 1). */
struct screen *screen_new(int w, int h);
void screen_free(struct screen *s);
/* Resizes and clears. */
void screen_resize(struct screen *s, int w, int h);
int screen_width(const struct screen *s);
int screen_height(const struct screen *s);
/* Every cell blank, role NORMAL; the cursor hidden. */
void screen_clear(struct screen *s);

/* Writes len bytes of text at column x of row y with role, using at most
 * maxw columns (< 0: up to the right edge).  Newlines and tabs are shown
 * as visible text too; callers split lines themselves.  A wide character
 * that does not fit is replaced by a space.  Returns the columns used. */
int screen_text(struct screen *s, int x, int y, int maxw, enum role role,
                const char *text, size_t len);
/* Like screen_text, for a log line: its SGR sequences (colours, bold,
 * dim, italic, underline, reverse; sanitize_text's keep_sgr) give the
 * cells after them a look, within this call; every other sequence is still
 * removed.  Concealed and blinking text are not drawn as such, and a
 * background equal to the foreground is dropped, so that no text is
 * hidden.  Returns the columns used. */
int screen_text_sgr(struct screen *s, int x, int y, int maxw, enum role role,
                    const char *text, size_t len);
/* Like screen_text with a NUL-terminated string. */
int screen_str(struct screen *s, int x, int y, int maxw, enum role role, const char *text);
/* Sets the role of w cells from (x, y), writing spaces where empty. */
void screen_fill(struct screen *s, int x, int y, int w, enum role role);
/* Changes the role of w cells from (x, y), keeping their text (the
 * role's look replaces any SGR look). */
void screen_paint(struct screen *s, int x, int y, int w, enum role role);
/* Where the terminal's cursor should be (x < 0: hidden). */
void screen_cursor(struct screen *s, int x, int y);
void screen_get_cursor(const struct screen *s, int *x, int *y);

/* The cell at (x, y): its UTF-8 text ("" for the right half of a wide
 * character) and role. */
const char *screen_cell(const struct screen *s, int x, int y, enum role *role);

/* The look an SGR sequence gave a cell, packed: 0 for none (the role's
 * look).  Colours are 0-255 (xterm's 256, 24-bit ones taken to the
 * nearest), -1 for the role's own. */
#define SCREEN_SGR_FG(v) ((int)((v) & 0x1ffu) - 1)
#define SCREEN_SGR_BG(v) ((int)(((v) >> 9) & 0x1ffu) - 1)
#define SCREEN_SGR_BOLD (1u << 18)
#define SCREEN_SGR_DIM (1u << 19)
#define SCREEN_SGR_ITALIC (1u << 20)
#define SCREEN_SGR_UNDERLINE (1u << 21)
#define SCREEN_SGR_REVERSE (1u << 22)
unsigned screen_cell_sgr(const struct screen *s, int x, int y);

/* ---- long lines: a window of a line, or the line wrapped ----
 *
 * A line wider than its view is cut (scrolled sideways by `left`
 * columns) or wrapped onto several rows.  screen_text_window does it for
 * text in one role; for a line drawn in several roles (a diff line with
 * word highlights, a log line with a search match), draw it whole into a
 * row of its own (screen_line), then show it with screen_window. */
#define SCREEN_TEXT_SGR   1   /* text holds SGR sequences: drawn as
                                 screen_text_sgr draws them (a log line) */
#define SCREEN_TEXT_MARKS 2   /* a cut line shows that it goes on: the dim
                                 mark "»" in the last column when there is
                                 text to the right, "«" in the first when
                                 scrolled right (left > 0) and the line has
                                 text to the left */
#define SCREEN_TEXT_WRAP  4   /* wrapped onto as many rows as it takes, w
                                 columns each (left is ignored): after the
                                 row's last blank, so that words stay
                                 whole, else at its end (a wide character
                                 that would be split starts the next row) */
#define SCREEN_TEXT_MORE  8   /* the text is only the start of the line (the
                                 caller read no more): it goes on past its
                                 end (the "»" mark where it ends) */

/* Draws text at column x of row y, w columns wide, as screen_text does (or
 * screen_text_sgr with SCREEN_TEXT_SGR): cut, columns [left, left + w) of
 * the text; with SCREEN_TEXT_WRAP, onto rows y .. y + rows - 1 at most.
 * Columns past the text's end are blank in `role`.  Returns, cut: the
 * text's width as far as it was drawn (more than left + w: it goes on to
 * the right of the window); wrapped: the rows the whole text takes at
 * width w, drawn or not (s NULL or rows 0: only counts).  Example, a log
 * line scrolled sideways:
 *   screen_text_window(s, 0, y, w, 1, ROLE_NORMAL, line, len, v->left,
 *                      SCREEN_TEXT_SGR | SCREEN_TEXT_MARKS); */
int screen_text_window(struct screen *s, int x, int y, int w, int rows, enum role role,
                       const char *text, size_t len, int left, int flags);
/* The rows text takes wrapped at width w (at least 1). */
int screen_text_rows(const char *text, size_t len, int w, int flags);

/* A row to draw one line into whole: `line` (NULL the first time, then
 * what this returned: the caller keeps it and frees it with screen_free)
 * made at least `width` + 1 columns wide, one row, and its first
 * `width` + 1 columns cleared.  Draw the line at (0, 0) and keep the
 * columns used. */
struct screen *screen_line(struct screen *line, int width);
/* Shows the line drawn in row 0 of `line` (`width` columns of it, as the
 * drawing returned) on s as screen_text_window does (SCREEN_TEXT_SGR has
 * no effect here).  Columns past the line's end take the role of line's
 * cell at column `width` (fill it to colour a row to the edge).  Returns
 * as screen_text_window. */
int screen_window(struct screen *s, int x, int y, int w, int rows, const struct screen *line,
                  int width, int left, int flags);

/* Dumps the screen: each row's text with trailing blanks removed; then,
 * when roles is set, a line "--" and for each row the runs of cells whose
 * role is not NORMAL as "ROW:FROM-TO ROLE" (columns 0-based, inclusive),
 * then the runs with an SGR look as "ROW:FROM-TO sgr fg=red bg=color236
 * bold" (colours named as in theme files). */
void screen_dump(const struct screen *s, FILE *out, int roles);

/* The bytes of the first row when n bytes of text are wrapped at w
 * columns: at least one character, broken after a space in the row's
 * second half when there is one, else at a character. */
size_t screen_fit(const char *text, size_t n, int w);
/* Display width of UTF-8 text as screen_text would draw it. */
int screen_textwidth(const char *text, size_t len);
/* The same for a NUL-terminated string. */
int screen_strwidth(const char *s);

#endif
