/* audit: the audit trail's events as JSON and text (audit.h). */
#include "autoconfig.h"
#include "audit.h"

#include <string.h>
#include <time.h>
#include "buf.h"
#include "i18n.h"

/* Milliseconds are what a stored time means; more digits are noise. */
static double ms(double at)
{
	return (double)(long long)(at * 1000 + 0.5) / 1000;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The parts of a refusal's notes: "ACTION: WHY". */
static void refusal_add(json_t *j, const char *notes)
{
	const char *sep = notes ? strstr(notes, ": ") : NULL;
	json_object_set_new(j, "refused", sep ? json_stringn(notes, (size_t)(sep - notes))
	                                      : str_or_null(notes));
	json_object_set_new(j, "why", sep ? json_string(sep + 2) : json_null());
}

static json_t *decision_json(const char *id, const char *action, const char *actor,
                             const char *notes, int round, double at)
{
	json_t *j = json_pack("{s:s?,s:s,s:s,s:o,s:i,s:f}", "id", id, "action", action ? action
	                      : "", "actor", actor ? actor : "", "notes", str_or_null(notes),
	                      "round", round, "at", ms(at));
	if (action && !strcmp(action, "refused"))
		refusal_add(j, notes);
	return j;
}

json_t *audit_decision_json(const char *id, const struct task_decision *d)
{
	return decision_json(id, d->action, d->actor, d->notes, d->round, d->at);
}

json_t *audit_event_json(const struct audit_event *ev, int with_seq)
{
	json_t *j;
	if (ev->kind && !strcmp(ev->kind, "role-change"))
		j = json_pack("{s:s,s:s,s:o,s:o,s:f}", "token", ev->token ? ev->token : "",
		              "actor", ev->actor ? ev->actor : "", "old_role",
		              str_or_null(ev->old_role), "new_role", str_or_null(ev->new_role),
		              "at", ms(ev->at));
	else
		j = decision_json(ev->task_id, ev->action, ev->actor, ev->notes, ev->round, ev->at);
	if (with_seq) {
		json_object_set_new(j, "kind", json_string(ev->kind ? ev->kind : "decision"));
		json_object_set_new(j, "seq", json_integer(ev->id));
	}
	return j;
}

static char *jdup(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? xstrdup(s) : NULL;
}

int audit_event_from_json(json_t *j, struct audit_event *ev)
{
	memset(ev, 0, sizeof *ev);
	if (!json_is_object(j) || !json_is_number(json_object_get(j, "at")))
		return -1;
	ev->id = (long long)json_integer_value(json_object_get(j, "seq"));
	ev->at = json_number_value(json_object_get(j, "at"));
	/* Without seq there is no kind: a role change is the one with a token. */
	ev->kind = jdup(j, "kind");
	if (!ev->kind)
		ev->kind = xstrdup(json_object_get(j, "token") ? "role-change" : "decision");
	ev->actor = jdup(j, "actor");
	ev->task_id = jdup(j, "id");
	ev->round = (int)json_integer_value(json_object_get(j, "round"));
	ev->action = jdup(j, "action");
	ev->notes = jdup(j, "notes");
	ev->token = jdup(j, "token");
	ev->old_role = jdup(j, "old_role");
	ev->new_role = jdup(j, "new_role");
	return 0;
}

char *audit_event_text(const struct audit_event *ev)
{
	char when[32];
	/* The JSON's milliseconds: a line from the API's is the same. */
	time_t t = (time_t)ms(ev->at);
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	struct buf b = {0};
	buf_printf(&b, "%s  ", when);
	if (ev->kind && !strcmp(ev->kind, "role-change")) {
		if (!ev->old_role)
			buf_printf(&b, _("token '%s' added with the role %s, by %s"), ev->token,
			           ev->new_role ? ev->new_role : "?", ev->actor);
		else if (!ev->new_role)
			buf_printf(&b, _("token '%s' (role %s) removed, by %s"), ev->token, ev->old_role,
			           ev->actor);
		else
			buf_printf(&b, _("token '%s': role %s -> %s, by %s"), ev->token, ev->old_role,
			           ev->new_role, ev->actor);
	} else {
		buf_printf(&b, _("task %s round %d: %s by %s"), ev->task_id ? ev->task_id : "?",
		           ev->round, ev->action ? ev->action : "?", ev->actor);
		if (ev->notes && *ev->notes)
			buf_printf(&b, ": %s", ev->notes);
	}
	return buf_detach(&b);
}
