/* pipeline_contract.c: what a round came to (pipeline_int.h): a cancel,
 * no change, a failed hand-off or verification, the default output
 * contract or the task's own (recipe.h) judged from the mirror, and the
 * fix loop when the tests fail with tries left. */
#include "autoconfig.h"
#include "pipeline_int.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "fsx.h"
#include "gate.h"
#include "i18n.h"
#include "mirror.h"
#include "recipe.h"
#include "report.h"
#include "sandbox.h"
#include "template.h"

/* After fix rounds, the message says so. */
static void fix_note(struct run *r, struct buf *why)
{
	if (r->fix_used)
		buf_printf(why, ngettext("; still failing after %d fix round (fix-rounds)",
		                         "; still failing after %d fix rounds (fix-rounds)",
		                         (unsigned long)r->fix_used), r->fix_used);
}

/* The round's gate summary, when its work was imported: what the reviewer
 * would have seen, for a round that does not reach the gate. */
static void send_gate(struct round *rd)
{
	struct run *r = rd->r;
	if (rd->hrc != 0)
		return;
	char *g = pipeline_gate_json(r, &rd->gate, rd->from, rd->summary, rd->before, &rd->ta,
	                             &rd->va);
	report_send(r->report_fd, REPORT_GATE, g ? g : "{}");
	free(g);
}

/* The default output contract, not satisfied: name every part that is
 * missing. */
static int contract_failed(struct round *rd)
{
	struct run *r = rd->r;
	const struct tests_after *ta = &rd->ta, *va = &rd->va;
	const char *failed = va->ran ? rd->verify_problem : rd->test_problem;
	const char *tail = va->ran ? va->tail : ta->tail;
	struct buf why = {0};
	buf_adds(&why, _("contract not satisfied: "));
	if (rd->hrc == HANDOFF_NO_CHANGE)
		buf_adds(&why, _("no change; "));
	if (va->ran && ta->passed)
		buf_printf(&why, _("the tests pass in the agent's sandbox but fail on a clean "
		                   "checkout of its commit: %s"), failed);
	else
		buf_printf(&why, _("tests failed: %s"), failed);
	fix_note(r, &why);
	if (tail && *tail)
		buf_printf(&why, "\n%s", tail);
	/* The mismatch first in the gate summary. */
	rd->gate.has_contract = 1;
	rd->gate.contract.change = rd->hrc == 0;
	rd->gate.contract.bundle = 1;
	send_gate(rd);
	pipeline_fail_reason(r, rd->hrc == HANDOFF_NO_CHANGE ? "contract" : "tests", "testing",
	                     why.data);
	buf_free(&why);
	return 1;
}

/* The next prompt of the fix loop, in the same conversation: the failed
 * tests' names and the end of their output (t), and what else of the
 * contract failed. */
static int fix_prompt(struct round *rd, const struct tests_after *t, const char *contract_why)
{
	struct run *r = rd->r;
	struct buf b = {0};
	buf_printf(&b, _("The tests fail after your work (%s). Fix the code so that they pass, "
	                 "and keep the rest of your work.\n\n"),
	           t == &rd->va ? _("run on a clean checkout of your commit")
	                        : _("run in your sandbox"));
	if (t->names)
		buf_printf(&b, _("Failed tests: %s\n\n"), t->names);
	const char *tail = t->long_tail ? t->long_tail : t->tail;
	if (tail && *tail)
		buf_printf(&b, _("The end of their output:\n\n%s\n\n"), tail);
	if (contract_why)
		buf_printf(&b, _("The task's contract is not satisfied yet either: %s.\n\n"),
		           contract_why);
	buf_printf(&b, _("This is fix round %d of %d.\n"), r->fix_used, r->fix_max);
	int rc = fsx_write_file(r->prompt_path, b.data, b.len, 0644, &rd->e);
	if (rc == 0 && pipeline_sb_copy_in(r, rd->sb, r->prompt_path, SANDBOX_PROMPT, &rd->e) < 0)
		rc = err_prefix(&rd->e, _("cannot put the next round's prompt into the sandbox"));
	buf_free(&b);
	return rc;
}

