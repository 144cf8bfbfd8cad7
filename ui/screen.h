/* screen: what the dashboard shows, as a grid of cells in memory.
 *
 * Views draw into a screen; the terminal (term.h) copies it to curses, and
 * script mode dumps it to a file (text, plus the role of each cell) for
 * golden-file tests.  Text written here is untrusted: every control
 * character or escape sequence is shown as visible text (sanitize.h),
 * invalid UTF-8 becomes U+FFFD, and wide characters take their real width
 * (wcwidth), so nothing an agent prints reaches the terminal raw. */
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
/* Like screen_text with a NUL-terminated string. */
int screen_str(struct screen *s, int x, int y, int maxw, enum role role, const char *text);
/* Sets the role of w cells from (x, y), writing spaces where empty. */
void screen_fill(struct screen *s, int x, int y, int w, enum role role);
/* Changes the role of w cells from (x, y), keeping their text. */
void screen_paint(struct screen *s, int x, int y, int w, enum role role);
/* Where the terminal's cursor should be (x < 0: hidden). */
void screen_cursor(struct screen *s, int x, int y);
void screen_get_cursor(const struct screen *s, int *x, int *y);

/* The cell at (x, y): its UTF-8 text ("" for the right half of a wide
 * character) and role. */
const char *screen_cell(const struct screen *s, int x, int y, enum role *role);

/* Dumps the screen: each row's text with trailing blanks removed; then,
 * when roles is set, a line "--" and for each row the runs of cells whose
 * role is not NORMAL as "ROW:FROM-TO ROLE" (columns 0-based, inclusive). */
void screen_dump(const struct screen *s, FILE *out, int roles);

/* Display width of UTF-8 text as screen_text would draw it. */
int screen_textwidth(const char *text, size_t len);

#endif
