/* The help view, generated from the keymap table and the : commands:
 * grouped by view (as tig's), with the keys as bound now; it scrolls,
 * and / searches it.  Nothing is cut: long text and keys wider than
 * their column go on over the rows below.  It opens at the section of the view it was opened
 * from. */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "buf.h"
#include "dash.h"
#include "i18n.h"

enum hkind { H_SECTION, H_ENTRY, H_BLANK };

struct hentry {
	enum hkind kind;
	char *keys;                /* the left column (keys, :command) */
	const char *text;          /* translated; not owned */
};

/* One row on screen: a piece of an entry's text, and of its keys. */
struct hrow {
	int entry;
	size_t off, len;           /* of the entry's text */
	size_t koff, klen;         /* of its keys (klen 0: none on this row) */
};

struct help {
	struct hentry *e;
	int n;
	struct hrow *rows;
	int nrows, width, kw;      /* the layout, for this width */
	int start;                 /* the section to open at */
	char *pattern;             /* the last search */
	int back;                  /* it was backward */
};

static void add(struct help *h, enum hkind kind, char *keys, const char *text)
{
	h->e = xrealloc(h->e, (size_t)(h->n + 1) * sizeof *h->e);
	h->e[h->n++] = (struct hentry){ kind, keys, text };
}

static const struct {
	unsigned scope;
	const char *title;
} sections[] = {
	{ KS_ALL, N_("Everywhere") },
	{ KS_TASKS, N_("The task list") },
	{ KS_LOG, N_("The log view") },
	{ KS_DIFF, N_("The diff view") },
	{ KS_GATE, N_("The gate view") },
	{ KS_GROUP, N_("The group view") },
	{ KS_HELP, N_("Help and messages") },
};

static const char *const editor_keys[][2] = {
	{ "<Left> <Right> <Home> <End>", N_("move in the line") },
	{ "<C-a> <C-e>", N_("to the start or the end of the line (<C-e> in notes: $EDITOR)") },
	{ "<M-b> <M-f> <C-Left> <C-Right>", N_("a word back or forward") },
	{ "<C-u> <C-k>", N_("delete to the start or to the end of the line") },
	{ "<C-w> <M-d>", N_("delete the word before or after the cursor") },
	{ "<Up> <Down>", N_("the lines of notes; earlier commands at the : prompt") },
	{ "<Tab>", N_("complete a command, a theme, a filter or a task id") },
	{ "<C-x> <C-e>", N_("write the notes in $VISUAL, $EDITOR, editor or vi") },
	{ "<C-d>", N_("send the notes") },
	{ "<Esc> <C-c>", N_("cancel (notes that hold text ask first)") },
};

static void build_keys(struct help *h, const struct keymap *k, unsigned here)
{
	for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
		if (sections[s].scope == here)
			h->start = h->n;
		add(h, H_SECTION, NULL, _(sections[s].title));
		for (int r = 1; r < REQ_N; r++) {
			unsigned sc = keymap_request_scope((enum request)r);
			/* Everywhere lists the requests of every view; a view's
			 * section those of its own. */
			if (s == 0 ? sc != KS_ALL : (sc == KS_ALL || !(sc & sections[s].scope)))
				continue;
			char keys[128];
			keymap_keys_of(k, (enum request)r, keys, sizeof keys);
			add(h, H_ENTRY, xstrdup(keys), keymap_request_help((enum request)r));
		}
		add(h, H_BLANK, NULL, "");
	}
}

static void build(struct help *h, const struct keymap *k, unsigned here)
{
	build_keys(h, k, here);
	add(h, H_SECTION, NULL, _("Commands (: opens the prompt)"));
	for (const struct command *c = command_table; c->name; c++)
		add(h, H_ENTRY, *c->args ? xasprintf(":%s %s", c->name, _(c->args)) :
		    xasprintf(":%s", c->name), _(c->help));
	add(h, H_BLANK, NULL, "");
	add(h, H_SECTION, NULL, _("The line editor (prompts, searches, notes)"));
	for (size_t i = 0; i < sizeof editor_keys / sizeof editor_keys[0]; i++)
		add(h, H_ENTRY, xstrdup(editor_keys[i][0]), _(editor_keys[i][1]));
}

/* The rows at width w: long help text goes on under itself. */
static void layout(struct view *v, int w)
{
	struct help *h = v->priv;
	if (h->rows && h->width == w)
		return;
	h->kw = 8;
	for (int i = 0; i < h->n; i++)
		if (h->e[i].keys) {
			int tw = screen_textwidth(h->e[i].keys, strlen(h->e[i].keys));
			if (tw > h->kw)
				h->kw = tw;
		}
	if (h->kw > w / 3)
		h->kw = w / 3;
	free(h->rows);
	h->rows = NULL;
	h->nrows = 0;
	int tw = w - h->kw - 4;
	if (tw < 10)
		tw = 10;
	for (int i = 0; i < h->n; i++) {
		const char *t = h->e[i].text, *keys = h->e[i].keys ? h->e[i].keys : "";
		size_t n = strlen(t), at = 0, kn = strlen(keys), kat = 0;
		int room = h->e[i].kind == H_ENTRY ? tw : w - 1;
		/* Keys wider than their column go on under themselves, as
		 * the text does, broken between keys where they can be. */
		do {
			size_t k = at < n ? screen_fit(t + at, n - at, room) : 0;
			size_t kk = kat < kn ? screen_fit(keys + kat, kn - kat, h->kw) : 0;
			h->rows = xrealloc(h->rows, (size_t)(h->nrows + 1) * sizeof *h->rows);
			h->rows[h->nrows++] = (struct hrow){ i, at, k, kat, kk };
			at += k;
			kat += kk;
		} while (at < n || kat < kn);
	}
	h->width = w;
	v->lines = h->nrows;
}

