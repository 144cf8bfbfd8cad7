/* test-units: durations and sizes as a user writes them in the config; the
 * data directory's layout (paths.h); the kinds of errors (err.h) that the
 * API's statuses and the CLI's exit statuses come from. */
#include "autoconfig.h"
#include "units.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "fsx.h"
#include "gate.h"
#include "mirror.h"
#include "paths.h"
#include "store.h"
#include "tap.h"

static int dur(const char *s, double want)
{
	double got = -1;
	return units_parse_duration(s, &got) == 0 && got == want;
}

static int dur_bad(const char *s)
{
	double got = 12345;
	return units_parse_duration(s, &got) == -1 && got == 12345;
}

static int size(const char *s, uint64_t want)
{
	uint64_t got = 0;
	return units_parse_size(s, &got) == 0 && got == want;
}

static int size_bad(const char *s)
{
	uint64_t got = 777;
	return units_parse_size(s, &got) == -1 && got == 777;
}

static const char *fmt(uint64_t v)
{
	static char out[32];
	units_format_size(v, out, sizeof(out));
	return out;
}

/* A path helper's answer (freed) against the documented path. */
static void path_is(char *got, const char *want, const char *what)
{
	is_str(got, want, "%s is %s", what, want);
	free(got);
}

static void test_paths(void)
{
	const char *d = "/data";
	const char *id = "k3x9m2qa7d";
	path_is(paths_db(d), "/data/paddock.db", "the store");
	path_is(paths_scheduler_lock(d), "/data/scheduler.lock", "the scheduler lock");
	path_is(paths_mirrors_dir(d), "/data/mirrors", "the mirrors");
	path_is(paths_mirror(d, "web"), "/data/mirrors/web.git", "a mirror");
	path_is(mirror_path(d, "web"), "/data/mirrors/web.git", "mirror_path, the same");
	path_is(paths_templates_dir(d), "/data/templates", "the templates");
	path_is(paths_template_repo_dir(d, "web"), "/data/templates/web", "a repo's templates");
	path_is(paths_agents_dir(d), "/data/agents", "the installed agents");
	path_is(paths_agent_dir(d, "claude"), "/data/agents/claude", "an installed agent");
	path_is(paths_demo_dir(d), "/data/demo", "the demo");
	path_is(paths_tasks_dir(d), "/data/tasks", "the tasks");
	path_is(paths_task_dir(d, id), "/data/tasks/k3x9m2qa7d", "a task");
	path_is(paths_task_log(d, id), "/data/tasks/k3x9m2qa7d/log", "its log");
	path_is(paths_task_prompt(d, id), "/data/tasks/k3x9m2qa7d/prompt", "its prompt");
	path_is(paths_task_summary(d, id), "/data/tasks/k3x9m2qa7d/summary", "its summary");
	path_is(paths_task_bundle(d, id), "/data/tasks/k3x9m2qa7d/result.bundle", "its bundle");
	path_is(paths_task_round_bundle(d, id, 3), "/data/tasks/k3x9m2qa7d/round-3.bundle",
	        "round 3's bundle");
	path_is(paths_task_notes(d, id, 2), "/data/tasks/k3x9m2qa7d/notes-2", "round 2's notes");
	path_is(paths_task_home(d, id), "/data/tasks/k3x9m2qa7d/home.tgz", "its agent's home");
	path_is(paths_task_home_session(d, id), "/data/tasks/k3x9m2qa7d/home.session",
	        "the home's session");
	path_is(paths_task_push_lock(d, id), "/data/tasks/k3x9m2qa7d/push.lock", "its push lock");
	path_is(paths_join("/a/", "b", "c", NULL), "/a/b/c", "paths_join with a trailing /");

	setenv("PADDOCK_HOME", "/ph", 1);
	setenv("XDG_DATA_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	path_is(paths_data_dir(), "/ph", "with PADDOCK_HOME, the data dir");
	unsetenv("PADDOCK_HOME");
	path_is(paths_data_dir(), "/xdg/paddock", "with XDG_DATA_HOME, the data dir");
	setenv("XDG_DATA_HOME", "relative", 1);
	path_is(paths_data_dir(), "/home/u/.local/share/paddock",
	        "with a relative XDG_DATA_HOME (ignored), the data dir");
	unsetenv("XDG_DATA_HOME");
	path_is(paths_data_dir(), "/home/u/.local/share/paddock", "with only HOME, the data dir");
}

static void test_data_dir_ensure(const char *tmp)
{
	char *home = paths_join(tmp, "home", NULL);
	setenv("PADDOCK_HOME", home, 1);
	struct err e = {{0}};
	char *d = paths_data_dir_ensure(&e);
	is_str(d, home, "paths_data_dir_ensure returns the data dir");
	struct stat st;
	char *sub[] = { paths_mirrors_dir(home), paths_templates_dir(home), paths_tasks_dir(home) };
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		ok(stat(sub[i], &st) == 0 && S_ISDIR(st.st_mode), "it made %s", sub[i]);
		free(sub[i]);
	}
	ok(stat(home, &st) == 0 && (st.st_mode & 0777) == 0700, "the data dir is mode 0700");
	unsetenv("PADDOCK_HOME");
	free(d);
	free(home);
}

