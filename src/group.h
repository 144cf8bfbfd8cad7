/* group: best-of-N groups after they are made (store_group_create, from
 * submit.h): a group and its members side by side, and the pick.
 *
 * The same for `paddock group show|pick`, GET /groups/ID and POST
 * /groups/ID/pick (api.h), and the dashboard's group view.  Each member is
 * a normal task; what is shown of it comes from its row and the gate
 * summary of its latest round (gate.h), its change from the mirror. */
#ifndef PADDOCK_GROUP_H
#define PADDOCK_GROUP_H

#include <jansson.h>
#include <stddef.h>
#include "buf.h"
#include "err.h"
#include "gate.h"
#include "store.h"

/* The verified tests of a member's latest round (gate_summary's
 * tests.after). */
enum group_tests { GROUP_TESTS_NOT_RUN = 0, GROUP_TESTS_PASSED, GROUP_TESTS_FAILED };

/* One member, as the group's table shows it. */
struct group_member {
	struct task_row t;         /* its row, with its steps */
	int position;              /* 1..n, in the order they were queued */
	int has_gate;              /* a round of it reached the gate: tests,
	                              blocks and warns are its latest's */
	enum group_tests tests;
	int has_change;            /* it has work: the three below are set */
	size_t files, ins, del;    /* its change base..head (the mirror's) */
	double seconds;            /* time it took: from its start to where it is
	                              now (review, ended) or to now while it
	                              runs; < 0: it has not started */
	size_t blocks, warns;      /* findings of its latest round: blocking
	                              (not overridden), warning */
	int picked;
};

struct group_info {
	struct task_group g;
	struct group_member *m;    /* in the order queued */
	size_t n;
};

/* Reads group id (or a unique prefix) and its members; data_dir finds the
 * mirrors (NULL: no change is read, has_change stays 0); now (unix time)
 * is what a running member's time runs to.  -1 with ERR_NOT_FOUND (no
 * such group) or ERR_INVALID (not a group id).  Free with
 * group_info_free. */
int group_load(struct store *st, const char *data_dir, const char *id, double now,
               struct group_info *out, struct err *e);
void group_info_free(struct group_info *gi);

/* The member with task id (a unique prefix of it), or NULL. */
const struct group_member *group_member_find(const struct group_info *gi, const char *id);

/* The JSON of the group (group show --json, GET /groups/ID): id, text,
 * created, size, picked, statuses and each member (doc/paddock-api.json,
 * "Group").  New reference. */
json_t *group_json(const struct group_info *gi);

/* The members' statuses in brief, "2 review, 1 running" (labels: the
 * translated status labels of task.h, else the status names), in the
 * order of what needs a person first. */
void group_statuses(const struct group_info *gi, int labels, struct buf *out);

/* The group's status as one: the picked member's, else the first of
 * group_statuses' order that a member has (review before work in
 * progress before the ends). */
enum task_status group_status(const struct group_info *gi);

/* A member's time (struct group_member.seconds) at unix time now. */
double group_member_seconds(const struct task_row *t, double now);

/* "passed", "failed", "not run" (translated) */
const char *group_tests_word(enum group_tests t);

/* Where task t is in its group: *pos of *n (1-based, in the order
 * queued).  0 with *n 0 when t is in no group. */
int group_position(struct store *st, const struct task_row *t, int *pos, int *n,
                   struct err *e);

/* Picks member task of group id: approves it as gate_approve does (its
 * checks: at review, nothing pending, no finding that blocks; the push),
 * records the pick (store_group_choose), then ends the other members that
 * have not ended: those at review are rejected (their kept sandboxes are
 * torn down by the scheduler, as after `paddock reject`), the others
 * cancelled.  A member already approved (done) while the group has no
 * pick (an approve of it by hand, or a pick that stopped half way) is
 * recorded and the others are ended.  What happened is appended to out,
 * one line per fact.  Refused: no such group (ERR_NOT_FOUND), task is
 * not one of its members (ERR_INVALID), a member is picked already or
 * another pick runs (ERR_CONFLICT), and gate_approve's refusals. */
int group_pick(const struct gate_ctx *g, const char *id, const char *task, const char *notes,
               struct buf *out, struct err *e);

#endif
