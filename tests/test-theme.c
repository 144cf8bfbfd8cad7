/* test-theme: the shipped theme files, colour resolution at each terminal
 * level, error messages with file:line, NO_COLOR, where themes are found,
 * and the colour pairs curses gets. */
#include "autoconfig.h"
#include "theme.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "tap.h"
#include "testlib.h"

static const char *const shipped[] = { "dark", "light", "high-contrast", "mono" };
#define NSHIPPED 4

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s && *s ? s : ".";
}

/* ---- the shipped files ---------------------------------------------- */

static struct theme *load_shipped(const char *name)
{
	char *path = xasprintf("%s/themes/%s.theme", srcdir(), name);
	char *text = testlib_slurp(path);
	char msg[512] = "";
	struct theme *t = NULL;

	ok(text != NULL, "themes/%s.theme is readable", name);
	if (text) {
		t = theme_parse(name, path, text, msg, sizeof(msg));
		ok(t != NULL, "themes/%s.theme parses%s%s", name, t ? "" : ": ", msg);
	}
	free(text);
	free(path);
	return t;
}

static void test_shipped(void)
{
	for (int i = 0; i < NSHIPPED; i++) {
		struct theme *t = load_shipped(shipped[i]);
		int missing = 0;
		if (!t)
			continue;
		for (int r = 0; r < ROLE_N; r++)
			if (!theme_has_role(t, (enum role)r)) {
				printf("# %s lacks %s\n", shipped[i], role_name((enum role)r));
				missing++;
			}
		is_int(missing, 0, "%s names every role of role.h", shipped[i]);

		/* Without colours (NO_COLOR), the selection and highlights
		 * must still show: they carry reverse or bold of their own. */
		struct theme_style n, s;
		theme_style(t, ROLE_NORMAL, THEME_MONO, &n);
		const enum role visible[] = { ROLE_CURSOR, ROLE_STATUSBAR, ROLE_LOG_MATCH,
		                              ROLE_DIFF_ADD_WORD, ROLE_DIFF_DEL_WORD,
		                              ROLE_TASK_FAILED, ROLE_FINDING_BLOCK, ROLE_ERROR };
		int flat = 0;
		for (size_t k = 0; k < sizeof(visible) / sizeof(visible[0]); k++) {
			theme_style(t, visible[k], THEME_MONO, &s);
			if (s.attrs == n.attrs || s.fg.kind != THEME_DEFAULT || s.bg.kind != THEME_DEFAULT) {
				printf("# %s: %s looks like normal without colours\n", shipped[i],
				       role_name(visible[k]));
				flat++;
			}
		}
		is_int(flat, 0, "%s: key roles stay visible without colours", shipped[i]);
		theme_style(t, ROLE_CURSOR, THEME_MONO, &s);
		ok(s.attrs & A_REVERSE, "%s: the cursor is reverse video without colours", shipped[i]);
		/* A mark for hidden bytes (<U+202E>) is underlined or reversed at
		 * every level, NO_COLOR included: normal text never is. */
		int plain = 0;
		for (int lv = THEME_MONO; lv <= THEME_DIRECT; lv++) {
			theme_style(t, ROLE_ESCAPED, (enum theme_level)lv, &s);
			plain += !(s.attrs & (A_UNDERLINE | A_REVERSE));
		}
		theme_style(t, ROLE_NORMAL, THEME_MONO, &n);
		is_int(plain + !!(n.attrs & (A_UNDERLINE | A_REVERSE)), 0,
		       "%s: marks for hidden bytes are underlined or reversed at every level, "
		       "normal text is not", shipped[i]);

		if (strcmp(shipped[i], "mono") == 0) {
			int coloured = 0;
			for (int lv = THEME_MONO; lv <= THEME_DIRECT; lv++)
				for (int r = 0; r < ROLE_N; r++) {
					theme_style(t, (enum role)r, (enum theme_level)lv, &s);
					coloured += s.fg.kind != THEME_DEFAULT || s.bg.kind != THEME_DEFAULT;
				}
			is_int(coloured, 0, "mono has no colour at any level");
		} else {
			/* Statuses differ by colour at every colour level. */
			for (int lv = THEME_8; lv <= THEME_DIRECT; lv++) {
				struct theme_style f, d, a;
				theme_style(t, ROLE_TASK_FAILED, (enum theme_level)lv, &f);
				theme_style(t, ROLE_TASK_DONE, (enum theme_level)lv, &d);
				theme_style(t, ROLE_TASK_ACTIVE, (enum theme_level)lv, &a);
				ok(f.fg.kind != THEME_DEFAULT && (f.fg.value != d.fg.value || f.fg.kind != d.fg.kind) &&
				   (a.fg.value != d.fg.value || a.fg.kind != d.fg.kind),
				   "%s: failed, done and active differ in colour at level %d", shipped[i], lv);
			}
		}
		theme_free(t);
	}

	/* A user's theme that gives marks only a colour, or none, still
	 * underlines them; one that reverses them keeps reverse. */
	const char *const user[] = { "normal default default\nescaped red default\n",
	                             "normal default default\n",
	                             "escaped red default bold reverse\n" };
	for (size_t k = 0; k < sizeof(user) / sizeof(user[0]); k++) {
		char umsg[256] = "";
		struct theme *u = theme_parse("mine", "mine.theme", user[k], umsg, sizeof(umsg));
		struct theme_style st = {0};
		if (u)
			theme_style(u, ROLE_ESCAPED, THEME_MONO, &st);
		ok(u && (k == 2 ? (st.attrs & A_REVERSE) && !(st.attrs & A_UNDERLINE)
		                : (st.attrs & A_UNDERLINE) != 0),
		   "a user theme's marks without colours: %s (theme %zu)",
		   k == 2 ? "reverse, as it says" : "underlined", k);
		theme_free(u);
	}

	char *path = xasprintf("%s/themes/dark.theme", srcdir());
	char *text = testlib_slurp(path);
	is_str(theme_builtin("dark"), text,
	       "the compiled-in dark theme is themes/dark.theme byte for byte");
	ok(theme_builtin("light") == NULL, "only dark is compiled in");
	free(text);
	free(path);
}

