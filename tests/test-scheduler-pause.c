/* Unit tests: which queued task the scheduler may start while a model
 * endpoint is paused (scheduler_next_startable): only the tasks whose
 * agent uses the paused endpoint wait; the others keep their order. */
#include "autoconfig.h"
#include "scheduler.h"
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "config.h"
#include "tap.h"
#include "testlib.h"

/* An agent named name that uses endpoint (NULL: none). */
static void agent(struct config *c, const char *name, const char *endpoint)
{
	config_add_agent(c, name, "/bin/true");
	for (size_t i = 0; i < c->nagents; i++)
		if (!strcmp(c->agents[i].name, name)) {
			free(c->agents[i].endpoint);
			c->agents[i].endpoint = endpoint ? xstrdup(endpoint) : NULL;
		}
}

/* The id of the task that may start at time now, or "" when none;
 * *until gets the earliest end of a pause that held one back. */
static const char *next(struct store *s, const struct config *c, double now, double *until)
{
	static char id[TASK_ID_LEN + 1];
	struct task_row t;
	struct err e = {{0}};
	int rc = scheduler_next_startable(s, c, now, &t, until, &e);
	if (rc < 0)
		printf("# %s\n", e.msg);
	id[0] = '\0';
	if (rc == 1) {
		snprintf(id, sizeof id, "%s", t.id);
		task_row_free(&t);
	}
	return id;
}

int main(void)
{
	const char *db = testlib_fmt("%s/paddock.db", testlib_tmpdir("scheduler-pause"));
	struct err e = {{0}};
	struct store *s;
	struct config c;
	config_init_defaults(&c);
	agent(&c, "claudeish", "anthropic");
	agent(&c, "codexish", "openai");
	agent(&c, "script", NULL);

	if (store_open(&s, db, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	char a1[TASK_ID_LEN + 1], b1[TASK_ID_LEN + 1], a2[TASK_ID_LEN + 1],
	     sc[TASK_ID_LEN + 1], gone[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "claudeish", "first, anthropic", NULL, a1, &e);
	store_task_add(s, "demo", "codexish", "second, openai", NULL, b1, &e);
	store_task_add(s, "demo", "claudeish", "third, anthropic", NULL, a2, &e);
	store_task_add(s, "demo", "script", "fourth, no endpoint", NULL, sc, &e);
	store_task_add(s, "demo", "nosuchagent", "fifth, unknown agent", NULL, gone, &e);

	double until = -1;
	is_str(next(s, &c, 1000, &until), a1, "no pause: the oldest task first");
	ok(until == 0, "nothing held back");

	store_pause_set(s, "anthropic", 2000, 429, a1, &e);
	is_str(next(s, &c, 1000, &until), b1, "anthropic paused: the oldest openai task starts");
	ok(until == 2000, "held back until the pause ends (%g)", until);
	is_str(next(s, &c, 2000, &until), a1, "once the pause is over, the oldest again");
	ok(until == 0, "nothing held back then");

	/* Start the openai task: the anthropic ones still wait, the ones
	 * without an endpoint (or whose agent is gone) go. */
	store_task_transition(s, b1, TASK_PREPARING, NULL, &e);
	is_str(next(s, &c, 1000, &until), sc, "then the task without an endpoint, not a2");
	store_task_transition(s, sc, TASK_PREPARING, NULL, &e);
	is_str(next(s, &c, 1000, &until), gone,
	       "a task whose agent the configuration lacks is not held back");
	store_task_transition(s, gone, TASK_PREPARING, NULL, &e);
	is_str(next(s, &c, 1000, &until), "", "only anthropic tasks left: none may start");
	ok(until == 2000, "and the scheduler learns when to look again");

	/* Both endpoints paused, with different ends: the earliest is given. */
	char b2[TASK_ID_LEN + 1];
	store_task_add(s, "demo", "codexish", "sixth, openai", NULL, b2, &e);
	store_pause_set(s, "openai", 1500, 503, b2, &e);
	is_str(next(s, &c, 1000, &until), "", "both endpoints paused: none may start");
	ok(until == 1500, "the earliest end of a pause that holds a task (%g)", until);
	is_str(next(s, &c, 1600, &until), b2, "openai's pause over: its task starts first");

	/* Without a configuration no task is held back. */
	is_str(next(s, NULL, 1000, &until), a1, "no configuration: plain FIFO");
	ok(next(s, &c, 1000, NULL) != NULL, "blocked_until may be NULL");

	store_close(s);
	config_free(&c);
	testlib_end();
	return tap_done();
}
