/* Unit tests: the SQLite store (schema, tasks, transitions, steps, the
 * gateway's records: usage, budget, egress, pauses; a list cut short by
 * the database is an error). */
#include "autoconfig.h"
#include "store.h"
#include "store_reminder.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "store_github.h"
#include "store_int.h"   /* the connection, for its progress handler */
#include "tap.h"
#include "testlib.h"

/* The schema as paddock 0.x (version 2) left it, frozen here: a store
 * from before the egress gateway. */
static const char v2_schema[] =
	"CREATE TABLE tasks (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
	"  text TEXT NOT NULL, repo TEXT NOT NULL, agent TEXT NOT NULL,"
	"  base TEXT, branch TEXT NOT NULL, head TEXT, status TEXT NOT NULL, error TEXT,"
	"  created REAL NOT NULL, updated REAL NOT NULL,"
	"  cancel_requested INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX tasks_status ON tasks(status, seq);"
	"CREATE TABLE steps (task_seq INTEGER NOT NULL REFERENCES tasks(seq), n INTEGER NOT NULL,"
	"  at REAL NOT NULL, status TEXT NOT NULL, PRIMARY KEY (task_seq, n));"
	"ALTER TABLE tasks ADD COLUMN round INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE tasks ADD COLUMN summary TEXT;"
	"ALTER TABLE tasks ADD COLUMN pr_url TEXT;"
	"ALTER TABLE tasks ADD COLUMN pushed TEXT;"
	"ALTER TABLE tasks ADD COLUMN reviewed_head TEXT;"
	"ALTER TABLE tasks ADD COLUMN sandbox_kept INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tasks ADD COLUMN pending TEXT;"
	"CREATE TABLE rounds (task_seq INTEGER NOT NULL REFERENCES tasks(seq), n INTEGER NOT NULL,"
	"  from_commit TEXT, head TEXT, gate TEXT, started REAL NOT NULL,"
	"  ended REAL NOT NULL DEFAULT 0, PRIMARY KEY (task_seq, n));"
	"CREATE TABLE decisions (task_seq INTEGER NOT NULL REFERENCES tasks(seq),"
	"  n INTEGER NOT NULL, round INTEGER NOT NULL, action TEXT NOT NULL, notes TEXT,"
	"  actor TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (task_seq, n));"
	"INSERT INTO tasks (id, text, repo, agent, branch, status, error, created, updated, round,"
	"  summary) VALUES ('ab3de5gh7j', 'from before', 'demo', 'fixer', 'paddock/ab3de5gh7j',"
	"  'failed', 'testing: boom', 1700000000, 1700000100, 2, 'did it');"
	"INSERT INTO steps VALUES (1, 0, 0, 'queued');"
	"INSERT INTO rounds VALUES (1, 1, 'aaaa', 'bbbb', '{}', 1700000000, 1700000050);"
	"PRAGMA user_version = 2;";

/* A store at version 2 with one task is brought to version 3 and keeps
 * the task, with the new fields at their defaults. */
static void test_migration(const char *dir)
{
	char db[256];
	snprintf(db, sizeof db, "%s/old.db", dir);
	sqlite3 *raw;
	sqlite3_open(db, &raw);
	ok(sqlite3_exec(raw, v2_schema, NULL, NULL, NULL) == SQLITE_OK, "a version-2 store");
	sqlite3_close(raw);
	struct store *s;
	struct err e = {{0}};
	is_int(store_open(&s, db, &e), 0, "a version-2 store opens (%s)", e.msg);
	is_int(store_schema_version(s), 17, "and is migrated to version 17");
	struct task_row t;
	is_int(store_task_get(s, "ab3de5gh7j", &t, &e), 0, "its task is still there");
	is_str(t.text, "from before", "with its text");
	is_str(t.error, "testing: boom", "its error");
	is_str(t.summary, "did it", "its summary");
	ok(t.round == 2 && t.status == TASK_FAILED && t.nsteps == 1, "its round, status, steps");
	ok(t.budget < 0, "no budget of its own: the config's applies");
	ok(t.usage.requests == 0 && t.usage.in == 0 && t.usage.cost == 0 && t.usage.priced == 1,
	   "usage zero and priced");
	ok(!t.session && !t.reason, "no session, no reason");
	ok(t.attempts == 1 && t.failed_round == 0 && !t.failed_head && !t.follow_of,
	   "a task that had started counts one attempt; no failed round, no follow-up");
	ok(!t.callback_url && !t.metadata, "no callback, no metadata");
	ok(t.steps[0].log_off == 0 && t.steps[0].round == 0 &&
	   t.steps[0].time == t.created + t.steps[0].at,
	   "its step has no log offset (0) or round (0, not known) and a unix time");
	task_row_free(&t);
	struct task_round *r;
	size_t nr;
	store_rounds(s, "ab3de5gh7j", &r, &nr, &e);
	ok(nr == 1 && r[0].head && !strcmp(r[0].head, "bbbb"), "its round is kept");
	task_rounds_free(r, nr);
	/* New tables work on a migrated store. */
	is_int(store_egress_add(s, "ab3de5gh7j", 2, "{\"host\":\"x.example\"}", &e), 0,
	       "egress can be recorded after the migration");
	struct review_comment mc = { .path = "a.py", .line = 1, .text = "x", .comment = "y" };
	size_t ndraft = 9;
	ok(store_draft_add(s, "ab3de5gh7j", &mc, &e) == 0 &&
	   store_draft_count(s, "ab3de5gh7j", &ndraft, &e) == 0 && ndraft == 1,
	   "and a review draft kept (%s)", e.msg);
	store_close(s);
}

/* A review draft: comments in order, a request for changes that sends
 * them removes only those it sent, in its transaction; discard. */
