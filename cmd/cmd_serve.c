/* The verbs that run the scheduler: serve, demo, and the dashboard
 * (`paddock` with no arguments). */
#include "autoconfig.h"
#include "cli.h"

#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "api.h"
#include "child.h"
#include "config.h"
#include "dash.h"
#include "demo.h"
#include "fsx.h"
#include "ghsync.h"
#include "i18n.h"
#include "logger.h"
#include "paths.h"
#include "privsep.h"
#include "sandbox.h"
#include "scheduler.h"
#include "store.h"
#include "submit.h"
#include "task.h"

/* ---------------------------------------------------------------- serve */

/* Started as root with paddock.user set: the data directory is made and
 * handed to that user, root's helper for the sandboxes is started
 * (privsep.h: they stay root mode's), then root is dropped for good
 * (groups, gid, uid) before the store is opened. */
static int drop_root(const struct config *cfg, const char *data, struct err *e)
{
	if (geteuid() != 0 || !cfg->run_as)
		return 0;
	struct passwd *pw = getpwnam(cfg->run_as);
	if (!pw)
		return err_set(e, _("paddock.user: there is no user '%s'; create it (useradd "
		                    "--system %s) or set another"), cfg->run_as, cfg->run_as);
	if (pw->pw_uid == 0)
		return err_set(e, _("paddock.user: '%s' is root; name an unprivileged user"),
		               cfg->run_as);
	struct stat st;
	if (stat(data, &st) < 0)
		return err_errno(e, _("cannot read %s"), data);
	/* Only a directory that is not the user's yet is handed over whole;
	 * a file linked from elsewhere keeps its owner (fsx_chown_handover_r). */
	if ((st.st_uid != pw->pw_uid || st.st_gid != pw->pw_gid) &&
	    fsx_chown_handover_r(data, pw->pw_uid, pw->pw_gid, e) < 0)
		return err_prefix(e, _("cannot hand the data directory to %s"), cfg->run_as);
	/* What stays root: the helper that makes root mode's sandboxes (the
	 * sandbox uid, cgroups, the network namespace) for this process's
	 * supervisors.  The process backend needs none. */
	if (!strcmp(cfg->sandbox_backend, "bwrap")) {
		struct sandbox_options o;
		scheduler_sandbox_options(cfg, data, &o);
		if (privsep_start(&o, data, pw->pw_uid, pw->pw_gid, e) < 0)
			return err_prefix(e, _("paddock.user"));
	}
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setresgid(pw->pw_gid, pw->pw_gid,
	    pw->pw_gid) < 0 || setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		return err_errno(e, _("cannot become %s"), cfg->run_as);
	if (setuid(0) == 0 || geteuid() == 0)
		return err_set(e, _("root could not be dropped"));
	/* A credential change leaves /proc/self root's; the user namespace
	 * of each supervisor is mapped by writing there. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		return err_errno(e, _("cannot become %s"), cfg->run_as);
	/* Its own home for what reads HOME (git); the configuration was
	 * read already, and the data directory stays the one just handed
	 * over whatever HOME says. */
	setenv("PADDOCK_HOME", data, 1);
	setenv("HOME", pw->pw_dir, 1);
	setenv("USER", pw->pw_name, 1);
	setenv("LOGNAME", pw->pw_name, 1);
	unsetenv("XDG_RUNTIME_DIR");  /* root's, if any */
	cli_git_home_changed();
	return 0;
}

/* serve's threads: the HTTP API's and the GitHub poller; and what they
 * all say through (logger.h). */
struct serve_threads {
	const struct config *cfg;
	const char *data;
	const char *listen;
	struct api *api;
	struct api *metrics;       /* [api] metrics-listen's */
	struct ghsync_poller *gh;
	struct logger *log;
};

/* SIGHUP: the API's tokens are read again (a rotation needs no restart). */
static void serve_hup(void *arg)
{
	struct serve_threads *th = arg;
	struct err e = {{0}};
	if (th->api && api_reload(th->api, th->log, &e) < 0)
		logger_event(th->log, LOGGER_ERROR, NULL, NULL, "api.tokens.kept",
		             _("paddock: SIGHUP: the HTTP API keeps its tokens: %s\n"), e.msg);
}

/* Once the scheduler is open: its checks fork children (the user
 * namespace probe), which a process with threads may not (child.h). */
