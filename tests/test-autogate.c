/* Unit tests: the gate's decisions that need no network (gate.h,
 * autogate.h), on a real store: approval auto's conditions, each with the
 * sentence that says why a round waits; a hold is a decision of
 * "paddock (auto)" and a round is looked at once; test mode's record
 * (the remote without its credentials, the exact refspec, the pull
 * request as forge would send it) with nothing sent; approval never and
 * a round that changed nothing push nothing; the done webhook names who
 * approved. */
#include "autoconfig.h"
#include "autogate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "move.h"
#include "paths.h"
#include "tap.h"
#include "testlib.h"

static struct store *st;
static struct config cfg;
static struct gate_ctx g;

#define BASE "1111111111111111111111111111111111111111"
#define HEAD "2222222222222222222222222222222222222222"

/* A round's gate summary as the pipeline stores it: its tests after
 * (ran, verified, passed) and one finding of action `finding` (NULL:
 * none). */
static char *gate_json(int ran, int verified, int passed, const char *finding)
{
	return testlib_fmt(
		"{\"round\":1,\"branch\":\"paddock/x\",\"from\":\"" BASE "\",\"head\":\"" HEAD "\","
		"\"summary\":\"Added mul.\",\"diffstat\":\"\",\"tests\":{\"before\":{\"ran\":false},"
		"\"after\":{\"ran\":%s,\"passed\":%s,\"tail\":\"\",\"log\":\"\",\"exit\":%d%s},"
		"\"agent\":{\"ran\":false},\"mismatch\":false},\"findings\":[%s]}",
		ran ? "true" : "false", passed ? "true" : "false", passed ? 0 : 1,
		verified ? ",\"verified\":true" : "",
		finding ? testlib_fmt("{\"name\":\"paths:ci.yml\",\"rule\":\"paths\",\"action\":"
		                      "\"%s\",\"path\":\"ci.yml\",\"detail\":\"a deny path\"}",
		                      finding) : "");
}

/* A task of repo `repo` at review, its round 1 from BASE to head with
 * the gate summary gate; approval and dry_run as given. */