static void test_draft(struct store *s, const char *dir)
{
	struct err e = {{0}};
	char id[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "drafted", NULL, id, &e);
	struct review_comment c = { .path = "calc.py", .line = 2, .text = "    return a - b",
	                            .comment = "this should add" };
	size_t n = 9;
	is_int(store_draft_count(s, id, &n, &e), 0, "an empty draft counts");
	is_int((long long)n, 0, "no comments");
	is_int(store_draft_add(s, id, &c, &e), 0, "a comment added to the draft");
	c.path = "old.py", c.line = 7, c.old = 1, c.text = "gone", c.comment = "why?";
	is_int(store_draft_add(s, id, &c, &e), 0, "a comment on an old line");
	ok(store_draft_add(s, "zzzzzzzzzz", &c, &e) < 0 && strstr(e.msg, "no task"),
	   "a comment on an unknown task is refused (%s)", e.msg);
	struct review_comment *l;
	is_int(store_draft_list(s, id, &l, &n, &e), 0, "the draft lists");
	ok(n == 2 && l[0].n < l[1].n && !strcmp(l[0].path, "calc.py") && l[0].line == 2 &&
	   !l[0].old && !strcmp(l[0].text, "    return a - b") &&
	   !strcmp(l[0].comment, "this should add") && l[0].round == 1 && l[0].created > 0 &&
	   !strcmp(l[1].path, "old.py") && l[1].old && l[1].line == 7,
	   "both comments, in order, with path, line, side, text, comment and round");
	long long upto = n ? l[n - 1].n : 0;
	store_draft_free(l, n);

	/* Reopened (a restart of the dashboard): still there. */
	struct store *again;
	is_int(store_open(&again, testlib_fmt("%s/paddock.db", dir), &e), 0, "reopen the store");
	store_draft_count(again, id, &n, &e);
	is_int((long long)n, 2, "the draft survives a restart");
	store_close(again);

	/* Not at review: the request fails and the draft stays. */
	ok(store_task_request_changes_draft(s, id, "notes", "alice", upto, &e) < 0,
	   "a request for changes on a queued task fails");
	store_draft_count(s, id, &n, &e);
	is_int((long long)n, 2, "and the draft is kept");
	store_task_transition(s, id, TASK_PREPARING, NULL, &e);
	store_task_transition(s, id, TASK_RUNNING, NULL, &e);
	store_task_transition(s, id, TASK_TESTING, NULL, &e);
	store_task_transition(s, id, TASK_REVIEW, NULL, &e);
	/* Added after the reviewer composed the request: not sent, kept. */
	c.path = "late.py", c.old = 0, c.comment = "later";
	store_draft_add(s, id, &c, &e);
	is_int(store_task_request_changes_draft(s, id, "all of it", "alice", upto, &e), 0,
	       "the request sends the draft");
	store_draft_list(s, id, &l, &n, &e);
	ok(n == 1 && !strcmp(l[0].path, "late.py"), "the comments sent are gone, a later one stays");
	store_draft_free(l, n);
	struct task_decision *d;
	size_t nd;
	store_decisions(s, id, &d, &nd, &e);
	ok(nd == 1 && !strcmp(d[0].notes, "all of it"), "one request, with its notes");
	task_decisions_free(d, nd);
	is_int(store_draft_discard(s, id, 1LL << 62, &e), 1, "discard removes what is left");
	store_draft_count(s, id, &n, &e);
	is_int((long long)n, 0, "the draft is empty");
	is_int(store_draft_discard(s, id, 1LL << 62, &e), 0, "discarding an empty draft: none");
}