/* The fix loop: the round's tests failed and a try is left; the agent
 * gets them as its next round's prompt (fix_prompt), in the same sandbox
 * and conversation.  Returns ROUND_FIX, or 1 when that cannot be. */
static int round_fix(struct round *rd, const char *contract_why)
{
	struct run *r = rd->r;
	const struct tests_after *t = rd->va.ran && !rd->va.passed ? &rd->va : &rd->ta;
	if (!rd->gate.has_contract) {
		rd->gate.has_contract = 1;
		rd->gate.contract.change = rd->hrc == 0;
		rd->gate.contract.bundle = 1;
	}
	send_gate(rd);
	r->fix_used++;
	pipeline_log(r, "testing: the tests failed; fix round %d of %d (fix-rounds): the agent "
	             "gets the failed tests and their output", r->fix_used, r->fix_max);
	if (fix_prompt(rd, t, contract_why) < 0)
		return pipeline_fail(r, "testing", rd->e.msg);
	report_sendf(r->report_fd, REPORT_FIX, "%d", r->round + 1);
	return ROUND_FIX;
}

static int fix_left(const struct run *r)
{
	return r->fix_used < r->fix_max;
}

/* mirror_has_file in the round's tree, for the "file" clause. */
struct tree_at {
	const char *mirror, *commit;
};

static int file_in_tree(const char *path, void *arg)
{
	const struct tree_at *t = arg;
	return mirror_has_file(t->mirror, t->commit, path);
}

/* The task's own contract against the round: 1 when every clause holds;
 * why gets the sentences of those that do not, rd->gate what each came
 * to, *tests_failed whether "tests" is among them.  The work is the
 * task's whole change, from its base, as the reviewer approves it: a
 * later round that answers a note need not touch a test again for a
 * fix-bug task.  Read from the mirror, never the agent's tree. */
static int contract_judge(struct round *rd, struct buf *why, int *tests_failed)
{
	struct run *r = rd->r;
	int nochange = rd->hrc == HANDOFF_NO_CHANGE;
	int changed = !nochange && strcmp(r->head, r->base) != 0;
	char **paths = NULL;
	size_t np = 0;
	struct err pe = {{0}};
	if (changed && mirror_changed_paths(r->mirror, r->base, r->head, &paths, &np, &pe) < 0)
		pipeline_log(r, "testing: %s", pe.msg);
	struct tree_at at = { r->mirror, nochange ? r->base : r->head };
	struct contract_facts f = {
		.changed = changed, .tests_ran = rd->va.ran, .tests_passed = rd->va.passed,
		.summary = rd->summary, .paths = (const char *const *)paths, .npaths = np,
		.file_exists = file_in_tree, .arg = &at,
	};
	int held = recipe_contract_check(r->clauses, r->nclauses, &f, why);
	struct gate_summary *g = &rd->gate;
	g->has_contract = 1;
	g->contract.clauses = xcalloc(r->nclauses, sizeof *g->contract.clauses);
	g->contract.nclauses = r->nclauses;
	for (size_t i = 0; i < r->nclauses; i++) {
		struct buf ignored = {0};
		g->contract.clauses[i].clause = xstrdup(r->clauses[i]);
		g->contract.clauses[i].held = recipe_contract_check(&r->clauses[i], 1, &f, &ignored);
		buf_free(&ignored);
	}
	int tests_ok = rd->va.ran && rd->va.passed;
	g->contract.change = !recipe_contract_has(r->clauses, r->nclauses, "change") || changed;
	g->contract.tests = !recipe_contract_has(r->clauses, r->nclauses, "tests") || tests_ok;
	g->contract.bundle = 1;
	*tests_failed = !tests_ok && recipe_contract_has(r->clauses, r->nclauses, "tests");
	mirror_paths_free(paths, np);
	return held;
}

