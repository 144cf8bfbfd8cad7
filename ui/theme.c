#include "autoconfig.h"
#include "theme.h"

#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "buf.h"
#include "i18n.h"
#include "screen.h"
#include "suggest.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/paddock"
#endif

/* The compiled-in dark theme, theme_dark_text: themes/dark.theme byte for
 * byte, so the program works before it is installed.  make writes it into
 * ui/theme-dark.h of the build directory from the file (Makefile.am). */
#include "ui/theme-dark.h"

#define THEME_MAX_FILE (1 << 20)
#define THEME_MAX_ALTS 8

/* One parsed line of a theme file. */
struct theme_line {
	int set;               /* the file names this role */
	int lineno;
	char *fg, *bg;         /* validated colour specs */
	int attrs;             /* A_BOLD | ... */
};

struct theme {
	char *name;
	char *file;
	struct theme_line line[ROLE_N];
	/* theme_attr's cache, valid while gen matches the pair table's. */
	unsigned gen;
	int cached[ROLE_N];
	int attr[ROLE_N];
};

/* ---- colours ---------------------------------------------------------- */

static const char *const theme_ansi[16] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"bright-black", "bright-red", "bright-green", "bright-yellow",
	"bright-blue", "bright-magenta", "bright-cyan", "bright-white",
};

/* xterm's default palette for the 16 ANSI colours: used to approximate,
 * and in direct colour, where only colours 0-7 keep the user's palette. */
static const int theme_xterm16[16] = {
	0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
	0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};

static int theme_rgb_of_index(int n)
{
	static const int cube[6] = { 0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff };
	if (n < 16)
		return theme_xterm16[n];
	if (n < 232) {
		n -= 16;
		return cube[n / 36] << 16 | cube[n / 6 % 6] << 8 | cube[n % 6];
	}
	int g = 8 + 10 * (n - 232);
	return g << 16 | g << 8 | g;
}

static long theme_rgb_dist(int a, int b)
{
	long dr = ((a >> 16) & 0xff) - ((b >> 16) & 0xff);
	long dg = ((a >> 8) & 0xff) - ((b >> 8) & 0xff);
	long db = (a & 0xff) - (b & 0xff);
	/* Weighted for the eye's sensitivity; good enough to pick a cell. */
	return 2 * dr * dr + 4 * dg * dg + 3 * db * db;
}

