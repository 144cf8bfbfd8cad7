/* store_audit: the instance's audit trail (issue 36): every decision and
 * refusal of every task (a trigger copies each row of the decisions
 * table as it is inserted, so that no writer can forget one) and every
 * change of a token's role that serve found when it started or read its
 * configuration again (against the roles the trail last recorded).  One sequence of ids, in the order recorded:
 * GET /events resumes from one, `paddock audit` lists them newest first.
 * A task's own decisions stay in its history (store.h, store_decisions).
 *
 * Strings in the structs are owned by them (audit_events_free). */
#ifndef PADDOCK_STORE_AUDIT_H
#define PADDOCK_STORE_AUDIT_H

#include <stddef.h>
#include "err.h"
#include "store.h"

/* One audit event. */
struct audit_event {
	long long id;              /* its place in the sequence: only grows */
	double at;                 /* unix time */
	char *kind;                /* "decision" or "role-change" */
	char *actor;               /* who: a token's or Unix user's name;
	                              "config" for a role change */
	/* A decision (or refusal): the task, its round, the action and the
	 * notes (a refusal's are "ACTION: WHY"); NULL and 0 otherwise. */
	char *task_id;
	int round;
	char *action;
	char *notes;
	/* A role change: the token and its roles before and after (NULL
	 * before: the token was added; NULL after: it was removed). */
	char *token;
	char *old_role;
	char *new_role;
};
void audit_events_free(struct audit_event *v, size_t n);
/* Frees one event's strings (not ev itself). */
void audit_event_clear(struct audit_event *ev);

/* A change of token's role, as serve's reload found it. */
struct audit_role_change {
	const char *token;
	const char *old_role;      /* NULL: the token is new */
	const char *new_role;      /* NULL: the token is gone */
};
/* Records the n changes of one reading of the configuration, by actor
 * ("config"), in one transaction. */
int store_audit_roles(struct store *s, const struct audit_role_change *v, size_t n,
                      const char *actor, struct err *e);
/* A token's role as the trail last recorded it. */
struct audit_role {
	char *token;
	char *role;                /* NULL: the token was removed */
};
void audit_roles_free(struct audit_role *v, size_t n);
/* Each token's last recorded role (the new role of its last role
 * change), by token name: what serve compares its tokens with, at its
 * start and on SIGHUP. */
int store_audit_roles_known(struct store *s, struct audit_role **out, size_t *n,
                            struct err *e);
/* The events after id `after` (0: from the first), oldest first, at most
 * limit of them (0: all). */
int store_audit_after(struct store *s, long long after, size_t limit,
                      struct audit_event **out, size_t *n, struct err *e);
/* The last limit events (0: all), newest first (paddock audit). */
int store_audit_last(struct store *s, size_t limit, struct audit_event **out, size_t *n,
                     struct err *e);
/* The same, of the events before id `before` (0: from the last): the
 * page further back (GET /audit). */
int store_audit_before(struct store *s, long long before, size_t limit,
                       struct audit_event **out, size_t *n, struct err *e);
/* The id of the last event recorded (0: none yet) in *out. */
int store_audit_top(struct store *s, long long *out, struct err *e);

#endif
