/* Unit tests: the gate summary (gate.h): what the pipeline stores parses
 * and emits back byte for byte, a summary from an older paddock parses
 * with defaults, bad JSON is refused with a message; loading it from the
 * store marks the findings overridden in its round.  gate_actor is whole
 * in every thread that asks first at once.  Who may decide: a repo's
 * reviewers and four-eyes, each refusal in the history, and the roles. */
#include "autoconfig.h"
#include "gate.h"

#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "access.h"
#include "buf.h"
#include "config.h"
#include "store.h"
#include "tap.h"
#include "testlib.h"

/* As the store keeps them: round 1 of `paddock demo`'s fixer (tests before
 * failing, after and the agent's run passing, a gateway, no findings). */
static const char demo_gate[] =
	"{\"round\":1,\"branch\":\"paddock/9mgdag68ma\",\"from\":\"1b9ca026d9393173f7a4c99"
	"5174cf8b1302104a1\",\"head\":\"dac12d41bc4c4f70718d7d07e210340b53a22d8d\",\"su"
	"mmary\":\"Cart.total() ignored the quantity of each item; it now multiplie"
	"s each price by its quantity, and the three tests pass.\\n\",\"diffstat\":\" "
	"cart.py | 2 +-\\n 1 file changed, 1 insertion(+), 1 deletion(-)\\n\",\"tests"
	"\":{\"before\":{\"ran\":true,\"passed\":false,\"tail\":\"========================="
	"=============================================\\nFAIL: test_total (test_ca"
	"rt.CartTest.test_total)\\n-----------------------------------------------"
	"-----------------------\\nTraceback (most recent call last):\\n  File \\\"/w"
	"ork/test_cart.py\\\", line 14, in test_total\\n    self.assertEqual(cart.to"
	"tal(), 3.25)\\nAssertionError: 1.75 != 3.25\\n----------------------------"
	"------------------------------------------\\nRan 3 tests in 0.001s\\nFAILE"
	"D (failures=1)\",\"log\":\"/tmp/gate-demo/templates/demo/1b9ca026d9393173f7a"
	"4c995174cf8b1302104a1-8f20eb0182a4.tests.log\",\"exit\":1},\"after\":{\"ran\":t"
	"rue,\"passed\":true,\"tail\":\"----------------------------------------------"
	"------------------------\\nRan 3 tests in 0.000s\\nOK\",\"log\":\"/tmp/gate-de"
	"mo/tasks/9mgdag68ma/log\",\"exit\":0,\"verified\":true},\"agent\":{\"ran\":true,\""
	"passed\":true,\"tail\":\"---------------------------------------------------"
	"-------------------\\nRan 3 tests in 0.000s\\nOK\",\"log\":\"/tmp/gate-demo/ta"
	"sks/9mgdag68ma/log\",\"exit\":0},\"mismatch\":false},\"findings\":[],\"contract\""
	":{\"change\":true,\"tests\":true,\"bundle\":true},\"usage\":{\"input\":0,\"output\":"
	"0,\"cache_read\":0,\"cache_write\":0,\"cost\":0.0,\"requests\":0,\"priced\":true,\""
	"budget\":0.0},\"egress\":{\"allowed\":0,\"refused\":0}}";

