/* doctor: whether paddock can run tasks here, one check at a time, each
 * with what to do when it fails (paddock doctor; paddock(1), DOCTOR).
 * The checks that decide whether tasks can run at all are the ones the
 * sandbox backend's preflight makes, so that serve and the dashboard stop
 * on the same first failure doctor names. */
#ifndef PADDOCK_DOCTOR_H
#define PADDOCK_DOCTOR_H

#include <stddef.h>
#include "config.h"

enum doctor_status {
	DOCTOR_OK,
	DOCTOR_INFO,           /* a fact (the mode, what is used instead) */
	DOCTOR_WARN,           /* tasks run, but something they may need is not there */
	DOCTOR_FAIL            /* tasks cannot run */
};

struct doctor_check {
	char *name;            /* stable, for --json: "bwrap", "userns", ... */
	enum doctor_status status;
	char *detail;          /* what was found (translated) */
	char *fix;             /* what to do, or NULL */
};

struct doctor {
	struct doctor_check *v;
	size_t n;
	int can_run;           /* no check failed */
};

/* Runs every check for cfg (NULL: the configuration could not be read,
 * whose message is cfg_error) and data_dir (NULL: none yet).  Probes
 * namespaces in children, lists each repo's remote (bounded by a timeout)
 * and binds the API's address for a moment. */
void doctor_run(struct doctor *d, const struct config *cfg, const char *cfg_error,
                const char *data_dir);
void doctor_free(struct doctor *d);
/* "ok", "info", "warn", "fail". */
const char *doctor_status_name(enum doctor_status s);

#endif
