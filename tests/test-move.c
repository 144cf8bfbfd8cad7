/* move.c and the table of allowed moves (task.c): walked whole against a
 * real store, with what follows each move (progress line, webhook). */
#include "autoconfig.h"
#include "move.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "paths.h"
#include "tap.h"
#include "testlib.h"

static struct store *st;
static struct config cfg;

/* A fresh queued task. */
static void add(char id[TASK_ID_LEN + 1])
{
	struct err e = {{0}};
	if (store_task_add(st, "demo", "fixer", "walk the table", NULL, id, &e) < 0)
		printf("# %s\n", e.msg);
}

static int status_of(const char *id)
{
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(st, id, &t, &e) < 0)
		return -1;
	int s = (int)t.status;
	task_row_free(&t);
	return s;
}

/* The shortest way from queued to each status along allowed moves. */
static int path_to[TASK_NSTATUS][TASK_NSTATUS];
static int path_len[TASK_NSTATUS];

static void find_paths(void)
{
	for (int s = 0; s < TASK_NSTATUS; s++)
		path_len[s] = -1;
	int queue[TASK_NSTATUS], head = 0, tail = 0;
	path_len[TASK_QUEUED] = 0;
	queue[tail++] = TASK_QUEUED;
	while (head < tail) {
		int from = queue[head++];
		for (int to = 0; to < TASK_NSTATUS; to++) {
			if (path_len[to] >= 0 || !task_transition_allowed(from, to))
				continue;
			memcpy(path_to[to], path_to[from], sizeof path_to[to]);
			path_to[to][path_len[from]] = to;
			path_len[to] = path_len[from] + 1;
			queue[tail++] = to;
		}
	}
}

/* Drives a new task to status s along its path; 0 when it got there. */
static int drive(const struct mover *m, int s, char id[TASK_ID_LEN + 1])
{
	struct err e = {{0}};
	add(id);
	for (int i = 0; i < path_len[s]; i++)
		if (move_task(m, id, (enum task_status)path_to[s][i], NULL, &e) < 0) {
			printf("# %s\n", e.msg);
			return -1;
		}
	return status_of(id) == s ? 0 : -1;
}

static void test_walk(const struct mover *m)
{
	find_paths();
	int reachable = 0;
	for (int s = 0; s < TASK_NSTATUS; s++)
		reachable += path_len[s] >= 0;
	is_int(reachable, TASK_NSTATUS, "every status can be reached from queued");

	/* Every status but the terminal ones leads somewhere, and some
	 * terminal status can be reached from each. */
	int dead_ends = 0;
	for (int s = 0; s < TASK_NSTATUS; s++) {
		int out = 0, to_end = 0;
		for (int t = 0; t < TASK_NSTATUS; t++) {
			out += task_transition_allowed(s, t);
			to_end |= task_transition_allowed(s, t) && task_status_is_terminal(t);
		}
		if (!task_status_is_terminal(s) && (!out || (!to_end && s != TASK_QUEUED)))
			dead_ends++;
	}
	is_int(dead_ends, 0, "no status but a terminal one is a dead end");

	int right = 0, pairs = 0, failed_drive = 0;
	for (int from = 0; from < TASK_NSTATUS; from++) {
		for (int to = 0; to < TASK_NSTATUS; to++) {
			char id[TASK_ID_LEN + 1];
			if (drive(m, from, id) < 0) {
				failed_drive++;
				continue;
			}
			pairs++;
			struct err e = {{0}};
			int allowed = task_transition_allowed(from, to);
			int rc = move_task(m, id, (enum task_status)to, NULL, &e);
			int now = status_of(id);
			if (allowed ? rc == 0 && now == to
			            : rc < 0 && now == from && strstr(e.msg, task_status_name(to)))
				right++;
			else
				printf("# %s -> %s: rc %d, now %s (%s)\n", task_status_name(from),
				       task_status_name(to), rc, now >= 0 ? task_status_name(now) : "?",
				       e.msg);
		}
	}
	is_int(failed_drive, 0, "a task can be driven to each status along allowed moves");
	is_int(right, pairs, "each of the %d moves is made exactly when the table allows it, "
	       "and a refused one names the status and changes nothing", pairs);
}