static void test_err(void)
{
	struct err e = {{0}};
	is_int(e.kind, ERR_INTERNAL, "a zeroed struct err is ERR_INTERNAL");
	is_int(err_kind_set(&e, ERR_NOT_FOUND, "no %s", "x"), -1, "err_kind_set returns -1");
	ok(e.kind == ERR_NOT_FOUND && !strcmp(e.msg, "no x"), "err_kind_set sets kind and message");
	err_prefix(&e, "p");
	ok(e.kind == ERR_NOT_FOUND && !strcmp(e.msg, "p: no x"), "err_prefix keeps the kind");
	err_set(&e, "plain");
	is_int(e.kind, ERR_INTERNAL, "err_set makes an ERR_INTERNAL error (no kind left over)");
	is_int(err_kind_mark(&e, ERR_REMOTE), -1, "err_kind_mark returns -1");
	ok(e.kind == ERR_REMOTE && !strcmp(e.msg, "plain"), "err_kind_mark keeps the message");
	errno = ENOENT;
	err_errno(&e, "open");
	is_int(e.kind, ERR_INTERNAL, "err_errno makes an ERR_INTERNAL error");
	err_kind_mark(&e, ERR_CONFLICT);
	err_clear(&e);
	ok(e.kind == ERR_INTERNAL && !e.msg[0], "err_clear clears the kind too");
	ok(err_kind_set(NULL, ERR_INVALID, "x") == -1 && err_kind_mark(NULL, ERR_INVALID) == -1,
	   "a NULL struct err is fine");
}

/* The kinds that the store and the gate give their refusals: the API's
 * statuses come from them (404, 400, 409). */
static void test_kinds(const char *tmp)
{
	char *db = paths_db(tmp);
	struct store *s = NULL;
	struct err e = {{0}};
	if (store_open(&s, db, &e) < 0) {
		ok(0, "store_open: %s", e.msg);
		free(db);
		return;
	}
	free(db);
	struct task_row t;
	ok(store_task_get(s, "not-an-id!", &t, &e) < 0 && e.kind == ERR_INVALID,
	   "a malformed id: ERR_INVALID");
	ok(store_task_get(s, "zzzzzzzzzz", &t, &e) < 0 && e.kind == ERR_NOT_FOUND,
	   "no such task: ERR_NOT_FOUND");
	/* Two ids that share their first four characters: an ambiguous
	 * prefix (ids share the first two; 1024 tasks make a pair sure). */
	char ids[1025][TASK_ID_LEN + 1];
	int a = -1, b = -1;
	for (int i = 0; i < 1025 && a < 0; i++) {
		if (store_task_add(s, "r", "ag", "text", NULL, ids[i], &e) < 0) {
			ok(0, "store_task_add: %s", e.msg);
			break;
		}
		for (int j = 0; j < i && a < 0; j++)
			if (!strncmp(ids[i], ids[j], 4)) {
				a = j;
				b = i;
			}
	}
	if (a >= 0) {
		char prefix[5];
		snprintf(prefix, sizeof prefix, "%.4s", ids[a]);
		ok(store_task_get(s, prefix, &t, &e) < 0 && e.kind == ERR_NOT_FOUND &&
		   strstr(e.msg, "ambiguous"), "an ambiguous prefix: ERR_NOT_FOUND (no one task)");
		ok(store_task_transition(s, ids[a], TASK_DONE, NULL, &e) < 0 &&
		   e.kind == ERR_WRONG_STATE, "queued -> done refused: ERR_WRONG_STATE");
		ok(store_task_request_changes(s, ids[a], "notes", "me", &e) < 0 &&
		   e.kind == ERR_WRONG_STATE, "changes on a queued task: ERR_WRONG_STATE");
		ok(store_task_cancel(s, ids[b], "me", &e) == 1, "a queued task is cancelled");
		ok(store_task_cancel(s, ids[b], "me", &e) < 0 && e.kind == ERR_WRONG_STATE,
		   "cancelling it again: ERR_WRONG_STATE");
		int l1 = gate_push_lock(tmp, ids[a], &e);
		struct err e2 = {{0}};
		int l2 = gate_push_lock(tmp, ids[a], &e2);
		ok(l1 >= 0 && l2 < 0 && e2.kind == ERR_CONFLICT,
		   "a push lock held by another push: ERR_CONFLICT");
		char *lock = paths_task_push_lock(tmp, ids[a]);
		struct stat st;
		ok(stat(lock, &st) == 0, "the push lock is where paths_task_push_lock says");
		if (l1 >= 0)
			close(l1);
		free(lock);
	} else {
		ok(0, "two task ids with a common prefix of four");
	}
	store_close(s);
}

