/* The command line: the table of verbs, their options, and what the verb
 * files (cmd_*.c) share: loading the configuration, opening the store,
 * printing untrusted text and acting on one task. */
#include "autoconfig.h"
#include "cli.h"


#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>
#include "buf.h"
#include "config.h"
#include "dash.h"
#include "demo.h"
#include "gitlib.h"
#include "i18n.h"
#include "paths.h"
#include "sanitize.h"
#include "store.h"
#include "suggest.h"
#include "supervisor.h"
#include "taskjson.h"
#include "task.h"

struct cli_verb {
	    const char *name;
	    int (*run)(int argc, char **argv);
	    const char *usage;     /* synopsis after "paddock " */
	    const char *help;      /* what it does and its options */
};

/* ---------------------------------------------------------------- table */

static const struct cli_verb verbs[] = {
	{ "add", cmd_add, N_("add [--repo NAME] [--agent NAME | --agents A,B,... | --n N] "
	                     "[--recipe NAME [--input NAME=VALUE]...] [--base REF] [--test CMD] "
	                     "[--timeout DURATION] [--budget USD] [--approval MODE] [--dry-run] "
	                     "[--json] [TEXT | --file FILE]"),
	  N_("Queues a task and prints its id.  TEXT is what the agent should do (under\n"
	     "128 KiB); --file reads it from FILE ('-' for standard input).  With a recipe,\n"
	     "TEXT is optional and is added to the recipe's prompt.\n"
	     "  -r, --repo NAME    the repo, from the configuration (needed when there are several)\n"
	     "  -a, --agent NAME   the agent (default: the agent named 'default', else the first)\n"
	     "  --agents A,B,...   best of N: one task per agent, as a group; prints the group's\n"
	     "                     id, then each task's\n"
	     "  --n N              best of N: N tasks of the one agent, as a group\n"
	     "  --recipe NAME      a kind of task ('paddock recipe list'), with its prompt,\n"
	     "                     defaults and output contract\n"
	     "  --input NAME=VALUE an input of the recipe (each one it names, once)\n"
	     "  --base REF         start from a branch, tag, commit, ref or pull request number\n"
	     "                     (default: the repo's branch)\n"
	     "  --test CMD         the test command, in place of the repo's\n"
	     "  --timeout DURATION the time limit of each round (30m, 2h)\n"
	     "  --budget USD       what the task may spend on model calls (5, 2.50, $2.50; 0: no\n"
	     "                     limit); default: limits.budget of the configuration\n"
	     "  --approval MODE    review, auto-push, auto or never: narrower than the repo's\n"
	     "  --dry-run          test mode: everything runs, but approve pushes nothing\n"
	     "  -j, --json         print {\"id\": ...} as JSON\n") },
	{ "list", cmd_list, N_("list [--status STATUS[,...]] [--limit N] [--since WHEN] [--before ID] [--json]"),
	  N_("Lists tasks, oldest first.\n"
	     "  --status STATUS    only tasks with this status (several: a comma list)\n"
	     "  --limit N          only the N newest of them (default 100; 0: all)\n"
	     "  --since WHEN       only those queued since WHEN: a duration (2h, 7d)\n"
	     "                     or a date (2026-11-30, 2026-11-30T14:00)\n"
	     "  --before ID        only those queued before task ID (a page further back)\n"
	     "  -j, --json         print a JSON array\n") },
	{ "show", cmd_show, N_("show [--json] ID"),
	  N_("Shows a task: status, steps with seconds since it was queued, branch, base and\n"
	     "head commits, the error of a failed task and why it failed, its budget, model\n"
	     "usage and cost, the agent's session, pauses of its model endpoint, the gate and\n"
	     "every request through its gateway.  ID may be a unique prefix.\n"
	     "  -j, --json         print a JSON object (id, status, steps, branch, error, ...)\n") },
	{ "log", cmd_log, N_("log [--follow] ID"),
	  N_("Prints a task's sandbox output (agent, tests, hand-off).  On a terminal,\n"
	     "colours are kept, other escape sequences are removed and control characters\n"
	     "show as ^X.\n"
	     "  -f, --follow       keep printing as the task runs, until it stops\n") },
	{ "diff", cmd_diff, N_("diff [--round N | --since-review | --failed] ID"),
	  N_("Prints the task's change (base..head) from paddock's mirror.\n"
	     "  --round N          only what round N changed\n"
	     "  --since-review     only what changed since changes were last requested\n"
	     "  --failed           what the round that did not reach review did\n") },
	{ "approve", cmd_approve, N_("approve [--notes TEXT] [--no-wait] ID"),
	  N_("Pushes the task's branch with paddock's credentials, opens the pull request\n"
	     "when the repo has one configured, tears the sandbox down; the task is done.\n"
	     "Refused while a policy finding blocks it (see 'paddock override').  While\n"
	     "serve or a dashboard runs the scheduler (or without the credentials here),\n"
	     "the decision is recorded and that process carries it out; approve waits.\n"
	     "  -m, --notes TEXT   a note recorded with the decision\n"
	     "  --notes-file FILE  the note from FILE ('-' for standard input)\n"
	     "  --no-wait          return once the decision is recorded\n") },
	{ "push", cmd_push, N_("push [--no-wait] ID"),
	  N_("Pushes the task's branch now; the task stays at review.  Carried out by the\n"
	     "scheduler's process as approve is.\n"
	     "  --no-wait          return once the decision is recorded\n") },
	{ "pr", cmd_pr, N_("pr [--json] ID"),
	  N_("Opens the pull request of an approved task whose pull request failed to open\n"
	     "(paddock show says why), now; serve and the dashboard also try it again by\n"
	     "themselves, after 1 minute, then 2, 4, ... at most 1 hour apart.\n"
	     "  -j, --json         print the task as JSON\n") },
	{ "reject", cmd_reject, N_("reject [--notes TEXT] ID"),
	  N_("Ends the task without pushing; its branch stays in paddock's mirror.\n"
	     "  -m, --notes TEXT   why, recorded with the decision\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n") },
	{ "request-changes", cmd_request_changes,
	  N_("request-changes [--notes TEXT | --notes-file FILE | --again] ID"),
	  N_("Sends the task back to its agent with notes: the agent continues in the same\n"
	     "sandbox (round N+1), then tests, hand-off and the gate again.  Without --notes\n"
	     "or --notes-file, $VISUAL or $EDITOR opens for the notes.\n"
	     "  -m, --notes TEXT   the notes\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n"
	     "  --again            the last notes again (after a round that did not reach\n"
	     "                     review)\n") },
	{ "override", cmd_override, N_("override [--notes TEXT] ID FINDING"),
	  N_("Overrides a blocking policy finding of the task's current round by its name\n"
	     "(as 'paddock show' lists it, e.g. secrets:config/key.pem); recorded.\n"
	     "  -m, --notes TEXT   why it is fine, recorded with the decision\n") },
	{ "comment", cmd_comment, N_("comment [--old] ID FILE:LINE TEXT"),
	  N_("Adds a comment on one line of a task's change to its review draft (the\n"
	     "dashboard's line comments): FILE:LINE is the line's number in the new file, or\n"
	     "with --old in the old one (a removed line).  The draft goes to the agent with\n"
	     "the next 'paddock request-changes'.\n"
	     "  --old              LINE is a line of the old file\n") },
	{ "draft", cmd_draft, N_("draft [--json | --discard] ID"),
	  N_("Lists the comments of a task's review draft, or discards them (--discard).\n"
	     "  -j, --json         print them as JSON\n"
	     "  --discard          discard the draft's comments\n") },
	{ "follow-up", cmd_follow_up,
	  N_("follow-up [--notes TEXT | --notes-file FILE] [--json] ID"),
	  N_("Queues a new task that follows up a finished one (done, failed, rejected):\n"
	     "the agent continues the task's conversation on its branch, with the notes as\n"
	     "its prompt.  Prints the new task's id.  Without --notes or --notes-file,\n"
	     "$VISUAL or $EDITOR opens for the notes.\n"
	     "  -m, --notes TEXT   the notes\n"
	     "  --notes-file FILE  the notes from FILE ('-' for standard input)\n"
	     "  --json             print the new task as JSON\n") },
	{ "shell", cmd_shell, N_("shell [--keep [--yes]] ID [-- COMMAND [ARG...]]"),
	  N_("Opens a shell in the sandbox a task keeps at review (or runs COMMAND there):\n"
	     "as the sandbox's user, with the task's limits and network (its gateway), in\n"
	     "/work at the task's head, on a terminal of its own when paddock is on one.\n"
	     "The session is recorded in the task's log.  Afterwards the workspace is put\n"
	     "back at the head: what the shell changed is not the agent's work.  Exits with\n"
	     "the status of the shell or COMMAND (128 + N for signal N, 124 when it ran out\n"
	     "of time).\n"
	     "  --keep             commit what the shell changed as a reviewer's round (the\n"
	     "                     task stays at review, at the new head), after showing its\n"
	     "                     files and stat and asking y/N on the terminal\n"
	     "  --yes              with --keep: record the round without asking (needed\n"
	     "                     when standard input is no terminal)\n") },
	{ "cancel", cmd_cancel, N_("cancel ID"),
	  N_("Cancels a queued task at once, or asks the scheduler to stop a running one.\n") },
	{ "confirm", cmd_confirm, N_("confirm [--json] ID"),
	  N_("Confirms the estimated cost of a task that waits in queued for it (its repo's\n"
	     "or recipe's confirm-over): the scheduler then runs it.  The confirmation is\n"
	     "recorded as a decision.\n"
	     "  -j, --json         print the task as JSON\n") },
	{ "group", cmd_group, N_("group [--json] show GROUP | group [--notes TEXT] [--no-wait] pick GROUP ID"),
	  N_("A best-of-N group (paddock add --agents or --n): show prints its members side\n"
	     "by side (status, verified tests, change, cost, time, findings, the pick);\n"
	     "pick approves member ID as 'paddock approve' does, records the pick, and ends\n"
	     "the other members: those at review are rejected, the others cancelled.\n"
	     "  -j, --json         print the group as JSON (show)\n"
	     "  -m, --notes TEXT   a note recorded with the approval (pick)\n"
	     "  --notes-file FILE  the note from FILE ('-' for standard input)\n"
	     "  --no-wait          return once the pick is recorded for the scheduler\n") },
	{ "serve", cmd_serve, N_("serve [--until-idle] [--listen ADDR:PORT]"),
	  N_("Runs the scheduler without the dashboard until interrupted.\n"
	     "  --until-idle       return when nothing is queued or running\n"
	     "  --listen ADDR:PORT also answer the HTTP API there (default: api.listen of the\n"
	     "                     configuration, else none); see paddock-api(7)\n"
	     "  --routes           print the API's routes and exit\n") },
	{ "demo", cmd_demo, N_("demo"),
	  N_("Makes a demo repo with a failing test and two scripted agents, queues a task\n"
	     "for each and runs them: one reaches review with a fix, one fails at testing.\n") },
	{ "agent", cmd_agent, N_("agent [--json] (list | install NAME)"),
	  N_("Lists the agents of the configuration (the ready-made claude, codex, pi and\n"
	     "opencode among them) with what is installed, or installs an agent's pinned\n"
	     "npm package into paddock's data directory, where sandboxes see it read-only.\n"
	     "Install scripts of the package are not run.\n"
	     "  -j, --json         print a JSON array (list)\n") },
	{ "recipe", cmd_recipe, N_("recipe [--json] (list | show NAME)"),
	  N_("Lists the recipes (kinds of task: the ready-made fix-bug, verify-pr and\n"
	     "upgrade-dependency, and the configuration's [recipe] sections) with their\n"
	     "inputs, or shows one: its inputs, defaults, output contract and prompt.  Use\n"
	     "one with: paddock add --recipe NAME --input NAME=VALUE.\n"
	     "  -j, --json         print them as JSON\n") },
	{ "github", cmd_github, N_("github [--json] (sync [--repo NAME] | events [--limit N])"),
	  N_("GitHub as a front door (see GITHUB in paddock(1)).  sync reads once what serve\n"
	     "reads every github.poll: the open issues that match a repo's github-issues\n"
	     "(each becomes a task, once), and the pull requests of paddock's tasks (their\n"
	     "state, checks, reviews and comments: a request for changes by one of\n"
	     "github-reviewers becomes the task's next round); it prints what it did.\n"
	     "events lists what GitHub sent or a sync found, newest first, with what paddock\n"
	     "did with it (task, round, state, ignored, refused, duplicate, waiting, error).\n"
	     "  --repo NAME        sync only repo NAME\n"
	     "  --limit N          the N newest events (default 50; 0: all)\n"
	     "  -j, --json         print a JSON object (sync) or array (events)\n") },
	{ "audit", cmd_audit, N_("audit [--json] [--limit N] [--before SEQ]"),
	  N_("Lists the decisions (approve, request-changes, push, reject, override, pick,\n"
	     "confirm, cancel) and refusals of every task and the changes of the tokens'\n"
	     "roles serve found when it started or read its configuration again (SIGHUP),\n"
	     "newest first: the audit trail GET /events streams.  A task's own are in its\n"
	     "history (paddock show).\n"
	     "  --limit N          the N newest (default 50; 0: all)\n"
	     "  --before SEQ       only those recorded before event SEQ (a page further back;\n"
	     "                     --json shows each event's seq)\n"
	     "  -j, --json         print a JSON array\n") },
	{ "mcp", cmd_mcp, N_("mcp [--role ROLE]"),
	  N_("Serves the Model Context Protocol on standard input and output, for agents\n"
	     "and IDEs (claude mcp add paddock -- paddock mcp): tools to queue tasks, list\n"
	     "and show them, read a task's diff, log and gate summary, request changes and\n"
	     "approve, each as the role allows (see MCP in paddock(1)).  With --server, the\n"
	     "API's token decides the role.\n"
	     "  --role ROLE        read, submit, review or admin (default: mcp.role, else\n"
	     "                     submit; with --server it may only narrow the token's)\n") },
	{ "template", cmd_template, N_("template [--json] (list | prune [--older-than AGE] [--dry-run])"),
	  N_("Lists the templates (one read-only checkout per repo, base commit and set-up,\n"
	     "the lower layer of every task's workspace) with their size, last use and\n"
	     "whether a process holds them, or removes those no process holds.\n"
	     "  --older-than AGE   prune only templates last used longer ago than AGE\n"
	     "                     (e.g. 7d; default: paddock.template-max-age, else 0)\n"
	     "  --dry-run          print what prune would remove, remove nothing\n"
	     "  -j, --json         print a JSON array\n") },
	{ "kubernetes", cmd_kubernetes, N_("kubernetes manifest [--json] [--namespace NS]"),
	  N_("Prints what an admin applies once to prepare the namespace paddock's pods run\n"
	     "in (see KUBERNETES in paddock(1)): the namespace, the service account, the\n"
	     "quota, the limit range, the NetworkPolicy that denies everything and the one\n"
	     "that lets pods reach only the front door, from the configuration's\n"
	     "[kubernetes] and [limits].  Apply it with:\n"
	     "  paddock kubernetes manifest | kubectl apply -f -\n"
	     "  --namespace NS     the namespace (default: kubernetes.namespace, else the\n"
	     "                     kubeconfig context's)\n"
	     "  -j, --json         print one JSON List instead of YAML documents\n") },
	{ "doctor", cmd_doctor, N_("doctor [--json]"),
	  N_("Checks whether paddock can run tasks here, one line per check with what to do\n"
	     "when it fails: the mode (root or user), bubblewrap, user namespaces, mounts and\n"
	     "overlay, the network, cgroups, seccomp, git, the data directory, the\n"
	     "configuration, each repo, agent and endpoint, the API's address.\n"
	     "Exits 0 when tasks can run, 1 otherwise.\n"
	     "  --json             print the checks as JSON\n") },
	{ "config", cmd_config, N_("config check [FILE]"),
	  N_("Checks the configuration file (default: $PADDOCK_CONFIG, else\n"
	     "$XDG_CONFIG_HOME/paddock/config) and prints every problem as FILE:LINE: message.\n"
	     "Exits 1 when there is a problem.\n") },
};

