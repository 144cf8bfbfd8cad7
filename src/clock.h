/* clock: the two clocks the engine and the dashboard read, in seconds as
 * doubles.  Wall time for what is stored or shown (CLOCK_REALTIME),
 * monotonic time for deadlines and intervals (CLOCK_MONOTONIC). */
#ifndef PADDOCK_CLOCK_H
#define PADDOCK_CLOCK_H

double clock_wall(void);
double clock_mono(void);
/* Sleeps secs seconds (signals do not cut it short). */
void clock_sleep(double secs);

#endif