/* The palette index in [from, to) nearest to rgb. */
static int theme_nearest(int rgb, int from, int to)
{
	int best = from;
	long bestd = -1;
	for (int i = from; i < to; i++) {
		long d = theme_rgb_dist(rgb, theme_rgb_of_index(i));
		if (bestd < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

/* One alternative of a spec: DEFAULT, INDEX (names are 0-15) or RGB. */
static int theme_alt_parse(const char *s, size_t n, struct theme_color *c)
{
	memset(c, 0, sizeof(*c));
	if (n == 7 && s[0] == '#') {
		int v = 0;
		for (size_t i = 1; i < 7; i++) {
			char ch = s[i];
			int d = ch >= '0' && ch <= '9' ? ch - '0'
			      : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			      : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
			if (d < 0)
				return -1;
			v = v << 4 | d;
		}
		c->kind = THEME_RGB;
		c->value = v;
		return 0;
	}
	if (n > 5 && n <= 8 && strncmp(s, "color", 5) == 0) {
		int v = 0;
		for (size_t i = 5; i < n; i++) {
			if (s[i] < '0' || s[i] > '9')
				return -1;
			v = v * 10 + (s[i] - '0');
		}
		if (v > 255)
			return -1;
		c->kind = THEME_INDEX;
		c->value = v;
		return 0;
	}
	if (n == 7 && strncmp(s, "default", 7) == 0) {
		c->kind = THEME_DEFAULT;
		return 0;
	}
	for (int i = 0; i < 16; i++)
		if (strlen(theme_ansi[i]) == n && strncmp(s, theme_ansi[i], n) == 0) {
			c->kind = THEME_INDEX;
			c->value = i;
			return 0;
		}
	return -1;
}

/* Whether level shows c exactly. */
static int theme_fits(const struct theme_color *c, enum theme_level level)
{
	switch (c->kind) {
	case THEME_DEFAULT:
		return 1;
	case THEME_INDEX:
		return c->value < 8 ? level >= THEME_8
		     : c->value < 16 ? level >= THEME_16 : level >= THEME_256;
	case THEME_RGB:
		return level >= THEME_DIRECT;
	}
	return 0;
}

/* The colour at level: approximates what does not fit, and in direct
 * colour turns palette entries past 7 into RGB (direct-colour terminfo
 * reads every number from 8 up as RGB). */
static void theme_fit(struct theme_color *c, enum theme_level level)
{
	if (level == THEME_MONO) {
		memset(c, 0, sizeof(*c));
		return;
	}
	if (c->kind == THEME_DEFAULT)
		return;
	if (level == THEME_DIRECT) {
		if (c->kind == THEME_INDEX && c->value >= 8) {
			c->kind = THEME_RGB;
			c->value = theme_rgb_of_index(c->value);
		}
		return;
	}
	if (level == THEME_256) {
		if (c->kind == THEME_RGB) {
			/* 16-231 and the greys: 0-15 are the user's palette. */
			c->kind = THEME_INDEX;
			c->value = theme_nearest(c->value, 16, 256);
		}
		return;
	}
	if (c->kind == THEME_RGB || c->value >= 16) {
		int rgb = c->kind == THEME_RGB ? c->value : theme_rgb_of_index(c->value);
		c->kind = THEME_INDEX;
		c->value = theme_nearest(rgb, 0, 16);
	}
	if (level == THEME_8 && c->value >= 8) {
		c->value -= 8;
		c->bold = 1;
	}
}

int theme_resolve(const char *spec, enum theme_level level, struct theme_color *out)
{
	struct theme_color alt[THEME_MAX_ALTS];
	int n = 0;
	const char *p = spec;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (n == THEME_MAX_ALTS || theme_alt_parse(p, len, &alt[n]) < 0)
			return -1;
		n++;
		if (!bar)
			break;
		p = bar + 1;
	}
	for (int i = 0; i < n; i++)
		if (theme_fits(&alt[i], level)) {
			*out = alt[i];
			theme_fit(out, level);
			return 0;
		}
	/* Nothing fits: the last alternative, approximated. */
	*out = alt[n - 1];
	theme_fit(out, level);
	return 0;
}

enum theme_level theme_level_for(const char *no_color, int has_colors, int colors, int rgb)
{
	if (no_color && *no_color)
		return THEME_MONO;
	if (!has_colors || colors < 8)
		return THEME_MONO;
	if (colors >= 0x1000000 || (rgb && colors > 256))
		return THEME_DIRECT;
	if (colors >= 256)
		return THEME_256;
	if (colors >= 16)
		return THEME_16;
	return THEME_8;
}

/* ---- parsing ---------------------------------------------------------- */

static const struct {
	const char *name;
	int attr;
} theme_attrs[] = {
	{ "bold", (int)A_BOLD }, { "dim", (int)A_DIM }, { "underline", (int)A_UNDERLINE },
	{ "reverse", (int)A_REVERSE }, { "italic", (int)A_ITALIC }, { "standout", (int)A_STANDOUT },
};
#define THEME_NATTRS (sizeof(theme_attrs) / sizeof(theme_attrs[0]))

static void theme_msg(char *msg, size_t msglen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void theme_msg(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;
	if (!msg || !msglen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
}

/* Keeps the closest candidate within two edits. */
static void theme_suggest(const char *word, const char *cand, const char **best, size_t *bestd)
{
	size_t d = suggest_distance(word, cand);
	if (d <= 2 && d < strlen(cand) && d < *bestd) {
		*bestd = d;
		*best = cand;
	}
}

static const char *theme_suggest_role(const char *word)
{
	const char *best = NULL;
	size_t bestd = 99;
	for (int r = 0; r < ROLE_N; r++)
		theme_suggest(word, role_name((enum role)r), &best, &bestd);
	return best;
}

static const char *theme_suggest_color(const char *word)
{
	const char *best = NULL;
	size_t bestd = 99;
	for (int i = 0; i < 16; i++)
		theme_suggest(word, theme_ansi[i], &best, &bestd);
	theme_suggest(word, "default", &best, &bestd);
	return best;
}

/* Says what is wrong with the colour spec (a complete message after
 * "file:line: "); 0 when it is valid. */
static int theme_check_spec(const char *spec, char *msg, size_t msglen)
{
	const char *p = spec;
	int n = 0;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		struct theme_color c;
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)(len < 60 ? len : 60), p);
		if (len == 0) {
			theme_msg(msg, msglen, _("empty colour in '%s'"), spec);
			return -1;
		}
		if (++n > THEME_MAX_ALTS) {
			theme_msg(msg, msglen, _("too many colours in '%s' (at most %d)"),
			          spec, THEME_MAX_ALTS);
			return -1;
		}
		if (theme_alt_parse(p, len, &c) < 0) {
			const char *hint;
			if (p[0] == '#')
				theme_msg(msg, msglen, _("bad colour '%s': write #rrggbb with six hex digits"), word);
			else if (strncmp(word, "color", 5) == 0 && word[5] >= '0' && word[5] <= '9')
				theme_msg(msg, msglen, _("bad colour '%s': use color0 to color255"), word);
			else if ((hint = theme_suggest_color(word)))
				theme_msg(msg, msglen, _("unknown colour '%s'; did you mean '%s'?"), word, hint);
			else
				theme_msg(msg, msglen, _("unknown colour '%s': use #rrggbb, colorN, an ANSI name such as red or bright-red, or default"),
				          word);
			return -1;
		}
		if (!bar)
			return 0;
		p = bar + 1;
	}
}

static int theme_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void theme_clear_lines(struct theme *t)
{
	for (int r = 0; r < ROLE_N; r++) {
		free(t->line[r].fg);
		free(t->line[r].bg);
	}
}

/* Parses one line's words into t; 0, or -1 with the message (without the
 * "file:line: " prefix). */
static int theme_parse_line(struct theme *t, int lineno, char **w, int nw, char *msg, size_t msglen)
{
	int r = role_parse(w[0]);
	struct theme_line *l;

	if (r < 0) {
		const char *hint = theme_suggest_role(w[0]);
		if (hint)
			theme_msg(msg, msglen, _("unknown role '%s'; did you mean '%s'?"), w[0], hint);
		else
			theme_msg(msg, msglen, _("unknown role '%s' (the dark theme names every role)"), w[0]);
		return -1;
	}
	l = &t->line[r];
	if (l->set) {
		theme_msg(msg, msglen, _("role '%s' is already set on line %d"), w[0], l->lineno);
		return -1;
	}
	if (nw < 3) {
		theme_msg(msg, msglen, _("'%s' needs a foreground and a background colour: ROLE FG BG [ATTR...]"), w[0]);
		return -1;
	}
	if (theme_check_spec(w[1], msg, msglen) < 0 || theme_check_spec(w[2], msg, msglen) < 0)
		return -1;
	int attrs = 0;
	for (int i = 3; i < nw; i++) {
		size_t a;
		if (w[i][0] == '#')
			break;          /* a comment after the colours */
		for (a = 0; a < THEME_NATTRS; a++)
			if (strcmp(w[i], theme_attrs[a].name) == 0)
				break;
		if (a == THEME_NATTRS) {
			const char *best = NULL;
			size_t bestd = 99;
			for (a = 0; a < THEME_NATTRS; a++)
				theme_suggest(w[i], theme_attrs[a].name, &best, &bestd);
			if (best)
				theme_msg(msg, msglen, _("unknown attribute '%s'; did you mean '%s'?"), w[i], best);
			else
				theme_msg(msg, msglen, _("unknown attribute '%s': use bold, dim, underline, reverse, italic or standout"),
				          w[i]);
			return -1;
		}
		attrs |= theme_attrs[a].attr;
	}
	l->set = 1;
	l->lineno = lineno;
	l->fg = xstrdup(w[1]);
	l->bg = xstrdup(w[2]);
	l->attrs = attrs;
	return 0;
}

struct theme *theme_parse(const char *name, const char *file, const char *text,
                          char *msg, size_t msglen)
{
	struct theme *t = xcalloc(1, sizeof(*t));
	char *copy = xstrdup(text);
	char *line = copy;
	int lineno = 0;

	t->name = xstrdup(name);
	t->file = xstrdup(file);
	while (line) {
		char *next = strchr(line, '\n');
		char *w[16];
		int nw = 0;
		char *p = line;
		char detail[512];

		if (next)
			*next++ = '\0';
		lineno++;
		for (;;) {
			while (theme_is_space(*p))
				p++;
			/* '#' starts a comment at the start of a line (and, in
			 * theme_parse_line, after the colours: #rrggbb is one). */
			if (!*p || (nw == 0 && *p == '#'))
				break;
			if (nw == (int)(sizeof(w) / sizeof(w[0]))) {
				theme_msg(msg, msglen, _("%s:%d: too many words"), file, lineno);
				goto fail;
			}
			w[nw++] = p;
			while (*p && !theme_is_space(*p))
				p++;
			if (*p)
				*p++ = '\0';
		}
		if (nw > 0 && theme_parse_line(t, lineno, w, nw, detail, sizeof(detail)) < 0) {
			theme_msg(msg, msglen, "%s:%d: %s", file, lineno, detail);
			goto fail;
		}
		line = next;
	}
	free(copy);
	return t;
fail:
	free(copy);
	theme_free(t);
	return NULL;
}

void theme_free(struct theme *t)
{
	if (!t)
		return;
	theme_clear_lines(t);
	free(t->name);
	free(t->file);
	free(t);
}

const char *theme_name(const struct theme *t)
{
	return t->name;
}

const char *theme_file(const struct theme *t)
{
	return t->file;
}

int theme_has_role(const struct theme *t, enum role r)
{
	return r >= 0 && r < ROLE_N && t->line[r].set;
}

void theme_style(const struct theme *t, enum role r, enum theme_level level,
                 struct theme_style *out)
{
	const struct theme_line *l = NULL;

	memset(out, 0, sizeof(*out));
	if (r >= 0 && r < ROLE_N && t->line[r].set)
		l = &t->line[r];
	else if (t->line[ROLE_NORMAL].set)
		l = &t->line[ROLE_NORMAL];
	if (!l) {
		if (r == ROLE_ESCAPED)
			out->attrs = A_UNDERLINE;
		return;
	}
	out->attrs = l->attrs;
	/* The specs were checked when parsed. */
	theme_resolve(l->fg, level, &out->fg);
	theme_resolve(l->bg, level, &out->bg);
	if (out->fg.bold)
		out->attrs |= A_BOLD;
	/* A mark for hidden bytes never looks like text the agent typed, in
	 * any theme and without colours: it is underlined unless the theme
	 * reverses it. */
	if (r == ROLE_ESCAPED && !(out->attrs & (A_UNDERLINE | A_REVERSE)))
		out->attrs |= A_UNDERLINE;
}

/* ---- finding files ---------------------------------------------------- */

char *theme_user_dir(void)
{
	const char *p = getenv("XDG_CONFIG_HOME");
	const char *home;

	/* Like config_default_path: a relative XDG_CONFIG_HOME is ignored. */
	if (p && p[0] == '/')
		return xasprintf("%s/paddock/themes", p);
	home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		if (!pw || !pw->pw_dir || !*pw->pw_dir)
			return NULL;
		home = pw->pw_dir;
	}
	return xasprintf("%s/.config/paddock/themes", home);
}

