#include "autoconfig.h"
#include "keymap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "suggest.h"

#define MAX_KEYS 6

struct binding {
	int keys[MAX_KEYS];
	int nkeys;
};

struct keymap {
	struct binding b[REQ_N];
};

static const struct {
	const char *name;
	unsigned scope;
	const char *keys, *help;
} info[REQ_N] = {
	[REQ_NONE] = { "none", 0, "", "" },
#define REQ_ROW(id, name, scope, keys, help) [REQ_##id] = { name, scope, keys, help },
	REQ_INFO(REQ_ROW)
#undef REQ_ROW
};

static const struct {
	const char *name;
	int code;
} named[] = {
	{ "Up", KEYC_UP }, { "Down", KEYC_DOWN }, { "Left", KEYC_LEFT }, { "Right", KEYC_RIGHT },
	{ "PageUp", KEYC_PGUP }, { "PageDown", KEYC_PGDN }, { "Home", KEYC_HOME },
	{ "End", KEYC_END }, { "Enter", KEYC_ENTER }, { "Esc", KEYC_ESC }, { "Tab", KEYC_TAB },
	{ "Backspace", KEYC_BACKSPACE }, { "Delete", KEYC_DELETE }, { "Space", ' ' },
	{ "C-Left", KEYC_CLEFT }, { "C-Right", KEYC_CRIGHT },
};

int keymap_parse_key(const char *p, const char **end)
{
	if (!*p)
		return -1;
	if (*p != '<' || !p[1] || !strchr(p, '>')) {
		/* One UTF-8 character. */
		unsigned char c = (unsigned char)*p;
		size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		unsigned v = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		for (size_t i = 1; i < n; i++) {
			if (((unsigned char)p[i] & 0xc0) != 0x80)
				return -1;
			v = (v << 6) | ((unsigned char)p[i] & 0x3f);
		}
		if (end)
			*end = p + n;
		return (int)v;
	}
	const char *close = strchr(p, '>');
	size_t len = (size_t)(close - p - 1);
	const char *name = p + 1;
	int code = -1;
	if (len == 3 && (name[0] == 'C' || name[0] == 'c') && name[1] == '-' &&
	    name[2] >= 'a' && name[2] <= 'z')
		code = KEYC_CTRL + name[2];
	else if (len == 3 && (name[0] == 'M' || name[0] == 'm') && name[1] == '-' &&
	         name[2] >= 'a' && name[2] <= 'z')
		code = KEYC_META + name[2];
	else if ((len == 2 || len == 3) && name[0] == 'F' && atoi(name + 1) >= 1 &&
	         atoi(name + 1) <= 12)
		code = KEYC_F1 + atoi(name + 1) - 1;
	else
		for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
			if (strlen(named[i].name) == len && !strncasecmp(named[i].name, name, len))
				code = named[i].code;
	if (code >= 0 && end)
		*end = close + 1;
	return code;
}

void keymap_key_name(int key, char *out, size_t len)
{
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].code == key && key != ' ') {
			snprintf(out, len, "<%s>", named[i].name);
			return;
		}
	if (key == ' ')
		snprintf(out, len, "<Space>");
	else if (key >= KEYC_CTRL && key < KEYC_CTRL + 128)
		snprintf(out, len, "<C-%c>", key - KEYC_CTRL);
	else if (key >= KEYC_META && key < KEYC_META + 128)
		snprintf(out, len, "<M-%c>", key - KEYC_META);
	else if (key >= KEYC_F1 && key < KEYC_F1 + 12)
		snprintf(out, len, "<F%d>", key - KEYC_F1 + 1);
	else if (key < 0x80)
		snprintf(out, len, "%c", key);
	else {
		char u[5] = {0};
		if (key < 0x800) {
			u[0] = (char)(0xc0 | (key >> 6));
			u[1] = (char)(0x80 | (key & 0x3f));
		} else if (key < 0x10000) {
			u[0] = (char)(0xe0 | (key >> 12));
			u[1] = (char)(0x80 | ((key >> 6) & 0x3f));
			u[2] = (char)(0x80 | (key & 0x3f));
		} else {
			u[0] = (char)(0xf0 | (key >> 18));
			u[1] = (char)(0x80 | ((key >> 12) & 0x3f));
			u[2] = (char)(0x80 | ((key >> 6) & 0x3f));
			u[3] = (char)(0x80 | (key & 0x3f));
		}
		snprintf(out, len, "%s", u);
	}
}

int keymap_next_key(const char **p)
{
	const char *s = *p + strspn(*p, " "), *end;
	*p = s;
	if (!*s)
		return 0;
	int k = keymap_parse_key(s, &end);
	if (k > 0)
		*p = end;
	return k > 0 ? k : -1;
}