static int help_open(struct view *v, char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	struct help *h = v->priv;
	struct dash *d = v->d;
	const struct view *below = d->nviews ? d->stack[d->nviews - 1] : NULL;
	build(h, d->keys, below ? keymap_view_scope(below->ops->name) : KS_ALL);
	layout(v, screen_width(d->scr));
	for (int r = 0; r < h->nrows; r++)
		if (h->rows[r].entry == h->start && h->rows[r].off == 0) {
			v->sel = r;
			v->top = r;
			break;
		}
	return 0;
}

static void help_title(struct view *v, char *out, size_t len)
{
	(void)v;
	snprintf(out, len, "%s", _("paddock  help: keys and commands (q closes, / searches)"));
}

static void help_draw(struct view *v, struct screen *s, int y, int h)
{
	struct help *p = v->priv;
	int w = screen_width(s);
	layout(v, w);
	view_clamp(v);
	for (int r = v->top; r < p->nrows && r - v->top < h; r++) {
		const struct hrow *row = &p->rows[r];
		const struct hentry *e = &p->e[row->entry];
		int ry = y + r - v->top;
		if (e->kind == H_SECTION) {
			screen_text(s, 0, ry, w, ROLE_HEADER, e->text + row->off, row->len);
		} else if (e->kind == H_ENTRY) {
			screen_text(s, 1, ry, p->kw, ROLE_HELP_KEY, e->keys + row->koff,
			            row->klen);
			screen_text(s, p->kw + 3, ry, w - p->kw - 3, ROLE_NORMAL, e->text + row->off,
			            row->len);
		}
		if (r == v->sel)
			screen_paint(s, 0, ry, w, ROLE_CURSOR);
	}
}

static int row_matches(const struct help *h, int r, const char *pat)
{
	const struct hentry *e = &h->e[h->rows[r].entry];
	if (h->rows[r].off)
		return 0;          /* an entry matches once, on its first row */
	return (e->keys && strcasestr(e->keys, pat)) || strcasestr(e->text, pat);
}

/* The next row that matches, going round; dir 1 or -1. */
static void help_find(struct view *v, int dir)
{
	struct help *h = v->priv;
	if (!h->pattern || !*h->pattern) {
		dash_message(v->d, ROLE_ERROR, "%s", _("no search yet: / searches the help"));
		return;
	}
	for (int k = 1; k <= h->nrows; k++) {
		int r = ((v->sel + dir * k) % h->nrows + h->nrows) % h->nrows;
		if (row_matches(h, r, h->pattern)) {
			if ((dir > 0 && r <= v->sel) || (dir < 0 && r >= v->sel))
				dash_message(v->d, ROLE_NOTICE, "%s", _("search went round"));
			v->sel = r;
			view_clamp(v);
			return;
		}
	}
	dash_message(v->d, ROLE_ERROR, _("'%s' is not in the help"), h->pattern);
}

static void help_search_done(struct dash *d, void *arg, const char *text)
{
	(void)d;
	struct view *v = arg;
	struct help *h = v->priv;
	if (!text)
		return;
	if (*text) {
		free(h->pattern);
		h->pattern = xstrdup(text);
	}
	help_find(v, h->back ? -1 : 1);
}

static int help_request(struct view *v, enum request req)
{
	switch (req) {
	case REQ_HELP:
		return 1;
	case REQ_SEARCH:
	case REQ_SEARCH_BACK:
		((struct help *)v->priv)->back = req == REQ_SEARCH_BACK;
		dash_ask(v->d, req == REQ_SEARCH ? "/" : "?", 0, NULL, help_search_done, v);
		return 1;
	case REQ_FIND_NEXT:
	case REQ_FIND_PREV:
		help_find(v, (req == REQ_FIND_NEXT) != ((struct help *)v->priv)->back ? 1 : -1);
		return 1;
	case REQ_SCROLL_LEFT:
	case REQ_SCROLL_RIGHT:
		return 1;          /* nothing is cut: long text wraps */
	default:
		return 0;
	}
}

static void help_close(struct view *v)
{
	struct help *h = v->priv;
	for (int i = 0; i < h->n; i++)
		free(h->e[i].keys);
	free(h->e);
	free(h->rows);
	free(h->pattern);
}

const struct view_ops view_help = {
	.name = "help",
	.flags = VIEW_STACKS,
	.priv_size = sizeof(struct help),
	.open = help_open,
	.title = help_title,
	.draw = help_draw,
	.request = help_request,
	.close = help_close,
};