/* And of tests/approve.test's sneaky agent: five block findings. */
static const char approve_gate[] =
	"{\"round\":1,\"branch\":\"paddock/9me5gbsxvs\",\"from\":\"4dd859d81d113d54bc37b88"
	"f627f2bbd7c38b7bb\",\"head\":\"0911fecb760c4a967d705c3ba58e617eba3bc655\",\"su"
	"mmary\":\"Added a workflow, a key, settings, a link and a big file.\\n\",\"di"
	"ffstat\":\" .github/workflows/ci.yml | 2 ++\\n big.bin                  | B"
	"in 0 -> 52428800 bytes\\n keys/id_ed25519          | 3 +++\\n passwd-link "
	"             | 1 +\\n settings.ini             | 1 +\\n 5 files changed, 7"
	" insertions(+)\\n create mode 100644 .github/workflows/ci.yml\\n create mo"
	"de 100644 big.bin\\n create mode 100644 keys/id_ed25519\\n create mode 120"
	"000 passwd-link\\n create mode 100644 settings.ini\\n\",\"tests\":{\"before\":{"
	"\"ran\":true,\"passed\":true,\"tail\":\"---------------------------------------"
	"-------------------------------\\nRan 1 test in 0.000s\\nOK\",\"log\":\"/tmp/p"
	"addock-test.gNcv4e/data/templates/r/4dd859d81d113d54bc37b88f627f2bbd7c38"
	"b7bb-8f20eb0182a4.tests.log\",\"exit\":0},\"after\":{\"ran\":true,\"passed\":true"
	",\"tail\":\"---------------------------------------------------------------"
	"-------\\nRan 1 test in 0.000s\\nOK\",\"log\":\"/tmp/paddock-test.gNcv4e/data/"
	"tasks/9me5gbsxvs/log\",\"exit\":0,\"verified\":true},\"agent\":{\"ran\":true,\"pas"
	"sed\":true,\"tail\":\"------------------------------------------------------"
	"----------------\\nRan 1 test in 0.000s\\nOK\",\"log\":\"/tmp/paddock-test.gNc"
	"v4e/data/tasks/9me5gbsxvs/log\",\"exit\":0},\"mismatch\":false},\"findings\":[{"
	"\"name\":\"paths:.github/workflows/ci.yml\",\"rule\":\"paths\",\"action\":\"block\","
	"\"path\":\".github/workflows/ci.yml\",\"detail\":\"adds a path on the deny list"
	" (.github/workflows/**)\"},{\"name\":\"secrets:keys/id_ed25519\",\"rule\":\"secr"
	"ets\",\"action\":\"block\",\"path\":\"keys/id_ed25519\",\"detail\":\"looks like a pr"
	"ivate key (line 1)\"},{\"name\":\"secrets:settings.ini\",\"rule\":\"secrets\",\"ac"
	"tion\":\"block\",\"path\":\"settings.ini\",\"detail\":\"contains the value of a cr"
	"edential paddock holds (line 1)\"},{\"name\":\"size:big.bin\",\"rule\":\"size\",\""
	"action\":\"block\",\"path\":\"big.bin\",\"detail\":\"is 50.0 MiB, over the limit o"
	"f 10m (max-file-size)\"},{\"name\":\"symlinks:passwd-link\",\"rule\":\"symlinks\""
	",\"action\":\"block\",\"path\":\"passwd-link\",\"detail\":\"is a symlink to an abso"
	"lute path (/etc/passwd)\"}],\"contract\":{\"change\":true,\"tests\":true,\"bundl"
	"e\":true},\"usage\":{\"input\":0,\"output\":0,\"cache_read\":0,\"cache_write\":0,\"c"
	"ost\":0.0,\"requests\":0,\"priced\":true,\"budget\":0.0},\"egress\":{\"allowed\":0,"
	"\"refused\":0}}";

/* The text the store keeps for s. */
static char *dump(const struct gate_summary *s)
{
	json_t *j = gate_summary_to_json(s);
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	return testlib_keep(text);
}

static void round_trip(const char *what, const char *json)
{
	struct gate_summary s;
	struct err e = {{0}};
	is_int(gate_summary_parse(json, &s, &e), 0, "%s: parses (%s)", what, e.msg);
	is_str(dump(&s), json, "%s: emits the same bytes back", what);
	gate_summary_free(&s);
}

