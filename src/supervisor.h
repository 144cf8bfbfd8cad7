/* supervisor: the scheduler's long-lived children, each a fresh exec of
 * this binary (`paddock supervise`, a verb for paddock's own use).
 *
 * The processes that host a scheduler have threads (the HTTP API's, the
 * GitHub poller, the reconcile thread).  A copy of such a process made by
 * fork alone inherits every lock another thread held at that moment,
 * locked for good: the copy hangs the first time it takes one (malloc's
 * under the sanitizer, libgit2's, libcurl's).  git's run-command always
 * execs for this reason.  So a task's supervisor (which forks its
 * gateway, bwrap and the rest while it is still single-threaded), the
 * hourly template prune and the mirrors' maintenance start as a new
 * program, and what they need of the host crosses the exec explicitly:
 * the configuration's bytes as the host read them (a memfd), the data
 * directory, the root helper's address (privsep.h), the pipes to the
 * scheduler, and whether children leave the terminal (child.h). */
#ifndef PADDOCK_SUPERVISOR_H
#define PADDOCK_SUPERVISOR_H

#include "child.h"
#include "err.h"

struct config;

enum supervisor_kind {
	SUPERVISOR_TASK,       /* a task's rounds: pipeline_run */
	SUPERVISOR_PRUNE,      /* template_prune_unused */
	SUPERVISOR_MAINTAIN,   /* mirror_maintain */
};

struct supervisor_spec {
	enum supervisor_kind kind;
	const struct config *cfg;
	const char *data_dir;
	/* SUPERVISOR_TASK */
	const char *task_id;
	int resume;            /* pipeline_job.resume_round */
	int report_fd;         /* the report pipe's write end */
	int cmd_fd;            /* the command pipe's read end */
	/* SUPERVISOR_PRUNE */
	double max_age;        /* seconds (paddock.template-max-age) */
};

/* Starts the supervisor sp describes in c, whose flags, stdio, on_exit
 * and owner are the caller's (argv, keep and CHILD_CLOSE_FDS are set
 * here: it keeps only the descriptors sp names).  Returns once it runs,
 * as child_start; -1 with e set when it cannot. */
int supervisor_start(struct child *c, const struct supervisor_spec *sp, struct err *e);

/* `paddock supervise ...` (argv[0] is "supervise"): what supervisor_start
 * asked for.  Returns the exit status: the pipeline's for a task, 0 for
 * the others, 2 for arguments that are not supervisor_start's. */
int supervisor_main(int argc, char **argv);

#endif