static void test_gateway_records(struct store *s)
{
	struct err e = {{0}};
	struct task_row t;
	char a[TASK_ID_LEN + 1], b[TASK_ID_LEN + 1];

	/* Budget. */
	is_int(store_task_add_budget(s, "demo", "fixer", "budgeted", NULL, 2.5, a, &e), 0,
	       "add a task with a budget");
	store_task_get(s, a, &t, &e);
	ok(t.budget == 2.5, "its budget is 2.5 (%g)", t.budget);
	task_row_free(&t);
	is_int(store_task_add(s, "demo", "fixer", "plain", NULL, b, &e), 0, "add one without");
	store_task_get(s, b, &t, &e);
	ok(t.budget < 0, "no budget: negative (%g)", t.budget);
	task_row_free(&t);
	is_int(store_task_set_budget(s, b, 0, &e), 0, "set a budget of 0 (no limit)");
	store_task_get(s, b, &t, &e);
	ok(t.budget == 0, "it reads back as 0");
	task_row_free(&t);
	store_task_set_budget(s, b, -1, &e);
	store_task_get(s, b, &t, &e);
	ok(t.budget < 0, "a negative budget clears it");
	task_row_free(&t);
	ok(store_task_set_budget(s, "zzzzzzzzzz", 1, &e) < 0 && strstr(e.msg, "no task"),
	   "budget of an unknown task refused");

	/* Usage: running totals replace what is stored. */
	struct task_usage u;
	is_int(store_usage_parse("{\"input\":1200,\"output\":340,\"cache_read\":5,"
	                         "\"cache_write\":7,\"cost\":0.0087,\"requests\":3,"
	                         "\"priced\":true}", &u, &e), 0, "parse a usage report");
	ok(u.in == 1200 && u.out == 340 && u.cache_read == 5 && u.cache_write == 7 &&
	   u.requests == 3 && u.cost == 0.0087 && u.priced == 1, "every field parsed");
	is_int(store_task_set_usage(s, a, &u, &e), 0, "store it");
	store_usage_parse("{\"input\":2000,\"output\":500,\"cost\":0.01,\"requests\":5,"
	                  "\"priced\":false}", &u, &e);
	is_int(store_task_set_usage(s, a, &u, &e), 0, "store the next totals");
	store_task_get(s, a, &t, &e);
	ok(t.usage.in == 2000 && t.usage.out == 500 && t.usage.requests == 5 &&
	   t.usage.cache_read == 0 && t.usage.cost == 0.01 && t.usage.priced == 0,
	   "the totals replaced the first ones, not added to them");
	task_row_free(&t);
	ok(store_usage_parse("[1,2]", &u, &e) < 0 && strstr(e.msg, "not a JSON object"),
	   "a usage report that is not an object is refused (%s)", e.msg);
	ok(store_usage_parse("{\"input\":\"lots\"}", &u, &e) < 0 && strstr(e.msg, "input"),
	   "a usage field of the wrong type is refused, named (%s)", e.msg);
	ok(store_usage_parse("{\"priced\":1}", &u, &e) < 0 && strstr(e.msg, "priced"),
	   "priced must be true or false");

	/* Session and reason through store_task_set. */
	is_int(store_task_set(s, a, "session", "sess-123", &e), 0, "set the session");
	is_int(store_task_set(s, a, "reason", "budget", &e), 0, "set the reason");
	store_task_get(s, a, &t, &e);
	is_str(t.session, "sess-123", "session read back");
	is_str(t.reason, "budget", "reason read back");
	task_row_free(&t);
	ok(store_task_set(s, a, "budget", "1", &e) < 0, "store_task_set refuses other columns");

	/* Egress records. */
	size_t n = 99;
	struct egress_row *r;
	is_int(store_egress_list(s, a, &r, &n, &e), 0, "list with no records");
	ok(n == 0 && r == NULL, "none yet");
	is_int(store_egress_add(s, a, 1, "{\"time\":1764480000.12,\"step\":\"agent\","
	       "\"kind\":\"model\",\"endpoint\":\"anthropic\",\"host\":\"api.anthropic.com\","
	       "\"port\":443,\"method\":\"POST\",\"path\":\"/v1/messages\",\"status\":200,"
	       "\"up\":1234,\"down\":5678,\"ms\":812,\"verdict\":\"allowed\",\"reason\":null}",
	       &e), 0, "record an allowed model request");
	is_int(store_egress_add(s, a, 2, "{\"time\":1764480001,\"step\":\"agent\","
	       "\"kind\":\"tunnel\",\"endpoint\":null,\"host\":\"evil.example\",\"port\":443,"
	       "\"method\":\"CONNECT\",\"path\":null,\"status\":403,\"up\":0,\"down\":0,"
	       "\"ms\":1,\"verdict\":\"refused\",\"reason\":\"host not on the allowlist\"}",
	       &e), 0, "record a refused tunnel");
	ok(store_egress_add(s, a, 1, "not json", &e) < 0 && strstr(e.msg, "egress"),
	   "malformed JSON refused (%s)", e.msg);
	ok(store_egress_add(s, a, 1, "\"a string\"", &e) < 0 &&
	   strstr(e.msg, "not a JSON object"), "a JSON value that is not an object refused");
	ok(store_egress_add(s, a, 1, "{\"host\":42}", &e) < 0 && strstr(e.msg, "host"),
	   "a field of the wrong type refused, named (%s)", e.msg);
	/* A 5000-byte path (with multi-byte characters) is cut to 1 KiB. */
	struct buf big = {0};
	buf_adds(&big, "{\"host\":\"h.example\",\"path\":\"/");
	for (int i = 0; i < 2500; i++)
		buf_adds(&big, "\u00e9");
	buf_adds(&big, "\"}");
	is_int(store_egress_add(s, a, 1, big.data, &e), 0, "a long path is stored");
	buf_free(&big);
	is_int(store_egress_list(s, a, &r, &n, &e), 0, "list the records");
	is_int((long long)n, 3, "three records (the refused lines stored nothing)");
	if (n == 3) {
		ok(r[0].round == 1 && r[0].time == 1764480000.12 && !strcmp(r[0].step, "agent") &&
		   !strcmp(r[0].kind, "model") && !strcmp(r[0].endpoint, "anthropic") &&
		   !strcmp(r[0].host, "api.anthropic.com") && r[0].port == 443 &&
		   !strcmp(r[0].method, "POST") && !strcmp(r[0].path, "/v1/messages") &&
		   r[0].status == 200 && r[0].up == 1234 && r[0].down == 5678 && r[0].ms == 812 &&
		   !strcmp(r[0].verdict, "allowed") && !r[0].reason,
		   "the first record, oldest first, with every field");
		ok(r[1].round == 2 && !r[1].endpoint && !r[1].path && r[1].status == 403 &&
		   !strcmp(r[1].verdict, "refused") &&
		   !strcmp(r[1].reason, "host not on the allowlist"),
		   "the refused one with its reason and round");
		ok(r[2].path && strlen(r[2].path) <= 1024 && strlen(r[2].path) >= 1020 &&
		   ((unsigned char)r[2].path[strlen(r[2].path) - 1] & 0xc0) == 0x80,
		   "the long path is cut to 1 KiB on a character boundary (%zu)",
		   r[2].path ? strlen(r[2].path) : 0);
		ok(r[2].time > 1764480001, "a record without time gets the time it was stored");
	}
	store_egress_free(r, n);
	size_t cnt = 0;
	is_int(store_egress_count(s, a, &cnt, &e), 0, "count the records");
	is_int((long long)cnt, 3, "three");
	store_egress_list(s, b, &r, &n, &e);
	ok(n == 0, "another task's records are its own");
	store_egress_free(r, n);

	/* Pauses. */
	struct pause_row *p;
	size_t np = 99;
	is_int(store_pauses_active(s, 1000, &p, &np, &e), 0, "no pauses");
	ok(np == 0 && !p, "none");
	is_int(store_pause_set(s, "anthropic", 2000, 429, a, &e), 0, "pause anthropic until 2000");
	is_int(store_pause_set(s, "openai", 1500, 503, NULL, &e), 0, "pause openai until 1500");
	is_int(store_pauses_active(s, 1000, &p, &np, &e), 0, "active pauses at 1000");
	ok(np == 2 && !strcmp(p[0].endpoint, "openai") && p[0].until == 1500 &&
	   p[0].status == 503 && !p[0].task_id && !strcmp(p[1].endpoint, "anthropic") &&
	   p[1].status == 429 && p[1].task_id && !strcmp(p[1].task_id, a),
	   "both, soonest end first, with status and task");
	store_pauses_free(p, np);
	store_pauses_active(s, 1700, &p, &np, &e);
	ok(np == 1 && !strcmp(p[0].endpoint, "anthropic"), "at 1700 openai's pause has expired");
	store_pauses_free(p, np);
	store_pauses_active(s, 2000, &p, &np, &e);
	ok(np == 0, "at 2000 none is active (until is exclusive)");
	store_pauses_free(p, np);
	store_pause_set(s, "anthropic", 1800, 429, b, &e);
	store_pauses_active(s, 1000, &p, &np, &e);
	ok(np == 2 && p[1].until == 2000 && !strcmp(p[1].task_id, a),
	   "an earlier end does not shorten a pause");
	store_pauses_free(p, np);
	store_pause_set(s, "anthropic", 2500, 529, b, &e);
	store_pauses_active(s, 1000, &p, &np, &e);
	ok(np == 2 && p[1].until == 2500 && p[1].status == 529 && !strcmp(p[1].task_id, b),
	   "a later end extends it");
	store_pauses_free(p, np);
}

/* Pages of a history: statuses, cursors, limits and counts agree with a
 * plain walk over every task; data_version moves for another connection's
 * change and this one's, and stays put otherwise. */
static int count_cb(const struct task_row *t, void *arg, struct err *e)
{
	(void)t;
	(void)e;
	return ++*(size_t *)arg >= 3;  /* stops after three */
}