static void test_real(void)
{
	round_trip("demo", demo_gate);
	round_trip("approve", approve_gate);

	struct gate_summary s;
	struct err e = {{0}};
	gate_summary_parse(demo_gate, &s, &e);
	ok(s.round == 1 && !strcmp(s.branch, "paddock/9mgdag68ma") &&
	   !strcmp(s.head, "dac12d41bc4c4f70718d7d07e210340b53a22d8d") &&
	   !strncmp(s.summary, "Cart.total() ignored", 20) && strstr(s.diffstat, "cart.py"),
	   "demo: round, branch, head, summary, diffstat");
	ok(s.tests.before.ran && !s.tests.before.passed && s.tests.before.exited &&
	   s.tests.before.code == 1 && !s.tests.before.verified &&
	   strstr(s.tests.before.tail, "FAILED (failures=1)") &&
	   strstr(s.tests.before.log, ".tests.log"),
	   "demo: the tests before failed with status 1, their tail and log");
	ok(s.tests.after.ran && s.tests.after.passed && s.tests.after.verified &&
	   s.tests.after.exited && s.tests.after.code == 0 && s.tests.agent.ran &&
	   s.tests.agent.passed && !s.tests.agent.verified && !s.tests.mismatch,
	   "demo: after passed on a clean checkout, as in the agent's run");
	ok(s.nfindings == 0 && s.has_contract && s.contract.change && s.contract.tests &&
	   s.contract.bundle, "demo: no findings; the contract met");
	ok(s.has_usage && s.usage.priced && s.usage.cost == 0 && s.usage.budget == 0 &&
	   s.has_egress && s.egress.allowed == 0, "demo: usage and egress of its gateway");
	ok(!gate_mismatch(&s), "demo: no mismatch");
	gate_summary_free(&s);

	gate_summary_parse(approve_gate, &s, &e);
	ok(s.nfindings == 5 && !strcmp(s.findings[0].name, "paths:.github/workflows/ci.yml") &&
	   !strcmp(s.findings[0].rule, "paths") && s.findings[0].action == POLICY_BLOCK &&
	   !strcmp(s.findings[0].path, ".github/workflows/ci.yml") &&
	   strstr(s.findings[0].detail, "deny list") && !s.findings[0].overridden,
	   "approve: five findings, the first with its name, rule, action, path, detail");
	struct buf b = {0};
	gate_blocking(&s, &b);
	is_str(b.data, "paths:.github/workflows/ci.yml, secrets:keys/id_ed25519, "
	       "secrets:settings.ini, size:big.bin, symlinks:passwd-link",
	       "approve: all five block");
	buf_reset(&b);
	s.findings[1].overridden = 1;
	s.findings[2].action = POLICY_WARN;
	gate_blocking(&s, &b);
	is_str(b.data, "paths:.github/workflows/ci.yml, size:big.bin, symlinks:passwd-link",
	       "an overridden finding and a warning do not block");
	buf_free(&b);
	gate_summary_free(&s);
}

/* What the pipeline fills: a killed test run ("exit": null), a mismatch, a
 * warning, usage with a cost, no gateway's egress. */
