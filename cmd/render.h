/* render: the command line's text of a task (show, a list row), a group
 * (group show) and a recipe (recipe show), from their JSON: taskjson.h's
 * taskjson_full, taskjson_row and taskjson_recipe, and group.h's
 * group_json, an audit event's (audit.h), the same JSON as --json and the HTTP API give.  One
 * renderer for the local verbs, which build that JSON from their store,
 * and for the remote ones (cmd_remote.c), which get it from the API, so
 * that both print the same bytes.  They print on stdout (render_added's
 * notes on stderr); the JSON stays the caller's, never changed. */
#ifndef PADDOCK_RENDER_H
#define PADDOCK_RENDER_H

#include <jansson.h>

/* paddock show's text of task j (taskjson_full's JSON).  config_known: 0
 * when the configuration could not be read, so that a missing budget is
 * "unknown", not "none". */
void render_task(json_t *j, int config_known);

/* paddock list's row of task j (taskjson_row's JSON: its group's place
 * and its pull request's state too), after the column titles when
 * first. */
void render_list_row(json_t *j, int first);

/* paddock add's text of what add --json prints ({"id", ...} or
 * {"group", "tasks": [{"id", ...}]}, with "confirm" and "estimate" when
 * the tasks wait for a confirmation): the group's id and each task's on
 * stdout, what to confirm on stderr. */
void render_added(json_t *j);

/* paddock group show's text of group j (group_json). */
void render_group(json_t *j);

/* paddock recipe list's text of the array of recipes list (each
 * taskjson_recipe's). */
void render_recipes(json_t *list);
/* paddock recipe show's text of recipe j (taskjson_recipe). */
void render_recipe(json_t *j);

/* paddock audit's text of the array of audit events list
 * (audit_event_json's, with seq): a line each (audit_event_text), or
 * that there are none yet. */
void render_audit(json_t *list);

#endif