static void test_query(const char *dir)
{
	const char *db = testlib_fmt("%s/query.db", dir);
	struct err e = {{0}};
	struct store *s, *other;
	if (store_open(&s, db, &e) < 0 || store_open(&other, db, &e) < 0) {
		ok(0, "open the query store (%s)", e.msg);
		return;
	}
	/* 30 tasks: every third at review, every fifth failed, others queued. */
	char ids[30][TASK_ID_LEN + 1];
	for (int i = 0; i < 30; i++) {
		char text[32];
		snprintf(text, sizeof text, "task %d", i);
		store_task_add(s, "r", "a", text, NULL, ids[i], &e);
		if (i % 3 == 0 || i % 5 == 0) {
			store_task_transition(s, ids[i], TASK_PREPARING, NULL, &e);
			store_task_transition(s, ids[i], TASK_RUNNING, NULL, &e);
		}
		if (i % 3 == 0) {
			store_task_transition(s, ids[i], TASK_TESTING, NULL, &e);
			store_task_transition(s, ids[i], TASK_REVIEW, NULL, &e);
		} else if (i % 5 == 0) {
			store_task_transition(s, ids[i], TASK_FAILED, "x: y", &e);
		}
	}
	struct task_row *rows;
	size_t n, c;
	struct task_query q = { .status_mask = TASK_MASK(TASK_REVIEW) };
	ok(store_task_query(s, &q, &rows, &n, &e) == 0 && n == 10 && !strcmp(rows[0].id, ids[0]) &&
	   !strcmp(rows[9].id, ids[27]), "review: 10 tasks, oldest first");
	task_rows_free(rows, n);
	q = (struct task_query){ .status_mask = TASK_MASK(TASK_REVIEW) | TASK_MASK(TASK_FAILED),
	                         .newest_first = 1, .limit = 4, .no_steps = 1 };
	int order = store_task_query(s, &q, &rows, &n, &e) == 0 && n == 4;
	/* Newest of review (0,3,..,27) and failed (5,10,20,25): 27, 25, 24, 21. */
	order = order && !strcmp(rows[0].id, ids[27]) && !strcmp(rows[1].id, ids[25]) &&
	        !strcmp(rows[2].id, ids[24]) && !strcmp(rows[3].id, ids[21]) && !rows[0].nsteps;
	ok(order, "two statuses merged, newest first, cut to the limit, without steps");
	long long cursor = n == 4 ? rows[3].seq : 0;
	task_rows_free(rows, n);
	q.before = cursor;
	int rc = store_task_query(s, &q, &rows, &n, &e);
	ok(rc == 0 && n == 4 && !strcmp(rows[0].id, ids[20]),
	   "the next page starts after the cursor (%s)", n ? rows[0].id : "none");
	task_rows_free(rows, n);
	/* Failed: 5, 10, 20, 25; queued: the other 16. */
	q = (struct task_query){ .status_mask = TASK_MASK(TASK_QUEUED) };
	rc = store_task_count(s, &q, &c, &e);
	ok(rc == 0 && c == 16, "16 queued (%zu)", c);
	q.status_mask = TASK_MASK_ENDED | TASK_MASK(TASK_REVIEW);
	rc = store_task_count(s, &q, &c, &e);
	ok(rc == 0 && c == 14, "14 at review or ended (%zu)", c);
	q = (struct task_query){ .after = cursor };
	rc = store_task_count(s, &q, &c, &e);
	ok(rc == 0 && c == 8, "8 after task 21 (%zu)", c);
	size_t counts[TASK_NSTATUS];
	rc = store_task_counts(s, counts, &e);
	ok(rc == 0 && counts[TASK_QUEUED] == 16 && counts[TASK_REVIEW] == 10 &&
	   counts[TASK_FAILED] == 4, "counts by status (%zu %zu %zu)", counts[TASK_QUEUED],
	   counts[TASK_REVIEW], counts[TASK_FAILED]);
	size_t seen = 0;
	q = (struct task_query){ 0 };
	ok(store_task_each(s, &q, count_cb, &seen, &e) == 0 && seen == 3,
	   "store_task_each stops when asked");
	/* A request for changes is found by the pending index. */
	store_task_request_changes(s, ids[3], "more", "bob", &e);
	q = (struct task_query){ .status_mask = TASK_MASK(TASK_REVIEW), .pending = 1 };
	ok(store_task_query(s, &q, &rows, &n, &e) == 0 && n == 1 && !strcmp(rows[0].id, ids[3]),
	   "the one task with a pending request");
	task_rows_free(rows, n);
	/* data_version. */
	uint64_t v0 = store_data_version(s), v1 = store_data_version(s);
	ok(v0 == v1, "data_version stays when nothing changed");
	store_task_cancel(other, ids[1], "bob", &e);
	uint64_t v2 = store_data_version(s);
	ok(v2 != v1, "another connection's change moves it");
	store_task_cancel(s, ids[2], "bob", &e);
	ok(store_data_version(s) != v2, "and so does this connection's");
	store_close(other);
	store_close(s);
}

/* What changed lately (the dashboard's notices, looked for on each
 * change of the store) is read from the index of update times: 200 older
 * tasks add nothing to what the query reads (issue 14). */
static void test_changed(const char *dir)
{
	const char *db = testlib_fmt("%s/changed.db", dir);
	struct err e = {{0}};
	struct store *s;
	sqlite3 *raw;
	if (store_open(&s, db, &e) < 0 || sqlite3_open(db, &raw) != SQLITE_OK) {
		ok(0, "open the store of changes (%s)", e.msg);
		return;
	}
	uint64_t first = 0;
	for (int round = 0; round < 2; round++) {
		char id[TASK_ID_LEN + 1];
		for (int i = 0; i < (round ? 200 : 10); i++)
			store_task_add(s, "r", "a", "old", NULL, id, &e);
		sqlite3_exec(raw, "UPDATE tasks SET updated = 1000", NULL, NULL, NULL);
		store_task_add(s, "r", "a", "new", NULL, id, &e);
		struct task_query q = { .changed_after = 2000, .no_steps = 1 };
		struct task_row *rows;
		size_t n = 0;
		uint64_t s0 = store_task_query_steps(s);
		int rc = store_task_query(s, &q, &rows, &n, &e);
		uint64_t steps = store_task_query_steps(s) - s0;
		ok(rc == 0 && n == 1 && !strcmp(rows[0].id, id), "%s: the one task changed lately",
		   round ? "211 tasks" : "11 tasks");
		if (rc == 0)
			task_rows_free(rows, n);
		if (!round)
			first = steps;
		else
			ok(steps == first, "200 older tasks: the query read no more (%llu steps, %llu "
			   "before)", (unsigned long long)steps, (unsigned long long)first);
	}
	sqlite3_close(raw);
	store_close(s);
}

