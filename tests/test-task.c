/* Unit tests: the task state machine and task ids. */
#include "autoconfig.h"
#include "task.h"

#include <stdlib.h>
#include "tap.h"

int main(void)
{
	/* Every status has a name that parses back. */
	for (int s = 0; s < TASK_NSTATUS; s++)
		is_int(task_status_parse(task_status_name((enum task_status)s)), s,
		       "status %s round-trips", task_status_name((enum task_status)s));
	is_int(task_status_parse("bogus"), -1, "unknown status name is refused");

	/* The life of a task. */
	ok(task_transition_allowed(TASK_QUEUED, TASK_PREPARING), "queued -> preparing");
	ok(task_transition_allowed(TASK_PREPARING, TASK_RUNNING), "preparing -> running");
	ok(task_transition_allowed(TASK_RUNNING, TASK_TESTING), "running -> testing");
	ok(task_transition_allowed(TASK_TESTING, TASK_REVIEW), "testing -> review");
	ok(task_transition_allowed(TASK_REVIEW, TASK_PUSHING), "review -> pushing");
	ok(task_transition_allowed(TASK_PUSHING, TASK_DONE), "pushing -> done");
	ok(task_transition_allowed(TASK_REVIEW, TASK_RUNNING), "review -> running (request changes)");
	ok(task_transition_allowed(TASK_TESTING, TASK_FAILED), "testing -> failed");
	ok(task_transition_allowed(TASK_QUEUED, TASK_CANCELLED), "queued -> cancelled");
	ok(task_transition_allowed(TASK_RUNNING, TASK_LOST), "running -> lost");
	ok(!task_transition_allowed(TASK_QUEUED, TASK_REVIEW), "queued cannot jump to review");
	ok(!task_transition_allowed(TASK_QUEUED, TASK_RUNNING), "queued cannot skip preparing");
	/* Terminal states have no way out, but a lost task can be queued
	 * again. */
	ok(task_transition_allowed(TASK_LOST, TASK_QUEUED), "lost -> queued (again)");
	ok(!task_transition_allowed(TASK_LOST, TASK_RUNNING), "lost cannot jump to running");
	for (int from = 0; from < TASK_NSTATUS; from++) {
		if (!task_status_is_terminal((enum task_status)from) || from == TASK_LOST)
			continue;
		int any = 0;
		for (int to = 0; to < TASK_NSTATUS; to++)
			any |= task_transition_allowed((enum task_status)from, (enum task_status)to);
		ok(!any, "%s is final", task_status_name((enum task_status)from));
	}
	ok(task_status_is_active(TASK_RUNNING) && !task_status_is_active(TASK_REVIEW),
	   "running is active, review is not");

	/* Ids: right shape, distinct, safe as path and ref components. */
	char a[TASK_ID_LEN + 1], b[TASK_ID_LEN + 1];
	task_id_new(a);
	task_id_new(b);
	is_int((long long)strlen(a), TASK_ID_LEN, "id has %d characters", TASK_ID_LEN);
	ok(strcmp(a, b) != 0, "two ids differ (%s, %s)", a, b);
	ok(task_id_valid(a, 0), "a new id is valid");
	ok(task_id_valid("k3x9", 1) && !task_id_valid("k3x9", 0), "prefix only where allowed");
	ok(!task_id_valid("../etc", 1), "'../etc' is not an id");
	ok(!task_id_valid("K3X9M2QA7D", 0), "upper case is not an id");
	ok(!task_id_valid("k3x9m2qa7dz", 0), "too long is not an id");
	int distinct = 1;
	char ids[200][TASK_ID_LEN + 1];
	for (int i = 0; i < 200; i++) {
		task_id_new(ids[i]);
		for (int j = 0; j < i; j++)
			distinct &= strcmp(ids[i], ids[j]) != 0;
	}
	ok(distinct, "200 ids are all distinct");
	return tap_done();
}