const struct cli_verb *cli_verb_find(const char *name)
{
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
}

/* An error may quote what a sandbox made (a file name, a branch): it
 * reaches the terminal through the sanitizer, its newlines and tabs kept. */
int cli_die(int code, const char *fmt, ...)
{
	va_list ap;
	struct buf msg = {0}, out = {0};
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	sanitize_visible(msg.data ? msg.data : "", msg.len,
	                 SANITIZE_KEEP_TAB | SANITIZE_KEEP_NEWLINE, &out, NULL);
	fprintf(stderr, "paddock: %s\n", out.data ? out.data : "");
	buf_free(&msg);
	buf_free(&out);
	return code;
}

static int verb_help(const struct cli_verb *v, FILE *out)
{
	fprintf(out, _("usage: paddock %s\n\n%s"), _(v->usage), _(v->help));
	return 0;
}

int cli_bad_usage(const struct cli_verb *v)
{
	fprintf(stderr, _("usage: paddock %s\nTry 'paddock %s --help'.\n"), _(v->usage), v->name);
	return EXIT_USAGE;
}

static void usage(FILE *out)
{
	fprintf(out, _("usage: paddock [--version] [--help] VERB [ARGS]\n\n"
	               "paddock runs coding agents on tasks against git repositories, each in a\n"
	               "sandbox that holds no credential.\n\nVerbs:\n"));
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		fprintf(out, "  paddock %s\n", _(verbs[i].usage));
	fprintf(out, _("\n'paddock VERB --help' describes a verb; man paddock has the details.\n"));
	fprintf(out, _("With --server URL before the verb (or PADDOCK_SERVER), the verb talks to the\n"
	               "API of a paddock serve elsewhere (man paddock, REMOTE USE).\n"));
}

