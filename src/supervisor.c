/* supervisor: the scheduler's long-lived children, exec'd (supervisor.h). */
#include "autoconfig.h"
#include "supervisor.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "demo.h"
#include "gitlib.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "pipeline.h"
#include "privsep.h"
#include "report.h"
#include "sandbox.h"
#include "store.h"
#include "template.h"

static const char *const kind_names[] = {
	[SUPERVISOR_TASK] = "task",
	[SUPERVISOR_PRUNE] = "prune-templates",
	[SUPERVISOR_MAINTAIN] = "maintain-mirrors",
};

int supervisor_start(struct child *c, const struct supervisor_spec *sp, struct err *e)
{
	const struct config *cfg = sp->cfg;
	int cfd = config_pass_fd(cfg, e);
	if (cfd < 0 && cfg->source)
		return -1;
	char cfd_s[16], resume_s[16], report_s[16], cmd_s[16], age_s[32], opts_s[96], ids_s[96];
	const char *argv[40];
	size_t n = 0;
	int keep[3];
	size_t nkeep = 0;
	argv[n++] = "paddock";
	argv[n++] = "supervise";
	argv[n++] = kind_names[sp->kind];
	if (sp->kind == SUPERVISOR_TASK)
		argv[n++] = sp->task_id;  /* first, for a person reading ps */
	argv[n++] = "--data-dir";
	argv[n++] = sp->data_dir;
	argv[n++] = "--config";
	argv[n++] = cfg->path;
	if (cfd >= 0) {
		snprintf(cfd_s, sizeof cfd_s, "%d", cfd);
		argv[n++] = "--config-fd";
		argv[n++] = cfd_s;
		keep[nkeep++] = cfd;
	}
	if (sp->kind == SUPERVISOR_TASK) {
		snprintf(resume_s, sizeof resume_s, "%d", sp->resume);
		snprintf(report_s, sizeof report_s, "%d", sp->report_fd);
		snprintf(cmd_s, sizeof cmd_s, "%d", sp->cmd_fd);
		argv[n++] = "--resume";
		argv[n++] = resume_s;
		argv[n++] = "--report-fd";
		argv[n++] = report_s;
		argv[n++] = "--cmd-fd";
		argv[n++] = cmd_s;
		keep[nkeep++] = sp->report_fd;
		keep[nkeep++] = sp->cmd_fd;
	}
	if (sp->kind == SUPERVISOR_PRUNE) {
		snprintf(age_s, sizeof age_s, "%.17g", sp->max_age);
		argv[n++] = "--max-age";
		argv[n++] = age_s;
	}
	/* The sandbox backend the scheduler chose and checked, with its
	 * options: the supervisor makes the same (no preflight again). */
	const struct sandbox_options *o = sandbox_options();
	snprintf(opts_s, sizeof opts_s, "%lu:%lu:%d:%d:%d", (unsigned long)o->uid,
	         (unsigned long)o->gid, o->unsafe_no_isolation, o->user_mode, o->cgroups);
	argv[n++] = "--sandbox";
	argv[n++] = cfg->sandbox_backend;
	argv[n++] = "--sandbox-options";
	argv[n++] = opts_s;
	struct privsep_client pc;
	if (privsep_client_get(&pc)) {
		snprintf(ids_s, sizeof ids_s, "%lu:%lu:%lu:%lu", (unsigned long)pc.uid,
		         (unsigned long)pc.gid, (unsigned long)pc.sbx_uid, (unsigned long)pc.sbx_gid);
		argv[n++] = "--privsep";
		argv[n++] = pc.sock;
		argv[n++] = "--privsep-ids";
		argv[n++] = ids_s;
	}
	if (child_left_terminal())
		argv[n++] = "--leave-terminal";
	argv[n] = NULL;
	c->path = CHILD_SELF;   /* always the version of its scheduler */
	c->argv = argv;
	c->fn = NULL;
	c->keep = keep;
	c->nkeep = nkeep;
	c->flags |= CHILD_CLOSE_FDS;
	int rc = child_start(c, e);
	c->argv = NULL;
	c->keep = NULL;
	c->nkeep = 0;
	if (cfd >= 0)
		close(cfd);
	return rc;
}

/* ---- in `paddock supervise` ---- */

struct supervise_args {
	enum supervisor_kind kind;
	const char *task_id;
	const char *data_dir;
	const char *config_path;
	int config_fd;
	int resume;
	int report_fd;
	int cmd_fd;
	double max_age;
	const char *sandbox;
	struct sandbox_options o;
	int privsep;
	struct privsep_client pc;
	int leave_terminal;
};