static int serve_start_threads(void *arg, struct err *e)
{
	struct serve_threads *th = arg;
	/* What serve and its children write to stderr, as JSON lines. */
	logger_stderr_start(th->log);
	if (th->listen) {
		struct api_opts ao = { .listen = th->listen, .cfg = th->cfg, .data_dir = th->data };
		if (api_start(&th->api, &ao, th->log, e) < 0)
			return err_prefix(e, _("the HTTP API"));
	}
	if (th->cfg->api_metrics_listen) {
		struct api_opts mo = { .listen = th->cfg->api_metrics_listen, .cfg = th->cfg,
		                       .data_dir = th->data, .metrics_only = 1 };
		if (api_start(&th->metrics, &mo, th->log, e) < 0)
			return err_prefix(e, "api.metrics-listen");
	}
	/* A key that is missing is said now, not as a task's failure later. */
	char *missing = config_missing_keys(th->cfg);
	if (missing) {
		for (char *line = strtok(missing, "\n"); line; line = strtok(NULL, "\n"))
			logger_event(th->log, LOGGER_WARNING | LOGGER_ON_OUT, NULL, NULL, "key.missing",
			             "paddock: %s", line);
		free(missing);
	}
	/* GitHub is read beside the scheduler, in a thread of its own (it
	 * starts with the loop's signals blocked, as the API's do). */
	th->gh = ghsync_poller_start(th->cfg, th->data, th->log);
	return 0;
}

/* serve stops with a message: as cli_die, or a JSON line (event
 * serve.stopped) when the log is JSON. */
static int serve_die(struct logger *log, const char *msg)
{
	if (logger_format(log) != LOGGER_JSON)
		return cli_die(1, "%s", msg);
	logger_event(log, LOGGER_ERROR, NULL, NULL, "serve.stopped", "paddock: %s", msg);
	return 1;
}

static int run_scheduler(struct config *cfg, int until_idle, const char *listen,
                         struct logger *log)
{
	struct err e = {{0}};
	/* A ^C, ^\ or ^Z typed at serve's terminal is serve's (SIGINT: a
	 * planned stop), never its tasks' own (child.h): the root helper,
	 * the supervisors and what they run are off the terminal. */
	child_leave_terminal();
	char *data = paths_data_dir_ensure(&e);
	if (!data)
		return serve_die(log, e.msg);
	/* A JSON line names no secret of the configuration and no host path
	 * (logger.h); text stays as it always was. */
	if (logger_format(log) == LOGGER_JSON)
		logger_hide_config(log, cfg, data);
	/* In JSON everything goes to stdout: the stderr of serve and of
	 * every child it starts (the root helper, supervisors) too. */
	if (logger_stderr_take(log, &e) < 0) {
		free(data);
		return serve_die(log, e.msg);
	}
	if (drop_root(cfg, data, &e) < 0) {
		free(data);
		return serve_die(log, e.msg);
	}
	/* The HTTP API answers beside the scheduler, from threads of its own:
	 * they start with the signals the scheduler's loop reads blocked, or
	 * a SIGTERM or SIGHUP would land in one of them and end the process
	 * without a word. */
	sigset_t sigs, oldsigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGQUIT);
	sigaddset(&sigs, SIGTERM);
	if (listen)
		sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, &oldsigs);
	struct serve_threads th = { .cfg = cfg, .data = data, .listen = listen, .log = log };
	struct scheduler_opts so = { .until_idle = until_idle, .log = log,
	                             .on_hup = listen ? serve_hup : NULL, .hup_arg = &th,
	                             .on_open = serve_start_threads, .open_arg = &th };
	int rc = scheduler_run(cfg, data, &so, &e) < 0 ? serve_die(log, e.msg) : 0;
	if (rc == 0 && privsep_helper_died())
		rc = serve_die(log, _("paddock's root helper ended, and no sandbox can be made "
		                      "without it; serve stopped (start it again)"));
	ghsync_poller_stop(th.gh);
	api_stop(th.api);
	api_stop(th.metrics);
	pthread_sigmask(SIG_SETMASK, &oldsigs, NULL);
	privsep_stop();
	free(data);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("serve");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help until-idle listen routes log-format");
	if (rc >= 0)
		return rc;
	if (o.routes) {
		/* What the API answers, for checks against its description. */
		for (const char *const *r = api_routes(); *r; r++)
			puts(*r);
		return 0;
	}
	if (optind != argc)
		return cli_bad_usage(v);
	struct err e = {{0}};
	if (o.listen && api_listen_check(o.listen, &e) < 0)
		return cli_die(EXIT_USAGE, _("--listen: %s"), e.msg);
	enum logger_format fmt = LOGGER_TEXT;
	if (o.log_format && logger_format_parse(o.log_format, "--log-format", &fmt, &e) < 0)
		return cli_die(EXIT_USAGE, "%s", e.msg);
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	if (!o.log_format && cfg.log_json)
		fmt = LOGGER_JSON;
	/* Everything serve says goes through one logger (logger.h). */
	struct logger *log = logger_new(fmt, stdout, stderr);
	rc = run_scheduler(&cfg, o.until_idle, o.listen ? o.listen : cfg.api_listen, log);
	logger_free(log);
	config_free(&cfg);
	return rc;
}

/* ---------------------------------------------------------------- demo */