static int word_in(const char *list, const char *word);

/* A word where a verb goes: the verb it is nearly, as git suggests one
 * (then the list of verbs would bury the hint), else the list. */
static int unknown_verb(const char *word)
{
	struct suggest sg;
	suggest_init(&sg, word);
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		suggest_add(&sg, verbs[i].name);
	suggest_add(&sg, "help");
	/* What was typed is echoed as text: an escape sequence in it shows
	 * as a mark, never reaches the terminal. */
	char *shown = sanitize_quote_str(word);
	if (suggest_best(&sg)) {
		fprintf(stderr, _("paddock: '%s' is not a verb; did you mean '%s'?\n"
		                  "Try 'paddock --help'.\n"), shown, suggest_best(&sg));
		free(shown);
		return EXIT_USAGE;
	}
	fprintf(stderr, _("paddock: '%s' is not a verb.\n"), shown);
	free(shown);
	usage(stderr);
	return EXIT_USAGE;
}

int cli_sub_usage(const struct cli_verb *v, const char *sub, const char *subs)
{
	if (*sub && word_in(subs, sub))
		return -1;
	struct suggest sg;
	suggest_init(&sg, sub);
	char *list = xstrdup(subs);
	char *save = NULL;
	for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save))
		suggest_add(&sg, w);
	char *shown = sanitize_quote_str(sub);
	if (suggest_best(&sg))
		fprintf(stderr, _("paddock %s: '%s' is not a sub-verb of %s; did you mean '%s'?\n"),
		        v->name, shown, v->name, suggest_best(&sg));
	else
		fprintf(stderr, _("paddock %s: '%s' is not a sub-verb of %s\n"), v->name, shown,
		        v->name);
	free(shown);
	free(list);
	return cli_bad_usage(v);
}

