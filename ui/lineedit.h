/* lineedit: the text and cursor of the dashboard's line editor (prompts,
 * searches, notes), with the motions and kills of readline: Left/Right,
 * Home/End, <C-a>/<C-e> (single line), <C-u>, <C-w>, <C-k>, word motions
 * (<M-b>/<M-f>, <C-Left>/<C-Right>), Up/Down across lines of a text of
 * several lines.  It knows nothing of the screen but the width of text;
 * what the keys mean beyond editing (Enter, Esc, Tab) is the caller's. */
#ifndef PADDOCK_UI_LINEEDIT_H
#define PADDOCK_UI_LINEEDIT_H

#include <stddef.h>
#include "buf.h"

struct lineedit {
	struct buf text;           /* UTF-8, NUL-terminated when not empty */
	size_t pos;                /* the cursor: a byte offset on a character */
	int multiline;             /* Enter adds a line; Up/Down move across */
	int goal;                  /* the column Up/Down keep, or -1 */
};

/* Starts with `initial` (may be NULL), the cursor at its end. */
void lineedit_init(struct lineedit *e, const char *initial, int multiline);
void lineedit_free(struct lineedit *e);
/* Replaces the text; the cursor at its end. */
void lineedit_set(struct lineedit *e, const char *text);
/* The text ("" when empty); owned by e. */
const char *lineedit_text(const struct lineedit *e);
/* Inserts n bytes at the cursor and moves past them. */
void lineedit_insert(struct lineedit *e, const char *s, size_t n);
/* Applies an editing key (keymap.h codes): 1 when it was one, 0 when the
 * caller decides what it means. */
int lineedit_key(struct lineedit *e, int key);
/* The cursor's line (from 0) and display column in that line. */
void lineedit_cursor(const struct lineedit *e, int *line, int *col);

#endif
