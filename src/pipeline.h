/* pipeline: one task's life inside its supervisor process.
 *
 * The scheduler forks a supervisor per task; the supervisor runs the steps
 * (mirror, template, sandbox, agent, tests, hand-off, bundle import) and
 * reports to the scheduler over a pipe, one line per event (report.h).
 * At the gate the supervisor reads commands from cmd_fd: "resume N\n"
 * runs round N in the same sandbox (the scheduler has moved the task to
 * running); anything else, or the gate timeout, tears it down.
 * The scheduler alone writes the store. */
#ifndef PADDOCK_PIPELINE_H
#define PADDOCK_PIPELINE_H

#include "config.h"
#include "sandbox.h"
#include "store.h"

struct pipeline_job {
	const struct config *cfg;
	const struct sandbox_backend *be;  /* makes the task's sandboxes */
	const char *data_dir;
	const struct task_row *task;
	int cmd_fd;                /* commands from the scheduler at the gate
	                              ("resume N", "teardown"), or -1 */
	int resume_round;          /* 0: a new task; N: run round N on a new
	                              sandbox rebuilt at the task's head */
};

/* Runs the whole task; returns the supervisor's exit status. */
int pipeline_run(const struct pipeline_job *job, int report_fd);

#endif
