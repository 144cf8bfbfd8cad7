/* scheduler: runs queued tasks, up to `workers` at once, first in first
 * out, in one event loop.  Only one process owns the scheduler (a flock on
 * <data>/scheduler.lock); other processes add and cancel tasks through the
 * store and the owner picks them up promptly. */
#ifndef PADDOCK_SCHEDULER_H
#define PADDOCK_SCHEDULER_H

#include <stdio.h>
#include "config.h"
#include "err.h"

struct scheduler_opts {
	int until_idle;        /* return when nothing is queued or active */
	FILE *progress;        /* if set, one line per transition */
};

/* Takes the owner lock; fails with a message when another process holds it. */
int scheduler_lock(const char *data_dir, int *fd_out, struct err *e);
/* Runs until SIGINT/SIGTERM (or idle, with until_idle).  Takes the lock,
 * marks tasks left active by a dead owner as lost and runs the janitor. */
int scheduler_run(const struct config *cfg, const char *data_dir,
                  const struct scheduler_opts *o, struct err *e);

#endif
