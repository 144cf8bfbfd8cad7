/* cli: the paddock program's command line, `paddock VERB [ARGS]` (the
 * dashboard with no arguments).  Exit statuses: 0 success, 1 the
 * operation failed, 2 bad usage or bad input (nothing was changed).
 *
 * cmd/cli.c has the verb table, option parsing and the helpers below; the
 * verbs themselves are cmd_VERB in a file per group, as in git's builtin/:
 *   cmd/cmd_task.c   add, list, log, diff, cancel
 *   cmd/cmd_show.c   show
 *   cmd/cmd_gate.c   approve, push, reject, request-changes, override, follow-up
 *   cmd/cmd_group.c  group show, group pick (best-of-N)
 *   cmd/cmd_shell.c  shell
 *   cmd/cmd_serve.c  serve, demo, the dashboard
 *   cmd/cmd_admin.c  config, template, agent
 *   cmd/cmd_recipe.c recipe
 *   cmd/cmd_github.c github
 *   cmd/cmd_audit.c  audit
 *   cmd/cmd_mcp.c    mcp (the Model Context Protocol server)
 *   cmd/cmd_kube.c   kubernetes manifest
 *   cmd/cmd_draft.c  comment, draft (the review draft)
 *   cmd/cmd_remote.c every verb against a server's API (paddock --server URL) */
#ifndef PADDOCK_CLI_H
#define PADDOCK_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include "buf.h"
#include "config.h"
#include "store.h"

#define EXIT_USAGE 2

/* Runs the verb that argv names; returns the exit status. */
int cli_main(int argc, char **argv);

/* ------------------------------------------- for the verb files only */

/* A verb of the table in cli.c (its name, usage and help). */
struct cli_verb;

/* The options of every verb; cli_parse_opts refuses those a verb does
 * not take. */
struct cli_opts {
	int json;
	int follow;
	int until_idle;
	const char *repo;
	const char *agent;
	const char *status;
	const char *file;
	const char *notes;
	const char *notes_file;
	const char *round;
	int since_review;
	const char *budget;
	const char *listen;
	int routes;
	const char *older_than;
	int dry_run;
	int failed;
	int again;
	const char *limit;
	const char *since;
	const char *before;
	const char *recipe;
#define CLI_INPUTS_MAX 32
	const char *inputs[CLI_INPUTS_MAX]; /* --input NAME=VALUE, in order */
	int ninputs;
	const char *base;
	const char *test;
	const char *timeout;
	const char *approval;
	const char *agents;
	const char *n;
	int keep;
	int yes;
	const char *namespace;
	int no_wait;           /* approve, push, group pick: return once recorded */
	int old;                   /* comment --old */
	int discard;               /* draft --discard */
	const char *role;          /* mcp --role */
};

/* The verb named name (NULL if none). */
const struct cli_verb *cli_verb_find(const char *name);

/* Parses the options of verb v that the space-separated long names of
 * allowed permit; the operands start at optind after it.  Returns -1 to
 * continue, else an exit status (help printed or bad usage). */
int cli_parse_opts(const struct cli_verb *v, int argc, char **argv, struct cli_opts *o,
                   const char *allowed);

/* After HOME changed (privileges dropped): libgit2 finds the new user's
 * global configuration, not the one of the HOME it started with. */
void cli_git_home_changed(void);

/* Prints v's usage and a hint on standard error; returns EXIT_USAGE. */
int cli_bad_usage(const struct cli_verb *v);

/* -1 when sub is one of the space-separated sub-verbs of v (subs); else
 * says so, with the one it is nearly, prints v's usage and returns
 * EXIT_USAGE. */
int cli_sub_usage(const struct cli_verb *v, const char *sub, const char *subs);