int main(void)
{
	char tmp[] = "/tmp/paddock-test-units-XXXXXX";
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_paths();
	test_data_dir_ensure(tmp);
	test_err();
	test_kinds(tmp);
	struct err re;
	fsx_rm_rf(tmp, &re);

	ok(dur("30m", 1800), "30m is 1800 seconds");
	ok(dur("90s", 90), "90s is 90 seconds");
	ok(dur("2h", 7200), "2h is 7200 seconds");
	ok(dur("1d", 86400), "1d is 86400 seconds");
	ok(dur("45", 45), "a plain number is seconds");
	ok(dur("10M", 600), "duration suffixes are case-insensitive");
	ok(dur_bad("0"), "zero duration refused");
	ok(dur_bad("0m"), "zero minutes refused");
	ok(dur_bad("-5m"), "negative duration refused");
	ok(dur_bad(""), "empty duration refused");
	ok(dur_bad("m"), "suffix without number refused");
	ok(dur_bad("5x"), "unknown suffix refused");
	ok(dur_bad("5 m"), "space inside refused");
	ok(dur_bad("1.5h"), "fractions refused");
	ok(dur_bad("5mm"), "trailing garbage refused");
	ok(dur_bad("99999999999999999999999"), "digits overflowing 64 bits refused");
	ok(dur_bad("999999999999d"), "duration beyond range refused");
	ok(dur_bad(NULL), "NULL refused");

	ok(size("4g", 4ULL << 30), "4g");
	ok(size("64m", 64ULL << 20), "64m");
	ok(size("512k", 512ULL << 10), "512k");
	ok(size("1t", 1ULL << 40), "1t");
	ok(size("100", 100), "plain bytes");
	ok(size("100b", 100), "plain bytes with b");
	ok(size("4G", 4ULL << 30), "upper-case suffix");
	ok(size("4GB", 4ULL << 30), "GB");
	ok(size("4gib", 4ULL << 30), "gib");
	ok(size("4GiB", 4ULL << 30), "GiB");
	ok(size("200Mb", 200ULL << 20), "Mb");
	ok(size_bad("0"), "zero size refused");
	ok(size_bad("0g"), "zero gigabytes refused");
	ok(size_bad("-1g"), "negative size refused");
	ok(size_bad(""), "empty size refused");
	ok(size_bad("g"), "suffix without number refused");
	ok(size_bad("4x"), "unknown suffix refused");
	ok(size_bad("4gx"), "garbage after suffix refused");
	ok(size_bad("100ib"), "ib without a unit refused");
	ok(size_bad("4 g"), "space inside refused");
	ok(size_bad("1.5g"), "fractions refused");
	ok(size_bad("16777216t"), "2^64 bytes overflows and is refused");
	ok(size("16777215t", 16777215ULL << 40), "largest whole terabyte count fits");
	ok(size("18446744073709551615", UINT64_MAX), "UINT64_MAX bytes");
	ok(size_bad("18446744073709551616"), "UINT64_MAX + 1 refused");

	is_str(fmt(64ULL << 20), "64m", "format 64m");
	is_str(fmt(2ULL << 30), "2g", "format 2g");
	is_str(fmt(512ULL << 10), "512k", "format 512k");
	is_str(fmt(3ULL << 40), "3t", "format 3t");
	is_str(fmt(100), "100", "format plain bytes");
	is_str(fmt(1536ULL << 20), "1536m", "1.5g formats exactly as 1536m");
	is_str(fmt(1025), "1025", "non-multiple stays in bytes");
	is_str(fmt(0), "0", "format zero");
	{
		uint64_t back = 0;
		ok(units_parse_size(fmt(200ULL << 20), &back) == 0 && back == (200ULL << 20),
		   "formatted size parses back");
	}
	/* Money as it is shown: a budget below a cent is not $0.00. */
	static const struct { double usd; int dec; const char *want; } money[] = {
		{ 2.5, 2, "2.50" }, { 0, 2, "0.00" }, { 0.01, 2, "0.01" }, { 0.001, 2, "0.001" },
		{ 0.0042, 2, "0.0042" }, { 0.00015, 2, "0.00015" }, { 12.345, 2, "12.35" },
		{ 0.0612, 4, "0.0612" }, { 0.00001234, 4, "0.000012" }, { 1e-12, 2, "0.00" },
	};
	for (size_t i = 0; i < sizeof money / sizeof *money; i++) {
		char out[32];
		units_format_money(money[i].usd, money[i].dec, out, sizeof out);
		is_str(out, money[i].want, "%g USD at %d places", money[i].usd, money[i].dec);
	}
	return tap_done();
}
