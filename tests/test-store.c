/* Unit tests: the SQLite store (schema, tasks, transitions, steps). */
#include "autoconfig.h"
#include "store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fsx.h"
#include "tap.h"

int main(void)
{
	char dir[] = "/tmp/paddock-store.XXXXXX";
	if (!mkdtemp(dir))
		return 99;
	char db[256];
	snprintf(db, sizeof db, "%s/paddock.db", dir);
	struct err e = {{0}};
	struct store *s;

	is_int(store_open(&s, db, &e), 0, "open a new store");
	is_int(store_schema_version(s), 2, "schema is at version 2");

	char id1[TASK_ID_LEN + 1], id2[TASK_ID_LEN + 1];
	is_int(store_task_add(s, "demo", "fixer", "Fix the bug", NULL, id1, &e), 0, "add a task");
	is_int(store_task_add(s, "demo", "fixer", "Second", NULL, id2, &e), 0, "add another");
	ok(strcmp(id1, id2) != 0, "ids differ");

	struct task_row t;
	is_int(store_task_get(s, id1, &t, &e), 0, "get by id");
	is_str(t.text, "Fix the bug", "text stored");
	is_str(task_status_name(t.status), "queued", "status queued");
	char branch[64];
	snprintf(branch, sizeof branch, "paddock/%s", id1);
	is_str(t.branch, branch, "branch is paddock/<id>");
	is_int((long long)t.nsteps, 1, "one step recorded");
	ok(t.nsteps && t.steps[0].at == 0 && t.steps[0].status == TASK_QUEUED,
	   "first step is queued at 0");
	task_row_free(&t);

	/* Prefix lookup. */
	char pre[5];
	memcpy(pre, id1, 4);
	pre[4] = '\0';
	int prc = store_task_get(s, pre, &t, &e);
	ok(prc == 0 ? !strcmp(t.id, id1) : strstr(e.msg, "ambiguous") != NULL,
	   "4-char prefix finds the task or says it is ambiguous");
	if (prc == 0)
		task_row_free(&t);
	ok(store_task_get(s, "zzzzzzzzzz", &t, &e) < 0 && strstr(e.msg, "no task"),
	   "unknown id: 'no task' (%s)", e.msg);
	ok(store_task_get(s, "../x", &t, &e) < 0 && strstr(e.msg, "not a task id"),
	   "malformed id refused");

	/* FIFO. */
	is_int(store_task_next_queued(s, &t, &e), 1, "a queued task is next");
	is_str(t.id, id1, "the oldest first");
	task_row_free(&t);

	/* Transitions and steps. */
	is_int(store_task_transition(s, id1, TASK_PREPARING, NULL, &e), 0, "-> preparing");
	is_int(store_task_transition(s, id1, TASK_RUNNING, NULL, &e), 0, "-> running");
	ok(store_task_transition(s, id1, TASK_QUEUED, NULL, &e) < 0 &&
	   strstr(e.msg, "running") && strstr(e.msg, "queued"),
	   "running -> queued refused, naming both (%s)", e.msg);
	is_int(store_task_set_base(s, id1, "0123456789012345678901234567890123456789", &e), 0,
	       "set base");
	is_int(store_task_transition(s, id1, TASK_FAILED, "testing: test_x failed", &e), 0,
	       "-> failed with error");
	is_int(store_task_get(s, id1, &t, &e), 0, "get again");
	is_str(task_status_name(t.status), "failed", "status failed");
	is_str(t.error, "testing: test_x failed", "error kept");
	is_str(t.base, "0123456789012345678901234567890123456789", "base kept");
	is_int((long long)t.nsteps, 4, "four steps");
	int mono = 1;
	for (size_t i = 1; i < t.nsteps; i++)
		mono &= t.steps[i].at >= t.steps[i - 1].at;
	ok(mono, "step times never go backwards");
	ok(t.nsteps == 4 && t.steps[3].status == TASK_FAILED, "last step is failed");
	task_row_free(&t);
	ok(store_task_transition(s, id1, TASK_RUNNING, NULL, &e) < 0, "failed is final");

	/* Cancel. */
	is_int(store_task_cancel(s, id2, "bob", &e), 1, "cancelling a queued task is immediate");
	ok(store_task_cancel(s, id2, "bob", &e) < 0 && strstr(e.msg, "cancelled"),
	   "cancelling twice says it is already cancelled (%s)", e.msg);
	{
		struct task_decision *cd;
		size_t ncd;
		store_decisions(s, id2, &cd, &ncd, &e);
		ok(ncd == 1 && !strcmp(cd[0].action, "cancel") && !strcmp(cd[0].actor, "bob"),
		   "the cancel is recorded once, with its actor");
		task_decisions_free(cd, ncd);
	}
	char id3[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "third", NULL, id3, &e);
	store_task_transition(s, id3, TASK_PREPARING, NULL, &e);
	is_int(store_task_cancel(s, id3, "bob", &e), 2, "cancelling an active task is a request");
	store_task_get(s, id3, &t, &e);
	ok(t.cancel_requested && t.status == TASK_PREPARING, "request recorded, status kept");
	task_row_free(&t);

	/* Start-up: active tasks become lost. */
	is_int(store_mark_active_lost(s, "paddock stopped", &e), 1, "one active task marked lost");
	store_task_get(s, id3, &t, &e);
	is_str(task_status_name(t.status), "lost", "it is lost");
	ok(t.error && strstr(t.error, "preparing: paddock stopped"), "error names the step");
	task_row_free(&t);

	struct task_row *rows;
	size_t n;
	is_int(store_task_list(s, -1, &rows, &n, &e), 0, "list");
	is_int((long long)n, 3, "three tasks listed");
	ok(n == 3 && !strcmp(rows[0].id, id1) && !strcmp(rows[2].id, id3), "oldest first");
	task_rows_free(rows, n);
	is_int(store_task_list(s, TASK_CANCELLED, &rows, &n, &e), 0, "list by status");
	ok(n == 1 && !strcmp(rows[0].id, id2), "only the cancelled one");
	task_rows_free(rows, n);

	/* The gate: rounds, decisions, a request for changes and its round. */
	char g[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "gate", "bot/", g, &e);
	store_task_get(s, g, &t, &e);
	ok(!strncmp(t.branch, "bot/", 4) && !strcmp(t.branch + 4, g), "branch prefix is used (%s)",
	   t.branch);
	is_int(t.round, 1, "a new task is in round 1");
	task_row_free(&t);
	ok(store_task_request_changes(s, g, "more", "alice", &e) < 0 && strstr(e.msg, "queued"),
	   "changes cannot be requested on a queued task (%s)", e.msg);
	store_task_transition(s, g, TASK_PREPARING, NULL, &e);
	store_task_set_base(s, g, "1111111111111111111111111111111111111111", &e);
	is_int(store_round_begin(s, g, 1, "1111111111111111111111111111111111111111", &e), 0,
	       "round 1 begins");
	store_task_transition(s, g, TASK_RUNNING, NULL, &e);
	store_task_transition(s, g, TASK_TESTING, NULL, &e);
	store_task_set_head(s, g, "2222222222222222222222222222222222222222", &e);
	is_int(store_round_end(s, g, 1, "2222222222222222222222222222222222222222",
	                       "{\"round\":1}", &e), 0, "round 1 ends with a head and a gate");
	store_task_transition(s, g, TASK_REVIEW, NULL, &e);
	is_int(store_task_request_changes(s, g, "rename x to y", "alice", &e), 0,
	       "request changes at review");
	ok(store_task_request_changes(s, g, "again", "alice", &e) < 0 &&
	   strstr(e.msg, "already"), "a second request while one is pending is refused");
	store_task_get(s, g, &t, &e);
	is_str(t.pending, "request-changes", "pending is set");
	is_str(t.reviewed_head, "2222222222222222222222222222222222222222",
	       "reviewed_head is the head at the request");
	task_row_free(&t);
	int round = 0;
	is_int(store_task_resume(s, g, &round, &e), 0, "the scheduler resumes it");
	is_int(round, 2, "round 2");
	store_task_get(s, g, &t, &e);
	ok(t.status == TASK_RUNNING && t.round == 2 && !t.pending, "running, round 2, nothing pending");
	task_row_free(&t);
	struct task_round *rr;
	size_t nr;
	is_int(store_rounds(s, g, &rr, &nr, &e), 0, "rounds");
	ok(nr == 2 && rr[0].n == 1 && rr[1].n == 2 && rr[1].from &&
	   !strcmp(rr[1].from, "2222222222222222222222222222222222222222") && !rr[1].head &&
	   rr[0].gate && !strcmp(rr[0].gate, "{\"round\":1}"),
	   "round 2 starts at round 1's head; round 1 kept its gate");
	task_rounds_free(rr, nr);
	struct task_decision *dd;
	size_t nd;
	is_int(store_decisions(s, g, &dd, &nd, &e), 0, "decisions");
	ok(nd == 1 && dd[0].round == 1 && !strcmp(dd[0].action, "request-changes") &&
	   !strcmp(dd[0].notes, "rename x to y") && !strcmp(dd[0].actor, "alice"),
	   "the request is recorded with round, notes and actor");
	task_decisions_free(dd, nd);
	store_close(s);

	/* Reopening keeps everything and does not migrate again. */
	is_int(store_open(&s, db, &e), 0, "reopen");
	is_int(store_task_get(s, id2, &t, &e), 0, "task survives reopening");
	task_row_free(&t);
	store_close(s);

	/* A database from a newer paddock is refused, not damaged. */
	sqlite3 *raw;
	sqlite3_open(db, &raw);
	sqlite3_exec(raw, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(raw);
	ok(store_open(&s, db, &e) < 0 && strstr(e.msg, "newer"),
	   "newer schema refused (%s)", e.msg);

	/* WAL mode. */
	sqlite3_open(db, &raw);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL);
	sqlite3_step(st);
	is_str((const char *)sqlite3_column_text(st, 0), "wal", "journal mode is WAL");
	sqlite3_finalize(st);
	sqlite3_close(raw);

	fsx_rm_rf(dir, &e);
	return tap_done();
}