/* The source tree's themes when this is the uninstalled build's binary
 * (it runs from its build directory), else NULL. */
static char *uninstalled_dir(void)
{
#if defined(PADDOCK_BUILD_DIR) && defined(PADDOCK_SRC_DIR)
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (strcmp(exe, PADDOCK_BUILD_DIR) != 0 && strcmp(exe, PADDOCK_BUILD_DIR "/tests") != 0)
		return NULL;
	return xstrdup(PADDOCK_SRC_DIR "/themes");
#else
	return NULL;
#endif
}

/* The directories searched, in order (entries malloc'd, NULL-terminated). */
static void theme_dirs(char *dirs[5])
{
	int n = 0;
	const char *env = getenv("PADDOCK_THEMES_DIR");

	dirs[n] = theme_user_dir();
	if (dirs[n])
		n++;
	if (env && *env)
		dirs[n++] = xstrdup(env);
	dirs[n++] = xstrdup(PKGDATADIR);
	dirs[n] = uninstalled_dir();
	if (dirs[n])
		n++;
	dirs[n] = NULL;
}

static void theme_dirs_free(char *dirs[5])
{
	for (int i = 0; dirs[i]; i++)
		free(dirs[i]);
}

const char *theme_builtin(const char *name)
{
	return strcmp(name, "dark") == 0 ? theme_dark_text : NULL;
}

