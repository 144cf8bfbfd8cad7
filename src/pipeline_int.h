/* pipeline_int.h: what the pipeline's own files share (pipeline.c,
 * pipeline_handoff.c, pipeline_gate.c, pipeline_contract.c).  Internal to
 * the pipeline: no other module includes it; theirs is pipeline.h.
 *
 *   pipeline.c           pipeline_run: the task's steps (base, template,
 *                        agent, gateway, sandbox, workspace, home) and
 *                        each round's (agent, tests, hand-off, gate); the
 *                        log, failures, sandbox commands, the tests and
 *                        their verification on a clean checkout;
 *   pipeline_handoff.c   the hand-off: the script that commits, bundles
 *                        and archives the home inside the sandbox, the
 *                        bundle copied out, checked and imported;
 *   pipeline_gate.c      the gate: its summary, the wait for the
 *                        scheduler, the agent's home archive kept between
 *                        rounds, and the reviewer's shell (shell.h);
 *   pipeline_contract.c  what a round came to: the default contract or
 *                        the task's own (recipe.h) judged, and the fix
 *                        loop when tests fail.
 *
 * All of it runs in the task's supervisor process, one round at a time. */
#ifndef PADDOCK_PIPELINE_INT_H
#define PADDOCK_PIPELINE_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "adapter.h"
#include "agent.h"
#include "buf.h"
#include "bundle.h"
#include "err.h"
#include "gate.h"
#include "pipeline.h"
#include "sandbox.h"
#include "template.h"

struct gateway;

/* Exit codes of the hand-off script: the agent changed nothing; the
 * workspace is no longer a git repository. */
#define HANDOFF_NO_CHANGE 3
#define HANDOFF_NO_REPO 4

/* The hand-off's parts.  What paddock's own test step writes in the
 * workspace (__pycache__, build output) is not the agent's work: where a
 * round runs tests, the work is committed and bundled as the agent left
 * it before them (HANDOFF_COMMIT: the verification starts then, beside
 * the tests), and after them the tree is put back as it was then
 * (HANDOFF_AFTER_TESTS).  HANDOFF_ALL commits and bundles where there
 * are no tests (and for a reviewer's shell). */
enum handoff_phase { HANDOFF_ALL, HANDOFF_COMMIT, HANDOFF_AFTER_TESTS };

struct run {
	const struct pipeline_job *job;
	int report_fd;
	int log_fd;
	int spoiled;                 /* the sandbox's tree could not be put back: not kept */
	char *task_dir;
	uint64_t output_used;
	double deadline;
	double started;            /* monotonic time the supervisor began */
	int round;
	char base[41];
	char head[41];             /* the imported head of the latest round */
	char *mirror;
	struct gateway *gw;        /* the sandbox's way out, while it lives */
	char *session;             /* the agent's session id, for resuming */
	char *prompt_path;         /* the round's prompt (host file) */
	char *agent_dir;           /* the installed agent, or NULL */
	const char *tpl;           /* the template of the base (verification) */
	int reason_sent;           /* a failure reason was reported */
	const char *pod_reason;    /* a sandbox's pod could not run or ended
	                              (ERR_POD_*): the reason word that names
	                              why, or NULL */
	int runner_failed;         /* a sandbox's runner lied, stalled or died
	                              (ERR_RUNNER): the failure's reason is
	                              RUNNER_REASON */
	char home_problem[ERR_MAX]; /* why the round's home archive is missing */
	int home_snap;             /* the sandbox's home snapshot (/out/home.snar.N,
	                              pipeline_handoff.c) whose archive the host
	                              kept: the next archive is an increment on
	                              it; 0: none, the next is whole */
	int home_fetched;          /* what pipeline_home_fetch copied: -1 nothing,
	                              0 a whole archive, N the increment on
	                              snapshot N */
	struct repo_conf repo;     /* the task's repo, its test command the
	                              task's own (--test) where it has one */
	double timeout;            /* seconds each round may take */
	char **clauses;            /* the task's output contract (recipe.h); */
	size_t nclauses;           /* none: the default one */
	int fix_max, fix_used;     /* the fix loop's tries: allowed, used since
	                              the last round that reached review */
	char fix_from[41];         /* where the round whose tests the fix loop
	                              tries to fix started: the contract judges
	                              the work from there */
};

/* What run_round returns besides 0 (review) and 1 (the task ended): the
 * round's verified tests failed, and the next round is the fix loop's. */
#define ROUND_FIX 2