static void at_review(char id[TASK_ID_LEN + 1], const char *repo, const char *approval,
                      int dry_run, const char *head, const char *gate)
{
	struct err e = {{0}};
	struct mover m = { .cfg = &cfg, .st = st };
	struct task_new n = { .repo = repo, .agent = "good", .text = "Add mul\n\nto calc.py",
	                      .budget = -1, .approval = approval, .dry_run = dry_run,
	                      .fix_rounds = -1 };
	size_t queued;
	if (store_task_create(st, &n, id, &queued, &e) < 0 ||
	    move_start(&m, id, repo, &e) < 0 ||
	    store_task_set_base(st, id, BASE, &e) < 0 ||
	    store_round_begin(st, id, 1, BASE, &e) < 0 ||
	    store_task_set_head(st, id, head, &e) < 0 ||
	    store_round_end(st, id, 1, head, gate, &e) < 0 ||
	    move_task(&m, id, TASK_RUNNING, NULL, &e) < 0 ||
	    move_task(&m, id, TASK_REVIEW, NULL, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
}

/* The task row now (valid until the next call). */
static struct task_row cur;
static int have_cur;

static struct task_row *get(const char *id)
{
	struct err e = {{0}};
	if (have_cur)
		task_row_free(&cur);
	have_cur = store_task_get(st, id, &cur, &e) == 0;
	if (!have_cur)
		printf("Bail out! %s\n", e.msg), exit(1);
	return &cur;
}

/* The decisions of id as "ACTION/ACTOR/NOTES;" each. */
static char *decisions(const char *id)
{
	struct task_decision *d;
	size_t n;
	struct err e = {{0}};
	struct buf b = {0};
	if (store_decisions(st, id, &d, &n, &e) == 0) {
		for (size_t i = 0; i < n; i++)
			buf_printf(&b, "%s/%s/%s;", d[i].action, d[i].actor,
			           d[i].notes ? d[i].notes : "");
		task_decisions_free(d, n);
	}
	return testlib_keep(b.data ? buf_detach(&b) : strdup(""));
}

/* What autogate_conditions says about a round with gate summary gate. */
static char *why_of(const char *gate)
{
	char id[TASK_ID_LEN + 1];
	at_review(id, "a", "auto", 0, HEAD, gate);
	struct buf why = {0};
	struct err e = {{0}};
	int ok = autogate_conditions(st, get(id), &why, &e);
	char *s = testlib_fmt("%d %s", ok, why.data ? why.data : "");
	buf_free(&why);
	return s;
}

static void test_conditions(void)
{
	is_str(why_of(gate_json(1, 1, 1, NULL)), "1 ", "verified passing tests, no finding: it "
	       "may go on without a person");
	is_str(why_of(gate_json(1, 1, 1, "warn")), "1 ", "a warn finding does not hold it");
	is_str(why_of(gate_json(1, 1, 0, NULL)), "0 the verified tests failed",
	       "failing verified tests hold it, and say so");
	is_str(why_of(gate_json(1, 0, 1, NULL)), "0 the tests were not verified on a clean "
	       "checkout", "tests that passed only unverified hold it");
	is_str(why_of(gate_json(0, 0, 0, NULL)), "0 no tests ran", "no tests hold it");
	is_str(why_of(gate_json(1, 1, 0, "block")), "0 the verified tests failed; policy "
	       "findings block it: paths:ci.yml", "every condition that fails is named");
}

static void test_hold(void)
{
	char id[TASK_ID_LEN + 1];
	struct err e = {{0}};
	struct buf out = {0};
	at_review(id, "a", "auto", 0, HEAD, gate_json(1, 1, 0, NULL));
	is_int(autogate_due(st, get(id), &e), 1, "auto at review, not looked at: due");
	is_int(autogate_run(&g, id, &out, &e), 0, "autogate_run holds it (%s)", e.msg);
	is_int(get(id)->status, TASK_REVIEW, "it waits at review");
	is_str(decisions(id), "hold/paddock (auto)/approval auto: waits for a person: the "
	       "verified tests failed;", "as a decision hold of paddock (auto) that says why");
	is_int(autogate_due(st, get(id), &e), 0, "the round is looked at once");
	buf_free(&out);

	/* A reviewer's round (paddock shell --keep) that passes: a person
	 * made it, a person decides. */
	is_int(store_task_reviewer_round(st, id, 2, HEAD, "3333333333333333333333333333333333333333",
	                                 gate_json(1, 1, 1, NULL), "fixed by hand", 1.0, &e), 0,
	       "a reviewer's round 2 (%s)", e.msg);
	is_int(autogate_due(st, get(id), &e), 1, "its round 2 is due");
	autogate_run(&g, id, &out, &e);
	ok(get(id)->status == TASK_REVIEW && !get(id)->pushed &&
	   strstr(decisions(id), "hold/paddock (auto)/approval auto: waits for a person: round 2 "
	          "is a reviewer's (paddock shell --keep), on which a person decides;"),
	   "a reviewer's round is not approved without a person (%s)", decisions(id));
	buf_free(&out);

	char rv[TASK_ID_LEN + 1];
	at_review(rv, "r", NULL, 0, HEAD, gate_json(1, 1, 1, NULL));
	is_int(autogate_due(st, get(rv), &e), 0, "approval review is never due");

	/* auto-push of a round that changed nothing: no branch of nothing. */
	char nc[TASK_ID_LEN + 1];
	at_review(nc, "ap", "auto-push", 0, BASE, gate_json(1, 1, 1, NULL));
	autogate_run(&g, nc, &out, &e);
	ok(get(nc)->status == TASK_REVIEW && !get(nc)->pushed &&
	   strstr(decisions(nc), "hold/paddock (auto)/approval auto-push: waits for a person: "
	          "task ") && strstr(decisions(nc), "changed nothing: there is nothing to push"),
	   "auto-push of a round that changed nothing pushes nothing and says so (%s)",
	   decisions(nc));
	buf_free(&out);
}

/* The scheduler's look at the gates, on each tick and whenever the
 * dashboard asks whether it is idle (autogate_due_ids): the tasks due,
 * read from their index, so that tasks a person decides and rounds
 * already looked at add nothing to what a look reads (issue 14: an idle
 * serve on 100,000 tasks read every task at review five times a
 * second); and while the store does not change, a look asks it
 * nothing. */
static void test_looks(const char *db)
{
	struct err e = {{0}};
	struct buf out = {0};
	struct autogate_look look = {0};
	char(*ids)[TASK_ID_LEN + 1];
	char id[TASK_ID_LEN + 1], rv[TASK_ID_LEN + 1];
	at_review(id, "a", "auto", 0, HEAD, gate_json(1, 1, 0, NULL));
	at_review(rv, "r", NULL, 0, HEAD, gate_json(1, 1, 1, NULL));
	ok(autogate_due_ids(st, &look, &ids, &e) == 1 && !strcmp(ids[0], id),
	   "the task of approval auto is due, not the one a person decides");
	free(ids);
	autogate_run(&g, id, &out, &e);
	buf_free(&out);
	uint64_t s0 = store_task_query_steps(st);
	is_int(autogate_due_ids(st, &look, &ids, &e), 0, "held, it is looked at once");
	ok(!ids, "no ids when none is due");
	uint64_t one = store_task_query_steps(st) - s0;
	for (int i = 0; i < 60; i++)
		at_review(rv, "r", i % 2 ? "review" : NULL, 0, HEAD, gate_json(1, 1, 1, NULL));
	s0 = store_task_query_steps(st);
	is_int(autogate_due_ids(st, &look, NULL, &e), 0, "60 more at review for a person: none due");
	uint64_t more = store_task_query_steps(st) - s0;
	ok(one > 0 && more == one, "the look reads no more of the store for them (%llu steps, "
	   "%llu before)", (unsigned long long)more, (unsigned long long)one);
	s0 = store_task_query_steps(st);
	is_int(autogate_due_ids(st, &look, NULL, &e), 0, "looked at again");
	ok(store_task_query_steps(st) == s0, "nothing changed since: the look asks the store nothing");
	/* Another process queues a task: the next look asks again. */
	struct store *other;
	char q[TASK_ID_LEN + 1];
	if (store_open(&other, db, &e) == 0) {
		store_task_add(other, "r", "good", "another", NULL, q, &e);
		store_close(other);
	}
	s0 = store_task_query_steps(st);
	autogate_due_ids(st, &look, NULL, &e);
	ok(store_task_query_steps(st) > s0, "another process's change: the look asks again");
	/* A round asked on GitHub of approval review is autogate's
	 * (test-ghsync.c); its pull request puts it in the look. */
	is_int(store_task_set(st, rv, "pr_url", "https://github.com/acme/widgets/pull/9", &e), 0,
	       "a pull request for a task at review (%s)", e.msg);
	s0 = store_task_query_steps(st);
	is_int(autogate_due_ids(st, &look, NULL, &e), 0, "without a round asked on GitHub: none due");
	ok(store_task_query_steps(st) - s0 > one, "the task with a pull request is read");
}

/* Members of a best-of-N group wait for a person's pick, passing or not. */
static void test_group(void)
{
	struct err e = {{0}};
	struct mover m = { .cfg = &cfg, .st = st };
	struct task_new ns[2];
	for (int i = 0; i < 2; i++)
		ns[i] = (struct task_new){ .repo = "a", .agent = "good", .text = "Add mul",
		                           .budget = -1, .approval = "auto", .fix_rounds = -1 };
	char gid[TASK_ID_LEN + 1], ids[2][TASK_ID_LEN + 1];
	if (store_group_create(st, "Add mul", ns, 2, gid, ids, NULL, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
	const char *id = ids[0];
	if (move_start(&m, id, "a", &e) < 0 || store_task_set_base(st, id, BASE, &e) < 0 ||
	    store_round_begin(st, id, 1, BASE, &e) < 0 || store_task_set_head(st, id, HEAD, &e) < 0 ||
	    store_round_end(st, id, 1, HEAD, gate_json(1, 1, 1, NULL), &e) < 0 ||
	    move_task(&m, id, TASK_RUNNING, NULL, &e) < 0 || move_task(&m, id, TASK_REVIEW, NULL, &e) < 0)
		printf("Bail out! %s\n", e.msg), exit(1);
	struct buf out = {0};
	is_int(autogate_run(&g, id, &out, &e), 0, "autogate_run of a passing group member");
	ok(get(id)->status == TASK_REVIEW && !get(id)->pushed && !get(id)->dry_run_record,
	   "it waits at review, nothing pushed");
	is_str(decisions(id), testlib_fmt("hold/paddock (auto)/approval auto: waits for a person: "
	       "it is a member of best-of-N group %s, of which a person picks one (paddock group "
	       "pick %s ID);", gid, gid), "the hold says a person picks one member");
	buf_free(&out);
}

static void test_dry_run(void)
{
	char id[TASK_ID_LEN + 1];
	struct err e = {{0}};
	struct buf out = {0};
	/* approval auto in test mode: approved by paddock, recorded, sent
	 * nowhere (the remote and the API are on no network). */
	at_review(id, "a", "auto", 1, HEAD, gate_json(1, 1, 1, NULL));
	is_int(autogate_run(&g, id, &out, &e), 0, "a dry run of approval auto (%s)", e.msg);
	struct task_row *t = get(id);
	is_int(t->status, TASK_DONE, "is done");
	ok(!t->pushed && !t->pr_url, "with nothing pushed and no pull request");
	is_str(decisions(id), "approve/paddock (auto)/;", "approved by paddock (auto)");
	json_t *rec = t->dry_run_record ? json_loads(t->dry_run_record, 0, NULL) : NULL;
	ok(json_is_object(rec), "its dry_run_record is a JSON object");
	const char *br = testlib_fmt("paddock/%s", id);
	is_str(json_string_value(json_object_get(rec, "remote")),
	       "https://git.example.invalid/acme/widgets.git", "the remote, its user and "
	       "password left out");
	is_str(json_string_value(json_object_get(rec, "refspec")),
	       testlib_fmt("refs/heads/%s:refs/heads/%s", br, br), "the exact refspec, no '+'");
	ok(json_is_false(json_object_get(rec, "force")), "force: false");
	is_str(json_string_value(json_object_get(rec, "commit")), HEAD, "the commit: the head");
	is_str(json_string_value(json_object_get(rec, "action")), "approve", "action: approve");
	json_t *pr = json_object_get(rec, "pull_request");
	is_str(json_string_value(json_object_get(pr, "method")), "POST", "the request: POST");
	is_str(json_string_value(json_object_get(pr, "url")),
	       "https://ghe.example.invalid/api/v3/repos/acme/widgets/pulls",
	       "to the pulls of github-repo at github-api");
	json_t *body = json_object_get(pr, "body");
	char *bs = body ? json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	is_str(bs, testlib_fmt("{\"title\":\"Add mul\",\"head\":\"%s\",\"base\":\"trunk\","
	                       "\"body\":\"Summary by the agent:\\n\\n```\\nAdded mul.\\n```\\n"
	                       "\\nTests: passed.\\n\\nOpened by paddock "
	                       "for task `%s` (round 1).\\n\",\"draft\":true}", br, id),
	       "the body, as forge sends it: title, head, base, body (the agent's summary quoted), "
	       "draft");
	free(bs);
	const char *problem = json_string_value(json_object_get(pr, "problem"));
	ok(problem && strstr(problem, "no GitHub token: set the environment variable "
	                     "GITHUB_TOKEN"), "what a real approve would refuse before sending "
	   "(no token) is its problem (%s)", problem ? problem : "null");
	ok(!strstr(t->dry_run_record, "s3cret") && !strstr(t->dry_run_record, "bob"),
	   "no credential in the record");
	ok(strstr(out.data ? out.data : "", "nothing was pushed") != NULL,
	   "what it would have done is said (%s)", out.data ? out.data : "");
	json_decref(rec);
	buf_free(&out);

	/* A push in test mode records too, and the task stays at review. */
	char p[TASK_ID_LEN + 1];
	at_review(p, "r", NULL, 1, HEAD, gate_json(1, 1, 1, NULL));
	g.actor = "tester";
	is_int(gate_push(&g, p, &out, &e), 0, "gate_push in test mode (%s)", e.msg);
	t = get(p);
	ok(t->status == TASK_REVIEW && !t->pushed && t->dry_run_record &&
	   strstr(t->dry_run_record, "\"action\":\"push\"") &&
	   strstr(t->dry_run_record, "\"pull_request\":null"),
	   "records the push (no pull request) and stays at review");
	buf_free(&out);
}

static void test_nothing_to_push(void)
{
	char id[TASK_ID_LEN + 1];
	struct err e = {{0}};
	struct buf out = {0};
	g.actor = "tester";
	/* never, in test mode: nothing would be pushed, so nothing is
	 * recorded as if it would. */
	at_review(id, "r", "never", 1, HEAD, gate_json(1, 1, 1, NULL));
	is_int(gate_push(&g, id, &out, &e), -1, "push is refused under approval never");
	is_int(e.kind, ERR_WRONG_STATE, "as a wrong state");
	is_int(gate_approve(&g, id, NULL, &out, &e), 0, "approve under approval never (%s)",
	       e.msg);
	ok(get(id)->status == TASK_DONE && !get(id)->pushed && !get(id)->dry_run_record,
	   "done, nothing pushed, and no record of a push that would not happen");
	ok(strstr(out.data ? out.data : "", "stays in paddock's mirror") != NULL,
	   "it says the branch stays in the mirror");
	buf_free(&out);

	/* A round that changed nothing (head at the base). */
	char nc[TASK_ID_LEN + 1];
	at_review(nc, "r", NULL, 0, BASE, gate_json(1, 1, 1, NULL));
	is_int(gate_push(&g, nc, &out, &e), -1, "push of a round that changed nothing is "
	       "refused");
	ok(strstr(e.msg, "changed nothing: there is nothing to push; approve ends it") != NULL,
	   "and says so (%s)", e.msg);
	is_int(gate_approve(&g, nc, "fine", &out, &e), 0, "approve of it (%s)", e.msg);
	ok(get(nc)->status == TASK_DONE && !get(nc)->pushed, "ends it done without a push");
	ok(strstr(out.data ? out.data : "", "changed nothing: there is nothing to push") != NULL,
	   "saying there was nothing to push");
	is_str(decisions(nc), "approve/tester/fine;", "the decision is recorded");
	buf_free(&out);
}

static void test_webhook(void)
{
	/* The done webhooks of the tasks above name who approved them. */
	struct webhook_row *w;
	size_t n = 0;
	struct err e = {{0}};
	int autos = 0, persons = 0, reviews = 0;
	store_webhook_list(st, NULL, &w, &n, &e);
	for (size_t i = 0; i < n; i++) {
		json_t *b = json_loads(w[i].body, 0, NULL);
		json_t *t = json_object_get(b, "task");
		const char *by = json_string_value(json_object_get(t, "approved_by"));
		if (!strcmp(w[i].event, "done") && by && !strcmp(by, AUTOGATE_ACTOR) &&
		    json_is_true(json_object_get(t, "dry_run")))
			autos++;
		if (!strcmp(w[i].event, "done") && by && !strcmp(by, "tester"))
			persons++;
		if (!strcmp(w[i].event, "review") && json_is_null(json_object_get(t, "approved_by")))
			reviews++;
		json_decref(b);
	}
	store_webhooks_free(w, n);
	is_int(autos, 1, "the done webhook of the auto dry run: approved_by paddock (auto), "
	       "dry_run true");
	is_int(persons, 2, "those a person approved name the person");
	ok(reviews > 0, "a review webhook has approved_by null");
}

int main(void)
{
	char *dir = testlib_tmpdir("autogate");
	char *db = paths_join(dir, "paddock.db", NULL);
	char *conf = paths_join(dir, "config", NULL);
	testlib_write_file(conf,
		"[repo \"r\"]\n"
		"\turl = https://bob:s3cret@git.example.invalid/acme/widgets.git\n"
		"\tbranch = trunk\n"
		"\ttest = true\n"
		"[repo \"a\"]\n"
		"\turl = https://bob:s3cret@git.example.invalid/acme/widgets.git\n"
		"\tbranch = trunk\n"
		"\ttest = true\n"
		"\tapproval = auto\n"
		"\tpull-request = github\n"
		"\tgithub-repo = acme/widgets\n"
		"\tgithub-api = https://ghe.example.invalid/api/v3/\n"
		"\tdraft = true\n"
		"[repo \"ap\"]\n"
		"\turl = https://git.example.invalid/acme/widgets.git\n"
		"\ttest = true\n"
		"\tapproval = auto-push\n"
		"[agent \"good\"]\n"
		"\tcommand = true\n"
		"[webhook]\n"
		"\turl = http://127.0.0.1:9/hook\n");
	struct err e = {{0}};
	unsetenv("GITHUB_TOKEN");
	if (store_open(&st, db, &e) < 0 || config_load(&cfg, conf, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	g = (struct gate_ctx){ .cfg = &cfg, .data_dir = dir, .st = st, .actor = "tester" };

	test_looks(db);
	test_conditions();
	test_hold();
	test_group();
	test_dry_run();
	test_nothing_to_push();
	test_webhook();

	if (have_cur)
		task_row_free(&cur);
	store_close(st);
	config_free(&cfg);
	free(db);
	free(conf);
	testlib_end();
	return tap_done();
}
