/* webhook: a JSON POST to the configured URL ([webhook] url) when a gate
 * opens (the task is at review), a task fails, or a task is done.
 *
 * Deliveries are queued in the store (store.h, schema 4) by whichever
 * process moves the task (the scheduler owner, or a CLI verb such as
 * `paddock approve`), and sent by the scheduler owner from its event
 * loop with libcurl's multi interface: the sockets are among the
 * scheduler's poll fds, nothing blocks.  A 2xx is success; anything else
 * (redirects are never followed) is tried again after 1 s, 2 s, 4 s ...
 * (at most 10 min) until [webhook] attempts tries were made; then the
 * delivery is given up with its last error, which stays in the store.
 *
 * A task with a callback_url (given to POST /tasks, allowed by [api]
 * callback-allow) gets every event there too, as its own delivery.
 *
 * The body: {"event": "review"|"failed"|"done"|"cancelled"|"rejected"|
 * "lost"|"agent-finished"|"pull-request-failed" (a done task's pull
 * request failed to open: gate.h)|"gate-reminder" (a task still waits at
 * a person's gate: reminder.h; the body adds "waited" and "reminder"),
 * "round", "task": {"id", "repo",
 * "agent", "status", "branch", "head", "pr_url", "pr_error",
 * "pr_attempts", "pr_retry_at", "error", "reason", "round", "summary",
 * "url": "/tasks/ID"}, "metadata": the task's, or null, "time":
 * unix seconds, "delivery": a unique id}.  Every try is logged in the
 * store (store_webhook_attempts).  Headers: Content-Type: application/json,
 * X-Paddock-Event, X-Paddock-Delivery, and with a secret
 * X-Paddock-Signature: sha256=<hex HMAC-SHA256(secret, body)>.  The
 * secret is read once at webhook_open and never logged. */
#ifndef PADDOCK_WEBHOOK_H
#define PADDOCK_WEBHOOK_H

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include "config.h"
#include "err.h"
#include "logger.h"
#include "store.h"
#include "task.h"

/* In the order of config.h's CONFIG_WEBHOOK_* bits. */
enum webhook_event {
	WEBHOOK_REVIEW, WEBHOOK_FAILED, WEBHOOK_DONE, WEBHOOK_CANCELLED, WEBHOOK_REJECTED,
	WEBHOOK_LOST, WEBHOOK_AGENT_FINISHED, WEBHOOK_PR_FAILED, WEBHOOK_GATE_REMINDER
};

/* "review", "failed", "done", "cancelled", "rejected", "lost",
 * "agent-finished", "pull-request-failed", "gate-reminder". */
const char *webhook_event_name(enum webhook_event ev);
/* The event a move to status `to` sends, or -1 when none does. */
int webhook_event_of(enum task_status to);

/* "sha256=" and 64 hex digits, and the NUL. */
#define WEBHOOK_SIG_LEN (7 + 64 + 1)
/* The signature header's value for body under key. */
void webhook_sign(const void *key, size_t keylen, const char *body, size_t len,
                  char out[WEBHOOK_SIG_LEN]);
/* A fresh delivery id (a random UUID, 36 characters and the NUL). */
#define WEBHOOK_DELIVERY_LEN 37
void webhook_delivery_id(char out[WEBHOOK_DELIVERY_LEN]);
/* The JSON body for event ev of task t at unix time `time` (malloc'd). */
char *webhook_payload(const struct task_row *t, enum webhook_event ev, double time,
                      const char *delivery);

/* Called right after a task moved to `to`: queues the delivery when cfg
 * has a webhook URL and its events select the event of `to`, and one to
 * the task's callback_url when it has one (else does nothing and returns
 * 0).  -1 with a message when the store fails. */
int webhook_enqueue(const struct config *cfg, struct store *st, const char *task_id,
                    enum task_status to, struct err *e);
/* The same for event ev, which no move sends (pull-request-failed). */
int webhook_enqueue_event(const struct config *cfg, struct store *st, const char *task_id,
                          enum webhook_event ev, struct err *e);
/* Reminder n of a task that waited seconds at a person's gate
 * (reminder.h): the event gate-reminder, whose body also has "waited"
 * (whole seconds since the gate opened) and "reminder" (n). */
int webhook_enqueue_reminder(const struct config *cfg, struct store *st, const char *task_id,
                             double waited, int n, struct err *e);

/* 1 when url may receive a task's webhooks: it matches one of [api]
 * callback-allow's patterns. */
int webhook_callback_allowed(const struct config *cfg, const char *url);

/* The sender, owned by the scheduler.  NULL-safe: with no URL and no
 * callback pattern configured webhook_open gives a sender that does
 * nothing. */
struct webhook;

/* The most fds webhook_pollfds fills. */
#define WEBHOOK_MAX_FDS 16

/* Reads the secret (from secret-file or the secret-env variable) and says
 * once on stderr when there is none (deliveries are then unsigned).  A
 * secret-file that cannot be read holds deliveries back (queued, never
 * sent unsigned) with a message on stderr.  cfg, st and log stay the
 * caller's; log (logger.h), if set, gets one line per delivery, and the
 * warnings (else on stderr). */
int webhook_open(struct webhook **out, const struct config *cfg, struct store *st,
                 struct logger *log, struct err *e);
/* Fills out (at most max) with the fds of transfers in flight. */
size_t webhook_pollfds(struct webhook *w, struct pollfd *out, size_t max);
/* Drives transfers whose fds are ready in fds (any fds; others are
 * ignored), records finished ones, and starts due deliveries (looking at
 * the store at most every 200 ms).  now: unix time.  Never blocks. */
void webhook_pump(struct webhook *w, const struct pollfd *fds, size_t n, double now);
/* Deliveries in flight now. */
int webhook_busy(struct webhook *w);
/* Abandons transfers in flight (they stay due and are sent by the next
 * owner) and frees w. */
void webhook_close(struct webhook *w);

#endif