struct tests_after {
	int ran, passed, exited, code;
	char *tail;
	char *log;                 /* where the whole output is, or NULL */
	char *names;               /* the failed tests found (testreport.h), or
	                              NULL */
	char *long_tail;           /* more of the output's end, for the fix loop */
};

/* The result the gate and the contract use: the repo's tests on a clean
 * checkout of the imported head, in a fresh sandbox over the template
 * with an empty home and nothing of the agent's (template_verify).  It
 * starts as soon as the bundle is out, in its own process, and runs
 * while the host checks and imports the same bundle; *v stays NULL when
 * the repo has no tests or the bundle names no tip (the import then
 * refuses it). */
struct verify_run {
	struct template_verify *v;
	/* Finished, its sandbox maybe still being removed: waited for by
	 * pipeline_verify_end, once the result is used. */
	struct template_verify *ending;
	off_t start;                 /* the log's end when its output went in */
	int failed;                  /* it could not start: e says why */
	int out;                     /* its output until finish (a memfd); -1 */
	int went;                    /* it was handed its commit */
	char tip[41];                /* that commit */
};

/* A malloc'd copy of s, or NULL for NULL. */
static inline char *pipeline_dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* What the steps of one round share, and round_free releases. */
struct round {
	struct run *r;
	struct sandbox *sb;
	const struct agent_cmdline *cl;
	const struct template_tests *before;
	const struct agent_conf *agent;
	struct err e;
	char from[41];             /* the commit the round starts from */
	off_t start;               /* the log's end when the agent began */
	struct sandbox_result res; /* the agent's run */
	struct adapter_result ar;  /* what its adapter read from that run */
	char *problem;             /* what went wrong in that run, or NULL */
	char *summary;             /* the agent's summary of the round */
	struct tests_after ta, va; /* the tests in its sandbox; on a clean checkout */
	char *test_problem, *verify_problem;
	int hrc, vrc;              /* the hand-off's result; the verification's */
	int committed;             /* the work was committed and bundled before the tests */
	struct verify_run vr;      /* the verification, prepared while the agent works */
	struct err ve;             /* why it could not run */
	struct gate_summary gate;  /* its diffstat and findings (pipeline_gate_prepare) */
};

/* ---- pipeline.c ---- */

/* Set by SIGTERM or SIGINT: the task was cancelled. */
extern volatile sig_atomic_t pipeline_cancelled;

