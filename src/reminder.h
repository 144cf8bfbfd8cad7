/* reminder: gates nobody looks at (issue 37): reminders of tasks that
 * wait at review for a person, and the review limit that holds new tasks
 * back while too many wait.
 *
 * A person's gate: a task at review that waits for a person's decision:
 * not one whose requested changes wait to run (task_row.pending), nor one
 * that an approval mode without a person is about to decide (autogate_due:
 * auto and auto-push tasks wait for a person once AUTOGATE_ACTOR held or
 * pushed their round).
 *
 * Reminders (gate-reminder, the repo's else [paddock]'s; 0: none): a task
 * that has waited at a person's gate for k intervals since its gate opened
 * (the step that moved it to review) gets reminder k: the webhook event
 * gate-reminder (webhook.h, with how long it waited and k), a progress
 * line "ID  reminder  waiting 2h at review" on serve's output (move.h),
 * and the dashboard's notification (task_row.reminders moves).  Each is
 * recorded in the store before it goes out (store_reminder_claim), so
 * none goes twice for one interval, across restarts and processes; after a
 * stop that missed intervals, only the latest one's goes out.  A new gate
 * (a new round, a push back at review) counts from its own start.
 *
 * The review limit (max-at-review, the repo's else [paddock]'s; 0: none):
 * while that many tasks wait at a person's gate (of the repo, for a repo's
 * own value), the scheduler starts no new task (of that repo): queued
 * tasks stay queued and start once one leaves review. */
#ifndef PADDOCK_REMINDER_H
#define PADDOCK_REMINDER_H

#include <stddef.h>
#include "config.h"
#include "err.h"
#include "move.h"
#include "store.h"

/* 1 when t (read with its steps or not) waits at a person's gate, else 0. */
int reminder_person_gate(struct store *st, const struct task_row *t);

/* Seconds between reminders for repo's tasks (0: none). */
double reminder_interval(const struct config *cfg, const char *repo);
/* 1 when cfg sends any reminders ([paddock] or a repo). */
int reminder_on(const struct config *cfg);
/* How often the scheduler looks at the gates: a quarter of the shortest
 * configured interval, from 1 s to 60 s (a 2h reminder is at most a
 * minute late, and a look costs a query of the tasks at review). */
double reminder_period(const struct config *cfg);
/* Sends the reminders due at unix time now, through m (its store, its
 * configuration's webhooks, its progress output).  0, or -1 with e set
 * (the reminders not sent are tried at the next call). */
int reminder_tick(const struct mover *m, double now, struct err *e);
/* "2h", "1h30m", "45s", "3d2h": a duration as a person reads it, into out
 * (>= 32 bytes). */
void reminder_format(double seconds, char *out, size_t len);

/* Tasks at a person's gate now, all and per repo (reminder_count). */
struct reminder_gates {
	int total;
	struct reminder_repo_count {
		char *repo;
		int n;
	} *repos;
	size_t nrepos;
};
/* Counts them (from the tasks at review only).  0, or -1 with e set. */
int reminder_count(struct store *st, struct reminder_gates *g, struct err *e);
void reminder_gates_free(struct reminder_gates *g);

/* 1 when cfg limits the tasks at review anywhere. */
int reminder_limit_on(const struct config *cfg);
/* The limit that holds back repo's queued tasks. */
struct reminder_hold {
	int at_review;             /* tasks at a person's gate it counts */
	int max;                   /* its max-at-review */
	int of_repo;               /* the repo's own key (only its tasks count) */
};
/* 1 with *h filled when repo's new tasks wait (g from reminder_count), 0
 * when they may start. */
int reminder_hold_of(const struct config *cfg, const struct reminder_gates *g,
                     const char *repo, struct reminder_hold *h);
/* How many queued tasks (of those that may start: not waiting for a
 * confirmation) the review limit holds back now: like a confirmation,
 * they wait for a person, and are no work to do (scheduler_idle).  0 when
 * cfg sets no limit; -1 with e set. */
long reminder_held(struct store *st, const struct config *cfg, struct err *e);
/* What *h means, for `paddock show` and `paddock list`: "3 tasks at review
 * (max-at-review = 3)", "1 task of repo x at review (repo.x.max-at-review
 * = 1)" (malloc'd, translated). */
char *reminder_hold_text(const struct reminder_hold *h, const char *repo);

#endif
