/* theme: how each role (role.h) looks, read from a theme file.
 *
 * A theme file is text, one line per role, '#' starts a comment:
 *
 *     ROLE  FG  BG  [ATTR...]
 *
 * FG and BG are colour specs: alternatives separated by '|', tried left
 * to right; the first the terminal can show wins.  An alternative is
 * #rrggbb (needs 24-bit colour), colorN (0-255: needs 8, 16 or 256
 * colours), one of the 16 ANSI names (black red green yellow blue magenta
 * cyan white, bright-black ... bright-white; the bright ones need 16), or
 * default (the normal role's colour; the terminal's own for normal).  When
 * no alternative fits, the last one is approximated (nearest colour; a
 * bright foreground becomes the normal colour plus bold).  ATTR: bold dim
 * underline reverse italic standout.  A role the file does not name looks
 * like normal.  Without colours (NO_COLOR set and non-empty, or a
 * terminal with none) only the attributes are drawn.  The escaped role
 * (marks for hidden bytes) is always underlined unless its line says
 * reverse, whatever the file says, so that a mark never looks like text. 
 *
 * Themes are found by name: NAME.theme in the user's directory
 * ($XDG_CONFIG_HOME/paddock/themes, else ~/.config/paddock/themes), then
 * $PADDOCK_THEMES_DIR (tests, uninstalled builds), then PKGDATADIR; "dark"
 * is also compiled in, so the program works uninstalled.
 *
 * State: a struct theme owns its parsed lines and a cache of curses
 * attributes; the caller owns the struct (theme_free).  Colour pairs are
 * the terminal's, so this module owns them in one static table shared by
 * every theme: theme_attr allocates them lazily (one pair per distinct
 * fg/bg), starts colours on first use (start_color, and
 * assume_default_colors with normal's colours), and theme_reset_pairs
 * forgets them all (switching theme).  Only theme_attr, theme_sgr_attr
 * and theme_reset_pairs touch curses; everything else is pure, for tests
 * and script mode. */
#ifndef PADDOCK_UI_THEME_H
#define PADDOCK_UI_THEME_H

#include <stddef.h>
#include "role.h"

struct theme;

/* What the terminal can show, weakest first. */
enum theme_level {
	THEME_MONO,            /* attributes only */
	THEME_8,
	THEME_16,
	THEME_256,
	THEME_DIRECT           /* 24-bit (ncurses direct colour) */
};

/* A colour resolved for one level. */
struct theme_color {
	enum { THEME_DEFAULT, THEME_INDEX, THEME_RGB } kind;
	int value;             /* INDEX: 0-255; RGB: 0xrrggbb */
	int bold;              /* a bright colour shown as normal + bold */
};

/* A role's look at one level: curses attributes (A_BOLD, ...) without
 * the colour pair. */
struct theme_style {
	struct theme_color fg, bg;
	int attrs;
};

/* The level for a terminal: no_color is $NO_COLOR (NULL if unset),
 * has_colors and colors come from curses (COLORS after start_color), rgb
 * is tigetflag("RGB") > 0.  24-bit colour needs ncurses direct colour
 * (colors >= 2^24, a terminfo entry like xterm-direct): COLORTERM alone
 * cannot make curses emit it. */
enum theme_level theme_level_for(const char *no_color, int has_colors, int colors, int rgb);

/* Resolves a colour spec ("#ff8700|color208|bright-red|red") for level.
 * Returns 0, or -1 if spec is not valid (out untouched). */
int theme_resolve(const char *spec, enum theme_level level, struct theme_color *out);

/* Parses theme text; file names it in messages ("file:line: ...").
 * NULL on error with the message in msg. */
struct theme *theme_parse(const char *name, const char *file, const char *text,
                          char *msg, size_t msglen);
/* Finds and parses NAME.theme (see above).  NULL on error (unknown name,
 * unreadable or bad file) with the message in msg. */
struct theme *theme_load(const char *name, char *msg, size_t msglen);
void theme_free(struct theme *t);
/* The name it was loaded as; the file it came from ("(built-in)" for the
 * compiled-in copy). */
const char *theme_name(const struct theme *t);
const char *theme_file(const struct theme *t);

/* The directory of user themes (malloc'd), or NULL without a home. */
char *theme_user_dir(void);
/* The compiled-in text of a theme, or NULL (tests compare it with the
 * file). */
const char *theme_builtin(const char *name);
/* Every theme name that theme_load finds, sorted, NULL-terminated;
 * free with theme_names_free. */
char **theme_names(void);
void theme_names_free(char **names);

/* 1 if the file names role r (else r looks like normal). */
int theme_has_role(const struct theme *t, enum role r);
/* Role r's look at level (pure: no curses calls). */
void theme_style(const struct theme *t, enum role r, enum theme_level level,
                 struct theme_style *out);

/* Curses attributes for drawing role r: COLOR_PAIR(n) | A_BOLD | ...
 * Needs curses started (initscr or newterm). */
int theme_attr(struct theme *t, enum role r);
/* Curses attributes for a cell of role r with an SGR look from a log line
 * (screen.h: fg and bg 0-255 or -1 for the role's own, attrs its
 * SCREEN_SGR_* bits): the colours fitted to the terminal as theme colours
 * are, the role's attributes plus the SGR ones.  Without colours only the
 * attributes.  Needs curses started. */
int theme_sgr_attr(struct theme *t, enum role r, int fg, int bg, unsigned attrs);
/* Forgets every colour pair and the level; the next theme_attr starts
 * over.  Call when switching theme, then redraw everything. */
void theme_reset_pairs(void);
/* The level theme_attr uses (after its first call). */
enum theme_level theme_current_level(void);

#endif