int main(void)
{
	char *dir = testlib_tmpdir("move");
	char *db = paths_join(dir, "paddock.db", NULL);
	struct err e = {{0}};
	if (store_open(&st, db, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	config_init_defaults(&cfg);
	cfg.wh_url = xstrdup("http://127.0.0.1:9/hook");
	cfg.wh_events = CONFIG_WEBHOOK_ALL;

	char *progress_text = NULL;
	size_t progress_len = 0;
	FILE *progress = open_memstream(&progress_text, &progress_len);
	struct logger *log = logger_new(LOGGER_TEXT, progress, stderr);
	struct mover m = { .cfg = &cfg, .st = st, .log = log };

	test_walk(&m);

	/* What follows a move, on one task: queued, preparing, running, review
	 * (a gate opens: a webhook), pushing and back to review (the same
	 * gate: none), done (a webhook). */
	char id[TASK_ID_LEN + 1];
	add(id);
	fflush(progress);
	size_t before = progress_len;
	ok(move_start(&m, id, "demo", &e) == 0 && status_of(id) == TASK_PREPARING,
	   "move_start: queued to preparing");
	struct task_row t;
	store_task_get(st, id, &t, &e);
	is_int(t.attempts, 1, "and counts the attempt");
	task_row_free(&t);
	move_task(&m, id, TASK_RUNNING, NULL, &e);
	move_task(&m, id, TASK_REVIEW, NULL, &e);
	move_task(&m, id, TASK_PUSHING, NULL, &e);
	move_task(&m, id, TASK_REVIEW, NULL, &e);
	move_task(&m, id, TASK_DONE, NULL, &e);
	fflush(progress);
	char *mine = testlib_fmt("%.*s", (int)(progress_len - before), progress_text + before);
	char *want = testlib_fmt("%s  preparing  demo\n%s  running\n%s  review\n%s  pushing\n"
	                         "%s  review\n%s  done\n", id, id, id, id, id, id);
	is_str(mine, want, "each move is one progress line");
	struct webhook_row *w;
	size_t nw = 0;
	store_webhook_list(st, id, &w, &nw, &e);
	struct buf events = {0};
	for (size_t i = 0; i < nw; i++)
		buf_printf(&events, "%s ", w[i].event);
	store_webhooks_free(w, nw);
	is_str(events.data, "review done ",
	       "a webhook when the gate opens and when the task is done; none when a push "
	       "ends back at review");
	buf_free(&events);

	/* Cancels: at once when nothing works on the task, asked for when
	 * a supervisor does. */
	char q[TASK_ID_LEN + 1], r[TASK_ID_LEN + 1];
	add(q);
	is_int(move_cancel(&m, q, "tester", &e), 1, "move_cancel of a queued task: at once");
	is_int(status_of(q), TASK_CANCELLED, "it is cancelled");
	add(r);
	move_start(&m, r, NULL, &e);
	move_task(&m, r, TASK_RUNNING, NULL, &e);
	is_int(move_cancel(&m, r, "tester", &e), 2, "of a running one: asked for");
	is_int(status_of(r), TASK_RUNNING, "it runs on until its supervisor stops");
	enum task_status to;
	ok(move_interrupted(&m, r, 1, "stopped", &to, &e) == 0 && to == TASK_CANCELLED &&
	   status_of(r) == TASK_CANCELLED, "interrupted with a cancel asked for: cancelled");

	logger_free(log);
	fclose(progress);
	free(progress_text);
	store_close(st);
	config_free(&cfg);
	free(db);
	testlib_end();
	return tap_done();
}
