/* The checks of paddock doctor; see doctor.h. */
#include "autoconfig.h"
#include "doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter.h"
#include "api.h"
#include "buf.h"
#include "cgroup.h"
#include "child.h"
#include "fsx.h"
#include "i18n.h"
#include "kube_check.h"
#include "mirror.h"
#include "paths.h"
#include "sandbox.h"
#include "scheduler.h"
#include "seccomp_filter.h"

#define REPO_TIMEOUT 20  /* seconds for each repo's probe */

static void add(struct doctor *d, const char *name, enum doctor_status st, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void add(struct doctor *d, const char *name, enum doctor_status st, const char *fix,
                const char *fmt, ...)
{
	struct buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	d->v = xrealloc(d->v, (d->n + 1) * sizeof *d->v);
	d->v[d->n++] = (struct doctor_check){ .name = xstrdup(name), .status = st,
	                                       .detail = buf_detach(&b),
	                                       .fix = fix ? xstrdup(fix) : NULL };
	if (st == DOCTOR_FAIL)
		d->can_run = 0;
}

const char *doctor_status_name(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK: return "ok";
	case DOCTOR_INFO: return "info";
	case DOCTOR_WARN: return "warn";
	case DOCTOR_FAIL: return "fail";
	}
	return "?";
}

/* A number from a /proc/sys file, or -1 when there is none. */
static long sysctl_num(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The first line a program prints, or NULL when it cannot run. */
static char *first_line(const char *const *argv)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	struct child ch = { .argv = argv, .stdio = { CHILD_NULL, p[1], CHILD_NULL }, .alarm = 10 };
	int started = child_start(&ch, NULL);
	close(p[1]);
	struct buf b = { 0 };
	char tmp[512];
	ssize_t n;
	while (started == 0 && (n = read(p[0], tmp, sizeof tmp)) > 0)
		buf_add(&b, tmp, (size_t)n);
	close(p[0]);
	if (started < 0 || child_finish(&ch) != 0 || !b.data) {
		buf_free(&b);
		return NULL;
	}
	b.data[strcspn(b.data, "\n")] = '\0';
	return buf_detach(&b);
}

static void check_mode(struct doctor *d, const struct config *cfg)
{
	if (cfg && !strcmp(cfg->sandbox_backend, "process")) {
		if (cfg->sandbox_unsafe)
			add(d, "mode", DOCTOR_WARN, _("use [sandbox] backend = bwrap wherever an agent "
			                              "could be hostile"),
			    _("the process backend: no isolation at all; agents run as you, with your "
			      "files and your network"));
		else
			add(d, "mode", DOCTOR_FAIL, _("set [sandbox] unsafe-no-isolation = true to use "
			                              "it anyway, or use [sandbox] backend = bwrap"),
			    _("the process backend isolates nothing and is not allowed"));
		return;
	}
	if (geteuid() == 0 && cfg && cfg->run_as)
		add(d, "mode", DOCTOR_INFO, NULL,
		    _("root mode with paddock.user: serve runs as %s, sandboxes as uid %lu, in "
		      "cgroups and the gateway's network namespace, made by its root helper"),
		    cfg->run_as, (unsigned long)cfg->sandbox_uid);
	else if (geteuid() == 0)
		add(d, "mode", DOCTOR_INFO, NULL,
		    _("root mode: sandboxes run as uid %lu, in cgroups and the gateway's network "
		      "namespace"), cfg ? (unsigned long)cfg->sandbox_uid : 0UL);
	else
		add(d, "mode", DOCTOR_INFO, NULL,
		    _("user mode: sandboxes run as you (uid %lu) in user namespaces of their own"),
		    (unsigned long)geteuid());
}

static void check_bwrap(struct doctor *d)
{
	const char *argv[] = { BWRAP_PATH, "--version", NULL };
	char *v = access(BWRAP_PATH, X_OK) == 0 ? first_line(argv) : NULL;
	if (v)
		add(d, "bwrap", DOCTOR_OK, NULL, "%s (%s)", v, BWRAP_PATH);
	else
		add(d, "bwrap", DOCTOR_FAIL, _("install it: apt-get install bubblewrap"),
		    _("bubblewrap (%s) is missing or does not run"), BWRAP_PATH);
	free(v);
}

static int netns_child(void *arg)
{
	(void)arg;
	return unshare(CLONE_NEWNET) < 0 ? 1 : 0;
}