static void test_built(void)
{
	struct gate_summary s = {
		.round = 2, .branch = strdup("paddock/x"), .from = strdup("aaaa"),
		.head = strdup("bbbb"), .summary = strdup("did \"it\"\n"), .diffstat = strdup(""),
	};
	s.tests.before = (struct gate_tests){ .ran = 0 };
	s.tests.after = (struct gate_tests){ .ran = 1, .passed = 0, .exited = 0, .code = 9,
	                                     .verified = 1, .tail = strdup("Killed"),
	                                     .log = strdup("/l") };
	s.tests.agent = (struct gate_tests){ .ran = 1, .passed = 1, .exited = 1, .code = 0 };
	s.tests.mismatch = 1;
	gate_summary_add_finding(&s, "size:big.bin", "size", POLICY_WARN, "big.bin", "is big");
	s.has_contract = 1;
	s.contract.change = 1;
	s.has_usage = 1;
	s.usage.input = 1200;
	s.usage.output = 34;
	s.usage.requests = 3;
	s.usage.cost = 0.0125;        /* printed to 17 digits, read back the same */
	s.usage.budget = 2.5;
	const char *want =
		"{\"round\":2,\"branch\":\"paddock/x\",\"from\":\"aaaa\",\"head\":\"bbbb\","
		"\"summary\":\"did \\\"it\\\"\\n\",\"diffstat\":\"\",\"tests\":{\"before\":"
		"{\"ran\":false},\"after\":{\"ran\":true,\"passed\":false,\"tail\":\"Killed\","
		"\"log\":\"/l\",\"exit\":null,\"verified\":true},\"agent\":{\"ran\":true,"
		"\"passed\":true,\"tail\":\"\",\"log\":\"\",\"exit\":0},\"mismatch\":true},"
		"\"findings\":[{\"name\":\"size:big.bin\",\"rule\":\"size\",\"action\":\"warn\","
		"\"path\":\"big.bin\",\"detail\":\"is big\"}],\"contract\":{\"change\":true,"
		"\"tests\":false,\"bundle\":false},\"usage\":{\"input\":1200,\"output\":34,"
		"\"cache_read\":0,\"cache_write\":0,\"cost\":0.012500000000000001,\"requests\":3,"
		"\"priced\":false,\"budget\":2.5}}";
	is_str(dump(&s), want, "built: the keys in their order, exit null, no egress");
	gate_summary_free(&s);
	round_trip("built", want);

	struct err e = {{0}};
	gate_summary_parse(want, &s, &e);
	ok(s.tests.after.ran && !s.tests.after.exited && !s.tests.before.ran &&
	   s.tests.agent.exited && s.usage.cost == 0.0125 && s.usage.input == 1200 &&
	   !s.has_egress && s.nfindings == 1 && s.findings[0].action == POLICY_WARN,
	   "built: parsed back");
	const char *m = gate_mismatch(&s);
	ok(m && strstr(m, "FAIL on a clean checkout"), "a mismatch that fails on a clean checkout");
	s.tests.after.passed = 1;
	m = gate_mismatch(&s);
	ok(m && strstr(m, "but pass on a clean checkout"), "and one that passes there");
	ok(!gate_mismatch(NULL), "no summary, no mismatch");
	gate_summary_free(&s);
}

static void test_old(void)
{
	struct gate_summary s;
	struct err e = {{0}};
	/* As paddock wrote it before the clean checkout and the gateway (no
	 * "agent", "mismatch", "verified", "usage", "egress"), and before the
	 * logs and the contract. */
	const char *v1 = "{\"round\":1,\"branch\":\"paddock/old\",\"summary\":\"s\","
		"\"diffstat\":\" a | 1 +\\n\",\"tests\":{\"before\":{\"ran\":true,\"passed\":false,"
		"\"tail\":\"boom\",\"exit\":1},\"after\":{\"ran\":true,\"passed\":true,"
		"\"tail\":\"ok\",\"exit\":0}},\"findings\":[{\"name\":\"paths:x\",\"rule\":\"paths\","
		"\"action\":\"block\",\"path\":\"x\",\"detail\":\"d\"}]}";
	is_int(gate_summary_parse(v1, &s, &e), 0, "an older summary parses (%s)", e.msg);
	ok(s.round == 1 && !strcmp(s.branch, "paddock/old") && !s.from && !s.head,
	   "older: its round and branch; no from, no head");
	ok(s.tests.before.ran && !s.tests.before.passed && s.tests.before.code == 1 &&
	   !s.tests.before.log && s.tests.after.passed && !s.tests.after.verified,
	   "older: its tests, without logs, after not verified");
	ok(!s.tests.agent.ran && !s.tests.mismatch && !gate_mismatch(&s),
	   "older: no agent's run, no mismatch");
	ok(!s.has_contract && !s.has_usage && !s.has_egress,
	   "older: no contract, no usage, no egress");
	ok(s.nfindings == 1 && s.findings[0].action == POLICY_BLOCK,
	   "older: its finding blocks");
	gate_summary_free(&s);

	/* What the pipeline sends when the summary cannot be written. */
	is_int(gate_summary_parse("{}", &s, &e), 0, "{} parses");
	ok(s.round == 0 && !s.summary && !s.tests.after.ran && !s.nfindings && !s.has_contract,
	   "{}: everything at its default");
	is_str(dump(&s), "{\"round\":0,\"summary\":\"\",\"diffstat\":\"\",\"tests\":{\"before\":"
	       "{\"ran\":false},\"after\":{\"ran\":false},\"agent\":{\"ran\":false},"
	       "\"mismatch\":false},\"findings\":[]}", "{}: emitted with the defaults");
	gate_summary_free(&s);

	/* Members of another type read as missing, as readers always took them. */
	is_int(gate_summary_parse("{\"round\":\"2\",\"tests\":[],\"findings\":{\"a\":1},"
	                          "\"contract\":true,\"summary\":3}", &s, &e), 0,
	       "members of another type parse");
	ok(s.round == 0 && !s.summary && !s.tests.before.ran && !s.nfindings && !s.has_contract,
	   "and read as missing");
	gate_summary_free(&s);
}

