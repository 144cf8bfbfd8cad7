/* report: the lines a supervisor sends its scheduler.
 *
 * The supervisor (pipeline.c), the gateways it starts (gateway.c) and its
 * template builder (template.c) write report lines to one pipe, the
 * scheduler (scheduler.c) reads them and alone writes the store.  A line
 * is a verb, a space and its argument where it has one, and a newline;
 * newlines and backslashes in the argument travel as \n and \\.  A line
 * goes in one write when it fits PIPE_BUF, so that the lines of several
 * writers never mix.
 *
 * REPORT_INFO is the protocol: each verb with its name, its argument and
 * what it means.  It generates the names, the parser and the scheduler's
 * dispatch table, so that a verb cannot be sent that nobody handles. */
#ifndef PADDOCK_REPORT_H
#define PADDOCK_REPORT_H

#define REPORT_INFO(X) \
	X(STATUS, status, "NAME", "the task moved (preparing, running, testing)") \
	X(BASE, base, "SHA", "the base commit (round 1)") \
	X(HEAD, head, "SHA", "the imported tip of the round") \
	X(SUMMARY, summary, "TEXT", "the agent's summary of the round") \
	X(GATE, gate, "JSON", "the round's gate summary (gate.h)") \
	X(SESSION, session, "ID", "the agent's session, resumed by the next round") \
	X(REASON, reason, "WORD", "why the task is about to fail (paddock(1), paddock show: reason)") \
	X(EGRESS, egress, "JSON", "a request or tunnel of a gateway, allowed or refused") \
	X(USAGE, usage, "JSON", "the model usage so far (tokens, cost)") \
	X(PAUSE, pause, "JSON", "an endpoint asked to slow down: endpoint, until, status") \
	X(DONE, done, NULL, "hand-off imported: the task goes to review") \
	X(NOCHANGE, nochange, NULL, "the agent changed nothing and the tests pass: done") \
	X(FIX, fix, "N", "the verified tests failed: fix round N begins in the same sandbox") \
	X(FAIL, fail, "STEP: WHY", "the task failed in STEP") \
	X(CANCELLED, cancelled, NULL, "stopped by SIGTERM") \
	X(KEPT, kept, NULL, "the sandbox waits at the gate for the next round") \
	X(RELEASED, released, NULL, "the sandbox was torn down after the gate")

enum report_verb {
#define REPORT_ENUM(ID, name, arg, doc) REPORT_##ID,
	REPORT_INFO(REPORT_ENUM)
#undef REPORT_ENUM
	REPORT_N
};

/* The verb's name as sent ("status"), its argument's placeholder (NULL:
 * none) and what it means; static strings. */
const char *report_name(enum report_verb v);
const char *report_arg(enum report_verb v);
const char *report_doc(enum report_verb v);

/* Sends one line: verb v with arg (NULL for a verb without one).  Returns
 * -1 when it could not be written. */
int report_send(int fd, enum report_verb v, const char *arg);
int report_sendf(int fd, enum report_verb v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parses one line (without its newline) in place: *v and *arg, the
 * argument unescaped (NULL for a verb without one).  -1 for an unknown
 * verb, or an argument missing or where none belongs. */
int report_parse(char *line, enum report_verb *v, const char **arg);

#endif