static int parse_int(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1 << 30)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_ids(const char *s, unsigned long *v, int n)
{
	for (int i = 0; i < n; i++) {
		char *end;
		errno = 0;
		v[i] = strtoul(s, &end, 10);
		if (errno || end == s || *end != (i == n - 1 ? '\0' : ':'))
			return -1;
		s = end + 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct supervise_args *a)
{
	static const struct option opts[] = {
		{ "data-dir", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "config-fd", required_argument, NULL, 'C' },
		{ "resume", required_argument, NULL, 'r' },
		{ "report-fd", required_argument, NULL, 'R' },
		{ "cmd-fd", required_argument, NULL, 'M' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "sandbox-options", required_argument, NULL, 'o' },
		{ "privsep", required_argument, NULL, 'p' },
		{ "privsep-ids", required_argument, NULL, 'i' },
		{ "leave-terminal", no_argument, NULL, 'l' },
		{ 0 }
	};
	*a = (struct supervise_args){ .config_fd = -1, .report_fd = -1, .cmd_fd = -1 };
	int ids_given = 0, opts_given = 0, ch;
	unsigned long v[5];
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (ch) {
		case 'd': a->data_dir = optarg; break;
		case 'c': a->config_path = optarg; break;
		case 'C': bad = parse_int(optarg, &a->config_fd); break;
		case 'r': bad = parse_int(optarg, &a->resume); break;
		case 'R': bad = parse_int(optarg, &a->report_fd); break;
		case 'M': bad = parse_int(optarg, &a->cmd_fd); break;
		case 'a': {
			char *end;
			a->max_age = strtod(optarg, &end);
			bad = end == optarg || *end;
			break;
		}
		case 's': a->sandbox = optarg; break;
		case 'o':
			bad = parse_ids(optarg, v, 5);
			a->o = (struct sandbox_options){ .uid = (uid_t)v[0], .gid = (gid_t)v[1],
			                                 .unsafe_no_isolation = (int)v[2],
			                                 .user_mode = (int)v[3], .cgroups = (int)v[4] };
			opts_given = 1;
			break;
		case 'p': a->privsep = 1; a->pc.sock = optarg; break;
		case 'i':
			bad = parse_ids(optarg, v, 4);
			a->pc.uid = (uid_t)v[0];
			a->pc.gid = (gid_t)v[1];
			a->pc.sbx_uid = (uid_t)v[2];
			a->pc.sbx_gid = (gid_t)v[3];
			ids_given = 1;
			break;
		case 'l': a->leave_terminal = 1; break;
		default: bad = 1;
		}
		if (bad)
			return -1;
	}
	if (optind >= argc)
		return -1;
	size_t k;
	for (k = 0; k < sizeof kind_names / sizeof *kind_names; k++)
		if (!strcmp(argv[optind], kind_names[k]))
			break;
	if (k == sizeof kind_names / sizeof *kind_names)
		return -1;
	a->kind = (enum supervisor_kind)k;
	int want = a->kind == SUPERVISOR_TASK ? 2 : 1;
	if (argc - optind != want || !a->data_dir || !a->config_path || !a->sandbox ||
	    !opts_given || a->privsep != ids_given)
		return -1;
	if (a->kind == SUPERVISOR_TASK) {
		a->task_id = argv[optind + 1];
		if (a->report_fd < 3 || a->cmd_fd < 3)
			return -1;
	}
	return 0;
}

static int run_task(const struct supervise_args *a, const struct config *cfg)
{
	struct err e = {{0}};
	struct sandbox_options o = a->o;
	o.kube = &cfg->kube;
	o.data_dir = a->data_dir;
	o.keep_seconds = cfg->gate_timeout;
	const struct sandbox_backend *be = a->privsep ? sandbox_backend_privsep()
	                                   : sandbox_backend_find(a->sandbox, &o, &e);
	struct task_row t;
	memset(&t, 0, sizeof t);
	int have = 0;
	if (be) {
		/* The row as the scheduler left it when it started this. */
		char *db = paths_db(a->data_dir);
		struct store *st = NULL;
		if (store_open(&st, db, &e) == 0) {
			have = store_task_get(st, a->task_id, &t, &e) == 0;
			store_close(st);
		}
		free(db);
	}
	if (!have) {
		report_send(a->report_fd, REPORT_REASON, "preparing");
		report_sendf(a->report_fd, REPORT_FAIL, "preparing: %s", e.msg);
		return 1;
	}
	struct pipeline_job job = { .cfg = cfg, .be = be, .data_dir = a->data_dir, .task = &t,
	                            .cmd_fd = a->cmd_fd, .resume_round = a->resume };
	int rc = pipeline_run(&job, a->report_fd);
	task_row_free(&t);
	return rc;
}

int supervisor_main(int argc, char **argv)
{
	struct supervise_args a;
	if (parse_args(argc, argv, &a) < 0) {
		fprintf(stderr, _("paddock: 'supervise' is for paddock's own use: the scheduler "
		                  "starts it for each task\n"));
		return 2;
	}
	if (a.leave_terminal)
		child_leave_terminal();
	struct config cfg;
	struct err e = {{0}};
	int loaded = config_load_fd(&cfg, a.config_path, a.config_fd, &e);
	if (loaded == 0)
		demo_config_add(a.data_dir, &cfg);  /* as the CLI's verbs do */
	if (loaded < 0) {
		if (a.kind == SUPERVISOR_TASK) {
			report_send(a.report_fd, REPORT_REASON, "preparing");
			report_sendf(a.report_fd, REPORT_FAIL, "preparing: %s", e.msg);
		}
		fprintf(stderr, "paddock: %s\n", e.msg);
		config_free(&cfg);
		return 1;
	}
	if (a.privsep)
		privsep_client_adopt(&a.pc, a.data_dir);
	gitlib_init();
	int rc = 0;
	switch (a.kind) {
	case SUPERVISOR_TASK:
		rc = run_task(&a, &cfg);
		break;
	case SUPERVISOR_PRUNE:
		template_prune_unused(a.data_dir, a.max_age);
		break;
	case SUPERVISOR_MAINTAIN:
		mirror_maintain(a.data_dir, MIRROR_MAX_PACKS);
		break;
	}
	privsep_stop();
	config_free(&cfg);
	return rc;
}