/* Theme names become file names: the rule of config_name_valid (as
 * ui.theme is checked), so no '/' and no leading dot. */
static int theme_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.')))
			return 0;
	}
	return 1;
}

/* Reads a theme file; 1 when read, 0 when missing, -1 on error. */
static int theme_read(const char *path, struct buf *out, char *msg, size_t msglen)
{
	/* Symlinks are followed: the user's own dotfiles often are some. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		theme_msg(msg, msglen, _("cannot open %s: %s"), path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		theme_msg(msg, msglen, _("%s is not a regular file"), path);
		return -1;
	}
	for (;;) {
		char chunk[8192];
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			theme_msg(msg, msglen, _("cannot read %s: %s"), path, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > THEME_MAX_FILE) {
			theme_msg(msg, msglen, _("%s is too large for a theme (over 1 MiB)"), path);
			close(fd);
			return -1;
		}
		buf_add(out, chunk, (size_t)n);
	}
	close(fd);
	if (out->len && memchr(out->data, '\0', out->len)) {
		theme_msg(msg, msglen, _("%s is not a text file"), path);
		return -1;
	}
	return 1;
}

struct theme *theme_load(const char *name, char *msg, size_t msglen)
{
	char *dirs[5];
	struct theme *t = NULL;
	int found = 0;

	if (!theme_name_valid(name)) {
		theme_msg(msg, msglen, _("bad theme name '%.64s': use letters, digits, '-', '_' and '.', starting with a letter or digit"),
		          name);
		return NULL;
	}
	theme_dirs(dirs);
	for (int i = 0; dirs[i] && !found; i++) {
		char *path = xasprintf("%s/%s.theme", dirs[i], name);
		struct buf b = { 0 };
		int rc = theme_read(path, &b, msg, msglen);
		if (rc > 0)
			t = theme_parse(name, path, b.data ? b.data : "", msg, msglen);
		found = rc != 0;
		buf_free(&b);
		free(path);
	}
	theme_dirs_free(dirs);
	if (!found) {
		const char *text = theme_builtin(name);
		if (text)
			return theme_parse(name, "(built-in)", text, msg, msglen);
		char **names = theme_names();
		struct buf list = { 0 };
		struct suggest sg;
		suggest_init(&sg, name);
		for (size_t i = 0; names[i]; i++) {
			buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
			suggest_add(&sg, names[i]);
		}
		if (suggest_best(&sg))
			theme_msg(msg, msglen, _("no theme named '%s'; did you mean '%s'? (there are: "
			                         "%s)"), name, suggest_best(&sg), list.data);
		else
			theme_msg(msg, msglen, _("no theme named '%s' (there are: %s)"), name,
			          list.data);
		buf_free(&list);
		theme_names_free(names);
	}
	return t;
}

static int theme_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void theme_names_add(char ***v, size_t *n, size_t *cap, char *name)
{
	if (*n + 2 > *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = name;
}

char **theme_names(void)
{
	char *dirs[5];
	char **v = NULL;
	size_t n = 0, cap = 0, k = 0;

	theme_dirs(dirs);
	for (int i = 0; dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			char *nm;
			if (len <= 6 || strcmp(de->d_name + len - 6, ".theme") != 0)
				continue;
			nm = xstrndup(de->d_name, len - 6);
			if (theme_name_valid(nm))
				theme_names_add(&v, &n, &cap, nm);
			else
				free(nm);
		}
		closedir(d);
	}
	theme_dirs_free(dirs);
	theme_names_add(&v, &n, &cap, xstrdup("dark"));
	qsort(v, n, sizeof(*v), theme_cmp);
	/* A name in several directories is one theme (the first found). */
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(v[k - 1], v[i]) == 0)
			free(v[i]);
		else
			v[k++] = v[i];
	}
	v[k] = NULL;
	return v;
}

