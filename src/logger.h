/* logger: the one owner of what `paddock serve` says, as text or as JSON.
 *
 * Every line serve prints (a task's moves, webhook deliveries, GitHub's
 * sync, the API's notices, errors) goes through one logger.  Text, the
 * default, prints each line as paddock always has: notices and a task's
 * progress ("ID  WORD  detail") on the logger's out, warnings and errors
 * ("paddock: ...") on its err.  JSON (`serve --log-format json`, or
 * `[paddock] log-format`) prints every line, errors too, on out as one
 * object: time (RFC 3339, UTC, milliseconds), level, task and repo when
 * the line is about a task, event (a stable word: the status a task moved
 * to, webhook.delivered, github.error, api.listening, ...), and message
 * (the line as text prints it, less the "paddock: " and task id that
 * start it), for journald and log shippers; with logger_stderr_take,
 * what serve and its children write to standard error comes as JSON
 * lines too.
 *
 * What it hides: the caller sanitizes what quotes a sandbox, as for text
 * (sanitize_quote); a JSON line's strings are sanitized again (valid
 * UTF-8, no control byte, whatever the caller forgot), and the secrets
 * and host paths given to logger_hide are replaced in every field.  Text
 * stays byte for byte what it was.
 *
 * Thread-safe: serve's threads (the API's, the GitHub poller, the
 * scheduler's own) share one logger; each line is one write() under the
 * logger's lock, so lines never interleave.
 *
 * A NULL logger is a caller without output (the dashboard's scheduler):
 * debug and info lines are dropped, warnings and errors go to standard
 * error as text, as they always did. */
#ifndef PADDOCK_LOGGER_H
#define PADDOCK_LOGGER_H

#include <stdio.h>

#include "err.h"

enum logger_format { LOGGER_TEXT, LOGGER_JSON };
enum logger_level { LOGGER_DEBUG, LOGGER_INFO, LOGGER_WARNING, LOGGER_ERROR };
/* Or'ed into a level: text prints the line on out whatever its level (a
 * warning that always went there); a NULL logger drops it. */
#define LOGGER_ON_OUT 0x100

struct logger;
struct config;

/* "text" or "json" into *out: 0, or -1 with e saying which words are
 * allowed.  what names the value's place in the message (a key, an
 * option). */
int logger_format_parse(const char *word, const char *what, enum logger_format *out,
                        struct err *e);

/* A logger writing to out and err (borrowed; the same for both is fine).
 * Free it with logger_free, after every thread that uses it ended. */
struct logger *logger_new(enum logger_format f, FILE *out, FILE *err);
void logger_free(struct logger *lg);

enum logger_format logger_format(const struct logger *lg);

/* In JSON lines from now on, secret (4 bytes or more) is replaced by
 * shown ("***" when NULL).  Copied. */
void logger_hide(struct logger *lg, const char *secret, const char *shown);
/* Hides what cfg holds that is secret (the endpoints' keys, the repos'
 * tokens, the GitHub token, the API's tokens, the webhook secrets) and
 * the host paths (data_dir as "<data directory>", each repo's remote that
 * is a path as "<the remote of repo NAME>"). */
void logger_hide_config(struct logger *lg, const struct config *cfg, const char *data_dir);

/* A line that fmt (with its arguments) makes, as text prints it (one
 * trailing newline is dropped: messages keep theirs); task and repo may
 * be NULL.  A JSON line without repo takes the one logger_task last gave
 * the task. */
void logger_event(struct logger *lg, int lv, const char *task, const char *repo,
                  const char *event, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Text of several lines (the scheduler's reconcilers' output): one
 * logger_event per non-empty line. */
void logger_lines(struct logger *lg, int lv, const char *task, const char *repo,
                  const char *event, const char *text);

/* JSON: what is written to standard error from now on (this process's
 * stdio, a library's message, the children it starts: supervisors,
 * the root helper, git) becomes JSON lines too, event "stderr" at level
 * error: fd 2 becomes a pipe that logger_stderr_start's thread reads.
 * take before the children start, start once the process may have
 * threads (child.h: a copy of a threaded process runs no function); what
 * comes between waits in the pipe.  logger_free puts fd 2 back, then
 * says what is left in the pipe.  0, or -1 with e (nothing changed).
 * Text: nothing to do. */
int logger_stderr_take(struct logger *lg, struct err *e);
void logger_stderr_start(struct logger *lg);

/* A task's progress line: "ID  WORD  detail" (WORD padded to 9), or
 * "ID  WORD" without detail, on out whatever lv; detail is the caller's,
 * sanitized.  JSON: event is event (word when NULL), message the detail
 * (the word without one).  A NULL logger drops it. */
void logger_task(struct logger *lg, int lv, const char *task, const char *repo,
                 const char *event, const char *word, const char *detail);

#endif
