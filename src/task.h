/* task: task statuses, the state machine between them, and task ids. */
#ifndef PADDOCK_TASK_H
#define PADDOCK_TASK_H

#include <stddef.h>

enum task_status {
	TASK_QUEUED,
	TASK_PREPARING,
	TASK_RUNNING,
	TASK_TESTING,
	TASK_REVIEW,
	TASK_PUSHING,
	TASK_DONE,
	TASK_FAILED,
	TASK_REJECTED,
	TASK_CANCELLED,
	TASK_LOST,
	TASK_NSTATUS
};

/* "queued", "preparing", ... (not translated: they are data). */
const char *task_status_name(enum task_status s);
/* The status's name in the language of messages (for people: the
 * dashboard); task_status_name is the one scripts read. */
const char *task_status_label(enum task_status s);
/* -1 if unknown. */
int task_status_parse(const char *name);
/* A failed task's reason word (budget, tool, tests, ..., or the name of
 * the step it failed in) in the language of messages, for people; an
 * unknown word as it is; the stored word is the one scripts read.  NULL
 * for NULL. */
const char *task_reason_label(const char *reason);
/* 1 if a task may move from `from` to `to`. */
int task_transition_allowed(enum task_status from, enum task_status to);
/* 1 for done, failed, rejected, cancelled, lost. */
int task_status_is_terminal(enum task_status s);
/* 1 for preparing, running, testing, pushing (a process works on it). */
int task_status_is_active(enum task_status s);

/* Task ids: 10 characters of lowercase base32 from the clock and the
 * kernel's random source, e.g. "k3x9m2qa7d".  Never derived from user
 * text; safe as a path component and in a ref name. */
#define TASK_ID_LEN 10
void task_id_new(char out[TASK_ID_LEN + 1]);
/* 1 if s has the shape of a task id (or a prefix of at least 4 chars when
 * prefix_ok). */
int task_id_valid(const char *s, int prefix_ok);

/* Largest task text accepted (exclusive): 128 KiB. */
#define TASK_TEXT_MAX (128 * 1024)

#endif