/* ---------------------------------------------------------------- options */

enum { OPT_HELP = 'h', OPT_JSON = 'j', OPT_FOLLOW = 'f', OPT_REPO = 'r', OPT_AGENT = 'a',
       OPT_NOTES = 'm', OPT_UNTIL_IDLE = 1000, OPT_STATUS, OPT_FILE, OPT_NOTES_FILE,
       OPT_ROUND, OPT_SINCE_REVIEW, OPT_BUDGET, OPT_LISTEN, OPT_ROUTES, OPT_OLDER_THAN,
       OPT_DRY_RUN, OPT_FAILED, OPT_AGAIN, OPT_LIMIT, OPT_SINCE, OPT_BEFORE,
       OPT_RECIPE, OPT_INPUT, OPT_BASE, OPT_TEST, OPT_TIMEOUT, OPT_APPROVAL, OPT_AGENTS,
       OPT_N, OPT_KEEP, OPT_YES, OPT_NAMESPACE, OPT_NO_WAIT, OPT_OLD, OPT_DISCARD,
       OPT_ROLE };

/* 1 if word is one of the space-separated words of list. */
static int word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

/* An unknown long option: the one of the verb's options (allowed) it is
 * nearly, as git suggests one. */
static void unknown_option(const struct cli_verb *v, const char *arg, const char *allowed)
{
	const char *name = arg;
	name += strspn(name, "-");
	char *word = xstrndup(name, strcspn(name, "="));
	char *list = xstrdup(allowed);
	char *save = NULL;
	struct suggest sg;
	suggest_init(&sg, word);
	for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save))
		suggest_add(&sg, w);
	char *shown = sanitize_quote_str(arg);
	if (!strncmp(arg, "--", 2) && suggest_best(&sg))
		fprintf(stderr, _("paddock %s: unknown option '%s'; did you mean '--%s'?\n"),
		        v->name, shown, suggest_best(&sg));
	else
		fprintf(stderr, _("paddock %s: unknown option '%s'\n"), v->name, shown);
	free(shown);
	free(list);
	free(word);
}