/* Schema 9: a task's own options, best-of-N groups, confirmation. */
static void test_workflows(const char *dir)
{
	struct err e = {{0}};
	struct store *s;
	is_int(store_open(&s, testlib_fmt("%s/wf.db", dir), &e), 0, "open a store for workflows");
	struct task_new tn = { .repo = "demo", .agent = "fixer", .text = "Bump left-pad",
	                       .budget = -1, .recipe = "upgrade-dependency",
	                       .inputs = "{\"package\":\"left-pad\"}", .base_ref = "v1.2",
	                       .test_cmd = "make test", .timeout = 600, .dry_run = 1,
	                       .approval = "auto-push", .fix_rounds_set = 1, .fix_rounds = 2,
	                       .contract = "[\"changed package.json\"]", .confirm = 1,
	                       .estimate = 3.5 };
	char id[TASK_ID_LEN + 1];
	is_int(store_task_create(s, &tn, id, NULL, &e), 0, "a task with every option");
	struct task_row t;
	is_int(store_task_get(s, id, &t, &e), 0, "read it back");
	is_str(t.recipe, "upgrade-dependency", "its recipe");
	is_str(t.inputs, "{\"package\":\"left-pad\"}", "its inputs");
	is_str(t.base_ref, "v1.2", "its base ref");
	is_str(t.test_cmd, "make test", "its test command");
	ok(t.timeout == 600 && t.dry_run == 1 && t.fix_rounds == 2, "timeout, dry run, fix rounds");
	is_str(t.approval, "auto-push", "its approval mode");
	is_str(t.contract, "[\"changed package.json\"]", "its contract");
	is_str(t.confirm, "needed", "it waits for a confirmation");
	ok(t.estimate == 3.5, "with its estimate");
	task_row_free(&t);
	ok(store_task_next_queued(s, &t, &e) == 0, "a task waiting for confirmation is not next");
	struct task_query q = { .status_mask = TASK_MASK(TASK_QUEUED), .startable = 1 };
	size_t n = 9;
	is_int(store_task_count(s, &q, &n, &e), 0, "count the startable tasks");
	is_int((long long)n, 0, "none is startable");
	is_int(store_task_confirm(s, id, "ann", &e), 0, "confirm it");
	ok(store_task_confirm(s, id, "ann", &e) < 0 && e.kind == ERR_WRONG_STATE,
	   "a second confirm is refused (%s)", e.msg);
	ok(store_task_next_queued(s, &t, &e) == 1 && !strcmp(t.id, id), "now it is next");
	is_str(t.confirm, "confirmed", "confirmed");
	ok(t.fix_rounds == 2, "fix rounds kept");
	task_row_free(&t);
	struct task_decision *d;
	size_t nd;
	is_int(store_decisions(s, id, &d, &nd, &e), 0, "its decisions");
	ok(nd == 1 && !strcmp(d[0].action, "confirm") && !strcmp(d[0].actor, "ann"),
	   "the confirmation is a decision of ann");
	task_decisions_free(d, nd);

	struct task_new plain = { .repo = "demo", .agent = "fixer", .text = "x", .budget = -1 };
	is_int(store_task_create(s, &plain, id, NULL, &e), 0, "a task without options");
	is_int(store_task_get(s, id, &t, &e), 0, "read it");
	ok(t.fix_rounds == -1 && !t.approval && !t.recipe && !t.confirm && !t.dry_run,
	   "no options: the repo's fix rounds, review, no recipe");
	task_row_free(&t);

	struct task_new ns[3] = { plain, plain, plain };
	ns[0].agent = "claude";
	ns[1].agent = "codex";
	ns[2].agent = "pi";
	char gid[TASK_ID_LEN + 1], ids[3][TASK_ID_LEN + 1];
	is_int(store_group_create(s, "x", ns, 3, gid, ids, NULL, &e), 0, "a group of three");
	struct task_group g;
	is_int(store_group_get(s, gid, &g, &e), 0, "get the group");
	ok(!g.chosen && !strcmp(g.text, "x"), "nothing chosen yet");
	task_group_free(&g);
	struct task_query gq = { .group = gid };
	struct task_row *rows;
	size_t nr;
	is_int(store_task_query(s, &gq, &rows, &nr, &e), 0, "its members");
	ok(nr == 3 && !strcmp(rows[1].agent, "codex") && !strcmp(rows[2].group_id, gid),
	   "three members in order, each with the group id");
	task_rows_free(rows, nr);
	ok(store_group_choose(s, gid, id, &e) < 0, "a task outside the group cannot be chosen");
	is_int(store_group_choose(s, gid, ids[1], &e), 0, "choose the second");
	ok(store_group_choose(s, gid, ids[2], &e) < 0, "a second choice is refused");
	is_int(store_group_get(s, gid, &g, &e), 0, "get it again");
	is_str(g.chosen, ids[1], "the choice is recorded");
	task_group_free(&g);
	ok(store_group_get(s, "zzzzzzzzzz", &g, &e) < 0 && e.kind == ERR_NOT_FOUND, "no such group");
	struct task_new full[2] = { plain, plain };
	full[0].max_queued = 3;
	size_t queued = 0;
	ok(store_group_create(s, "y", full, 2, gid, ids, &queued, &e) == -2 && queued >= 2,
	   "a group that would pass max-queue is refused whole");
	double mean;
	is_int(store_recipe_spend(s, "upgrade-dependency", &mean, &n, &e), 0, "a recipe's spend");
	ok(n == 0 && mean == 0, "no ended task: no history");
	store_close(s);
}

#define SHA(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c

/* The fix loop's rounds (store_task_fix_round): of kind "fix", from the
 * head; one that fails goes back past them to the round that reached
 * review, or fails the task when none did; interrupted in the first
 * round's, the task is queued again at round 1. */
static void test_fix_rounds(const char *dir)
{
	struct err e = {{0}};
	struct store *s;
	is_int(store_open(&s, testlib_fmt("%s/fix.db", dir), &e), 0, "open a store for fix rounds");
	struct task_new tn = { .repo = "demo", .agent = "fixer", .text = "x", .budget = -1 };
	char id[TASK_ID_LEN + 1];
	store_task_create(s, &tn, id, NULL, &e);
	ok(store_task_fix_round(s, id, 2, &e) < 0 && e.kind == ERR_WRONG_STATE,
	   "a queued task gets no fix round (%s)", e.msg);
	store_task_start(s, id, &e);
	store_task_set_base(s, id, SHA("1"), &e);
	store_round_begin(s, id, 1, SHA("1"), &e);
	store_task_transition(s, id, TASK_RUNNING, NULL, &e);
	store_task_transition(s, id, TASK_TESTING, NULL, &e);
	store_task_set_head(s, id, SHA("2"), &e);
	store_round_end(s, id, 1, SHA("2"), "{\"round\":1}", &e);
	ok(store_task_fix_round(s, id, 3, &e) < 0, "a fix round must be the next round");
	is_int(store_task_fix_round(s, id, 2, &e), 0, "round 1's tests failed: fix round 2");
	struct task_row t;
	store_task_get(s, id, &t, &e);
	ok(t.status == TASK_RUNNING && t.round == 2, "running, round 2");
	task_row_free(&t);
	struct task_round *rr;
	size_t nr;
	store_rounds(s, id, &rr, &nr, &e);
	ok(nr == 2 && rr[1].kind && !strcmp(rr[1].kind, "fix") && rr[1].from &&
	   !strcmp(rr[1].from, SHA("2")), "round 2 is a fix round from round 1's head");
	task_rounds_free(rr, nr);
	/* paddock stops in the first round's fix loop: queued again, round 1. */
	struct store_recovery rec;
	is_int(store_recover_active(s, 3, "paddock stopped", &rec, &e), 0, "recovery");
	store_task_get(s, id, &t, &e);
	ok(rec.queued == 1 && t.status == TASK_QUEUED && t.round == 1,
	   "interrupted in the first round's fix loop: queued again at round 1 (%s, %d)",
	   task_status_name(t.status), t.round);
	task_row_free(&t);
	store_rounds(s, id, &rr, &nr, &e);
	ok(nr == 1 && rr[0].n == 1, "the fix round is gone");
	task_rounds_free(rr, nr);
	ok(store_task_rollback_round(s, id, "x", &e) < 0, "nothing to roll back");

	/* Reviewed round 1, round 2 (changes) fails its tests, fix round 3
	 * too: back at review with round 1. */
	store_task_start(s, id, &e);
	store_task_transition(s, id, TASK_RUNNING, NULL, &e);
	store_task_transition(s, id, TASK_REVIEW, NULL, &e);
	store_task_request_changes(s, id, "more", "ann", &e);
	int round = 0;
	store_task_resume(s, id, &round, &e);
	store_task_transition(s, id, TASK_TESTING, NULL, &e);
	store_task_set_head(s, id, SHA("3"), &e);
	store_round_end(s, id, 2, SHA("3"), "{\"round\":2}", &e);
	is_int(store_task_fix_round(s, id, 3, &e), 0, "round 2's tests failed: fix round 3");
	store_task_set_head(s, id, SHA("4"), &e);
	store_round_end(s, id, 3, SHA("4"), NULL, &e);
	is_int(store_task_rollback_round(s, id, "testing: tests failed", &e), 0, "round 3 fails");
	store_task_get(s, id, &t, &e);
	ok(t.status == TASK_REVIEW && t.round == 1 && !strcmp(t.head, SHA("2")) &&
	   t.failed_round == 2 && t.failed_head && !strcmp(t.failed_head, SHA("4")),
	   "back at review with round 1; round 2 is the one to run again (%d, %d)", t.round,
	   t.failed_round);
	task_row_free(&t);
	store_rounds(s, id, &rr, &nr, &e);
	ok(nr == 1 && rr[0].n == 1, "rounds 2 and 3 are gone");
	task_rounds_free(rr, nr);
	store_close(s);
}

