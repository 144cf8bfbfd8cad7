/* Unit tests: best-of-N groups in the store and group.h: the task list's
 * folding of a group into one row (with each filter and order), a group
 * read with its members, their places, statuses in brief and JSON, and
 * the refusals of a pick (the pick itself: tests/group.test). */
#include "autoconfig.h"
#include "group.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "fsx.h"
#include "paths.h"
#include "store.h"
#include "tap.h"
#include "testlib.h"

static struct store *s;

static void add_solo(const char *agent, const char *text, char id[TASK_ID_LEN + 1])
{
	struct task_new n = { .repo = "r", .agent = agent, .text = text, .budget = -1 };
	struct err e = {{0}};
	if (store_task_create(s, &n, id, NULL, &e) < 0)
		printf("Bail out! %s\n", e.msg);
}

static void move(const char *id, const enum task_status *to, size_t n)
{
	struct err e = {{0}};
	for (size_t i = 0; i < n; i++)
		if (store_task_transition(s, id, to[i], NULL, &e) < 0)
			printf("# %s -> %s: %s\n", id, task_status_name(to[i]), e.msg);
}

/* The ids of the rows q selects, space-separated (kept). */
static const char *rows(const struct task_query *q)
{
	struct task_row *r;
	size_t n;
	struct err e = {{0}};
	if (store_task_query(s, q, &r, &n, &e) < 0)
		return testlib_fmt("error: %s", e.msg);
	struct buf b = {0};
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i ? " " : "", r[i].id);
	task_rows_free(r, n);
	return testlib_keep(buf_detach(&b));
}

static size_t count(const struct task_query *q)
{
	size_t n = 0;
	struct err e = {{0}};
	store_task_count(s, q, &n, &e);
	return n;
}

