/* test-view: what the views share (view.h): one role per task status,
 * and one clock for every duration the dashboard shows. */
#include "autoconfig.h"
#include "view.h"

#include "tap.h"

static const char *clock_of(double secs)
{
	static char out[32];
	view_clock_text(secs, out, sizeof out);
	return out;
}

static void test_status_role(void)
{
	static const enum role want[TASK_NSTATUS] = {
		[TASK_QUEUED] = ROLE_TASK_QUEUED, [TASK_PREPARING] = ROLE_TASK_ACTIVE,
		[TASK_RUNNING] = ROLE_TASK_ACTIVE, [TASK_TESTING] = ROLE_TASK_ACTIVE,
		[TASK_REVIEW] = ROLE_TASK_REVIEW, [TASK_PUSHING] = ROLE_TASK_ACTIVE,
		[TASK_DONE] = ROLE_TASK_DONE, [TASK_FAILED] = ROLE_TASK_FAILED,
		[TASK_REJECTED] = ROLE_TASK_ENDED, [TASK_CANCELLED] = ROLE_TASK_ENDED,
		[TASK_LOST] = ROLE_TASK_FAILED,
	};
	for (int s = 0; s < TASK_NSTATUS; s++)
		is_str(role_name(view_status_role((enum task_status)s)), role_name(want[s]),
		       "status %s is drawn as %s", task_status_name((enum task_status)s),
		       role_name(want[s]));
}

/* The list and the group view read the same: m:ss, h:mm:ss, then days. */
static void test_clock(void)
{
	is_str(clock_of(0), "0:00", "no time: 0:00");
	is_str(clock_of(-3), "0:00", "a clock a moment behind: 0:00");
	is_str(clock_of(252), "4:12", "minutes and seconds");
	is_str(clock_of(3599), "59:59", "the last second under an hour");
	is_str(clock_of(3600), "1:00:00", "an hour: h:mm:ss");
	is_str(clock_of(86399), "23:59:59", "the last second under a day");
	is_str(clock_of(86400), "1d", "a day: 1d");
	is_str(clock_of(2 * 86400 + 3600), "2d", "two days and an hour: 2d");
	char out[32];
	view_short_text(42, out, sizeof out);
	is_str(out, "42s", "short: seconds");
	view_short_text(3 * 3600 + 59, out, sizeof out);
	is_str(out, "3h", "short: the largest unit");
}

int main(void)
{
	test_status_role();
	test_clock();
	return tap_done();
}