/* ---- resolution ------------------------------------------------------ */

static void check(const char *spec, enum theme_level lv, int kind, int value, int bold)
{
	struct theme_color c;
	int rc = theme_resolve(spec, lv, &c);
	ok(rc == 0 && (int)c.kind == kind && (kind == THEME_DEFAULT || c.value == value) && c.bold == bold,
	   "'%s' at level %d is kind %d value %#x%s", spec, lv, kind, value, bold ? " bold" : "");
	if (rc == 0 && !((int)c.kind == kind && (kind == THEME_DEFAULT || c.value == value) && c.bold == bold))
		printf("#   got kind %d value %#x bold %d\n", c.kind, c.value, c.bold);
}

static void test_resolve(void)
{
	const char *chain = "#ff8700|color208|bright-red|red";
	check(chain, THEME_DIRECT, THEME_RGB, 0xff8700, 0);
	check(chain, THEME_256, THEME_INDEX, 208, 0);
	check(chain, THEME_16, THEME_INDEX, 9, 0);
	check(chain, THEME_8, THEME_INDEX, 1, 0);
	check(chain, THEME_MONO, THEME_DEFAULT, 0, 0);

	/* Bright names: need 16 colours, else the normal one plus bold. */
	check("bright-red", THEME_16, THEME_INDEX, 9, 0);
	check("bright-red", THEME_8, THEME_INDEX, 1, 1);
	check("color12", THEME_8, THEME_INDEX, 4, 1);
	check("red", THEME_8, THEME_INDEX, 1, 0);
	check("bright-yellow|cyan", THEME_8, THEME_INDEX, 6, 0);
	/* Direct-colour terminfo reads 8 and up as RGB: palette entries
	 * past 7 become their xterm RGB values, 0-7 stay the user's. */
	check("bright-red", THEME_DIRECT, THEME_RGB, 0xff0000, 0);
	check("color208", THEME_DIRECT, THEME_RGB, 0xff8700, 0);
	check("color232", THEME_DIRECT, THEME_RGB, 0x080808, 0);
	check("red", THEME_DIRECT, THEME_INDEX, 1, 0);

	/* Nothing fits: the last alternative is approximated. */
	check("#000000", THEME_256, THEME_INDEX, 16, 0);
	check("#ffffff", THEME_256, THEME_INDEX, 231, 0);
	check("#808080", THEME_256, THEME_INDEX, 244, 0);
	check("#ff0000", THEME_16, THEME_INDEX, 9, 0);
	check("#ff0000", THEME_8, THEME_INDEX, 1, 1);
	check("#cd0000", THEME_8, THEME_INDEX, 1, 0);
	check("color196", THEME_16, THEME_INDEX, 9, 0);
	check("color244", THEME_8, THEME_INDEX, 0, 1);
	/* Orange is nearest to (dark) yellow; write bright-red to get red. */
	check("#ff8700|color208", THEME_16, THEME_INDEX, 3, 0);

	check("default", THEME_DIRECT, THEME_DEFAULT, 0, 0);
	check("default", THEME_8, THEME_DEFAULT, 0, 0);
	check("#AbCdEf", THEME_DIRECT, THEME_RGB, 0xabcdef, 0);
	check("color0", THEME_8, THEME_INDEX, 0, 0);
	check("color255", THEME_256, THEME_INDEX, 255, 0);

	const char *bad[] = { "", "red|", "|red", "#12345", "#1234567", "#gg0000", "color256",
	                      "color", "color-1", "rde", "Red", "bright", "red||blue" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct theme_color c = { THEME_RGB, 42, 0 };
		ok(theme_resolve(bad[i], THEME_256, &c) == -1 && c.value == 42,
		   "'%s' is not a colour", bad[i]);
	}
}

