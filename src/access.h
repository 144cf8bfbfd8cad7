/* access: who may do what (doc/paddock-api.7, AUTHORIZATION): a token's
 * role ([token "NAME"] role), what each needs, and the words for them.
 *
 * The roles are ordered, each allowing what the one before allows:
 *   read    GET only: tasks, logs, diffs, events, recipes, groups;
 *   submit  also queue tasks and follow-ups, and cancel the tasks it queued;
 *   review  also decide gates (approve, push, request-changes, reject,
 *           override, pick, confirm) and cancel any task;
 *   admin   everything, the service's own routes included.
 * The API checks the role of each route from its route table
 * (api_route_table, route_allowed): the remote verbs of `paddock --server`
 * (issue 36, to come) go through those routes and so get the same check;
 * a verb the API lacks gains a row there, with the role it needs.  Who may decide a repo's gates
 * beyond that ([repo] reviewers, four-eyes) is gate_may_decide's (gate.h). */
#ifndef PADDOCK_ACCESS_H
#define PADDOCK_ACCESS_H

enum access {
	ACCESS_NONE = 0,             /* not set (config: the default applies) */
	ACCESS_READ,
	ACCESS_SUBMIT,
	ACCESS_REVIEW,
	ACCESS_ADMIN,
};

/* "read", "submit", "review", "admin"; "none" for ACCESS_NONE. */
const char *access_name(enum access r);
/* The role named name, or ACCESS_NONE when it names none. */
enum access access_parse(const char *name);
/* 1 when a holder of have may do what needs asks. */
int access_allows(enum access have, enum access needs);

#endif
