/* term: the real terminal, through ncurses (the only curses user besides
 * theme.c).  The terminal is always restored: on exit, on a fatal signal
 * and before any message printed on the way out; what is written to
 * stderr while the dashboard runs is kept and printed after it closes. */
#ifndef PADDOCK_UI_TERM_H
#define PADDOCK_UI_TERM_H

#include <stddef.h>
#include "screen.h"

struct theme;

int term_open(char *msg, size_t msglen);
/* Restores the terminal; safe to call twice and from a signal handler's
 * path. */
void term_close(void);
void term_size(int *w, int *h);
/* Copies the screen to the terminal with the theme's attributes. */
void term_draw(const struct screen *s, struct theme *t);
/* The next key (keymap.h codes), or -1 when none is waiting. */
int term_getkey(void);
/* After KEYC_MOUSE: where, and the wheel (-1 up, 1 down, 0 a click). */
void term_mouse(int *x, int *y, int *wheel);
/* Gives the terminal back for a while (an editor runs) and takes it
 * again. */
void term_suspend(void);
void term_resume(void);
/* Repaints everything on the next draw (after a theme switch). */
void term_repaint(void);
/* Sets the terminal's clipboard to base64 text with OSC 52, where the
 * terminal is known to take it; -1 when not sent. */
int term_clipboard(const char *b64);
/* Rings the bell. */
void term_bell(void);

#endif
