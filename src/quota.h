/* quota: what one task may use (the [limits] section of the
 * configuration, config.h), the same for every sandbox backend
 * (sandbox.h).  A header of its own so that the sandbox does not depend
 * on the whole configuration. */
#ifndef PADDOCK_QUOTA_H
#define PADDOCK_QUOTA_H

#include <stdint.h>

struct limits {
	double timeout;        /* seconds of wall clock for the sandbox steps */
	uint64_t memory;       /* bytes (memory cgroup) */
	long pids;             /* processes (pids cgroup) */
	uint64_t disk;         /* bytes (tmpfs size of the writable layer, /tmp, home) */
	uint64_t output;       /* bytes of agent+test output kept in the log */
	uint64_t bundle;       /* bytes: cap on the result bundle */
	double budget;         /* USD a task may spend on model calls; 0: none */
	uint64_t budget_tokens;/* model tokens (input, output and cache) a task may
	                          use; 0: none */
	int model_concurrency; /* model requests a task's gateway has upstream at
	                          once; more wait their turn (default 4) */
	double cpus;           /* CPUs a sandbox may use (cpu cgroup quota; each
	                          process's RLIMIT_CPU as a backstop); 0: none.
	                          Default: half the online CPUs, rounded up */
	int cpus_set;          /* cpus came from the file: without a cgroup cpu
	                          controller the task then fails instead of
	                          relying on the backstop alone */
};

#endif
