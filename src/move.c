#include "autoconfig.h"
#include "move.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "i18n.h"
#include "sanitize.h"
#include "webhook.h"

/* The task's repo, for a JSON line (text has no place for it). */
static char *task_repo(const struct mover *m, const char *id)
{
	if (logger_format(m->log) != LOGGER_JSON)
		return NULL;
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(m->st, id, &t, &e) < 0)
		return NULL;
	char *repo = t.repo ? xstrdup(t.repo) : NULL;
	task_row_free(&t);
	return repo;
}

void move_progress(const struct mover *m, const char *id, const char *what,
                   const char *detail)
{
	if (!m->log)
		return;
	char *repo = task_repo(m, id);
	/* What an alert on a JSON log looks for: a task that failed or was
	 * lost. */
	int lv = !strcmp(what, "failed") || !strcmp(what, "lost") ? LOGGER_WARNING : LOGGER_INFO;
	if (detail) {
		/* Only the first line of an error goes to the progress output,
		 * through the sanitizer: it may quote the sandbox (a file name
		 * in a refused bundle, the agent's words). */
		char *d = sanitize_quote(detail, strcspn(detail, "\n"));
		logger_task(m->log, lv, id, repo, what, what, d);
		free(d);
	} else {
		logger_task(m->log, lv, id, repo, what, what, NULL);
	}
	free(repo);
}

/* What follows every move: the progress line, and the webhook when a gate
 * opens, a task fails or is done.  same_gate: a push that ended back at
 * review, no second webhook. */
static void move_announce(const struct mover *m, const char *id, int same_gate,
                          enum task_status to, const char *detail)
{
	struct err e = {{0}};
	if (store_steps_settle(m->st, id, &e) < 0)
		logger_event(m->log, LOGGER_ERROR, id, NULL, "store.error", "paddock: %s: %s", id,
		             e.msg);
	move_progress(m, id, task_status_name(to), detail);
	if (!m->cfg || same_gate)
		return;
	if (webhook_enqueue(m->cfg, m->st, id, to, &e) < 0)
		logger_event(m->log, LOGGER_ERROR, id, NULL, "webhook.error", "paddock: %s: %s", id,
		             e.msg);
}

/* The task's status now, or -1. */
static int move_status(const struct mover *m, const char *id)
{
	struct task_row t;
	struct err e = {{0}};
	if (store_task_get(m->st, id, &t, &e) < 0)
		return -1;
	int st = (int)t.status;
	task_row_free(&t);
	return st;
}

int move_task(const struct mover *m, const char *id, enum task_status to, const char *why,
              struct err *e)
{
	/* Only a move from pushing needs to know where the task was. */
	int from = to == TASK_REVIEW ? move_status(m, id) : -1;
	if (store_task_transition(m->st, id, to, why, e) < 0)
		return -1;
	move_announce(m, id, from == TASK_PUSHING, to, why);
	return 0;
}

int move_start(const struct mover *m, const char *id, const char *detail, struct err *e)
{
	if (store_task_start(m->st, id, e) < 0)
		return -1;
	move_announce(m, id, 0, TASK_PREPARING, detail);
	return 0;
}

int move_resume(const struct mover *m, const char *id, int *round_out, struct err *e)
{
	if (store_task_resume(m->st, id, round_out, e) < 0)
		return -1;
	move_announce(m, id, 0, TASK_RUNNING, _("changes requested"));
	return 0;
}

int move_fix_round(const struct mover *m, const char *id, int n, struct err *e)
{
	if (store_task_fix_round(m->st, id, n, e) < 0)
		return -1;
	char *detail = xasprintf(_("round %d: the tests failed; the agent gets them to fix"), n);
	move_announce(m, id, 0, TASK_RUNNING, detail);
	free(detail);
	return 0;
}

int move_cancel(const struct mover *m, const char *id, const char *actor, struct err *e)
{
	int rc = store_task_cancel(m->st, id, actor, e);
	if (rc == 1)
		move_announce(m, id, 0, TASK_CANCELLED, NULL);
	return rc;
}

int move_interrupted(const struct mover *m, const char *id, int planned, const char *why,
                     enum task_status *to, struct err *e)
{
	enum task_status where;
	if (store_task_interrupted(m->st, id, planned, m->cfg->max_attempts, why, &where, e) < 0)
		return -1;
	if (to)
		*to = where;
	move_announce(m, id, 0, where, why);
	return 0;
}

int move_reopen(const struct mover *m, const char *id, const char *notes, const char *actor,
                struct err *e)
{
	int was = move_status(m, id);
	if (store_task_reopen_changes(m->st, id, notes, actor, e) < 0)
		return -1;
	if (was == TASK_DONE)
		move_announce(m, id, 1, TASK_REVIEW, _("changes asked on its pull request"));
	return 0;
}

int move_rollback_round(const struct mover *m, const char *id, const char *why,
                        const char *detail, struct err *e)
{
	if (store_task_rollback_round(m->st, id, why, e) < 0)
		return -1;
	move_announce(m, id, 0, TASK_REVIEW, detail);
	return 0;
}