static int parse_keys(const char *keys, struct binding *b)
{
	b->nkeys = 0;
	const char *p = keys;
	int k;
	while ((k = keymap_next_key(&p)) > 0) {
		if (*p && *p != ' ')
			return -1;  /* "jk" is not a key */
		if (b->nkeys < MAX_KEYS)
			b->keys[b->nkeys++] = k;
	}
	return k;
}

struct keymap *keymap_new(void)
{
	struct keymap *k = xcalloc(1, sizeof *k);
	for (int r = 1; r < REQ_N; r++)
		if (parse_keys(info[r].keys, &k->b[r]) < 0)
			abort();  /* a bug in REQ_INFO */
	return k;
}

void keymap_free(struct keymap *k)
{
	free(k);
}

int keymap_bind(struct keymap *k, const char *name, const char *keys, char *msg, size_t msglen)
{
	for (int r = 1; r < REQ_N; r++) {
		if (strcmp(info[r].name, name))
			continue;
		struct binding b;
		if (parse_keys(keys, &b) < 0 || b.nkeys == 0) {
			snprintf(msg, msglen, _("bind.%s: '%s' is not a list of keys (write them like "
			                        "a, G, <C-l>, <Enter>, <F2>)"), name, keys);
			return -1;
		}
		k->b[r] = b;
		return 0;
	}
	struct suggest sg;
	suggest_init(&sg, name);
	for (int r = 1; r < REQ_N; r++)
		suggest_add(&sg, info[r].name);
	if (suggest_best(&sg))
		snprintf(msg, msglen, _("bind.%s: there is no request named %s; did you mean '%s'? "
		                        "('?' in the dashboard lists them)"), name, name,
		         suggest_best(&sg));
	else
		snprintf(msg, msglen, _("bind.%s: there is no request named %s ('?' in the "
		                        "dashboard lists them)"), name, name);
	return -1;
}

unsigned keymap_view_scope(const char *view)
{
	static const char *const views[KS_N] = { "tasks", "log", "diff", "gate", "help", "group" };
	for (int i = 0; view && i < KS_N; i++)
		if (!strcmp(view, views[i]))
			return 1u << i;
	/* Other lists of text (the messages) take the help view's keys. */
	return view ? KS_HELP : 0;
}

unsigned keymap_request_scope(enum request r)
{
	return (unsigned)r < REQ_N ? info[r].scope : 0;
}

static int bits(unsigned x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

enum request keymap_lookup(const struct keymap *k, const char *view, int key)
{
	unsigned scope = view ? keymap_view_scope(view) : KS_ALL;
	enum request found = REQ_NONE;
	for (int r = 1; r < REQ_N; r++) {
		if (!(info[r].scope & scope))
			continue;
		for (int i = 0; i < k->b[r].nkeys; i++) {
			if (k->b[r].keys[i] != key)
				continue;
			/* The narrower scope wins: "n" finds the next match
			 * where there is text, and adds a task in the list. */
			if (found == REQ_NONE || bits(info[r].scope) < bits(info[found].scope))
				found = (enum request)r;
		}
	}
	return found;
}

void keymap_keys_of(const struct keymap *k, enum request r, char *out, size_t len)
{
	struct buf b = {0};
	for (int i = 0; i < k->b[r].nkeys; i++) {
		char name[32];
		keymap_key_name(k->b[r].keys[i], name, sizeof name);
		if (i)
			buf_addc(&b, ' ');
		buf_adds(&b, name);
	}
	snprintf(out, len, "%s", b.data ? b.data : "");
	buf_free(&b);
}

void keymap_first_key(const struct keymap *k, enum request r, char *out, size_t len)
{
	out[0] = '\0';
	if (k)
		keymap_keys_of(k, r, out, len);
	out[strcspn(out, " ")] = '\0';
	if (!out[0])
		snprintf(out, len, ":%s", keymap_request_name(r));
}

const char *keymap_request_name(enum request r)
{
	return (unsigned)r < REQ_N ? info[r].name : "none";
}

/* Text for man(7): every '-' as "\-". */
static void man_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void keymap_write_man(FILE *f)
{
	struct keymap *k = keymap_new();
	for (int r = REQ_NONE + 1; r < REQ_N; r++) {
		char keys[256];
		keymap_keys_of(k, (enum request)r, keys, sizeof keys);
		fputs(".BR ", f);
		man_text(f, keymap_request_name((enum request)r));
		fputs(" \" (", f);
		man_text(f, keys);
		fprintf(f, ")%s\"\n", r + 1 < REQ_N ? "," : ".");
	}
	keymap_free(k);
}

const char *keymap_request_help(enum request r)
{
	return (unsigned)r < REQ_N ? _(info[r].help) : "";
}