int cli_parse_opts(const struct cli_verb *v, int argc, char **argv, struct cli_opts *o,
                   const char *allowed)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "until-idle", no_argument, NULL, OPT_UNTIL_IDLE },
		{ "status", required_argument, NULL, OPT_STATUS },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "notes", required_argument, NULL, OPT_NOTES },
		{ "notes-file", required_argument, NULL, OPT_NOTES_FILE },
		{ "round", required_argument, NULL, OPT_ROUND },
		{ "since-review", no_argument, NULL, OPT_SINCE_REVIEW },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "routes", no_argument, NULL, OPT_ROUTES },
		{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "failed", no_argument, NULL, OPT_FAILED },
		{ "again", no_argument, NULL, OPT_AGAIN },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "before", required_argument, NULL, OPT_BEFORE },
		{ "recipe", required_argument, NULL, OPT_RECIPE },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "test", required_argument, NULL, OPT_TEST },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "approval", required_argument, NULL, OPT_APPROVAL },
		{ "agents", required_argument, NULL, OPT_AGENTS },
		{ "n", required_argument, NULL, OPT_N },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "yes", no_argument, NULL, OPT_YES },
		{ "namespace", required_argument, NULL, OPT_NAMESPACE },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		{ "old", no_argument, NULL, OPT_OLD },
		{ "discard", no_argument, NULL, OPT_DISCARD },
		{ "role", required_argument, NULL, OPT_ROLE },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof *o);
	/* GNU getopt permutes: options may come after operands, as in git;
	 * "--" ends them.  optind 0 makes it start over for each verb. */
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hjfr:a:m:", longopts, NULL)) != -1) {
		const char *name = NULL;
		for (const struct option *lo = longopts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		if (c == OPT_HELP) {
			verb_help(v, stdout);
			return 0;
		}
		if (c == '?' || c == ':' || !name || !word_in(allowed, name)) {
			if (c == '?' && optopt == 0)
				unknown_option(v, argv[optind - 1], allowed);
			else if (c == '?' || c == ':')
				fprintf(stderr, _("paddock %s: bad option '%s'\n"), v->name,
				        argv[optind - 1]);
			else
				fprintf(stderr, _("paddock %s: option --%s does not apply here\n"),
				        v->name, name);
			return cli_bad_usage(v);
		}
		switch (c) {
		case OPT_JSON: o->json = 1; break;
		case OPT_FOLLOW: o->follow = 1; break;
		case OPT_REPO: o->repo = optarg; break;
		case OPT_AGENT: o->agent = optarg; break;
		case OPT_UNTIL_IDLE: o->until_idle = 1; break;
		case OPT_STATUS: o->status = optarg; break;
		case OPT_FILE: o->file = optarg; break;
		case OPT_NOTES: o->notes = optarg; break;
		case OPT_NOTES_FILE: o->notes_file = optarg; break;
		case OPT_ROUND: o->round = optarg; break;
		case OPT_SINCE_REVIEW: o->since_review = 1; break;
		case OPT_BUDGET: o->budget = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_ROUTES: o->routes = 1; break;
		case OPT_OLDER_THAN: o->older_than = optarg; break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case OPT_FAILED: o->failed = 1; break;
		case OPT_AGAIN: o->again = 1; break;
		case OPT_LIMIT: o->limit = optarg; break;
		case OPT_SINCE: o->since = optarg; break;
		case OPT_BEFORE: o->before = optarg; break;
		case OPT_RECIPE: o->recipe = optarg; break;
		case OPT_INPUT:
			if (o->ninputs == CLI_INPUTS_MAX) {
				fprintf(stderr, _("paddock %s: at most %d --input options\n"), v->name,
				        CLI_INPUTS_MAX);
				return cli_bad_usage(v);
			}
			o->inputs[o->ninputs++] = optarg;
			break;
		case OPT_BASE: o->base = optarg; break;
		case OPT_TEST: o->test = optarg; break;
		case OPT_TIMEOUT: o->timeout = optarg; break;
		case OPT_APPROVAL: o->approval = optarg; break;
		case OPT_AGENTS: o->agents = optarg; break;
		case OPT_N: o->n = optarg; break;
		case OPT_KEEP: o->keep = 1; break;
		case OPT_YES: o->yes = 1; break;
		case OPT_NAMESPACE: o->namespace = optarg; break;
		case OPT_NO_WAIT: o->no_wait = 1; break;
		case OPT_OLD: o->old = 1; break;
		case OPT_DISCARD: o->discard = 1; break;
		case OPT_ROLE: o->role = optarg; break;
		}
	}
	return -1;
}