/* SQLite's progress handler, called every step of the virtual machine:
 * interrupts the statement at the progress_stop-th call (0: never), as a
 * busy, locked or corrupt database would stop it midway. */
static long progress_calls, progress_stop;

static int progress_interrupt(void *arg)
{
	(void)arg;
	return ++progress_calls == progress_stop;
}

/* One list of the store, its rows freed: how many there were. */
typedef int (*list_fn)(struct store *s, const char *id, size_t *n, struct err *e);

static int list_rounds(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct task_round *r;
	int rc = store_rounds(s, id, &r, n, e);
	if (rc == 0)
		task_rounds_free(r, *n);
	return rc;
}

static int list_decisions(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct task_decision *d;
	int rc = store_decisions(s, id, &d, n, e);
	if (rc == 0)
		task_decisions_free(d, *n);
	return rc;
}

static int list_drafts(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct review_comment *c;
	int rc = store_draft_list(s, id, &c, n, e);
	if (rc == 0)
		store_draft_free(c, *n);
	return rc;
}

static int list_steps(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct task_row t;
	int rc = store_task_get(s, id, &t, e);
	if (rc == 0) {
		*n = t.nsteps;
		task_row_free(&t);
	}
	return rc;
}

static int list_order(struct store *s, const char *id, size_t *n, struct err *e)
{
	(void)id;
	struct task_query q = { 0 };
	struct task_key *k;
	int rc = store_task_order(s, &q, &k, n, e);
	if (rc == 0)
		free(k);
	return rc;
}

static int list_egress(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct egress_row *r;
	int rc = store_egress_list(s, id, &r, n, e);
	if (rc == 0)
		store_egress_free(r, *n);
	return rc;
}

static int list_webhooks(struct store *s, const char *id, size_t *n, struct err *e)
{
	struct webhook_row *r;
	int rc = store_webhook_list(s, id, &r, n, e);
	if (rc == 0)
		store_webhooks_free(r, *n);
	return rc;
}

static int list_pauses(struct store *s, const char *id, size_t *n, struct err *e)
{
	(void)id;
	struct pause_row *p;
	int rc = store_pauses_active(s, 0, &p, n, e);
	if (rc == 0)
		store_pauses_free(p, *n);
	return rc;
}

static int list_gh_events(struct store *s, const char *id, size_t *n, struct err *e)
{
	(void)id;
	struct gh_event *ev;
	int rc = store_github_events(s, 0, &ev, n, e);
	if (rc == 0)
		gh_events_free(ev, *n);
	return rc;
}

/* Every list the store reads row by row, stopped by the database at
 * points spread over its whole query: each time the answer is the whole
 * list or an error that says why, never a short list taken for the whole
 * (the last sqlite3_step of each loop is checked). */
static void test_last_step(const char *dir)
{
	const char *db = testlib_fmt("%s/steps.db", dir);
	struct err e = {{0}};
	struct store *s;
	is_int(store_open(&s, db, &e), 0, "a store for lists cut short (%s)", e.msg);
	enum { ROWS = 8 };
	char id[TASK_ID_LEN + 1], other[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "many rows", NULL, id, &e);
	for (int i = 1; i < ROWS; i++)
		store_task_add(s, "demo", "fixer", "another", NULL, other, &e);
	int made = 0;
	for (int i = 1; i <= ROWS; i++) {
		struct review_comment c = { .path = "a.c", .line = i, .text = "x", .comment = "y" };
		struct gh_event ev = { .source = "poll", .event = "issues", .verdict = "ignored" };
		char endpoint[32], sql[160];
		snprintf(endpoint, sizeof endpoint, "endpoint-%d", i);
		snprintf(sql, sizeof sql, "INSERT INTO steps (task_seq, n, at, status) SELECT seq, "
		         "%d, %d, 'running' FROM tasks WHERE id = '%s'", i, i, id);
		made += store_round_begin(s, id, i, NULL, &e) == 0 &&
		        store_decision_add(s, id, "note", "n", "alice", &e) == 0 &&
		        store_draft_add(s, id, &c, &e) == 0 &&
		        store_egress_add(s, id, 1, "{\"host\":\"h.example\"}", &e) == 0 &&
		        store_webhook_add(s, id, "review", "d", "{}", NULL, &e) == 0 &&
		        store_pause_set(s, endpoint, 4e9, 429, id, &e) == 0 &&
		        store_github_event_add(s, &ev, &e) == 0 &&
		        sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK;
	}
	is_int(made, ROWS, "%d rows of each kind (%s)", ROWS, e.msg);
	static const struct {
		const char *name;
		list_fn list;
		size_t whole;
	} lists[] = {
		{ "rounds", list_rounds, ROWS },
		{ "decisions", list_decisions, ROWS },
		{ "review draft", list_drafts, ROWS },
		{ "a task's steps", list_steps, ROWS + 1 },
		{ "the tasks' order", list_order, ROWS },
		{ "egress", list_egress, ROWS },
		{ "webhooks", list_webhooks, ROWS },
		{ "pauses", list_pauses, ROWS },
		{ "github events", list_gh_events, ROWS },
	};
	sqlite3_progress_handler(s->db, 1, progress_interrupt, NULL);
	for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
		size_t n = 0;
		progress_calls = progress_stop = 0;
		int rc = lists[l].list(s, id, &n, &e);
		long total = progress_calls;
		ok(rc == 0 && n == lists[l].whole, "%s: the whole list, %zu rows (%s)",
		   lists[l].name, n, rc ? e.msg : "");
		/* Every call up to 64 points, spread over the query. */
		long every = total / 64 + 1, errors = 0, whole = 0, cut = 0, odd = 0;
		for (progress_stop = 1; progress_stop <= total; progress_stop += every) {
			progress_calls = 0;
			memset(&e, 0, sizeof e);
			n = 0;
			rc = lists[l].list(s, id, &n, &e);
			if (rc < 0 && strstr(e.msg, "interrupted"))
				errors++;
			else if (rc == 0 && n == lists[l].whole)
				whole++;
			else if (rc == 0)
				cut++;
			else
				odd++;
		}
		ok(cut == 0 && odd == 0 && errors > 0, "%s: stopped midway, an error that says "
		   "so every time, never a short list (%ld errors, %ld whole, %ld short, %ld "
		   "other)", lists[l].name, errors, whole, cut, odd);
	}
	sqlite3_progress_handler(s->db, 0, NULL, NULL);
	store_close(s);
}