static void test_levels(void)
{
	is_int(theme_level_for(NULL, 1, 256, 0), THEME_256, "256 colours");
	is_int(theme_level_for(NULL, 1, 88, 0), THEME_16, "88 colours: the 16 ANSI ones");
	is_int(theme_level_for(NULL, 1, 16, 0), THEME_16, "16 colours");
	is_int(theme_level_for(NULL, 1, 8, 0), THEME_8, "8 colours");
	is_int(theme_level_for(NULL, 1, 0x1000000, 1), THEME_DIRECT, "direct colour (xterm-direct)");
	is_int(theme_level_for(NULL, 1, 256, 1), THEME_256, "the RGB flag with 256 colours is not direct colour");
	is_int(theme_level_for(NULL, 0, 0, 0), THEME_MONO, "no colours: attributes only");
	is_int(theme_level_for(NULL, 1, 2, 0), THEME_MONO, "2 colours: attributes only");
	is_int(theme_level_for("1", 1, 256, 0), THEME_MONO, "NO_COLOR=1: attributes only");
	is_int(theme_level_for("1", 1, 0x1000000, 1), THEME_MONO, "NO_COLOR wins over direct colour");
	is_int(theme_level_for("", 1, 256, 0), THEME_256, "an empty NO_COLOR is ignored");
}

/* ---- parsing and errors --------------------------------------------- */

static void parse_error(const char *text, const char *want, const char *what)
{
	char msg[512] = "";
	struct theme *t = theme_parse("x", "themes/x.theme", text, msg, sizeof(msg));
	ok(t == NULL, "%s: rejected", what);
	is_str(msg, want, "%s: message", what);
	theme_free(t);
}

