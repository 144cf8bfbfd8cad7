/* test-lineedit: the line editor's motions and kills, as a person types
 * them at a prompt or in notes. */
#include "autoconfig.h"
#include "lineedit.h"

#include <locale.h>
#include <string.h>
#include "keymap.h"
#include "tap.h"

static void type(struct lineedit *e, const char *s)
{
	lineedit_insert(e, s, strlen(s));
}

static void keys(struct lineedit *e, const int *k)
{
	for (; *k; k++)
		lineedit_key(e, *k);
}

int main(void)
{
	struct lineedit e;
	int line, col;

	/* Widths as the dashboard measures them (it sets the locale). */
	setlocale(LC_ALL, "C.UTF-8");

	lineedit_init(&e, "message one two three", 0);
	keys(&e, (int[]){ KEYC_CTRL + 'w', 0 });
	is_str(lineedit_text(&e), "message one two ", "<C-w> deletes the word before the cursor");
	keys(&e, (int[]){ KEYC_META + 'b', KEYC_CTRL + 'k', 0 });
	is_str(lineedit_text(&e), "message one ", "<M-b> then <C-k> deletes to the end");
	keys(&e, (int[]){ KEYC_CTRL + 'a', KEYC_META + 'f', 0 });
	is_int((int)e.pos, 7, "<C-a> then <M-f>: after the first word");
	keys(&e, (int[]){ KEYC_CTRL + 'u', 0 });
	is_str(lineedit_text(&e), " one ", "<C-u> deletes to the start of the line");
	keys(&e, (int[]){ KEYC_CTRL + 'e', 'x', KEYC_HOME, KEYC_DELETE, KEYC_END, KEYC_BACKSPACE, 0 });
	is_str(lineedit_text(&e), "one ", "<C-e>, <Home>, <Delete>, <End>, <Backspace>");
	ok(lineedit_key(&e, KEYC_ENTER) == 0, "Enter on one line is the caller's");
	lineedit_free(&e);

	/* UTF-8 and wide characters move as one. */
	lineedit_init(&e, "a日本b", 0);
	keys(&e, (int[]){ KEYC_LEFT, KEYC_LEFT, KEYC_BACKSPACE, 0 });
	is_str(lineedit_text(&e), "a本b", "<Left> and <Backspace> take a whole character");
	lineedit_cursor(&e, &line, &col);
	is_int(col, 1, "the cursor's column counts display width");
	keys(&e, (int[]){ KEYC_RIGHT, 0 });
	lineedit_cursor(&e, &line, &col);
	is_int(col, 3, "past a wide character: two columns");
	keys(&e, (int[]){ 0xe9, 0 });
	is_str(lineedit_text(&e), "a本éb", "a typed character goes in at the cursor");
	type(&e, "--");
	is_str(lineedit_text(&e), "a本é--b", "text inserted at the cursor");
	lineedit_free(&e);

	/* Notes: Up and Down keep the column; <C-e> is the caller's. */
	lineedit_init(&e, "first line\nsecond\nthird line here", 1);
	keys(&e, (int[]){ KEYC_UP, 0 });
	lineedit_cursor(&e, &line, &col);
	ok(line == 1 && col == 6, "Up from the end of a long line: the end of a shorter one (%d:%d)",
	   line, col);
	keys(&e, (int[]){ KEYC_UP, 0 });
	lineedit_cursor(&e, &line, &col);
	ok(line == 0 && col == 10, "Up again keeps the goal column as far as it goes (%d:%d)",
	   line, col);
	keys(&e, (int[]){ KEYC_DOWN, KEYC_DOWN, 0 });
	lineedit_cursor(&e, &line, &col);
	ok(line == 2 && col == 15, "Down twice: back to the goal column (%d:%d)", line, col);
	ok(lineedit_key(&e, KEYC_CTRL + 'e') == 0, "<C-e> in notes is left to the caller ($EDITOR)");
	keys(&e, (int[]){ KEYC_CTRL + 'a', KEYC_ENTER, 0 });
	is_str(lineedit_text(&e), "first line\nsecond\n\nthird line here", "Enter in notes adds a line");
	keys(&e, (int[]){ KEYC_CTRL + 'u', KEYC_BACKSPACE, 0 });
	is_str(lineedit_text(&e), "first line\nsecond\nthird line here",
	       "<C-u> at the start of a line deletes nothing; <Backspace> joins the lines");
	lineedit_set(&e, "");
	keys(&e, (int[]){ KEYC_UP, KEYC_DOWN, KEYC_BACKSPACE, KEYC_CTRL + 'w', KEYC_DELETE, 0 });
	is_str(lineedit_text(&e), "", "motions and kills on empty text do nothing");
	lineedit_free(&e);
	return tap_done();
}