/* ---------------------------------------------------------------- shared helpers */

void cli_git_home_changed(void)
{
	/* libgit2, when initialized, found the global and XDG configuration
	 * from the HOME of then (root's, which the new user may not even
	 * stat): it looks again. */
	gitlib_home_changed();
}

int cli_load_config(struct config *c)
{
	struct err e = {{0}};
	if (config_load(c, NULL, &e) < 0) {
		config_free(c);
		cli_die(EXIT_USAGE, _("%s\n  (fix the configuration; 'paddock config check' lists every "
		                      "problem)"), e.msg);
		return -1;
	}
	/* Tasks of an earlier `paddock demo` stay workable. */
	char *data = paths_data_dir();
	demo_config_add(data, c);
	free(data);
	return 0;
}

/* Opens the store; with create 0 (verbs that read, or act on a task that
 * must exist) a data directory without one is an error and nothing is
 * made, so that a mistyped PADDOCK_HOME leaves no new store behind. */
struct store *cli_open_store(char **data_out, int create)
{
	struct err e = {{0}};
	char *data = create ? paths_data_dir_ensure(&e) : paths_data_dir();
	if (!data) {
		cli_die(1, "%s", e.msg);
		return NULL;
	}
	char *db = paths_db(data);
	struct store *s = NULL;
	struct stat st;
	if (!create && paths_data_dir_check(data, &e) < 0)
		cli_die(1, "%s", e.msg);
	else if (!create && stat(db, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		cli_die(1, _("no paddock data in %s; check PADDOCK_HOME (it names the data "
		             "directory), or queue a first task with 'paddock add'"), data);
	else if (store_open(&s, db, &e) < 0)
		cli_die(1, "%s", e.msg);
	free(db);
	if (data_out && s)
		*data_out = data;
	else
		free(data);
	return s;
}

size_t cli_json_flags(void)
{
	/* JSON escapes C0 controls, not C1 ones (U+0080..U+009F), which
	 * some terminals act on: on a terminal it is all ASCII. */
	return JSON_INDENT(2) | TASKJSON_DUMP | (isatty(1) ? JSON_ENSURE_ASCII : 0);
}

void cli_json_print(json_t *j)
{
	char *s = json_dumps(j, cli_json_flags());
	if (s) {
		puts(s);
		free(s);
	}
	json_decref(j);
}

/* Reads the configuration for what show and list add from it (the
 * budget, the agents' endpoints); a broken one is not worth failing
 * them for.  Returns 1 when cfg holds it (free it then), 0 when not. */
int cli_config_soft(struct config *cfg)
{
	struct err e = {{0}};
	if (config_load(cfg, NULL, &e) < 0) {
		config_free(cfg);
		return 0;
	}
	char *data = paths_data_dir();
	demo_config_add(data, cfg);
	free(data);
	return 1;
}

/* Untrusted text (task text, errors with test output) on a terminal goes
 * through sanitize first; pipes get the bytes as stored. */
void cli_put_text(FILE *out, const char *s, size_t len)
{
	if (isatty(fileno(out))) {
		struct buf b = {0};
		sanitize_text(s, len, 0, &b);
		fwrite(b.data ? b.data : "", 1, b.len, out);
		buf_free(&b);
	} else {
		fwrite(s, 1, len, out);
	}
}

void cli_put_str(FILE *out, const char *s)
{
	cli_put_text(out, s, strlen(s));
}

int cli_put_wrapped(FILE *out, const char *s, int col, int indent)
{
	struct winsize ws;
	int width = isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 &&
	            ws.ws_col > indent + 20 ? ws.ws_col : 0;
	if (!width) {
		cli_put_str(out, s);
		return col + (int)strlen(s);
	}
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, " ");
		char *word = xstrndup(p, n);
		/* Display width of the word; bytes that are not text count one. */
		int w = 0;
		mbstate_t st;
		memset(&st, 0, sizeof st);
		for (const char *q = word; *q;) {
			wchar_t wc;
			size_t k = mbrtowc(&wc, q, strlen(q), &st);
			if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
				memset(&st, 0, sizeof st);
				k = 1;
				w++;
			} else {
				int cw = wcwidth(wc);
				w += cw > 0 ? cw : 1;
			}
			q += k;
		}
		if (col > indent && col + 1 + w > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (p != s) {
			fputc(' ', out);
			col++;
		}
		cli_put_str(out, word);
		col += w;
		free(word);
		p += n;
		while (*p == ' ')
			p++;
	}
	return col;
}