static void test_parse(void)
{
	parse_error("# a comment\nnormal default default\ndiff-ad green default\n",
	            "themes/x.theme:3: unknown role 'diff-ad'; did you mean 'diff-add'?",
	            "a misspelt role");
	parse_error("whatever red default\n",
	            "themes/x.theme:1: unknown role 'whatever' (the dark theme names every role)",
	            "an unknown role");
	parse_error("\n\ndiff-add rde default\n",
	            "themes/x.theme:3: unknown colour 'rde'; did you mean 'red'?",
	            "a misspelt colour");
	parse_error("diff-add #ff87000|red default\n",
	            "themes/x.theme:1: bad colour '#ff87000': write #rrggbb with six hex digits",
	            "a bad #rrggbb");
	parse_error("diff-add green color300\n",
	            "themes/x.theme:1: bad colour 'color300': use color0 to color255",
	            "a colour number out of range");
	parse_error("diff-add green||red default\n",
	            "themes/x.theme:1: empty colour in 'green||red'",
	            "an empty alternative");
	parse_error("diff-add green default blod\n",
	            "themes/x.theme:1: unknown attribute 'blod'; did you mean 'bold'?",
	            "a misspelt attribute");
	parse_error("diff-add green\n",
	            "themes/x.theme:1: 'diff-add' needs a foreground and a background colour: ROLE FG BG [ATTR...]",
	            "a missing background");
	parse_error("diff-add green default\n\ndiff-add red default\n",
	            "themes/x.theme:3: role 'diff-add' is already set on line 1",
	            "a role set twice");

	char msg[512] = "";
	struct theme *t = theme_parse("x", "x.theme",
		"  # indented comment\n"
		"normal  #d0d0d0|white  default  bold   # trailing comment\n"
		"\tdiff-add\t#00ff00|green\tbright-blue  underline italic\r\n",
		msg, sizeof(msg));
	ok(t != NULL, "comments, tabs and CRLF are accepted%s%s", t ? "" : ": ", msg);
	if (t) {
		struct theme_style s;
		theme_style(t, ROLE_DIFF_ADD, THEME_8, &s);
		ok(s.fg.kind == THEME_INDEX && s.fg.value == 2 && s.bg.value == 4 &&
		   s.attrs == (int)(A_UNDERLINE | A_ITALIC),
		   "a bright background at 8 colours is the normal one, without bold");
		ok(theme_has_role(t, ROLE_DIFF_ADD) && !theme_has_role(t, ROLE_DIFF_DEL),
		   "theme_has_role tells named roles from inherited ones");
		theme_style(t, ROLE_DIFF_DEL, THEME_256, &s);
		ok(s.fg.kind == THEME_INDEX && s.fg.value == 7 && s.bg.kind == THEME_DEFAULT &&
		   s.attrs == (int)A_BOLD, "a missing role looks like normal");
		theme_style(t, ROLE_NORMAL, THEME_DIRECT, &s);
		ok(s.fg.kind == THEME_RGB && s.fg.value == 0xd0d0d0, "a #rrggbb is not taken for a comment");
		theme_free(t);
	}
	t = theme_parse("empty", "empty.theme", "", msg, sizeof(msg));
	ok(t != NULL, "an empty theme parses");
	if (t) {
		struct theme_style s;
		theme_style(t, ROLE_TASK_FAILED, THEME_256, &s);
		ok(s.fg.kind == THEME_DEFAULT && s.bg.kind == THEME_DEFAULT && s.attrs == 0,
		   "an empty theme draws everything in the terminal's colours");
		theme_free(t);
	}
}

/* ---- finding themes -------------------------------------------------- */