static void test_bad(void)
{
	struct gate_summary s;
	struct err e = {{0}};
	is_int(gate_summary_parse("{\"round\":1,", &s, &e), -1, "truncated JSON is refused");
	ok(strstr(e.msg, "gate report is not a JSON object") != NULL,
	   "with a message that says so (%s)", e.msg);
	ok(!s.findings && !s.summary, "and nothing in out");
	gate_summary_free(&s);
	e.msg[0] = '\0';
	is_int(gate_summary_parse("[1,2]", &s, &e), -1, "a JSON array is refused");
	ok(strstr(e.msg, "another JSON value") != NULL, "it is another JSON value (%s)", e.msg);
	e.msg[0] = '\0';
	is_int(gate_summary_parse("", &s, &e), -1, "empty text is refused");
	ok(e.msg[0] != '\0', "with a message (%s)", e.msg);
	is_int(gate_summary_parse(NULL, &s, &e), -1, "no text is refused");
}

/* The summary of a task's latest round from the store, overrides marked. */
static void test_load(void)
{
	char *dir = testlib_tmpdir("gate");
	struct store *st;
	struct err e = {{0}};
	if (store_open(&st, testlib_fmt("%s/paddock.db", dir), &e) < 0) {
		ok(0, "open a store (%s)", e.msg);
		return;
	}
	char id[TASK_ID_LEN + 1];
	store_task_add(st, "r", "a", "text", NULL, id, &e);
	struct task_row t;
	store_task_get(st, id, &t, &e);
	struct gate_summary s;
	is_int(gate_summary_load(st, &t, &s, &e), 0, "a task without rounds has no summary");
	ok(!gate_summary_json(st, &t, &e), "nor as JSON");
	store_round_begin(st, id, 1, "aaaa", &e);
	store_round_end(st, id, 1, "bbbb", approve_gate, &e);
	/* A later round whose summary cannot be read counts as having none. */
	store_round_begin(st, id, 2, "bbbb", &e);
	store_round_end(st, id, 2, "cccc", "{\"round\":2,", &e);
	is_int(store_decision_add(st, id, "override", "size:big.bin\nit is fine", "alice", &e), 0,
	       "override a finding (%s)", e.msg);
	store_decision_add(st, id, "override", "size:big.bin.old", "alice", &e);
	is_int(gate_summary_load(st, &t, &s, &e), 1, "the summary loads (%s)", e.msg);
	ok(s.round == 1 && s.nfindings == 5, "round 1's, the latest that can be read");
	int over = 0;
	for (size_t i = 0; i < s.nfindings; i++)
		over += s.findings[i].overridden ? (strcmp(s.findings[i].name, "size:big.bin") ? 100 : 1)
		                                 : 0;
	is_int(over, 1, "only the finding named by the override is overridden");
	struct buf b = {0};
	gate_blocking(&s, &b);
	ok(b.data && !strstr(b.data, "size:") && strstr(b.data, "symlinks:passwd-link"),
	   "it no longer blocks (%s)", b.data);
	buf_free(&b);
	gate_summary_free(&s);

	json_t *j = gate_summary_json(st, &t, &e);
	json_t *f;
	size_t i;
	struct buf marks = {0};
	json_array_foreach(json_object_get(j, "findings"), i, f)
		buf_adds(&marks, json_is_true(json_object_get(f, "overridden")) ? "T" :
		         json_is_false(json_object_get(f, "overridden")) ? "F" : "?");
	is_str(marks.data, "FFFTF", "as JSON: \"overridden\" on each finding");
	/* Without the marks, it is what the store keeps. */
	json_array_foreach(json_object_get(j, "findings"), i, f)
		json_object_del(f, "overridden");
	char *text = testlib_keep(json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER));
	is_str(text, approve_gate, "as JSON: otherwise as stored");
	buf_free(&marks);
	json_decref(j);
	task_row_free(&t);
	store_close(st);
}