void theme_names_free(char **names)
{
	if (!names)
		return;
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
}

/* ---- curses ----------------------------------------------------------- */

/* The terminal's colour state: one per process, like the terminal. */
static struct {
	int ready;             /* level known (and colours started) */
	enum theme_level level;
	unsigned gen;          /* bumped by theme_reset_pairs */
	int defaults;          /* assume_default_colors done */
	int npairs;
	int pair_fg[256], pair_bg[256];
} theme_term;

static void theme_term_start(void)
{
	const char *nc = getenv("NO_COLOR");
	int hc = has_colors();
	int colors = 0, rgb = 0;

	if (hc && !(nc && *nc)) {
		if (start_color() == OK) {
			colors = COLORS;
			rgb = tigetflag("RGB") > 0;
		} else {
			hc = 0;
		}
	}
	theme_term.level = theme_level_for(nc, hc, colors, rgb);
	theme_term.ready = 1;
}

/* A resolved colour as curses numbers it. */
static int theme_curses_color(const struct theme_color *c)
{
	switch (c->kind) {
	case THEME_DEFAULT:
		return -1;
	case THEME_INDEX:
		return c->value;
	case THEME_RGB:
		/* Direct-colour terminfo reads small numbers as palette
		 * entries (0-7, or up to 255 in some entries); one unit of
		 * green more is invisible and keeps them RGB. */
		return c->value < 256 ? c->value | 0x100 : c->value;
	}
	return -1;
}

