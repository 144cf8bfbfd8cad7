/* The help overlay, generated from the keymap table. */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include "dash.h"
#include "i18n.h"

static int help_open(struct view *v, char *msg, size_t msglen)
{
	(void)msg;
	(void)msglen;
	v->lines = REQ_N - 1 + 8;
	v->sel = -1;
	return 0;
}

static void help_title(struct view *v, char *out, size_t len)
{
	(void)v;
	snprintf(out, len, "%s", _("paddock  help: keys and commands (q closes)"));
}

static const char *const commands[] = {
	N_(":theme NAME       switch the colour theme (dark, light, high-contrast, mono)"),
	N_(":log :diff :gate  open a view of the selected task"),
	N_(":filter NAME      show all, active, review or ended tasks"),
	N_(":save-display F   write the screen to file F"),
	N_(":help             this help"),
	N_(":quit             quit"),
};

static void help_draw(struct view *v, struct screen *s, int y, int h)
{
	int w = screen_width(s);
	/* The key column is as wide as the widest key list. */
	int kw = 8;
	for (int r = 1; r < REQ_N; r++) {
		char keys[128];
		keymap_keys_of(v->d->keys, (enum request)r, keys, sizeof keys);
		int tw = screen_textwidth(keys, strlen(keys));
		if (tw > kw)
			kw = tw;
	}
	if (kw > w / 2)
		kw = w / 2;
	int row = 0;
	for (int r = 1; r < REQ_N; r++, row++) {
		if (row < v->top)
			continue;
		if (row - v->top >= h)
			return;
		char keys[128];
		keymap_keys_of(v->d->keys, (enum request)r, keys, sizeof keys);
		int ry = y + row - v->top;
		screen_str(s, 1, ry, kw, ROLE_HELP_KEY, keys);
		screen_str(s, kw + 3, ry, w - kw - 3, ROLE_NORMAL, keymap_request_help((enum request)r));
	}
	row++;
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++, row++) {
		if (row < v->top)
			continue;
		if (row - v->top >= h)
			return;
		screen_str(s, 1, y + row - v->top, w - 1, ROLE_NORMAL, _(commands[i]));
	}
}

static int help_request(struct view *v, enum request req)
{
	if (req == REQ_MOVE_DOWN || req == REQ_PAGE_DOWN) {
		if (v->top + v->height < v->lines)
			v->top += req == REQ_MOVE_DOWN ? 1 : v->height - 1;
		return 1;
	}
	if (req == REQ_MOVE_UP || req == REQ_PAGE_UP) {
		v->top -= req == REQ_MOVE_UP ? 1 : v->height - 1;
		if (v->top < 0)
			v->top = 0;
		return 1;
	}
	if (req == REQ_HELP)
		return 1;
	return 0;
}

const struct view_ops view_help = {
	.name = "help",
	.open = help_open,
	.title = help_title,
	.draw = help_draw,
	.request = help_request,
};