int cmd_demo(int argc, char **argv)
{
	const struct cli_verb *v = cli_verb_find("demo");
	struct cli_opts o;
	int rc = cli_parse_opts(v, argc, argv, &o, "help");
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return cli_bad_usage(v);
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	struct err e = {{0}};
	char *data = paths_data_dir_ensure(&e);
	if (!data || demo_prepare(data, &cfg, &e) < 0) {
		config_free(&cfg);
		free(data);
		return cli_die(1, "%s", e.msg);
	}
	/* Refuse before queueing anything: the demo's repo and agents live
	 * only in this process's configuration, so tasks queued for another
	 * scheduler (or one that cannot sandbox) could never run. */
	int lockfd;
	if (!scheduler_backend(&cfg, data, &e) || scheduler_lock(data, &lockfd, &e) < 0) {
		config_free(&cfg);
		free(data);
		return cli_die(1, _("demo: %s"), e.msg);
	}
	close(lockfd);
	struct store *s = cli_open_store(NULL, 1);
	if (!s) {
		config_free(&cfg);
		free(data);
		return 1;
	}
	/* A task of the fix-bug recipe, and a best-of-2 group: the same task
	 * for both demo agents, side by side. */
	const char *names[] = { "issue" };
	const char *values[] = { "The test suite fails: total() in cart.py ignores the quantity." };
	const char *agents[] = { "demo-fixer", "demo-hasty" };
	struct submit_req rq_fix = { .repo = "demo", .agent = "demo-fixer", .recipe = "fix-bug",
	                             .input_names = names, .input_values = values, .ninputs = 1,
	                             .budget = -1 };
	struct submit_req rq_two = { .repo = "demo", .agents = agents, .nagents = 2, .budget = -1,
	                             .text = "Round prices in cart.py to whole cents when "
	                                     "totals are computed, and make the tests pass." };
	struct submit_req rq_brk = { .repo = "demo", .agent = "demo-hasty", .budget = -1,
	                             .text = "Round prices in cart.py to whole cents when "
	                                     "totals are computed." };
	struct submit_result fixed, hasty, two;
	if (submit_tasks(s, &cfg, &rq_fix, &fixed, &e) < 0 ||
	    submit_tasks(s, &cfg, &rq_brk, &hasty, &e) < 0 ||
	    submit_tasks(s, &cfg, &rq_two, &two, &e) < 0) {
		store_close(s);
		config_free(&cfg);
		free(data);
		return cli_die(1, "%s", e.msg);
	}
	store_close(s);
	char fix[TASK_ID_LEN + 1], brk[TASK_ID_LEN + 1];
	memcpy(fix, fixed.ids[0], sizeof fix);
	memcpy(brk, hasty.ids[0], sizeof brk);
	/* On a terminal the demo runs in the dashboard; elsewhere (scripts,
	 * CI) it runs headless and prints what happened. */
	if (getenv("PADDOCK_UI_SCRIPT") || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))) {
		rc = dash_main(&cfg, 1);
		config_free(&cfg);
		free(data);
		return rc;
	}
	printf(_("paddock demo: queued on the demo repo (%s/demo):\n"
	         "  %s  the fix-bug recipe with demo-fixer: it adds a regression test and fixes\n"
	         "              the bug; it should reach review\n"
	         "  %s  demo-hasty makes an edit that breaks a test; it should fail at testing\n"
	         "  %s  a best-of-2 group, one task for each demo agent:\n"
	         "    %s  demo-fixer's should reach review\n"
	         "    %s  demo-hasty's should fail at testing\n\n"),
	       data, fix, brk, two.group, two.ids[0], two.ids[1]);
	fflush(stdout);
	/* The demo's progress, as serve's text. */
	struct logger *log = logger_new(LOGGER_TEXT, stdout, stderr);
	rc = run_scheduler(&cfg, 1, NULL, log);
	logger_free(log);
	if (rc == 0) {
		printf(_("\nWhat happened:\n"));
		fflush(stdout);
		char *show[] = { "show", fix, NULL };
		cmd_show(2, show);
		putchar('\n');
		char *show2[] = { "show", brk, NULL };
		cmd_show(2, show2);
		printf(_("\nThe fix, from paddock's mirror (paddock diff %s):\n\n"), fix);
		fflush(stdout);
		char *diff[] = { "diff", fix, NULL };
		cmd_diff(2, diff);
		printf(_("\nNext: 'paddock log %s' shows the sandbox's output; 'paddock group show "
		         "%s' shows the group's two tasks side by side; 'paddock list' shows all "
		         "tasks.\n"), brk, two.group);
	}
	config_free(&cfg);
	free(data);
	return rc;
}

/* ---------------------------------------------------------------- dashboard */

/* The dashboard, `paddock` with no arguments. */
int cmd_dashboard(void)
{
	struct config cfg;
	if (cli_load_config(&cfg) < 0)
		return EXIT_USAGE;
	int rc = dash_main(&cfg, 0);
	config_free(&cfg);
	return rc;
}