static int theme_pair(int fg, int bg)
{
	if (fg == -1 && bg == -1)
		return 0;
	for (int i = 1; i <= theme_term.npairs; i++)
		if (theme_term.pair_fg[i] == fg && theme_term.pair_bg[i] == bg)
			return i;
	/* COLOR_PAIR() holds 8 bits: 255 pairs, plenty for ROLE_N roles. */
	int n = theme_term.npairs + 1;
	if (n > 255 || n >= COLOR_PAIRS || init_extended_pair(n, fg, bg) != OK)
		return 0;
	theme_term.npairs = n;
	theme_term.pair_fg[n] = fg;
	theme_term.pair_bg[n] = bg;
	return n;
}

int theme_attr(struct theme *t, enum role r)
{
	struct theme_style st;
	int attr;

	if (r < 0 || r >= ROLE_N)
		r = ROLE_NORMAL;
	if (!theme_term.ready)
		theme_term_start();
	if (t->gen != theme_term.gen) {
		memset(t->cached, 0, sizeof(t->cached));
		t->gen = theme_term.gen;
	}
	if (t->cached[r])
		return t->attr[r];
	if (theme_term.level != THEME_MONO && !theme_term.defaults) {
		/* "default" is normal's colour: tell curses, so that pair 0
		 * and every default in a pair use it. */
		struct theme_style ns;
		theme_style(t, ROLE_NORMAL, theme_term.level, &ns);
		assume_default_colors(theme_curses_color(&ns.fg), theme_curses_color(&ns.bg));
		theme_term.defaults = 1;
	}
	theme_style(t, r, theme_term.level, &st);
	attr = st.attrs;
	if (theme_term.level != THEME_MONO)
		attr |= (int)COLOR_PAIR(theme_pair(theme_curses_color(&st.fg),
		                                   theme_curses_color(&st.bg)));
	t->attr[r] = attr;
	t->cached[r] = 1;
	return attr;
}

int theme_sgr_attr(struct theme *t, enum role r, int fg, int bg, unsigned attrs)
{
	struct theme_style st;
	int attr;

	if (r < 0 || r >= ROLE_N)
		r = ROLE_NORMAL;
	/* The role's own look first: starts colours and sets the defaults. */
	(void)theme_attr(t, r);
	theme_style(t, r, theme_term.level, &st);
	attr = st.attrs;
	if (attrs & SCREEN_SGR_BOLD)
		attr |= (int)A_BOLD;
	if (attrs & SCREEN_SGR_DIM)
		attr |= (int)A_DIM;
	if (attrs & SCREEN_SGR_ITALIC)
		attr |= (int)A_ITALIC;
	if (attrs & SCREEN_SGR_UNDERLINE)
		attr |= (int)A_UNDERLINE;
	if (attrs & SCREEN_SGR_REVERSE)
		attr |= (int)A_REVERSE;
	if (theme_term.level == THEME_MONO)
		return attr;
	if (fg >= 0) {
		st.fg = (struct theme_color){ THEME_INDEX, fg, 0 };
		theme_fit(&st.fg, theme_term.level);
		if (st.fg.bold)
			attr |= (int)A_BOLD;
	}
	if (bg >= 0) {
		st.bg = (struct theme_color){ THEME_INDEX, bg, 0 };
		theme_fit(&st.bg, theme_term.level);
	}
	return attr | (int)COLOR_PAIR(theme_pair(theme_curses_color(&st.fg),
	                                         theme_curses_color(&st.bg)));
}

void theme_reset_pairs(void)
{
	unsigned gen = theme_term.gen + 1;
	/* Old pairs stay defined in curses until reused: harmless, every
	 * cell is redrawn with the new theme. */
	memset(&theme_term, 0, sizeof(theme_term));
	theme_term.gen = gen;
}

enum theme_level theme_current_level(void)
{
	return theme_term.level;
}