/* The task's own contract, not satisfied: every clause that failed. */
static int contract_own_failed(struct round *rd, const char *sentences)
{
	struct run *r = rd->r;
	struct buf why = {0};
	buf_printf(&why, _("contract not satisfied: %s"), sentences);
	if (rd->va.ran && !rd->va.passed) {
		fix_note(r, &why);
		if (rd->verify_problem)
			buf_printf(&why, "\n%s", rd->verify_problem);
		if (rd->va.tail && *rd->va.tail)
			buf_printf(&why, "\n%s", rd->va.tail);
	}
	send_gate(rd);
	pipeline_fail_reason(r, "contract", "testing", why.data);
	buf_free(&why);
	return 1;
}

/* A round that changed nothing: its tests on a clean checkout of its
 * tree are the base's, which the template ran (the tests before). */
static void nochange_tests(struct round *rd)
{
	const struct template_tests *b = rd->before;
	pipeline_tests_after_free(&rd->va);
	if (!b->ran)
		return;
	rd->va = (struct tests_after){ .ran = 1, .passed = b->passed, .exited = b->exited,
	                               .code = b->code, .tail = pipeline_dup_or_null(b->tail),
	                               .log = pipeline_dup_or_null(b->log) };
}

/* What the task's own contract (recipe.h) says of the round: 0 when it
 * reaches the gate (a round that changed nothing too, where the contract
 * allows), ROUND_FIX, or 1 when the task ended. */
static int contract_own(struct round *rd)
{
	struct run *r = rd->r;
	if (rd->hrc == HANDOFF_NO_CHANGE)
		nochange_tests(rd);
	struct buf why = {0};
	int tests_failed = 0, rc;
	if (contract_judge(rd, &why, &tests_failed))
		rc = 0;
	else if (tests_failed && rd->va.ran && fix_left(r))
		rc = round_fix(rd, why.data);
	else
		rc = contract_own_failed(rd, why.data);
	buf_free(&why);
	return rc;
}

/* What the hand-off and the tests came to: a cancel, no change, a failed
 * hand-off or verification, or the contract not satisfied end the task;
 * failing tests may go to the fix loop instead (ROUND_FIX). */
int pipeline_round_contract(struct round *rd)
{
	struct run *r = rd->r;
	int hrc = rd->hrc, vrc = rd->vrc;
	int tests_failed = rd->va.ran ? !rd->va.passed : rd->test_problem != NULL;
	struct buf why = {0};
	if (hrc == 0 && vrc == 0 && pipeline_cancelled) {
		report_send(r->report_fd, REPORT_CANCELLED, NULL);
	} else if (!r->nclauses && hrc == HANDOFF_NO_CHANGE && !rd->test_problem) {
		/* The agent found nothing to change: its explanation ends the
		 * task, with no branch. */
		pipeline_log(r, "hand-off: no change; the agent's explanation ends the task");
		report_send(r->report_fd, REPORT_NOCHANGE, NULL);
	} else if (hrc < 0) {
		/* Name every missing part: the failed tests too. */
		buf_adds(&why, rd->e.msg);
		if (rd->test_problem)
			buf_printf(&why, _("; tests failed: %s"), rd->test_problem);
		pipeline_fail(r, "hand-off", why.data);
	} else if (vrc < 0) {
		/* Unverified tests are not a result a reviewer can trust. */
		buf_printf(&why, _("the tests could not be verified on a clean checkout: %s"),
		           rd->e.msg);
		pipeline_fail(r, "testing", why.data);
	} else if (r->nclauses) {
		return contract_own(rd);
	} else if (hrc == HANDOFF_NO_CHANGE || tests_failed) {
		if (tests_failed && fix_left(r))
			return round_fix(rd, hrc == HANDOFF_NO_CHANGE ? _("no change") : NULL);
		contract_failed(rd);
	} else {
		return 0;
	}
	buf_free(&why);
	return 1;
}