/* A pull request that failed to open (issue 36): recorded, due for the
 * scheduler's try at its time, cleared when it opens. */
static void test_pr_failure(const char *dir)
{
	const char *db = testlib_fmt("%s/pr.db", dir);
	struct err e = {{0}};
	struct store *s;
	is_int(store_open(&s, db, &e), 0, "a store for pull requests (%s)", e.msg);
	char id[TASK_ID_LEN + 1], other[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "pr", NULL, id, &e);
	store_task_add(s, "demo", "fixer", "queued", NULL, other, &e);
	const enum task_status path[] = { TASK_PREPARING, TASK_RUNNING, TASK_TESTING, TASK_REVIEW,
	                                  TASK_PUSHING, TASK_DONE };
	for (size_t i = 0; i < sizeof path / sizeof *path; i++)
		store_task_transition(s, id, path[i], NULL, &e);
	struct task_row t;
	store_task_get(s, id, &t, &e);
	ok(!t.pr_error && t.pr_attempts == 0 && t.pr_retry_at == 0, "no failure at first");
	task_row_free(&t);
	is_int(store_task_pr_failed(s, id, "GitHub failed (500)", 1000, 1060, &e), 0,
	       "a failure is recorded");
	is_int(store_task_pr_failed(s, id, "forbidden (403)", 1060, 1180, &e), 0, "and another");
	store_task_pr_failed(s, other, "not done", 1000, 1001, &e);
	store_task_get(s, id, &t, &e);
	ok(t.pr_error && !strcmp(t.pr_error, "forbidden (403)") && t.pr_error_at == 1060 &&
	   t.pr_attempts == 2 && t.pr_retry_at == 1180, "the last why, when, two tries, the next try");
	task_row_free(&t);
	char (*ids)[TASK_ID_LEN + 1];
	size_t n;
	double next;
	is_int(store_task_pr_due(s, 1179, &ids, &n, &next, &e), 0, "ask what is due");
	ok(n == 0 && next == 1180, "nothing before its time, the next at 1180 (a task not done "
	   "is never due)");
	free(ids);
	store_task_pr_due(s, 1180, &ids, &n, &next, &e);
	ok(n == 1 && !strcmp(ids[0], id) && next == 0, "due at its time");
	free(ids);
	is_int(store_task_pr_opened(s, id, "https://github.example/o/r/pull/1", &e), 0, "opened");
	store_task_get(s, id, &t, &e);
	ok(t.pr_url && !t.pr_error && t.pr_attempts == 0 && t.pr_retry_at == 0 && t.pr_error_at == 0,
	   "the pull request linked, the failure cleared");
	task_row_free(&t);
	store_task_pr_due(s, 5000, &ids, &n, &next, &e);
	ok(n == 0, "and no longer due");
	free(ids);
	ok(store_task_pr_failed(s, "zzzzzzzzzz", "x", 1, 2, &e) < 0, "no such task: refused");
	store_close(s);
}

/* Reminders of a person's gate (store_reminder.h): each recorded once,
 * whoever asks twice (two processes, or one after a restart); a new gate
 * counts again; the row reads only the gate the task waits at now. */
static void test_reminders(const char *dir)
{
	const char *db = testlib_fmt("%s/reminders.db", dir);
	struct err e = {{0}};
	struct store *s, *s2;
	is_int(store_open(&s, db, &e), 0, "a store for reminders (%s)", e.msg);
	is_int(store_open(&s2, db, &e), 0, "and a second connection, another process's");
	char id[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "gate", NULL, id, &e);
	is_int(store_reminder_claim(s, id, 1.0, 1, 100, &e), 0, "none for a task not at review");
	const enum task_status path[] = { TASK_PREPARING, TASK_RUNNING, TASK_TESTING, TASK_REVIEW };
	for (size_t i = 0; i < sizeof path / sizeof *path; i++)
		store_task_transition(s, id, path[i], NULL, &e);
	struct task_row t;
	store_task_get(s, id, &t, &e);
	double since = t.steps[t.nsteps - 1].at;
	is_int(t.reminders, 0, "none sent at first");
	task_row_free(&t);
	is_int(store_reminder_claim(s, id, since, 1, 100, &e), 1, "reminder 1 is recorded");
	is_int(store_reminder_claim(s2, id, since, 1, 100, &e), 0, "not twice, from another process");
	is_int(store_reminder_claim(s2, id, since, 2, 200, &e), 1, "reminder 2 is");
	is_int(store_reminder_claim(s, id, since, 1, 201, &e), 0, "an older one is not");
	store_task_get(s, id, &t, &e);
	ok(t.reminders == 2 && t.updated == 200, "the row counts 2, and moved its updated time");
	task_row_free(&t);
	store_task_transition(s, id, TASK_REJECTED, NULL, &e);
	store_task_get(s, id, &t, &e);
	is_int(t.reminders, 0, "a task that left review counts none");
	task_row_free(&t);
	is_int(store_reminder_claim(s, id, since + 5, 1, 300, &e), 0,
	       "and gets none (its gate closed)");
	store_close(s2);
	store_close(s);
}

