#include "autoconfig.h"
#include "clock.h"

#include <errno.h>
#include <time.h>

static double clock_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double clock_wall(void)
{
	return clock_read(CLOCK_REALTIME);
}

double clock_mono(void)
{
	return clock_read(CLOCK_MONOTONIC);
}

void clock_sleep(double secs)
{
	if (secs <= 0)
		return;
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