/* Text a reviewer approves (a diff, the agent's summary, changed paths,
 * findings) on a terminal: every byte visible, escape sequences, controls,
 * bidi and invisible characters as marks (sanitize_visible), drawn in
 * reverse video (an attribute, not a colour: NO_COLOR keeps it) unless the
 * terminal takes no attributes (TERM=dumb or unset).  Pipes get the bytes
 * as stored: a diff stays a patch. */
void cli_put_visible(FILE *out, const char *s, size_t len, int flags)
{
	if (!isatty(fileno(out))) {
		fwrite(s, 1, len, out);
		return;
	}
	const char *term = getenv("TERM");
	int attrs = term && *term && strcmp(term, "dumb") != 0;
	struct buf b = {0};
	if (attrs)
		sanitize_visible_marked(s, len, flags, &b);
	else
		sanitize_visible(s, len, flags, &b, NULL);
	fwrite(b.data, 1, b.len, out);
	buf_free(&b);
}

int cli_read_stdin_text(struct buf *b)
{
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0) {
		buf_add(b, tmp, n);
		if (b->len >= TASK_TEXT_MAX)
			break;
	}
	return ferror(stdin) ? -1 : 0;
}

/* Display columns of s (a byte that is no character counts one). */
int cli_cols(const char *s)
{
	int w = 0;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	for (const char *p = s; *p;) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, p, strlen(p), &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&st, 0, sizeof st);
			k = 1;
			wc = L'?';
		}
		int cw = wcwidth(wc);
		w += cw > 0 ? cw : 0;
		p += k;
	}
	return w;
}

/* s, then spaces up to w columns (right: the spaces first). */
void cli_pad(const char *s, int w, int right)
{
	int n = w - cli_cols(s);
	if (right)
		printf("%*s", n > 0 ? n : 0, "");
	fputs(s, stdout);
	if (!right)
		printf("%*s", n > 0 ? n : 0, "");
}

/* -1 for an id that may name a task, else the exit status of bad usage:
 * a malformed id is that whether or not there is a store. */
int cli_id_usage(const char *id)
{
	if (task_id_valid(id, 1))
		return -1;
	return cli_die(EXIT_USAGE, _("'%s' is not a task id (ids look like %s); 'paddock list' "
	                             "shows them"), id, "k3x9m2qa7d");
}

/* Parses the options and the ID, opens the store and loads the task.
 * Returns -1 to go on (then call cli_task_verb_end), else an exit status. */
int cli_task_verb_begin(const char *name, int argc, char **argv, const char *allowed,
                        struct cli_task_verb *tv)
{
	const struct cli_verb *v = cli_verb_find(name);
	memset(tv, 0, sizeof *tv);
	int rc = cli_parse_opts(v, argc, argv, &tv->o, allowed);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1)
		return cli_bad_usage(v);
	if ((rc = cli_id_usage(argv[optind])) >= 0)
		return rc;
	tv->s = cli_open_store(&tv->data, 0);
	if (!tv->s)
		return 1;
	struct err e = {{0}};
	if (store_task_get(tv->s, argv[optind], &tv->t, &e) < 0) {
		store_close(tv->s);
		free(tv->data);
		return cli_die(e.kind == ERR_INVALID ? EXIT_USAGE : 1, "%s", e.msg);
	}
	return -1;
}