int main(void)
{
	char *dir = testlib_tmpdir("group");
	struct err e = {{0}};
	if (store_open(&s, testlib_fmt("%s/paddock.db", dir), &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	char a[TASK_ID_LEN + 1], b[TASK_ID_LEN + 1], g[TASK_ID_LEN + 1];
	char m[3][TASK_ID_LEN + 1];
	add_solo("x", "before", a);
	struct task_new ns[3] = {
		{ .repo = "r", .agent = "good", .text = "do it", .budget = -1 },
		{ .repo = "r", .agent = "bad", .text = "do it", .budget = -1 },
		{ .repo = "r", .agent = "slow", .text = "do it", .budget = -1 },
	};
	is_int(store_group_create(s, "do it", ns, 3, g, m, NULL, &e), 0, "a group of three (%s)",
	       e.msg);
	add_solo("x", "after", b);
	static const enum task_status run[] = { TASK_PREPARING, TASK_RUNNING };
	static const enum task_status fail[] = { TASK_PREPARING, TASK_FAILED };
	move(m[0], run, 2);
	move(m[1], fail, 2);

	/* ---- the task list's one row per group ---- */
	struct task_query q = { .fold_groups = 1, .no_steps = 1 };
	is_str(rows(&q), testlib_fmt("%s %s %s", a, m[0], b), "folded: the group is its first member");
	is_int(count(&q), 3, "and counts as one");
	struct task_query all = { .no_steps = 1 };
	is_int(count(&all), 5, "unfolded, every member counts");
	q.status_mask = TASK_MASK(TASK_FAILED);
	is_str(rows(&q), m[1], "a status filter: the first member that has the status");
	is_int(count(&q), 1, "and its count");
	q.status_mask = TASK_MASK(TASK_QUEUED) | TASK_MASK_ACTIVE;
	is_str(rows(&q), testlib_fmt("%s %s %s", a, m[0], b),
	       "several statuses (one query each, merged): the group once, at its first match");
	is_int(count(&q), 3, "and counted once");
	q.status_mask = TASK_MASK(TASK_QUEUED);
	is_str(rows(&q), testlib_fmt("%s %s %s", a, m[2], b), "queued: the member that is queued");
	q.status_mask = 0;
	q.agent = "bad";
	is_str(rows(&q), m[1], "an agent filter: the member of that agent");
	q.agent = NULL;
	q.text = "befo";
	is_str(rows(&q), a, "a text filter that no member matches leaves the group out");
	q.text = NULL;
	q.order = TASK_ORDER_STATUS;
	struct task_key *keys;
	size_t nk;
	is_int(store_task_order(s, &q, &keys, &nk, &e), 0, "in another order");
	is_int(nk, 3, "the group is one key there too");
	free(keys);
	q.order = TASK_ORDER_QUEUED;
	q.newest_first = 1;
	q.limit = 2;
	is_str(rows(&q), testlib_fmt("%s %s", b, m[0]), "newest first with a limit");
	/* A cursor inside the group: the rows and the count leave it out
	 * alike (the count is the counts', less the group's members, plus
	 * the ones the fold keeps). */
	struct task_row ta, tm, tb;
	store_task_get(s, a, &ta, &e);
	store_task_get(s, m[0], &tm, &e);
	store_task_get(s, b, &tb, &e);
	struct task_query c = { .fold_groups = 1, .no_steps = 1, .after = ta.seq };
	is_str(rows(&c), testlib_fmt("%s %s", m[0], b), "after the first task: the group and the last");
	is_int(count(&c), 2, "and their count");
	c.after = tm.seq;
	is_str(rows(&c), b, "after the group's first member: the group is not listed again");
	is_int(count(&c), 1, "nor counted again");
	c.after = 0;
	c.before = tb.seq;
	c.status_mask = TASK_MASK(TASK_QUEUED) | TASK_MASK(TASK_FAILED);
	is_str(rows(&c), testlib_fmt("%s %s", a, m[1]), "before the last, queued or failed");
	is_int(count(&c), 2, "and their count");
	task_row_free(&ta);
	task_row_free(&tm);
	task_row_free(&tb);

	/* ---- a group and its members ---- */
	struct group_info gi;
	is_int(group_load(s, NULL, g, 0, &gi, &e), 0, "group_load (%s)", e.msg);
	is_int(gi.n, 3, "three members");
	is_str(gi.m[1].t.id, m[1], "in the order queued");
	is_int(gi.m[2].position, 3, "with their places");
	is_int(gi.m[0].has_change, 0, "without the mirror, no change is read");
	ok(gi.m[1].seconds >= 0 && gi.m[2].seconds < 0, "the time of a member that started, none "
	   "for one that did not");
	struct buf br = {0};
	group_statuses(&gi, 0, &br);
	is_str(br.data, "1 running, 1 queued, 1 failed", "the statuses in brief, work first");
	buf_free(&br);
	is_int(group_status(&gi), TASK_RUNNING, "the group's status as one");
	ok(group_member_find(&gi, testlib_fmt("%.6s", m[2])) == &gi.m[2], "a member by a prefix");
	ok(group_member_find(&gi, a) == NULL, "a task of no group is no member");
	json_t *j = group_json(&gi);
	ok(json_is_string(json_object_get(j, "id")) && json_is_null(json_object_get(j, "picked")) &&
	   json_integer_value(json_object_get(j, "size")) == 3 &&
	   json_integer_value(json_object_get(json_object_get(j, "statuses"), "failed")) == 1,
	   "its JSON: id, size, no pick, the statuses");
	json_t *j1 = json_array_get(json_object_get(j, "members"), 1);
	ok(json_is_null(json_object_get(j1, "tests")) && json_is_null(json_object_get(j1, "change")) &&
	   !strcmp(json_string_value(json_object_get(j1, "status")), "failed"),
	   "a member with no gate: tests and change null");
	json_decref(j);
	group_info_free(&gi);
	struct task_row t;
	int pos, n;
	store_task_get(s, m[1], &t, &e);
	is_int(group_position(s, &t, &pos, &n, &e), 0, "group_position");
	ok(pos == 2 && n == 3, "the second of three (%d of %d)", pos, n);
	task_row_free(&t);
	store_task_get(s, a, &t, &e);
	group_position(s, &t, &pos, &n, &e);
	ok(pos == 0 && n == 0, "a task of no group has no place");
	task_row_free(&t);

	/* ---- the pick's refusals ---- */
	struct gate_ctx gc = { .data_dir = dir, .st = s, .actor = "tester" };
	struct buf out = {0};
	struct err pe = {{0}};
	is_int(group_pick(&gc, "zzzzzzzzzz", m[0], NULL, &out, &pe), -1, "no such group");
	is_int(pe.kind, ERR_NOT_FOUND, "... not found: %s", pe.msg);
	err_clear(&pe);
	is_int(group_pick(&gc, g, a, NULL, &out, &pe), -1, "a task that is no member");
	ok(pe.kind == ERR_INVALID && strstr(pe.msg, m[2]), "... bad input, naming the members: %s",
	   pe.msg);
	err_clear(&pe);
	is_int(group_pick(&gc, g, m[0], NULL, &out, &pe), -1, "a member that runs");
	ok(pe.kind == ERR_WRONG_STATE && strstr(pe.msg, "it is running"), "... wrong state: %s",
	   pe.msg);
	err_clear(&pe);
	/* A pick that another process runs holds the group's lock. */
	int held = fsx_lock_try(testlib_keep(paths_groups_dir(dir)),
	                        testlib_keep(paths_group_lock(dir, g)), &e);
	ok(held >= 0, "the group's pick lock, taken");
	is_int(fsx_lock_try(testlib_keep(paths_groups_dir(dir)),
	                    testlib_keep(paths_group_lock(dir, g)), &e), -2,
	       "... held: a second try says so, without waiting");
	is_int(group_pick(&gc, g, m[1], NULL, &out, &pe), -1, "a pick while another runs");
	ok(pe.kind == ERR_CONFLICT && strstr(pe.msg, "already in progress") &&
	   strstr(pe.msg, "paddock group show"), "... refused, saying how to look again: %s",
	   pe.msg);
	err_clear(&pe);
	close(held);
	is_int(store_group_choose(s, g, m[0], &e), 0, "a pick recorded");
	is_int(group_pick(&gc, g, m[2], NULL, &out, &pe), -1, "a second pick");
	ok(pe.kind == ERR_CONFLICT && strstr(pe.msg, m[0]), "... refused, naming the pick: %s",
	   pe.msg);
	is_int(out.len, 0, "the refusals said nothing else");
	buf_free(&out);
	is_int(group_load(s, NULL, g, 0, &gi, &e), 0, "read again");
	ok(gi.m[0].picked && !gi.m[1].picked, "the picked member is marked");
	is_int(group_status(&gi), TASK_RUNNING, "the group's status is the picked member's");
	group_info_free(&gi);

	/* The task list's counts on a long history (issue 14): a folded
	 * count reads as much of the store with 200 more tasks outside the
	 * group as without them. */
	struct task_query f = { .fold_groups = 1, .no_steps = 1,
	                        .status_mask = TASK_MASK(TASK_QUEUED) };
	uint64_t s0 = store_task_query_steps(s);
	size_t before = count(&f);
	uint64_t one = store_task_query_steps(s) - s0;
	char x[TASK_ID_LEN + 1];
	for (int i = 0; i < 200; i++)
		add_solo("x", "later", x);
	s0 = store_task_query_steps(s);
	is_int(count(&f), before + 200, "200 more queued, counted");
	uint64_t more = store_task_query_steps(s) - s0;
	ok(more == one, "the folded count read no more of the store (%llu steps, %llu before)",
	   (unsigned long long)more, (unsigned long long)one);

	store_close(s);
	testlib_end();
	return tap_done();
}
