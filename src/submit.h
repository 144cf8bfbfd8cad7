/* submit: a request for work, from the command line, the HTTP API or the
 * dashboard's new-task form, checked against the configuration and made
 * into a queued task (or a best-of-N group of them).
 *
 * One place decides what a request means, so that the three front doors
 * agree: the recipe's prompt with its inputs filled in, the defaults
 * (the request's own, else the recipe's, else the repo's), the approval
 * mode (a task may narrow its repo's or recipe's, never widen it; auto
 * and auto-push need a test command), the output contract (the recipe's
 * clauses with the inputs filled in), and whether the estimated cost
 * needs a person's confirmation (confirm-over).  What is stored with the
 * task is final: the supervisor and the gate read the task row, not the
 * recipe, so a recipe changed later does not change queued tasks. */
#ifndef PADDOCK_SUBMIT_H
#define PADDOCK_SUBMIT_H

#include <stddef.h>
#include "config.h"
#include "err.h"
#include "store.h"
#include "task.h"

#define SUBMIT_GROUP_MAX 8     /* members of a best-of-N group */

/* Strings are borrowed; unset fields are NULL, 0 or < 0 as said. */
struct submit_req {
	const char *text;          /* what to do; with a recipe it may be NULL
	                              (else it is added to the recipe's prompt) */
	const char *repo, *agent;  /* NULL: the recipe's, else the default */
	const char *recipe;        /* NULL: none */
	const char *const *input_names, *const *input_values;
	size_t ninputs;
	const char *base;          /* a branch, tag, commit, ref or pull request
	                              number; NULL: the recipe's, else the repo's
	                              branch */
	const char *test;          /* NULL: the recipe's, else the repo's */
	double timeout;            /* seconds; 0: the recipe's, else limits */
	double budget;             /* USD; < 0: the recipe's, else limits */
	int dry_run;               /* test mode */
	const char *approval;      /* a narrower mode, or NULL */
	const char *const *agents; /* best-of-N: one member per agent */
	size_t nagents;
	int n;                     /* best-of-N: n members of the one agent (0 or
	                              1: a single task) */
	const char *callback_url, *metadata;
	size_t max_queued;         /* 0: no limit */
	const char *queued_by;     /* who queues them (a token's name, a Unix
	                              user), or NULL */
};

struct submit_result {
	char group[TASK_ID_LEN + 1]; /* "" when no group was made */
	size_t n;                  /* tasks made */
	char ids[SUBMIT_GROUP_MAX][TASK_ID_LEN + 1];
	char agents[SUBMIT_GROUP_MAX][64]; /* each one's agent */
	char repo[64];
	int confirm;               /* they wait for a confirmation */
	double estimate;           /* the estimated cost of each (USD; 0: none
	                              known) */
	size_t queued;             /* when refused for max_queued: how many are */
};

/* Checks rq against cfg and adds the task or group to s.  0 on success;
 * -1 with e set (ERR_INVALID: the request is wrong; ERR_NOT_FOUND: no
 * such repo, agent or recipe; others from the store), nothing added; -2
 * when max_queued tasks are queued already (out->queued says how many). */
int submit_tasks(struct store *s, const struct config *cfg, const struct submit_req *rq,
                 struct submit_result *out, struct err *e);

/* The checks of submit_tasks that need no store (all but the estimate):
 * a front door that must not create a store for a request that is wrong
 * calls it first.  0, or -1 with e set as submit_tasks sets it. */
int submit_check(const struct config *cfg, const struct submit_req *rq, struct err *e);

/* Parses "NAME=VALUE" (an --input): *name is a malloc'd copy of NAME and
 * *value points into arg.  -1 with e set when there is no '='. */
int submit_input_split(const char *arg, char **name, const char **value, struct err *e);

#endif