/* A marker line in the task log, so that a reader sees the steps. */
void pipeline_log(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the task at step with msg (reported as fail, or cancelled);
 * returns 1, what a step returns when the task ended. */
int pipeline_fail(struct run *r, const char *step, const char *msg);
/* pipeline_fail() with the one-word reason that `paddock show` and the API
 * give. */
int pipeline_fail_reason(struct run *r, const char *reason, const char *step,
                         const char *msg);
/* A sandbox result that is not a clean exit 0 as a message (free it);
 * NULL for success. */
char *pipeline_result_problem(struct run *r, const char *what,
                              const struct sandbox_result *res);
/* Runs argv in sb, its output to the task log: be->run's result. */
int pipeline_sb_run(struct run *r, struct sandbox *sb, const char *const *argv,
                    const char *const *env, double deadline, struct sandbox_result *res,
                    struct err *e);
/* be->copy_in of the host file `host` to `inside`, and be->copy_out of
 * `inside` to `host` (at most cap bytes): a session that failed
 * (ERR_RUNNER) fails the task as the agent's doing, as pipeline_sb_run. */
/* Notes what a failed sandbox call says about the task's reason: a
 * runner's failure (runner_failed), a pod's (pod_reason). */
void pipeline_sb_failed(struct run *r, const struct err *e);
int pipeline_sb_copy_in(struct run *r, struct sandbox *sb, const char *host, const char *inside,
                        struct err *e);
int pipeline_sb_copy_out(struct run *r, struct sandbox *sb, const char *inside, const char *host,
                         uint64_t cap, struct err *e);
void pipeline_tests_after_free(struct tests_after *ta);
/* The verification (struct verify_run): its sandbox prepared while the
 * agent works (pipeline_verify_prepare: nothing when the repo has no
 * tests), handed the commit once the bundle is out (pipeline_verify_go),
 * or both at once (pipeline_verify_start); pipeline_verify_finish waits
 * for it, or stops it when stop is set, and only then puts its output in
 * the task log: it runs beside the agent's own tests, whose output goes
 * there as it comes. */
void pipeline_verify_prepare(struct run *r, struct verify_run *vr, struct err *e);
void pipeline_verify_go(struct run *r, struct verify_run *vr, struct err *e);
void pipeline_verify_start(struct run *r, struct verify_run *vr, struct err *e);
int pipeline_verify_finish(struct run *r, struct verify_run *vr, int stop,
                           struct tests_after *ta, char **problem, struct err *e);
/* After pipeline_verify_finish: waits until the verification's sandbox is
 * removed (finish returns with the result, before that). */
void pipeline_verify_end(struct verify_run *vr);

/* ---- pipeline_handoff.c ---- */

/* The hand-off run in the sandbox and the bundle copied out: 0,
 * HANDOFF_NO_CHANGE, or -1 with e.  extra (NULL: none) adds to its
 * environment. */
int pipeline_handoff_run(struct run *r, struct sandbox *sb, const char *const *extra,
                         enum handoff_phase phase, struct err *e);
/* The limits a round's bundle is checked against. */
struct bundle_limits pipeline_handoff_limits(const struct run *r);
/* The bundle checked and imported into the mirror: 0 with r->head set,
 * or -1 with e. */
int pipeline_handoff_import(struct run *r, struct err *e);

/* ---- pipeline_gate.c ---- */

/* The diffstat and the policy's findings of the imported work, into g. */
void pipeline_gate_prepare(struct run *r, struct gate_summary *g);
/* The round's gate summary as the store keeps it (malloc'd JSON, or
 * NULL), from the prepared g, which it frees. */
char *pipeline_gate_json(struct run *r, struct gate_summary *g, const char *from,
                         const char *summary, const struct template_tests *before,
                         const struct tests_after *agent, const struct tests_after *after);
/* Waits at the gate: the round to run next, or 0 to tear down. */
int pipeline_gate_wait(struct run *r, struct sandbox *sb, const struct template_tests *before);

/* The agent's home outlives its sandbox: archived by the hand-off (inside
 * the sandbox; the host only copies the bytes), kept beside the task when
 * the round reaches review, and unpacked into the home of a sandbox
 * rebuilt for a later round, so that the agent's session, and with it the
 * conversation, can be resumed.  In one sandbox only the first archive is
 * whole: each later one is a GNU tar increment (--listed-incremental) on
 * the snapshot of the last archive the host kept, which the sandbox keeps
 * in /out; the host keeps the whole archive and the increments in order
 * (paths_task_home, paths_task_home_inc) and unpacks them in that order,
 * in the sandbox, as its user (tar there refuses absolute names and ..,
 * and an archive can reach only what the sandbox can).  Each archive is at
 * most HOME_ARCHIVE_CAP bytes. */
#define HOME_ARCHIVE_CAP (256ULL << 20)
/* The most archives a home is restored from (the whole one and its
 * increments); a longer chain stops there. */
#define HOME_INCS_MAX 1000
/* 1 when the task's agent resumes a conversation (its `resume` command):
 * only then is its home archived; without one, a later round starts anew
 * and has no use for it. */
int pipeline_home_wanted(const struct run *r);
/* The round's archive (whole, or the increment on r->home_snap) copied out
 * beside the kept ones. */
void pipeline_home_fetch(struct run *r, struct sandbox *sb);
/* The round reached review: its archive (and session) is kept: a whole one
 * replaces the kept ones, an increment follows them; the sandbox's
 * snapshot advances to it (r->home_snap). */
void pipeline_home_keep(struct run *r);
/* The round did not: the kept archives, and the snapshot the next
 * increment starts from, stay. */
void pipeline_home_discard(struct run *r);
/* The session kept with task id's home archive replaces r->session. */
void pipeline_home_session(struct run *r, const char *id);
/* The kept home unpacked into sb's (a new sandbox: the next archive is
 * whole), its whole archive then each increment: 1 when all were put
 * back. */
int pipeline_home_restore(struct run *r, struct sandbox *sb);
/* Copies task from's kept home archives to task to's (a follow-up). */
void pipeline_home_copy(struct run *r, const char *from, const char *to, struct err *e);
/* The round's bundle kept as round-N.bundle. */
void pipeline_keep_round_bundle(struct run *r);

/* ---- pipeline_contract.c ---- */

/* The round step "contract": what the hand-off and the tests came to.
 * 0 to go on to the gate, ROUND_FIX, or 1 when the task ended. */
int pipeline_round_contract(struct round *rd);

#endif