static void test_load(void)
{
	char *tmp = testlib_tmpdir("theme");
	char msg[512] = "";
	struct theme *t;

	char *cfg = xasprintf("%s/cfg", tmp);
	char *udir = xasprintf("%s/cfg/paddock/themes", tmp);
	char *shipdir = xasprintf("%s/themes", srcdir());
	char *user_dark = xasprintf("%s/dark.theme", udir);
	char path[1024];
	mkdir(cfg, 0700);
	snprintf(path, sizeof(path), "%s/cfg/paddock", tmp);
	mkdir(path, 0700);
	mkdir(udir, 0700);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	setenv("PADDOCK_THEMES_DIR", shipdir, 1);

	char *ud = theme_user_dir();
	is_str(ud, udir, "the user's theme directory follows XDG_CONFIG_HOME");
	free(ud);
	setenv("XDG_CONFIG_HOME", "relative", 1);
	setenv("HOME", tmp, 1);
	ud = theme_user_dir();
	char *want = xasprintf("%s/.config/paddock/themes", tmp);
	is_str(ud, want, "a relative XDG_CONFIG_HOME is ignored: ~/.config/paddock/themes");
	free(want);
	free(ud);
	setenv("XDG_CONFIG_HOME", cfg, 1);

	testlib_write_file(user_dark, "normal red default\n");
	t = theme_load("dark", msg, sizeof(msg));
	ok(t && strcmp(theme_file(t), user_dark) == 0, "a user theme comes before the shipped one");
	if (t) {
		struct theme_style s;
		theme_style(t, ROLE_TASK_ACTIVE, THEME_256, &s);
		ok(s.fg.value == 1 && !theme_has_role(t, ROLE_TASK_ACTIVE), "and is the user's text");
		is_str(theme_name(t), "dark", "theme_name");
	}
	theme_free(t);

	t = theme_load("light", msg, sizeof(msg));
	char *light = xasprintf("%s/light.theme", shipdir);
	ok(t && strcmp(theme_file(t), light) == 0, "a theme the user lacks comes from PADDOCK_THEMES_DIR");
	free(light);
	theme_free(t);

	testlib_write_file(user_dark, "normal red default\nstatus-faild red default\n");
	t = theme_load("dark", msg, sizeof(msg));
	want = xasprintf("%s:2: unknown role 'status-faild'; did you mean 'status-failed'?", user_dark);
	ok(t == NULL, "a bad user theme is an error, not skipped");
	is_str(msg, want, "its message names the user's file and line");
	free(want);

	unlink(user_dark);
	t = theme_load("dark", msg, sizeof(msg));
	want = xasprintf("%s/dark.theme", shipdir);
	ok(t && strcmp(theme_file(t), want) == 0, "without a user copy, the shipped dark theme");
	free(want);
	theme_free(t);

	unsetenv("PADDOCK_THEMES_DIR");
	struct stat st;
	int installed = stat(PKGDATADIR "/dark.theme", &st) == 0;
	/* The uninstalled build (this test runs from it) finds the source
	 * tree's themes, as the installed one finds PKGDATADIR's. */
	const char *srcdir = getenv("top_srcdir");
	char *src_dark = xasprintf("%s/themes/dark.theme", srcdir ? srcdir : ".");
	char *real_dark = realpath(src_dark, NULL);
	t = theme_load("dark", msg, sizeof(msg));
	char *got = t ? realpath(theme_file(t), NULL) : NULL;
	ok(t && got && (installed ? strcmp(theme_file(t), PKGDATADIR "/dark.theme") == 0 :
	                real_dark && strcmp(got, real_dark) == 0),
	   "uninstalled, dark is the source tree's (%s)", t ? theme_file(t) : msg);
	free(got);
	free(real_dark);
	free(src_dark);
	if (t) {
		int all = 1;
		for (int r = 0; r < ROLE_N; r++)
			all &= theme_has_role(t, (enum role)r);
		ok(all, "the dark theme names every role");
	}
	theme_free(t);
	t = theme_load("mono", msg, sizeof(msg));
	ok(t != NULL, "uninstalled without PADDOCK_THEMES_DIR, mono is found too (%s)",
	   t ? theme_file(t) : msg);
	theme_free(t);
	t = theme_load("no-such", msg, sizeof(msg));
	ok(t == NULL && strstr(msg, "no theme named 'no-such' (there are: ") && strstr(msg, "light"),
	   "a missing theme says which there are (%s)", msg);
	theme_free(t);
	setenv("PADDOCK_THEMES_DIR", shipdir, 1);

	const char *badnames[] = { "../dark", "a/b", ".hidden", "", "-x", "_x", "a b" };
	for (size_t i = 0; i < sizeof(badnames) / sizeof(badnames[0]); i++) {
		t = theme_load(badnames[i], msg, sizeof(msg));
		ok(t == NULL && strstr(msg, "bad theme name"), "theme name '%s' is refused", badnames[i]);
		theme_free(t);
	}
	t = theme_load("nosuch", msg, sizeof(msg));
	ok(t == NULL, "an unknown theme is an error");
	is_str(msg, "no theme named 'nosuch' (there are: dark, high-contrast, light, mono)",
	       "its message lists the themes");
	theme_free(t);

	snprintf(path, sizeof(path), "%s/dir.theme", udir);
	mkdir(path, 0700);
	t = theme_load("dir", msg, sizeof(msg));
	ok(t == NULL && strstr(msg, "is not a regular file"), "a directory is not a theme");
	theme_free(t);
	rmdir(path);

	snprintf(path, sizeof(path), "%s/mine.theme", udir);
	testlib_write_file(path, "normal default default\n");
	snprintf(path, sizeof(path), "%s/light.theme", udir);
	testlib_write_file(path, "normal default default\n");
	snprintf(path, sizeof(path), "%s/notes.txt", udir);
	testlib_write_file(path, "not a theme\n");
	char **names = theme_names();
	struct buf b = { 0 };
	for (size_t i = 0; names[i]; i++)
		buf_printf(&b, "%s%s", i ? " " : "", names[i]);
	is_str(b.data, "dark high-contrast light mine mono", "theme_names: every theme once, sorted");
	buf_free(&b);
	theme_names_free(names);

	testlib_rm_rf(tmp);
	free(cfg);
	free(udir);
	free(shipdir);
	free(user_dark);
}

/* ---- curses ---------------------------------------------------------- */

/* Opens curses on terminal type term writing to /dev/null; NULL when the
 * terminfo entry is missing. */
static SCREEN *fake_term(const char *term, FILE **out, FILE **in)
{
	*out = fopen("/dev/null", "w");
	*in = fopen("/dev/null", "r");
	SCREEN *s = newterm(term, *out, *in);
	if (!s) {
		fclose(*out);
		fclose(*in);
	}
	return s;
}

