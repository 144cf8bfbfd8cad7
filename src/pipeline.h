/* pipeline: one task's life inside its supervisor process.
 *
 * The scheduler forks a supervisor per task; the supervisor runs the steps
 * (mirror, template, sandbox, agent, tests, hand-off, bundle import) and
 * reports to the scheduler over a pipe, one line per event:
 *   status <name>\n      the task moved (preparing, running, testing)
 *   base <sha>\n         the base commit
 *   head <sha>\n         the imported tip
 *   done\n               hand-off imported; the task goes to review
 *   fail <message>\n     the task failed; message is one line "<step>: <why>"
 * The scheduler alone writes the store. */
#ifndef PADDOCK_PIPELINE_H
#define PADDOCK_PIPELINE_H

#include "config.h"
#include "store.h"

struct pipeline_job {
	const struct config *cfg;
	const char *data_dir;
	const struct task_row *task;
};

/* Runs the whole task; returns the supervisor's exit status. */
int pipeline_run(const struct pipeline_job *job, int report_fd);

#endif