void cli_task_verb_end(struct cli_task_verb *tv)
{
	task_row_free(&tv->t);
	store_close(tv->s);
	free(tv->data);
}

/* ---------------------------------------------------------------- main */

/* Root on a data directory that is another user's (the one serve handed
 * to paddock.user): the verb runs as that user, so that nothing it writes
 * (the store's journal, a mirror's objects, a task's notes) becomes
 * root's and locks serve out.  serve (which drops root itself), doctor
 * (which reports on root) and template (whose prune removes what the
 * sandbox uid owns) keep root. */
static int become_data_owner(const char *verb)
{
	if (geteuid() != 0 || (verb && (!strcmp(verb, "serve") || !strcmp(verb, "doctor") ||
	                                !strcmp(verb, "template"))))
		return 0;
	char *data = paths_data_dir();
	struct stat st;
	if (!data || stat(data, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid == 0) {
		free(data);
		return 0;
	}
	struct passwd *pw = getpwuid(st.st_uid);
	gid_t gid = pw ? pw->pw_gid : st.st_gid;
	/* The configuration root would have read, whatever HOME says next. */
	char *conf = config_default_path();
	int rc = 0;
	if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 ||
	    setresgid(gid, gid, gid) < 0 || setresuid(st.st_uid, st.st_uid, st.st_uid) < 0)
		rc = cli_die(1, _("cannot become uid %lu, who owns the data directory %s: %s"),
		             (unsigned long)st.st_uid, data, strerror(errno));
	else {
		/* The same data directory whatever HOME now says; root's home
		 * is not the user's to read. */
		setenv("PADDOCK_HOME", data, 1);
		if (conf)
			setenv("PADDOCK_CONFIG", conf, 1);
		if (pw)
			setenv("HOME", pw->pw_dir, 1);
		cli_git_home_changed();
	}
	free(conf);
	free(data);
	return rc;
}

static int cli_main_local(int argc, char **argv)
{
	/* The scheduler's own (supervisor.h) and the dashboard's (dash.h):
	 * they run as whoever started them, with what they were given, and
	 * are no verbs of paddock(1)'s list. */
	if (argc >= 2 && !strcmp(argv[1], "supervise"))
		return supervisor_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "dashboard-job"))
		return dash_job_main(argc - 1, argv + 1);
	if (become_data_owner(argc < 2 ? NULL : argv[1]) != 0)
		return 1;
	if (argc < 2)
		return cmd_dashboard();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && cli_verb_find(argv[2]))
			return verb_help(cli_verb_find(argv[2]), stdout);
		if (argc > 2)
			return unknown_verb(argv[2]);
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("paddock %s\n", PACKAGE_VERSION);
		return 0;
	}
	const struct cli_verb *v = cli_verb_find(argv[1]);
	if (!v)
		return unknown_verb(argv[1]);
	return v->run(argc - 1, argv + 1);
}

/* paddock [--server URL] ...: a server (--server, PADDOCK_SERVER, [remote]
 * server) makes every verb a client of its API (cmd_remote.c), and then
 * nothing here touches a data directory: not even become_data_owner. */
int cli_main(int argc, char **argv)
{
	const char *flag = NULL;
	if (argc >= 2 && !strcmp(argv[1], "--server")) {
		if (argc < 3 || !*argv[2])
			return cli_die(EXIT_USAGE, _("--server needs a URL, such as "
			                             "https://paddock.example.com/"));
		flag = argv[2];
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	} else if (argc >= 2 && !strncmp(argv[1], "--server=", 9)) {
		flag = argv[1] + 9;
		argv[1] = argv[0];
		argv += 1;
		argc -= 1;
		if (!*flag)
			return cli_die(EXIT_USAGE, _("--server needs a URL, such as "
			                             "https://paddock.example.com/"));
	}
	/* The scheduler's own programs and help never go remote. */
	int local_only = argc >= 2 && (!strcmp(argv[1], "supervise") ||
	                               !strcmp(argv[1], "dashboard-job") ||
	                               !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	                               !strcmp(argv[1], "help") || !strcmp(argv[1], "--version"));
	char *server = local_only && !flag ? NULL : cli_remote_server(flag);
	if (!server)
		return cli_main_local(argc, argv);
	int rc;
	if (argc < 2)
		rc = cli_remote_dashboard(server);
	else if (local_only)
		rc = cli_main_local(argc, argv);
	else if (!cli_verb_find(argv[1]))
		rc = unknown_verb(argv[1]);
	else
		rc = cli_remote_main(server, argc - 1, argv + 1);
	free(server);
	return rc;
}