int main(void)
{
	const char *dir = testlib_tmpdir("store");
	const char *db = testlib_fmt("%s/paddock.db", dir);
	struct err e = {{0}};
	struct store *s;

	is_int(store_open(&s, db, &e), 0, "open a new store");
	is_int(store_schema_version(s), 17, "schema is at version 17");

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
	ok(store_task_transition(s, id1, TASK_PREPARING, NULL, &e) < 0 &&
	   strstr(e.msg, "running") && strstr(e.msg, "preparing"),
	   "running -> preparing refused, naming both (%s)", e.msg);
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

	/* Start-up: an active task whose cancel was requested is cancelled. */
	struct store_recovery rec;
	is_int(store_recover_active(s, 3, "paddock stopped", &rec, &e), 0, "recovery runs");
	ok(rec.cancelled == 1 && rec.queued + rec.review + rec.failed + rec.lost == 0,
	   "one task recovered, as cancelled");
	store_task_get(s, id3, &t, &e);
	is_str(task_status_name(t.status), "cancelled", "the cancel requested before the stop holds");
	task_row_free(&t);

	struct task_row *rows;
	size_t n;
	is_int(store_task_list(s, -1, &rows, &n, &e), 0, "list");
	is_int((long long)n, 3, "three tasks listed");
	ok(n == 3 && !strcmp(rows[0].id, id1) && !strcmp(rows[2].id, id3), "oldest first");
	task_rows_free(rows, n);
	is_int(store_task_list(s, TASK_FAILED, &rows, &n, &e), 0, "list by status");
	ok(n == 1 && !strcmp(rows[0].id, id1), "only the failed one");
	task_rows_free(rows, n);

	/* Start-up: a first round interrupted is queued again, attempts
	 * counted, until max-attempts; then it fails with reason crashed. */
	char a[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "crashy", NULL, a, &e);
	for (int k = 1; k <= 3; k++) {
		is_int(store_task_start(s, a, &e), 0, "start %d", k);
		store_task_transition(s, a, TASK_RUNNING, NULL, &e);
		is_int(store_recover_active(s, 3, "paddock stopped", &rec, &e), 0, "recovery %d", k);
		store_task_get(s, a, &t, &e);
		if (k < 3)
			ok(t.status == TASK_QUEUED && t.attempts == k && rec.queued == 1 &&
			   t.error && strstr(t.error, "running: paddock stopped"),
			   "attempt %d interrupted: queued again, %d attempt(s) counted (%s)", k,
			   t.attempts, t.error ? t.error : "no error");
		else
			ok(t.status == TASK_FAILED && t.reason && !strcmp(t.reason, "crashed") &&
			   rec.failed == 1 && strstr(t.error, "tried 3 times"),
			   "after 3 attempts it fails, reason crashed (%s)", t.error ? t.error : "");
		task_row_free(&t);
	}
	/* A planned stop does not use an attempt up. */
	char pl[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "fixer", "planned", NULL, pl, &e);
	store_task_start(s, pl, &e);
	enum task_status to;
	is_int(store_task_interrupted(s, pl, 1, 3, "stopped", &to, &e), 0, "a planned stop");
	store_task_get(s, pl, &t, &e);
	ok(to == TASK_QUEUED && t.status == TASK_QUEUED && t.attempts == 0,
	   "a planned stop queues it again without using an attempt (%d)", t.attempts);
	task_row_free(&t);
	ok(store_task_interrupted(s, pl, 1, 3, "stopped", &to, &e) < 0,
	   "a queued task is not interrupted (%s)", e.msg);

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

	/* Round 2 interrupted at start-up: back at review with round 1's
	 * head, summary and gate; round 2's work and why are kept. */
	store_task_set(s, g, "summary", "round two summary", &e);
	store_task_set_head(s, g, "3333333333333333333333333333333333333333", &e);
	store_round_end(s, g, 2, "3333333333333333333333333333333333333333", NULL, &e);
	is_int(store_recover_active(s, 3, "paddock stopped", &rec, &e), 0, "recovery of round 2");
	is_int(rec.review, 1, "one task back at review");
	store_task_get(s, g, &t, &e);
	ok(t.status == TASK_REVIEW && t.round == 1 &&
	   !strcmp(t.head, "2222222222222222222222222222222222222222"),
	   "back at review, round 1, at round 1's head");
	ok(t.failed_round == 2 && t.failed_head &&
	   !strcmp(t.failed_head, "3333333333333333333333333333333333333333") && t.failed_why &&
	   strstr(t.failed_why, "round 2 was interrupted"),
	   "round 2's work and why are kept (%s)", t.failed_why ? t.failed_why : "none");
	task_row_free(&t);
	is_int(store_rounds(s, g, &rr, &nr, &e), 0, "rounds");
	ok(nr == 1 && rr[0].n == 1 && rr[0].gate, "round 2 is gone from the rounds; round 1 kept");
	task_rounds_free(rr, nr);
	is_int(store_task_request_changes(s, g, "rename x to y", "alice", &e), 0,
	       "changes can be requested again");
	is_int(store_task_resume(s, g, &round, &e), 0, "and round 2 runs again");
	store_task_get(s, g, &t, &e);
	ok(round == 2 && t.round == 2 && t.failed_round == 0 && !t.failed_head && !t.failed_why,
	   "round 2 again; the failed round's record is cleared");
	task_row_free(&t);
	/* A failed round 2 goes back to review too. */
	is_int(store_task_rollback_round(s, g, "testing: tests failed", &e), 0, "round 2 fails");
	store_task_get(s, g, &t, &e);
	ok(t.status == TASK_REVIEW && t.round == 1 && t.failed_round == 2 &&
	   !strcmp(t.failed_why, "testing: tests failed") && !t.failed_head,
	   "back at review with round 1; the failure is kept");
	task_row_free(&t);
	ok(store_task_rollback_round(s, g, "x", &e) < 0, "a task at review has nothing to roll back");
	{
		/* The history show and the gate view list round by round. */
		struct task_history h;
		is_int(store_history(s, g, &h, &e), 0, "the task's history loads");
		ok(h.last == 1 && h.nrounds == 1 && h.ndecisions == 2,
		   "round 1 (the failed round 2 was rolled back) and the two requests on it "
		   "(last %d, %zu rounds, %zu decisions)", h.last, h.nrounds, h.ndecisions);
		char *r1 = task_history_round_text(&h, 1), *r2 = task_history_round_text(&h, 2);
		ok(strncmp(r1, "1  ", 3) == 0 && strstr(r1, ".."), "round 1 with its commits: %s", r1);
		ok(!strcmp(r2, "2  (no work)"), "a round without a record has no work: %s", r2);
		char *d0 = task_decision_text(&h.decisions[0]);
		ok(strstr(d0, "  request-changes by alice") && d0[4] == '-' && d0[13] == ':',
		   "a decision's line: when, what, who: %s", d0);
		free(r1);
		free(r2);
		free(d0);
		task_history_free(&h);
	}
	test_gateway_records(s);
	test_draft(s, dir);
	{
		/* Another process holding the store past the busy timeout: the
		 * error says it is busy, of the kind the API answers 503 for, and
		 * nothing is half-written. */
		sqlite3 *holder;
		sqlite3_open(db, &holder);
		sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
		/* The wait, not its length (10 s), is what is checked. */
		sqlite3_busy_timeout(s->db, 300);
		char busy_id[TASK_ID_LEN + 1];
		memset(&e, 0, sizeof e);
		ok(store_task_add(s, "demo", "fixer", "while busy", NULL, busy_id, &e) < 0 &&
		   e.kind == ERR_UNAVAILABLE && strstr(e.msg, "locked"),
		   "a store held by another process: unavailable (%s)", e.msg);
		sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(holder);
		sqlite3_busy_timeout(s->db, 10000);
		struct task_row *all;
		size_t nall;
		store_task_list(s, -1, &all, &nall, &e);
		int found = 0;
		for (size_t i = 0; i < nall; i++)
			found |= !strcmp(all[i].text, "while busy");
		ok(!found, "and the task was not added");
		task_rows_free(all, nall);
	}
	store_close(s);
	test_migration(dir);

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

	test_query(dir);
	test_changed(dir);
	test_fix_rounds(dir);
	test_workflows(dir);
	test_last_step(dir);
	test_pr_failure(dir);
	test_reminders(dir);
	testlib_end();
	return tap_done();
}