/* A task's own contract and the fix loop's rounds: each clause with
 * whether it held, and how many fix rounds it took, there and back. */
static void test_workflow(void)
{
	struct gate_summary s = { .round = 3, .summary = strdup("fixed") };
	s.tests.after = (struct gate_tests){ .ran = 1, .passed = 1, .exited = 1, .verified = 1 };
	s.has_contract = 1;
	s.contract.change = s.contract.tests = s.contract.bundle = 1;
	s.contract.nclauses = 2;
	s.contract.clauses = calloc(2, sizeof *s.contract.clauses);
	s.contract.clauses[0] = (struct gate_clause){ strdup("change"), 1 };
	s.contract.clauses[1] = (struct gate_clause){ strdup("changed *test*"), 0 };
	s.fix_rounds = 2;
	json_t *j = gate_summary_to_json(&s);
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	ok(strstr(text, "\"contract\":{\"change\":true,\"tests\":true,\"bundle\":true,"
	       "\"clauses\":[{\"clause\":\"change\",\"held\":true},{\"clause\":"
	       "\"changed *test*\",\"held\":false}]}") != NULL &&
	   strstr(text, "\"fix_rounds\":2") != NULL,
	   "the clauses with whether each held, and the fix rounds, are in the JSON");
	struct gate_summary back;
	struct err e = {{0}};
	gate_summary_parse(text, &back, &e);
	ok(back.fix_rounds == 2 && back.contract.nclauses == 2 &&
	   !strcmp(back.contract.clauses[1].clause, "changed *test*") &&
	   back.contract.clauses[0].held && !back.contract.clauses[1].held,
	   "and they read back");
	char *note = gate_fix_note(&back);
	is_str(note, "tests passed after 2 fix rounds", "the gate says how many tries it took");
	free(note);
	back.tests.after.passed = 0;
	back.fix_rounds = 1;
	note = gate_fix_note(&back);
	is_str(note, "tests still failed after 1 fix round", "and when they did not help");
	free(note);
	struct buf b = {0};
	ok(gate_contract_text(&back, &b) == 0, "a clause that failed: the contract did not hold");
	is_str(b.data, "change: yes  changed *test*: no", "each clause, as the gate shows it");
	buf_free(&b);
	back.fix_rounds = 0;
	ok(gate_fix_note(&back) == NULL, "no fix rounds: nothing to say");
	gate_summary_free(&back);
	free(text);
	json_decref(j);
	/* The default contract: change, tests, bundle. */
	s.contract.nclauses = 0;
	ok(gate_contract_text(&s, &b) == 1, "the default contract, all held");
	is_str(b.data, "change: yes  tests: yes  bundle: yes", "its three parts");
	s.contract.nclauses = 2;
	buf_free(&b);
	gate_summary_free(&s);
	json_t *old = gate_summary_to_json(&(struct gate_summary){ .round = 1 });
	ok(json_object_get(old, "fix_rounds") == NULL, "no fix_rounds member when there were none");
	json_decref(old);
}

