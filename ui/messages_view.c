/* :messages: every message the status bar showed, with its time, whole
 * (wrapped to the width), newest last. */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include "dash.h"
#include "i18n.h"

#define TIME_W 10   /* "12:03:04  " */

/* The rows a message takes at text width w. */
static int rows_of(const char *text, int w)
{
	size_t n = strlen(text), at = 0;
	int rows = 0;
	do {
		at += screen_fit(text + at, n - at, w);
		rows++;
	} while (at < n);
	return rows;
}

static int text_width(const struct view *v)
{
	int w = (v->width > 0 ? v->width : 80) - TIME_W;
	return w > 10 ? w : 10;
}

static void count(struct view *v)
{
	int rows = 0, w = text_width(v);
	for (size_t i = 0; i < v->d->nnotes; i++)
		rows += rows_of(v->d->notes[i].text, w);
	int at_end = v->sel >= v->lines - 1;
	v->lines = rows;
	if (at_end)
		v->sel = rows - 1;   /* new messages stay in sight */
}

static int messages_open(struct view *v, char *msg, size_t msglen)
{
	if (!v->d->nnotes) {
		snprintf(msg, msglen, "%s", _("no messages yet"));
		return -1;
	}
	v->sel = -1;
	v->lines = 0;
	return 0;
}

static void messages_title(struct view *v, char *out, size_t len)
{
	snprintf(out, len, _("paddock  messages: %zu (q closes)"), v->d->nnotes);
}

static void messages_draw(struct view *v, struct screen *s, int y, int h)
{
	int w = text_width(v);
	count(v);
	view_clamp(v);
	int row = 0;
	for (size_t i = 0; i < v->d->nnotes && row < v->top + h; i++) {
		const struct dash_note *m = &v->d->notes[i];
		size_t n = strlen(m->text), at = 0;
		int first = 1;
		do {
			size_t k = screen_fit(m->text + at, n - at, w);
			if (row >= v->top) {
				int ry = y + row - v->top;
				if (first) {
					char when[16];
					time_t t = (time_t)m->at;
					struct tm tm;
					strftime(when, sizeof when, "%H:%M:%S", localtime_r(&t, &tm));
					screen_str(s, 0, ry, TIME_W, ROLE_DIM, when);
				}
				screen_text(s, TIME_W, ry, w, m->role == ROLE_NORMAL ? ROLE_NORMAL :
				            m->role, m->text + at, k);
				if (row == v->sel)
					screen_paint(s, 0, ry, screen_width(s), ROLE_CURSOR);
			}
			at += k;
			first = 0;
			row++;
		} while (at < n && row < v->top + h);
	}
}

static int messages_request(struct view *v, enum request req)
{
	if (req == REQ_COPY) {
		/* The message of the selected row. */
		int row = 0, w = text_width(v);
		for (size_t i = 0; i < v->d->nnotes; i++) {
			row += rows_of(v->d->notes[i].text, w);
			if (row > v->sel) {
				dash_copy(v->d, _("message"), v->d->notes[i].text);
				return 1;
			}
		}
		return 1;
	}
	return 0;
}

const struct view_ops view_messages = {
	.name = "messages",
	.open = messages_open,
	.title = messages_title,
	.draw = messages_draw,
	.request = messages_request,
};
