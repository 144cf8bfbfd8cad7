#include "autoconfig.h"
#include "view.h"

#include <stdio.h>
#include "i18n.h"

int view_scroll(struct view *v, enum request req)
{
	int page = v->height > 1 ? v->height - 1 : 1;
	switch (req) {
	case REQ_MOVE_UP: v->sel--; break;
	case REQ_MOVE_DOWN: v->sel++; break;
	case REQ_PAGE_UP: v->sel -= page; v->top -= page; break;
	case REQ_PAGE_DOWN: v->sel += page; v->top += page; break;
	case REQ_FIRST: v->sel = 0; break;
	case REQ_LAST: v->sel = v->lines - 1; break;
	default: return 0;
	}
	view_clamp(v);
	return 1;
}

void view_clamp(struct view *v)
{
	if (v->sel >= v->lines)
		v->sel = v->lines - 1;
	if (v->sel < 0)
		v->sel = v->lines > 0 ? 0 : -1;
	int h = v->height > 0 ? v->height : 1;
	if (v->top > v->lines - h)
		v->top = v->lines - h;
	if (v->sel >= 0 && v->sel < v->top)
		v->top = v->sel;
	if (v->sel >= v->top + h)
		v->top = v->sel - h + 1;
	if (v->top < 0)
		v->top = 0;
}

int view_sideways(struct view *v, enum request req)
{
	int step = v->width > 2 ? v->width / 2 : 1;
	switch (req) {
	case REQ_SCROLL_LEFT:
		v->left = v->left > step ? v->left - step : 0;
		return 1;
	case REQ_SCROLL_RIGHT:
		if (!v->wrap && !v->more_right)
			return 2;
		if (!v->wrap)
			v->left += step;
		return 1;
	case REQ_WRAP:
		v->wrap = !v->wrap;
		v->left = 0;
		return 1;
	default:
		return 0;
	}
}

enum role view_status_role(enum task_status s)
{
	switch (s) {
	case TASK_QUEUED: return ROLE_TASK_QUEUED;
	case TASK_PREPARING: case TASK_RUNNING: case TASK_TESTING: case TASK_PUSHING:
		return ROLE_TASK_ACTIVE;
	case TASK_REVIEW: return ROLE_TASK_REVIEW;
	case TASK_DONE: return ROLE_TASK_DONE;
	case TASK_FAILED: case TASK_LOST: return ROLE_TASK_FAILED;
	case TASK_REJECTED: case TASK_CANCELLED: return ROLE_TASK_ENDED;
	case TASK_NSTATUS: break;
	}
	return ROLE_NORMAL;
}

void view_clock_text(double secs, char *out, size_t len)
{
	long s = secs < 0 ? 0 : (long)secs;
	if (s >= 86400)
		view_short_text(secs, out, len);
	else if (s >= 3600)
		snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

void view_short_text(double secs, char *out, size_t len)
{
	long s = secs < 0 ? 0 : (long)secs;
	if (s < 60)
		snprintf(out, len, _("%lds"), s);
	else if (s < 3600)
		snprintf(out, len, _("%ldm"), s / 60);
	else if (s < 86400)
		snprintf(out, len, _("%ldh"), s / 3600);
	else
		snprintf(out, len, _("%ldd"), s / 86400);
}