/* ---- gate_actor from several threads ---- */

#define ACTOR_THREADS 8

static pthread_barrier_t actor_start;
static atomic_int actor_lookups;

/* The password database as gate_actor sees it here: slow, so that threads
 * asking at once are all inside it together unless a lock keeps them out;
 * it counts the lookups. */
struct passwd *getpwuid(uid_t uid)
{
	static struct passwd pw = { .pw_name = (char *)"tester-in-passwd" };
	(void)uid;
	atomic_fetch_add(&actor_lookups, 1);
	usleep(20000);
	return &pw;
}

static void *actor_ask(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&actor_start);
	return strcmp(gate_actor(), "tester-in-passwd") ? NULL : (void *)1;
}

/* The reconcile thread and the scheduler's loop both ask for the actor:
 * the name is looked up once, under a lock, and each thread gets it
 * whole.  In a child: gate_actor keeps what it found first. */
static void test_actor_threads(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		unsetenv("USER");
		unsetenv("SUDO_USER");
		pthread_t th[ACTOR_THREADS];
		pthread_barrier_init(&actor_start, NULL, ACTOR_THREADS);
		for (int i = 0; i < ACTOR_THREADS; i++)
			pthread_create(&th[i], NULL, actor_ask, NULL);
		int whole = 1;
		for (int i = 0; i < ACTOR_THREADS; i++) {
			void *r;
			pthread_join(th[i], &r);
			whole &= r != NULL;
		}
		pthread_barrier_destroy(&actor_start);
		_exit(whole ? atomic_load(&actor_lookups) : 100);
	}
	int status = 0;
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status),
	   "gate_actor: %d threads ask at once", ACTOR_THREADS);
	is_int(WEXITSTATUS(status), 1, "each gets the whole name, looked up once");
}

/* A push holds the task's push lock: a second is refused at once. */
static void test_push_lock(void)
{
	char *dir = testlib_tmpdir("gate-lock");
	struct err e = {{0}};
	int fd = gate_push_lock(dir, "k3zd0q7m2a", &e);
	ok(fd >= 0, "the push lock, taken (its folder made)");
	ok(!gate_push_lock_free(dir, "k3zd0q7m2a"), "... not free while held");
	is_int(gate_push_lock(dir, "k3zd0q7m2a", &e), -1, "a second push");
	ok(e.kind == ERR_CONFLICT && !strcmp(e.msg, "a push of task k3zd0q7m2a is already in "
	                                     "progress"), "... refused as a conflict: %s", e.msg);
	close(fd);
	ok(gate_push_lock_free(dir, "k3zd0q7m2a"), "free once closed");
}

/* Who may decide (gate_may_decide): a repo's reviewers and four-eyes,
 * each refusal recorded in the task's history; and the tokens' roles as
 * the configuration gives them (access.h). */
