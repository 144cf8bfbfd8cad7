#include "autoconfig.h"
#include "term.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "i18n.h"
#include "keymap.h"
#include "theme.h"

static int open_;
static int saved_stderr = -1;
static FILE *errlog;
static MEVENT last_mouse;
static int key_cleft = -1, key_cright = -1;   /* terminfo's kLFT5, kRIT5 */

static void restore_stderr(void)
{
	if (saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	if (errlog) {
		/* What was written meanwhile, now that it can be read. */
		rewind(errlog);
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, errlog)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(errlog);
		errlog = NULL;
	}
}

void term_close(void)
{
	if (!open_)
		return;
	open_ = 0;
	endwin();
	restore_stderr();
}

static void on_fatal(int sig)
{
	/* The terminal first, so that the crash report can be read. */
	if (open_) {
		open_ = 0;
		endwin();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int term_open(char *msg, size_t msglen)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(msg, msglen, "%s", _("the dashboard needs a terminal; use the CLI verbs "
		                              "(paddock list, show, ...) in scripts"));
		return -1;
	}
	/* ncurses waits this long after ESC for the rest of a sequence. */
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	if (!newterm(NULL, stdout, stdin)) {
		snprintf(msg, msglen, _("cannot start the terminal (TERM=%s)"),
		         getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	open_ = 1;
	atexit(term_close);
	signal(SIGSEGV, on_fatal);
	signal(SIGABRT, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGFPE, on_fatal);
	signal(SIGILL, on_fatal);
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	/* Ctrl-Left and Ctrl-Right (word motions) have no KEY_ constant. */
	const char *kl = tigetstr("kLFT5"), *kr = tigetstr("kRIT5");
	if (kl && kl != (char *)-1)
		key_cleft = key_defined(kl);
	if (kr && kr != (char *)-1)
		key_cright = key_defined(kr);
	/* Messages from the engine would scribble over the screen. */
	errlog = tmpfile();
	if (errlog) {
		fflush(stderr);
		saved_stderr = dup(STDERR_FILENO);
		dup2(fileno(errlog), STDERR_FILENO);
	}
	return 0;
}

void term_size(int *w, int *h)
{
	getmaxyx(stdscr, *h, *w);
}

void term_draw(const struct screen *s, struct theme *t)
{
	int w = screen_width(s), h = screen_height(s);
	for (int y = 0; y < h; y++) {
		move(y, 0);
		for (int x = 0; x < w; x++) {
			enum role r;
			const char *text = screen_cell(s, x, y, &r);
			if (!*text)
				continue;  /* the right half of a wide character */
			unsigned sgr = screen_cell_sgr(s, x, y);
			int a = t && sgr ? theme_sgr_attr(t, r, SCREEN_SGR_FG(sgr), SCREEN_SGR_BG(sgr),
			                                  sgr)
			      : t ? theme_attr(t, r) : (r == ROLE_CURSOR || r == ROLE_STATUSBAR ?
			                                (int)A_REVERSE : 0);
			attrset(a);
			/* The bottom right cell would scroll some terminals. */
			if (y == h - 1 && x == w - 1)
				insstr(text);
			else
				addstr(text);
		}
	}
	attrset(0);
	int cx, cy;
	screen_get_cursor(s, &cx, &cy);
	if (cx >= 0) {
		curs_set(1);
		move(cy, cx);
	} else {
		curs_set(0);
	}
	refresh();
}

int term_getkey(void)
{
	wint_t ch;
	int rc = get_wch(&ch);
	if (rc == ERR)
		return -1;
	if (rc == KEY_CODE_YES) {
		switch (ch) {
		case KEY_UP: return KEYC_UP;
		case KEY_DOWN: return KEYC_DOWN;
		case KEY_LEFT: return KEYC_LEFT;
		case KEY_RIGHT: return KEYC_RIGHT;
		case KEY_PPAGE: return KEYC_PGUP;
		case KEY_NPAGE: return KEYC_PGDN;
		case KEY_HOME: return KEYC_HOME;
		case KEY_END: return KEYC_END;
		case KEY_ENTER: return KEYC_ENTER;
		case KEY_BACKSPACE: return KEYC_BACKSPACE;
		case KEY_DC: return KEYC_DELETE;
		case KEY_RESIZE: return KEYC_RESIZE;
		case KEY_MOUSE:
			if (getmouse(&last_mouse) == OK)
				return KEYC_MOUSE;
			return -1;
		default:
			if (key_cleft > 0 && (int)ch == key_cleft)
				return KEYC_CLEFT;
			if (key_cright > 0 && (int)ch == key_cright)
				return KEYC_CRIGHT;
			if (ch >= KEY_F(1) && ch <= KEY_F(12))
				return KEYC_F1 + (int)(ch - KEY_F(1));
			return -1;
		}
	}
	switch (ch) {
	case '\r': case '\n': return KEYC_ENTER;
	case 27: {
		/* Alt-x arrives as ESC x at once; a lone Esc has nothing
		 * after it (ncurses waited ESCDELAY for a sequence). */
		wint_t next;
		int r2 = get_wch(&next);
		if (r2 == OK && next >= 'a' && next <= 'z')
			return KEYC_META + (int)next;
		if (r2 == KEY_CODE_YES)
			ungetch((int)next);
		else if (r2 == OK)
			unget_wch(next);
		return KEYC_ESC;
	}
	case '\t': return KEYC_TAB;
	case 127: case 8: return KEYC_BACKSPACE;
	default:
		if (ch >= 1 && ch <= 26)
			return KEYC_CTRL + 'a' + (int)ch - 1;
		return (int)ch;
	}
}

void term_mouse(int *x, int *y, int *wheel)
{
	*x = last_mouse.x;
	*y = last_mouse.y;
	*wheel = last_mouse.bstate & BUTTON4_PRESSED ? -1 :
	         last_mouse.bstate & BUTTON5_PRESSED ? 1 : 0;
}

void term_suspend(void)
{
	if (open_)
		endwin();
}

void term_resume(void)
{
	if (open_) {
		clearok(curscr, TRUE);
		refresh();
	}
}

void term_repaint(void)
{
	if (open_)
		clearok(curscr, TRUE);
}

int term_clipboard(const char *b64)
{
	if (!open_)
		return -1;
	/* Terminals that take OSC 52 say so in terminfo (Ms, as tmux reads
	 * it), or are of a family known to; others might show it. */
	const char *ms = tigetstr("Ms");
	const char *t = getenv("TERM");
	int known = ms && ms != (char *)-1;
	static const char *const families[] = { "xterm", "tmux", "screen", "alacritty", "foot",
	                                        "kitty", "wezterm", "rxvt", NULL };
	for (int i = 0; !known && t && families[i]; i++)
		known = !strncmp(t, families[i], strlen(families[i]));
	if (!known)
		return -1;
	fflush(stdout);
	/* Inside tmux or screen the sequence would be eaten unless passed
	 * through; tmux takes OSC 52 itself (set-clipboard). */
	fprintf(stdout, "\033]52;c;%s\a", b64);
	fflush(stdout);
	return 0;
}

void term_bell(void)
{
	beep();
}