static int probe(int (*fn)(void *))
{
	struct child ch = { .fn = fn, .stdio = { CHILD_NULL, CHILD_NULL, CHILD_NULL } };
	if (child_start(&ch, NULL) < 0)
		return -1;
	int st = child_finish(&ch);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The backend's own check (what serve's start makes): sysctls first, for
 * a message that names the switch. */
static void check_userns(struct doctor *d)
{
	long max = sysctl_num("/proc/sys/user/max_user_namespaces");
	long clone = sysctl_num("/proc/sys/kernel/unprivileged_userns_clone");
	long apparmor = sysctl_num("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	struct err e = { { 0 } };
	int rc = max == 0 || clone == 0 ? SANDBOX_USERNS_NONE : sandbox_bwrap_userns_check(&e);
	if (max == 0)
		add(d, "userns", DOCTOR_FAIL,
		    _("enable them: sysctl -w user.max_user_namespaces=10000"),
		    _("user namespaces are disabled (user.max_user_namespaces is 0)"));
	else if (clone == 0)
		add(d, "userns", DOCTOR_FAIL,
		    _("enable them: sysctl -w kernel.unprivileged_userns_clone=1"),
		    _("unprivileged user namespaces are disabled "
		      "(kernel.unprivileged_userns_clone is 0)"));
	else if (rc == SANDBOX_USERNS_NONE)
		add(d, "userns", DOCTOR_FAIL,
		    apparmor == 1 ? _("allow them for bwrap with an AppArmor profile (Ubuntu ships "
		                      "bwrap-userns-restrict), or sysctl -w "
		                      "kernel.apparmor_restrict_unprivileged_userns=0")
		                  : _("allow unprivileged user namespaces (a seccomp filter or a "
		                      "container runtime forbids them here)"),
		    _("cannot create a user namespace as the sandbox would%s"),
		    apparmor == 1 ? _(" (AppArmor restricts unprivileged user namespaces)") : "");
	else
		add(d, "userns", DOCTOR_OK, NULL, _("user namespaces can be made (%ld at most)"),
		    max);
	if (rc == SANDBOX_USERNS_MOUNTS)
		add(d, "overlay", DOCTOR_FAIL, _("Linux 5.11 or later mounts overlayfs in a user "
		                                 "namespace; a security module may forbid mounts"),
		    "%s", e.msg);
	else if (rc == 0 && geteuid() != 0)
		add(d, "overlay", DOCTOR_OK, NULL,
		    _("a tmpfs and an overlay mount in a user namespace"));
}

static void check_mounts(struct doctor *d)
{
	if (geteuid() != 0)
		return;  /* check_userns mounted them in user mode */
	FILE *f = fopen("/proc/filesystems", "re");
	char line[256];
	int overlay = 0;
	while (f && fgets(line, sizeof line, f))
		overlay |= strstr(line, "\toverlay") != NULL;
	if (f)
		fclose(f);
	if (overlay)
		add(d, "overlay", DOCTOR_OK, NULL, _("overlayfs is available"));
	else
		add(d, "overlay", DOCTOR_FAIL, _("load it: modprobe overlay"),
		    _("the kernel does not support overlayfs"));
}

static void check_network(struct doctor *d, const struct config *cfg)
{
	char *bridge = sandbox_bridge_path();
	int have_bridge = access(bridge, X_OK) == 0;
	if (geteuid() == 0 && (!cfg || cfg->gw_network != GW_NETWORK_BRIDGE) &&
	    probe(netns_child) == 0) {
		add(d, "network", DOCTOR_OK, NULL,
		    _("each task gets a network namespace whose only way out is its gateway"));
	} else if (have_bridge) {
		add(d, "network", DOCTOR_OK, NULL,
		    _("sandboxes reach their gateway through paddock-bridge (%s), in a network "
		      "namespace of their own"), bridge);
	} else {
		add(d, "network", DOCTOR_FAIL, _("install paddock whole (make install)"),
		    _("paddock-bridge (%s) is missing, and no network namespace can be made for the "
		      "gateway"), bridge);
	}
	free(bridge);
}

static void check_cgroups(struct doctor *d)
{
	struct err e = { { 0 } };
	if (geteuid() == 0) {
		if (cgroup_preflight(&e) < 0)
			add(d, "cgroups", DOCTOR_FAIL, _("see the message"), "%s", e.msg);
		else
			add(d, "cgroups", DOCTOR_OK, NULL, _("memory and pids cgroups for each task"));
		return;
	}
	char *where = NULL;
	struct err se = { { 0 } };
	/* As serve would: a scope from the systemd user manager first. */
	if (!cgroup_delegated(NULL, NULL))
		(void)cgroup_systemd_scope(&se);  /* why not: said below */
	if (cgroup_delegated(&where, &e)) {
		add(d, "cgroups", DOCTOR_OK, NULL,
		    _("a delegated cgroup, divided into memory, pids and cpu cgroups for each "
		      "task: %s"), where);
		free(where);
		return;
	}
	/* Without one, say what stands in. */
	add(d, "cgroups", DOCTOR_WARN,
	    _("for limits of the whole sandbox in the kernel, start paddock in a delegated "
	      "cgroup: as the systemd user unit (Delegate=yes), with systemd-run --user "
	      "--scope -p Delegate=yes paddock serve, or as root with [paddock] user"),
	    _("no delegated cgroup (%s; %s): each task's memory is watched by paddock and "
	      "capped per process, its processes by RLIMIT_NPROC, its CPU time per process"),
	    e.msg, se.msg);
}

static void check_seccomp(struct doctor *d)
{
	struct err e = { { 0 } };
	int fd = seccomp_filter_fd(&e);
	if (fd < 0) {
		add(d, "seccomp", DOCTOR_FAIL, _("see the message"), "%s", e.msg);
		return;
	}
	close(fd);
	add(d, "seccomp", DOCTOR_OK, NULL, _("the sandbox's seccomp filter builds"));
}

static void check_git(struct doctor *d)
{
	const char *argv[] = { GIT_PATH, "--version", NULL };
	char *v = first_line(argv);
	int maj, min, rev;
	git_libgit2_version(&maj, &min, &rev);
	if (v)
		add(d, "git", DOCTOR_OK, NULL, "%s, libgit2 %d.%d.%d", v, maj, min, rev);
	else
		add(d, "git", DOCTOR_FAIL, _("install git: apt-get install git"),
		    _("git (%s) is missing or does not run"), GIT_PATH);
	free(v);
}

static void check_data(struct doctor *d, const char *data_dir)
{
	char *dir = data_dir ? xstrdup(data_dir) : paths_data_dir();
	struct stat st;
	if (stat(dir, &st) == 0 && (!S_ISDIR(st.st_mode) || access(dir, W_OK) < 0))
		add(d, "data", DOCTOR_FAIL, _("set PADDOCK_HOME to a directory you can write"),
		    _("the data directory %s is not a directory you can write"), dir);
	else if (stat(dir, &st) == 0 && (st.st_mode & 0077))
		add(d, "data", DOCTOR_WARN, _("chmod go= it"),
		    _("the data directory %s can be entered by other users"), dir);
	else if (stat(dir, &st) == 0)
		add(d, "data", DOCTOR_OK, NULL, "%s", dir);
	else
		add(d, "data", DOCTOR_OK, NULL, _("%s (made with the first task)"), dir);
	free(dir);
}

static void check_config(struct doctor *d, const struct config *cfg, const char *cfg_error)
{
	if (!cfg) {
		add(d, "config", DOCTOR_FAIL, _("fix it; paddock config check lists every problem"),
		    "%s", cfg_error ? cfg_error : "?");
		return;
	}
	add(d, "config", DOCTOR_OK, NULL, _("repos: %zu, agents: %zu, endpoints: %zu"),
	    cfg->nrepos, cfg->nagents, cfg->nendpoints);
}

static void check_repos(struct doctor *d, const struct config *cfg)
{
	for (size_t i = 0; cfg && i < cfg->nrepos; i++) {
		const struct repo_conf *r = &cfg->repos[i];
		char name[96];
		snprintf(name, sizeof name, "repo %s", r->name);
		char *shown = mirror_url_display(r->url);
		struct err e = { { 0 } };
		/* As a fetch connects: the repo's token or SSH key, the host key
		 * checked (remote.h). */
		if (mirror_probe(r, REPO_TIMEOUT, &e) < 0)
			add(d, name, DOCTOR_WARN, _("check the repo's url and its credentials"),
			    _("%s cannot be reached: %s"), shown, e.msg);
		else
			add(d, name, DOCTOR_OK, NULL, _("%s answers"), shown);
		free(shown);
	}
}

static void check_agents(struct doctor *d, const struct config *cfg, const char *data_dir)
{
	for (size_t i = 0; cfg && i < cfg->nagents; i++) {
		const struct agent_conf *a = &cfg->agents[i];
		char name[96];
		snprintf(name, sizeof name, "agent %s", a->name);
		if (!a->package) {
			add(d, name, DOCTOR_OK, NULL, _("a command of your own"));
			continue;
		}
		char *dir = data_dir ? adapter_install_dir(data_dir, a) : NULL;
		if (dir)
			add(d, name, DOCTOR_OK, NULL, _("%s installed"), a->package);
		else
			add(d, name, a->builtin ? DOCTOR_INFO : DOCTOR_WARN,
			    a->builtin ? NULL : _("install it: paddock agent install NAME"),
			    _("%s is not installed (paddock agent install %s)"), a->package, a->name);
		free(dir);
	}
}

static void check_endpoints(struct doctor *d, const struct config *cfg)
{
	for (size_t i = 0; cfg && i < cfg->nendpoints; i++) {
		const struct endpoint_conf *ep = &cfg->endpoints[i];
		char name[96];
		snprintf(name, sizeof name, "endpoint %s", ep->name);
		char *key = config_endpoint_key(ep);
		if (key && *key)
			add(d, name, DOCTOR_OK, NULL, _("has a key (%s)"),
			    ep->key_file ? ep->key_file : ep->key_env ? ep->key_env : "?");
		else
			add(d, name, DOCTOR_INFO, _("set its key-env variable or key-file"),
			    _("no key: agents that use it get 401 from the gateway"));
		free(key);
	}
}

static void check_api(struct doctor *d, const struct config *cfg)
{
	struct err e = { { 0 } };
	if (!cfg || !cfg->api_listen) {
		add(d, "api", DOCTOR_INFO, NULL, _("the HTTP API is off (api.listen is not set)"));
		return;
	}
	if (api_listen_try(cfg->api_listen, &e) < 0)
		add(d, "api", DOCTOR_WARN, _("choose a free address in api.listen, or stop what "
		                             "listens there (another paddock serve?)"), "%s", e.msg);
	else
		add(d, "api", DOCTOR_OK, NULL, _("the HTTP API can listen on %s"), cfg->api_listen);
}

/* [api] metrics-listen, only when it is set. */
static void check_metrics(struct doctor *d, const struct config *cfg)
{
	struct err e = { { 0 } };
	if (!cfg || !cfg->api_metrics_listen)
		return;
	if (api_listen_try(cfg->api_metrics_listen, &e) < 0)
		add(d, "metrics", DOCTOR_WARN, _("choose a free address in api.metrics-listen, or stop "
		                                 "what listens there (another paddock serve?)"),
		    "%s", e.msg);
	else
		add(d, "metrics", DOCTOR_OK, NULL, _("GET /metrics can listen on %s"),
		    cfg->api_metrics_listen);
}

/* Where the front door listens: front-door-listen, else 0.0.0.0 and
 * front-door's port (malloc'd; NULL without either). */
static char *kube_door_listen(const struct kube_conf *kc)
{
	if (kc->door_listen)
		return xstrdup(kc->door_listen);
	const char *colon = kc->door ? strrchr(kc->door, ':') : NULL;
	return colon ? xasprintf("0.0.0.0%s", colon) : NULL;
}

/* The front door's listen address: free, or held by the scheduler's
 * owner (serve, or a dashboard), whose front door it is. */
static void check_kube_door(struct doctor *d, const struct kube_conf *kc, const char *data_dir)
{
	struct err e = { { 0 } };
	char *listen = kube_door_listen(kc);
	if (!listen)
		return;
	if (api_listen_try(listen, &e) == 0) {
		add(d, "k8s-door", DOCTOR_OK, NULL, _("pods dial %s; serve can listen on %s"), kc->door,
		    listen);
		free(listen);
		return;
	}
	char *lock = data_dir ? paths_scheduler_lock(data_dir) : NULL;
	struct err le = { { 0 } };
	int fd = lock ? fsx_lock_try(data_dir, lock, &le) : -1;
	if (fd >= 0)
		close(fd);
	if (fd == -2)
		add(d, "k8s-door", DOCTOR_OK, NULL,
		    _("pods dial %s; %s is held by the scheduler that runs here (serve)"), kc->door,
		    listen);
	else
		add(d, "k8s-door", DOCTOR_FAIL,
		    _("choose a free address in kubernetes.front-door-listen, or stop what listens "
		      "there"), "%s", e.msg);
	free(lock);
	free(listen);
}

/* The kubernetes backend (kube_check.h): the connection, the front door,
 * then each object of the prepared namespace, as the preflight checks
 * them. */
static void check_kube(struct doctor *d, const struct config *cfg, const char *data_dir)
{
	struct err e = { { 0 } };
	const char *fix_manifest = _("apply the manifest: paddock kubernetes manifest | kubectl apply -f -");
	char *instance = data_dir ? paths_instance_id(data_dir, &e) : NULL;
	if (!instance) {
		add(d, "k8s-instance", DOCTOR_FAIL,
		    _("run paddock kubernetes manifest, which makes it, as the user serve runs as"),
		    "%s", data_dir ? e.msg : _("there is no data directory"));
		return;
	}
	struct kube_check_conf c;
	if (kube_check_conf_init(&c, &cfg->kube, &cfg->limits, instance, NULL, &e) < 0) {
		add(d, "k8s-door", DOCTOR_FAIL, _("fix the [kubernetes] section"), "%s", e.msg);
		free(instance);
		return;
	}
	free(instance);
	struct kube *k = kube_open(&c.kube, &e);
	if (!k) {
		add(d, "k8s-config", DOCTOR_FAIL,
		    _("set kubernetes.kubeconfig to a readable kubeconfig, or KUBECONFIG"), "%s", e.msg);
		kube_check_conf_free(&c);
		return;
	}
	add(d, "k8s-config", DOCTOR_OK, NULL, _("%s, namespace %s, instance %s"), kube_server(k),
	    c.ns, c.instance);
	check_kube_door(d, &cfg->kube, data_dir);
	if (kube_check_api(k, &c.spec, &e) < 0) {
		add(d, "k8s-api", DOCTOR_FAIL,
		    _("check the cluster's address and the kubeconfig's user"), "%s", e.msg);
	} else {
		add(d, "k8s-api", DOCTOR_OK, NULL, _("the API answers and accepts paddock's credentials"));
		for (int it = 0; it < KUBE_CHECK_N; it++) {
			const char *name = kube_check_item_name((enum kube_check_item)it);
			int rc = kube_check_one(k, &c.spec, (enum kube_check_item)it, &e);
			if (rc == 0)
				add(d, name, DOCTOR_OK, NULL, _("in place"));
			else if (rc > 0)
				add(d, name, DOCTOR_INFO, NULL, "%s", e.msg);
			else
				add(d, name, DOCTOR_FAIL, fix_manifest, "%s", e.msg);
		}
	}
	kube_free(k);
	kube_check_conf_free(&c);
}

void doctor_run(struct doctor *d, const struct config *cfg, const char *cfg_error,
                const char *data_dir)
{
	memset(d, 0, sizeof *d);
	d->can_run = 1;
	/* The backend's checks run with the options serve would give it
	 * (the defaults' when the configuration could not be read). */
	struct config defaults;
	struct sandbox_options o;
	if (!cfg)
		config_init_defaults(&defaults);
	scheduler_sandbox_options(cfg ? cfg : &defaults, NULL, &o);
	if (!cfg)
		config_free(&defaults);
	sandbox_backend_find("bwrap", &o, NULL);
	/* Pods are the kubernetes backend's sandboxes: this host makes none,
	 * and needs none of what bubblewrap does (its own checks follow). */
	int kube = cfg && !strcmp(cfg->sandbox_backend, "kubernetes");
	if (!kube) {
		check_mode(d, cfg);
		check_bwrap(d);
		check_userns(d);
		check_mounts(d);
		check_network(d, cfg);
		check_cgroups(d);
		check_seccomp(d);
	}
	check_git(d);
	check_data(d, data_dir);
	check_config(d, cfg, cfg_error);
	check_repos(d, cfg);
	check_agents(d, cfg, data_dir);
	check_endpoints(d, cfg);
	check_api(d, cfg);
	check_metrics(d, cfg);
	if (kube)
		check_kube(d, cfg, data_dir);
}

void doctor_free(struct doctor *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].detail);
		free(d->v[i].fix);
	}
	free(d->v);
	memset(d, 0, sizeof *d);
}