static void test_may_decide(void)
{
	char *dir = testlib_tmpdir("gate-decide");
	char *conf = testlib_fmt("%s/config", dir);
	testlib_write_file(conf, "[repo \"r\"]\n\turl = %s/none.git\n\treviewers = alice, bob\n"
	                   "\tfour-eyes = true\n[repo \"open\"]\n\turl = %s/none.git\n"
	                   "[token \"a\"]\n\tvalue-env = T_A\n[token \"b\"]\n\tvalue-env = T_B\n"
	                   "\tread-only = true\n[token \"c\"]\n\tvalue-env = T_C\n\tread-only = true\n"
	                   "\trole = review\n", dir, dir);
	struct config cfg;
	struct store *st;
	struct err e = {{0}};
	if (config_load(&cfg, conf, &e) < 0 ||
	    store_open(&st, testlib_fmt("%s/paddock.db", dir), &e) < 0) {
		ok(0, "a configuration and a store (%s)", e.msg);
		return;
	}
	is_str(access_name(config_token_role(&cfg.tokens[0])), "admin", "a token without a role: admin");
	is_str(access_name(config_token_role(&cfg.tokens[1])), "read", "read-only = true: read");
	is_str(access_name(config_token_role(&cfg.tokens[2])), "review", "a role given wins over read-only");
	ok(access_allows(ACCESS_REVIEW, ACCESS_SUBMIT) && !access_allows(ACCESS_SUBMIT, ACCESS_REVIEW) &&
	   access_parse("boss") == ACCESS_NONE, "each role allows what the one before allows");
	char id[TASK_ID_LEN + 1], oid[TASK_ID_LEN + 1];
	struct task_new n = { .repo = "r", .agent = "a", .text = "t", .budget = -1,
	                      .queued_by = "alice" };
	store_task_create(st, &n, id, NULL, &e);
	n.repo = "open";
	store_task_create(st, &n, oid, NULL, &e);
	struct task_row t, o;
	store_task_get(st, id, &t, &e);
	store_task_get(st, oid, &o, &e);
	is_str(t.queued_by, "alice", "the task keeps who queued it");
	struct gate_ctx g = gate_ctx_of(&cfg, dir, st, "carol");
	is_int(gate_may_decide(&g, &t, "reject", &e), -1, "a user the reviewers do not list");
	ok(e.kind == ERR_FORBIDDEN && !strcmp(e.msg, "carol may not decide the gates of repo r: its "
	   "reviewers are alice, bob"), "... is refused, saying who may: %s", e.msg);
	is_int(gate_may_decide(&g, &o, "approve", &e), 0, "a repo without reviewers: anyone may");
	g.actor = "alice";
	is_int(gate_may_decide(&g, &t, "request-changes", &e), 0, "four-eyes: the submitter may ask for changes");
	is_int(gate_may_decide(&g, &t, "approve", &e), -1, "four-eyes: the submitter may not approve");
	ok(e.kind == ERR_FORBIDDEN && strstr(e.msg, "four-eyes = true"), "... %s", e.msg);
	is_int(gate_may_decide(&g, &t, "pick", &e), -1, "... nor pick it");
	g.actor = "bob";
	is_int(gate_may_decide(&g, &t, "approve", &e), 0, "another listed reviewer may approve");
	struct task_decision *d;
	size_t nd = 0;
	store_decisions(st, id, &d, &nd, &e);
	ok(nd == 3 && !strcmp(d[0].action, "refused") && !strcmp(d[0].actor, "carol") &&
	   !strncmp(d[0].notes, "reject: carol may not", 21) && !strcmp(d[1].actor, "alice") &&
	   !strncmp(d[1].notes, "approve: ", 9) && !strncmp(d[2].notes, "pick: ", 6),
	   "each refusal is in the history, by its actor, with the action and why");
	task_decisions_free(d, nd);
	task_row_free(&t);
	task_row_free(&o);
	store_close(st);
	config_free(&cfg);
	testlib_write_file(conf, "[token \"d\"]\n\tvalue-env = T_D\n\trole = boss\n");
	ok(config_load(&cfg, conf, &e) < 0 && strstr(e.msg, "token.d.role: 'boss' is not a role"),
	   "an unknown role is a problem of the configuration: %s", e.msg);
	config_free(&cfg);
}

int main(void)
{
	test_may_decide();
	test_actor_threads();
	test_push_lock();
	test_workflow();
	test_real();
	test_built();
	test_old();
	test_bad();
	test_load();
	testlib_end();
	return tap_done();
}