static void end_term(SCREEN *s, FILE *out, FILE *in)
{
	endwin();
	delscreen(s);
	fclose(out);
	fclose(in);
}

static void test_curses(void)
{
	char msg[512];
	char *dir = xasprintf("%s/themes", srcdir());
	FILE *out, *in;
	SCREEN *s;

	setenv("PADDOCK_THEMES_DIR", dir, 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
	struct theme *dark = theme_load("dark", msg, sizeof(msg));
	struct theme *mono = theme_load("mono", msg, sizeof(msg));
	if (!dark || !mono)
		abort();

	unsetenv("NO_COLOR");
	s = fake_term("xterm-256color", &out, &in);
	if (!s) {
		ok(1, "# SKIP no xterm-256color terminfo");
	} else {
		theme_reset_pairs();
		int failed = theme_attr(dark, ROLE_TASK_FAILED);
		int error = theme_attr(dark, ROLE_ERROR);
		int done = theme_attr(dark, ROLE_TASK_DONE);
		int normal = theme_attr(dark, ROLE_NORMAL);
		int fg = 0, bg = 0;
		is_int(theme_current_level(), THEME_256, "xterm-256color: 256 colours");
		ok(PAIR_NUMBER(failed) > 0 && (failed & A_BOLD), "status-failed: a colour pair and bold");
		extended_pair_content(PAIR_NUMBER(failed), &fg, &bg);
		ok(fg == 203 && bg == -1, "status-failed is color203 on the default background");
		is_int(PAIR_NUMBER(error), PAIR_NUMBER(failed), "the same colours share one pair");
		ok(PAIR_NUMBER(done) != PAIR_NUMBER(failed), "other colours get another pair");
		is_int(PAIR_NUMBER(normal), 0, "normal is pair 0 (default colours)");
		is_int(theme_attr(dark, ROLE_TASK_FAILED), failed, "attributes are cached");
		int pairs = 0, seen[256] = { 0 };
		for (int r = 0; r < ROLE_N; r++) {
			int p = PAIR_NUMBER(theme_attr(dark, (enum role)r));
			if (p && !seen[p]++)
				pairs++;
		}
		ok(pairs > 5 && pairs < ROLE_N, "dark uses %d pairs for %d roles", pairs, ROLE_N);

		theme_reset_pairs();
		int m = 0;
		for (int r = 0; r < ROLE_N; r++)
			m += PAIR_NUMBER(theme_attr(mono, (enum role)r)) != 0;
		is_int(m, 0, "mono: no colour pair for any role");
		ok(theme_attr(mono, ROLE_CURSOR) & A_REVERSE, "mono: the cursor is reverse");

		setenv("NO_COLOR", "1", 1);
		theme_reset_pairs();
		int coloured = 0;
		for (int r = 0; r < ROLE_N; r++)
			coloured += PAIR_NUMBER(theme_attr(dark, (enum role)r)) != 0;
		is_int(coloured, 0, "NO_COLOR=1: no colour pairs");
		is_int(theme_current_level(), THEME_MONO, "NO_COLOR=1: level mono");
		ok((theme_attr(dark, ROLE_TASK_FAILED) & A_BOLD) && (theme_attr(dark, ROLE_CURSOR) & A_REVERSE),
		   "NO_COLOR=1: the theme's attributes remain");
		setenv("NO_COLOR", "", 1);
		theme_reset_pairs();
		ok(PAIR_NUMBER(theme_attr(dark, ROLE_TASK_FAILED)) > 0, "NO_COLOR empty: colours");
		unsetenv("NO_COLOR");
		end_term(s, out, in);
	}

	s = fake_term("xterm", &out, &in);
	if (!s) {
		ok(1, "# SKIP no xterm terminfo");
	} else {
		theme_reset_pairs();
		int failed = theme_attr(dark, ROLE_TASK_FAILED);
		int fg = 0, bg = 0;
		is_int(theme_current_level(), THEME_8, "xterm: 8 colours");
		extended_pair_content(PAIR_NUMBER(failed), &fg, &bg);
		ok(fg == COLOR_RED && bg == -1 && (failed & A_BOLD),
		   "8 colours: bright-red falls back to red and bold");
		end_term(s, out, in);
	}
	theme_reset_pairs();
	theme_free(dark);
	theme_free(mono);
	free(dir);
}

int main(void)
{
	test_shipped();
	test_resolve();
	test_levels();
	test_parse();
	test_load();
	test_curses();
	testlib_end();
	return tap_done();
}