/* Prints "paddock: MESSAGE" on standard error; returns code. */
int cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the configuration (and the demo's, once there is one); -1 with
 * the problem printed when it cannot be used. */
int cli_load_config(struct config *c);

/* Reads the configuration for what a verb only adds from it; returns 1
 * when cfg holds it (free it then), 0 when not. */
int cli_config_soft(struct config *cfg);

/* Opens the store, made with create 1; NULL with the problem printed.
 * *data_out (when not NULL) gets the data directory, to free. */
struct store *cli_open_store(char **data_out, int create);

/* Reads standard input into b, stopping once b holds TASK_TEXT_MAX bytes
 * or more (callers refuse that much); -1 on a read error. */
int cli_read_stdin_text(struct buf *b);

/* Prints j as indented JSON (cli_json_flags) and drops the reference. */
void cli_json_print(json_t *j);
/* json_dumps flags of every JSON the CLI prints: indented, in the
 * documented order, and all ASCII on a terminal (a C1 control there as
 * \u0085, not the character). */
size_t cli_json_flags(void);

/* Untrusted text: sanitized on a terminal, as stored elsewhere. */
void cli_put_text(FILE *out, const char *s, size_t len);
void cli_put_str(FILE *out, const char *s);
/* cli_put_str for prose on a terminal: words wrap at its width, each
 * continuation line indented by indent columns; col is the column the
 * text starts at.  Elsewhere (a pipe) one line.  Returns the column it
 * ends at. */
int cli_put_wrapped(FILE *out, const char *s, int col, int indent);

/* Text a reviewer approves: every byte visible on a terminal (marks drawn
 * in reverse video), as stored elsewhere; flags as sanitize_visible's. */
void cli_put_visible(FILE *out, const char *s, size_t len, int flags);

/* Display columns of s in the locale's character set (a byte that is no
 * character counts one); cli_pad prints s to stdout, then spaces up to w
 * columns (right: the spaces first), for tables whose cells are words of
 * the language of messages. */
int cli_cols(const char *s);
void cli_pad(const char *s, int w, int right);

/* -1 when id may name a task, else the exit status of bad usage. */
int cli_id_usage(const char *id);

/* What a verb that acts on one task (ID operand) works with. */
struct cli_task_verb {
	struct cli_opts o;
	struct store *s;
	char *data;
	struct task_row t;
};

/* Parses the options and the ID, opens the store and loads the task.
 * Returns -1 to go on (then call cli_task_verb_end), else an exit
 * status. */
int cli_task_verb_begin(const char *name, int argc, char **argv, const char *allowed,
                        struct cli_task_verb *tv);
void cli_task_verb_end(struct cli_task_verb *tv);

/* The notes of --notes or --notes-file (given: check first) for gate
 * action verb ("pick", or a gate verb's name) on task id, checked as the
 * gate verbs check them; NULL with the problem printed and *code the exit
 * status (cmd_gate.c). */
char *cli_gate_notes(const char *verb, const struct cli_opts *o, const char *id, int *code);
/* A person's decision that pushes (action "approve", "push" or "pick" of
 * task, target the pick's group) recorded for the process that runs the
 * scheduler, and waited for (decide.h): progress on standard error, the
 * outcome on standard output; returns the exit status (0 done, 1 failed
 * or refused, 130 interrupted: the decision stays recorded).  -1 when it
 * is not recorded: no scheduler runs and this process holds the
 * credentials (or nothing is pushed), so the caller carries it out
 * itself, as before.  The CLI's own check (gate_may_decide) comes first,
 * the caller's. */
struct gate_ctx;
/* 1 when cli_decide would record action on task (a scheduler runs, or this
 * process lacks the credentials), 0 when it would leave it to the caller. */
int cli_decide_records(const struct gate_ctx *g, const char *action, const char *task);
int cli_decide(const struct gate_ctx *g, const char *action, const char *task,
               const char *target, const char *notes, int no_wait);

/* The same, with $EDITOR when neither option is given (request-changes,
 * follow-up). */
char *cli_gate_notes_edit(const char *verb, const struct cli_opts *o, const char *id, int *code);

/* --status of list: one status or a comma list into *mask; --since: a
 * duration back from now or a local date.  -1 with the message printed
 * (cmd_task.c). */
int cli_list_statuses(const char *arg, unsigned *mask);
int cli_list_since(const char *arg, double *since);

/* The text of line (old: of the old file) of path in a unified diff, as
 * paddock diff prints it; NULL when the diff does not show that line
 * (cmd_draft.c). */
char *cli_diff_line(const char *diff, size_t len, const char *path, long line, int old);
/* FILE:LINE of paddock comment into *path (new) and *line; -1 with the
 * message printed. */
int cli_comment_where(const char *arg, char **path, long *line);
/* Prints a review draft (the API's {"comments": [...]}) as paddock draft
 * does. */
void cli_draft_print(const char *id, json_t *comments);

/* ---- remote use (cmd_remote.c) ----
 * The server of paddock --server URL: flag, else PADDOCK_SERVER, else
 * [remote] server of the configuration; NULL when none (a new string). */
char *cli_remote_server(const char *flag);
/* Runs verb argv[0] against the API at server; the exit status. */
int cli_remote_main(const char *server, int argc, char **argv);
/* paddock --server URL with no verb: the dashboard of that server
 * (dash_main_remote) with the token as the verbs take it; the exit
 * status. */
int cli_remote_dashboard(const char *server);

/* The verbs: argv[0] is the verb's name. */
int cmd_add(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_shell(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_pr(int argc, char **argv);
int cmd_reject(int argc, char **argv);
int cmd_request_changes(int argc, char **argv);
int cmd_override(int argc, char **argv);
int cmd_follow_up(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
int cmd_github(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
struct client;
/* paddock --server URL mcp: the server on client c's API (cmd_remote.c's
 * table calls it with its client). */
int cli_mcp_remote(struct client *c, int argc, char **argv);
int cmd_confirm(int argc, char **argv);
int cmd_kubernetes(int argc, char **argv);
int cmd_comment(int argc, char **argv);
int cmd_draft(int argc, char **argv);

/* The dashboard, `paddock` with no arguments. */
int cmd_dashboard(void);

#endif
