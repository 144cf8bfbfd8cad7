/* pipeline: one task's life inside its supervisor process.
 *
 * The scheduler forks a supervisor per task; the supervisor runs the steps
 * (mirror, template, sandbox, agent, tests, hand-off, bundle import) and
 * reports to the scheduler over a pipe, one line per event:
 *   status <name>\n      the task moved (preparing, running, testing)
 *   base <sha>\n         the base commit
 *   head <sha>\n         the imported tip
 *   summary <text>\n     the agent's summary of the round
 *   gate <json>\n        the round's gate summary (gate.h)
 *   done\n               hand-off imported; the task goes to review
 *   nochange\n           the agent changed nothing and the tests pass: done
 *   fail <message>\n     the task failed; message is "<step>: <why>"
 *   cancelled\n          stopped by SIGTERM
 *   kept\n               the sandbox waits at the gate for the next round
 *   released\n           the sandbox was torn down after the gate
 * Newlines and backslashes in a message travel as \\n and \\\\.
 * At the gate the supervisor reads commands from cmd_fd: "resume N\n"
 * runs round N in the same sandbox (the scheduler has moved the task to
 * running); anything else, or the gate timeout, tears it down.
 * The scheduler alone writes the store. */
#ifndef PADDOCK_PIPELINE_H
#define PADDOCK_PIPELINE_H

#include "config.h"
#include "store.h"

struct pipeline_job {
	const struct config *cfg;
	const char *data_dir;
	const struct task_row *task;
	int cmd_fd;                /* commands from the scheduler at the gate
	                              ("resume N", "teardown"), or -1 */
	int resume_round;          /* 0: a new task; N: run round N on a new
	                              sandbox rebuilt at the task's head */
};

/* Writes one report line (text without its newline) to fd, escaped as
 * above, in one write when it fits PIPE_BUF, so that lines from the
 * supervisor and its gateway never mix.  Returns -1 when it could not. */
int pipeline_report_write(int fd, const char *text, size_t len);

/* Runs the whole task; returns the supervisor's exit status. */
int pipeline_run(const struct pipeline_job *job, int report_fd);

#endif
