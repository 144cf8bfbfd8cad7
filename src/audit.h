/* audit: the audit trail's events as JSON and as a line of text, the same
 * for GET /events, a task's event stream (its decisions) and `paddock
 * audit` (store_audit.h keeps them).
 *
 * A decision's JSON: {"id": TASK, "action", "actor", "notes", "round",
 * "at"}; a refusal's (action "refused") adds "refused" (the action that
 * was refused) and "why", split from its notes ("ACTION: WHY").  A role
 * change's: {"token", "actor", "old_role", "new_role", "at"}, a role
 * null where the token was added or removed. */
#ifndef PADDOCK_AUDIT_H
#define PADDOCK_AUDIT_H

#include <jansson.h>
#include "store.h"
#include "store_audit.h"

/* Task id's decision d as JSON (new reference). */
json_t *audit_decision_json(const char *id, const struct task_decision *d);
/* An audit event's data as JSON (new reference), with "seq" (its id in
 * the trail) when with_seq. */
json_t *audit_event_json(const struct audit_event *ev, int with_seq);
/* Fills *ev from audit_event_json's JSON (with or without seq; strings
 * newly allocated: audit_events_free); -1 when j is not such an event. */
int audit_event_from_json(json_t *j, struct audit_event *ev);
/* An audit event's line, newly allocated: "YYYY-MM-DD HH:MM:SS  ..." in
 * local time (translated). */
char *audit_event_text(const struct audit_event *ev);

#endif
