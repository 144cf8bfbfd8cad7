/* store_reminder: the reminders sent for tasks that wait at a person's
 * gate (schema 16, reminder.h): per task, the gate they were for (since:
 * the time of the step that opened it) and how many went out.  A row of a
 * gate that closed is left as it is: the next gate's first reminder
 * replaces it, and task_row.reminders reads only the current gate's. */
#ifndef PADDOCK_STORE_REMINDER_H
#define PADDOCK_STORE_REMINDER_H

#include "err.h"
#include "store.h"

/* Records reminder n (1, 2, ...) of task id's gate opened at since, at
 * unix time now, unless one of n or more is recorded for that gate
 * already.  One statement, so of two processes (or one before and after a
 * restart) only one records it: 1 when this call did (the caller sends
 * it), 0 when it was recorded before (nothing to send), -1 with e set.
 * It also moves the task's `updated`, so that the dashboard's look at what
 * changed lately (task_query.changed_after) sees the reminder. */
int store_reminder_claim(struct store *s, const char *id, double since, int n, double now,
                         struct err *e);

#endif
