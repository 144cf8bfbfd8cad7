/* The kubernetes sandbox backend (sandbox.h, sandbox_backend_kube;
 * DESIGN.md, "Beyond one machine: Kubernetes"; paddock(1), KUBERNETES).
 *
 * A sandbox is one bare Pod (kube_spec_pod: PSS restricted, no token of
 * the API, no DNS) whose PID 1 is paddock-runner in its dial mode: it
 * dials paddock's front door (frontdoor.h, in the process that runs the
 * scheduler), which checks its projected token with a TokenReview and
 * hands the connection to the process that made the pod, listening at
 * <data>/door/<pod>.sock (door.h).  From there the pod is a session like
 * any other backend's (runner.h): every command a RUN, files in and out
 * through the runner.  The gateway is reached the same way: the runner
 * listens on the pod's loopback ports and each connection is a stream on
 * the runner's session (runner_gateway), which this process joins to the
 * gateway's bridge sockets (SANDBOX_NET_BRIDGE) while it waits on the
 * session: the pod's one connection carries everything, and between two
 * calls on the session a stream waits.  Nothing secret enters the pod: not
 * a key, not a token of paddock's.
 *
 * The workspace: the template, a folder on paddock's host, goes into the
 * pod as a normalised tar (tarblob.h), content-addressed and made once per
 * template, piped into `tar -x` over the session.  A direct workspace (a
 * template's set-up) comes back the same way at finish(): the pod's /work
 * as a tar, normalised (regular files, folders and symlinks, nothing
 * absolute, no "..", owners reset) and stored, then unpacked over the
 * template on the host.
 *
 * The pod is made and watched while it starts by a forked copy of this
 * process, the starter (pod_start), which tells this one the pod's name
 * and uid and how its start ended, then exits: the TLS to the API server
 * leaves nothing in a supervisor that lives as long as its task (the API
 * is talked to again, here, only at the pod's end or to learn why its
 * runner went away).  One that cannot be scheduled, whose image cannot
 * be pulled, that was evicted or that ended before its runner dialled ends
 * create() with an error whose kind names the cause (ERR_POD_*).  A
 * runner that dies later is looked up in the pod's status: OOMKilled is
 * the memory limit hit, Evicted the pod's eviction.  A session whose TCP
 * connection breaks is not over: the door keeps listening, and the
 * runner's next connection resumes it (runner_set_resume, pod_resume) for
 * kubernetes.resume-timeout and KUBE_RESUME_SLACK_S more; a pod that
 * ended meanwhile ends it at once.
 *
 * Names are deterministic (kube_spec_pod_name); a create that answers 409
 * adopts the pod only when its labels are paddock's and its owner
 * annotation is this process's (a create retried after a lost answer);
 * one of an owner that is gone is deleted and the next attempt's name is
 * used.  The janitor lists the instance's pods and deletes those whose
 * owner process is gone (this host's boot, pid and start time). */
#include "autoconfig.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "door.h"
#include "fsx.h"
#include "i18n.h"
#include "kube.h"
#include "kube_check.h"
#include "kube_spec.h"
#include "paths.h"
#include "runner.h"
#include "sandbox_int.h"
#include "sanitize.h"
#include "tarblob.h"

#define KUBE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define KUBE_GITCONFIG "/paddock/gitconfig"
/* How long the runner has to greet once its connection came. */
#define KUBE_HELLO_S 30.0
/* How long a dead runner's pod has to show why in its status. */
#define KUBE_STATUS_S 5.0
/* How much longer than kubernetes.resume-timeout paddock waits for a
 * session's connection to come back. */
#define KUBE_RESUME_SLACK_S 5.0
/* Attempts at a name (a stale pod of a dead owner takes one each). */
#define KUBE_ATTEMPTS 4

struct pod_hooks;

struct ksb {
	struct kube *k;
	char *task_id;
	char *name, *uid;
	struct kube_spec_opts so;
	char *door_host, *probe, *owner, *instance, *ns;
	struct door *door;
	struct runner *rn;
	struct limits limits;
	int direct;
	int agent;             /* the agent's install is at SANDBOX_AGENT_DIR */
	char *template_dir;
	char **files;          /* the host files copied under KUBE_FILES */
	size_t nfiles;
	int dead;              /* the pod ended: every later call fails */
	const struct pod_hooks *hooks;   /* the starter's, while pod_make runs in it */
};

static struct ksb *ksb(struct sandbox *sb)
{
	return (struct ksb *)(void *)sb;
}

/* ---- the configuration ---- */

static const struct kube_conf *conf(void)
{
	return sandbox_options()->kube;
}

/* "IP:PORT" or "[IPv6]:PORT" split; the host malloc'd.  -1 when it is
 * not one (config checked it). */
static int split_hostport(const char *s, char **host, int *port)
{
	const char *colon = s ? strrchr(s, ':') : NULL;
	if (!colon)
		return -1;
	*port = atoi(colon + 1);
	if (s[0] == '[' && colon > s + 1 && colon[-1] == ']')
		*host = xstrndup(s + 1, (size_t)(colon - s - 2));
	else
		*host = xstrndup(s, (size_t)(colon - s));
	return *port > 0 && *port < 65536 ? 0 : -1;
}

/* timeout: seconds a request may take (0: kube.h's default). */
static struct kube *open_api(const struct kube_conf *kc, double timeout, struct err *e)
{
	struct kube_opts ko = { .kubeconfig = kc->kubeconfig, .context = kc->context,
	                        .namespace = kc->namespace, .timeout = timeout,
	                        .retries = timeout > 0 ? 1 : 0 };
	struct kube *k = kube_open(&ko, e);
	if (!k)
		err_prefix(e, _("kubernetes"));
	return k;
}

/* This process, as the owner annotation and the janitor name it: the
 * host's boot, the pid and its start time (a pid reused is another). */
static char *owner_of(pid_t pid)
{
	char boot[64] = "", path[64], *stat = NULL;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, boot, sizeof boot - 1);
		boot[n > 0 ? n : 0] = '\0';
		boot[strcspn(boot, "\n")] = '\0';
		close(fd);
	}
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	struct err e = {{0}};
	struct buf b = { 0 };
	if (fsx_read_file(path, 4096, &b, &e) < 0) {
		buf_free(&b);
		return NULL;
	}
	stat = buf_detach(&b);
	/* Field 22, after the command's ")" (which may hold anything); a
	 * zombie (state Z) is gone already. */
	const char *p = strrchr(stat, ')');
	if (p && p[1] == ' ' && p[2] == 'Z')
		p = NULL;
	unsigned long long start = 0;
	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (p)
		start = strtoull(p, NULL, 10);
	free(stat);
	return boot[0] && start ? xasprintf("%s.%ld.%llu", boot, (long)pid, start) : NULL;
}

/* ---- the pod's status ---- */

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* What keeps a pod from running, from its status: 0 nothing (yet), 1 a
 * cause that may pass (kept in why, the task fails with it only at the
 * start timeout), 2 one that will not (the pod is done for).  *kind the
 * error kind that names it. */
static int pod_problem(json_t *pod, enum err_kind *kind, char *why, size_t len)
{
	json_t *st = json_object_get(pod, "status");
	const char *phase = jstr(st, "phase");
	const char *reason = jstr(st, "reason"), *msg = jstr(st, "message");
	char *m = NULL;
	int rc = 0;
	if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp")) {
		*kind = ERR_INTERNAL;
		snprintf(why, len, "%s", _("the pod is being deleted (by someone else)"));
		return 2;
	}
	if (reason && !strcmp(reason, "Evicted")) {
		*kind = ERR_POD_EVICTED;
		m = sanitize_quote_str(msg ? msg : "");
		snprintf(why, len, _("the pod was evicted: %s"), m);
		free(m);
		return 2;
	}
	json_t *c;
	size_t i;
	const char *lists[] = { "initContainerStatuses", "containerStatuses" };
	for (size_t l = 0; l < 2; l++) {
		json_array_foreach(json_object_get(st, lists[l]), i, c) {
			json_t *state = json_object_get(c, "state");
			json_t *w = json_object_get(state, "waiting"), *t = json_object_get(state, "terminated");
			const char *wr = jstr(w, "reason");
			if (wr && (!strcmp(wr, "ErrImagePull") || !strcmp(wr, "ImagePullBackOff") ||
			           !strcmp(wr, "InvalidImageName") || !strcmp(wr, "ErrImageNeverPull"))) {
				*kind = ERR_POD_IMAGE;
				m = sanitize_quote_str(jstr(w, "message") ? jstr(w, "message") : "");
				snprintf(why, len, _("the pod's image %s cannot be pulled (%s): %s"),
				         jstr(c, "image") ? jstr(c, "image") : "?", wr, m);
				free(m);
				return strcmp(wr, "ErrImagePull") ? 2 : 1;
			}
			if (wr && (!strcmp(wr, "CreateContainerConfigError") ||
			           !strcmp(wr, "CreateContainerError") || !strcmp(wr, "RunContainerError"))) {
				*kind = ERR_INTERNAL;
				m = sanitize_quote_str(jstr(w, "message") ? jstr(w, "message") : "");
				snprintf(why, len, _("the pod's container cannot start (%s): %s"), wr, m);
				free(m);
				return 2;
			}
			const char *tr = jstr(t, "reason");
			if (t && tr && !strcmp(tr, "OOMKilled")) {
				*kind = ERR_POD_MEMORY;
				snprintf(why, len, "%s", _("the pod was OOM-killed (limits.memory)"));
				return 2;
			}
			if (t && (l == 0 ? json_integer_value(json_object_get(t, "exitCode")) != 0 : 1)) {
				*kind = ERR_INTERNAL;
				m = sanitize_quote_str(jstr(t, "message") ? jstr(t, "message") : "");
				snprintf(why, len, _("the pod's %s container ended (%s, exit status %d)%s%s"),
				         l == 0 ? "runner" : "sandbox", tr ? tr : "?",
				         (int)json_integer_value(json_object_get(t, "exitCode")),
				         *m ? ": " : "", m);
				free(m);
				rc = 2;
			}
		}
	}
	if (rc)
		return rc;
	if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))) {
		*kind = ERR_INTERNAL;
		m = sanitize_quote_str(msg ? msg : reason ? reason : phase);
		snprintf(why, len, _("the pod ended (%s): %s"), phase, m);
		free(m);
		return 2;
	}
	json_array_foreach(json_object_get(st, "conditions"), i, c) {
		const char *type = jstr(c, "type"), *status = jstr(c, "status"), *r = jstr(c, "reason");
		if (type && !strcmp(type, "PodScheduled") && status && !strcmp(status, "False") &&
		    r && !strcmp(r, "Unschedulable")) {
			*kind = ERR_POD_UNSCHEDULABLE;
			m = sanitize_quote_str(jstr(c, "message") ? jstr(c, "message") : "");
			snprintf(why, len, _("the pod cannot be scheduled: %s"), m);
			free(m);
			return 1;
		}
	}
	return 0;
}

struct start_watch {
	enum err_kind kind;
	char why[1024];
	int level;             /* pod_problem's answer for the last event */
};

static int on_start_event(enum kube_event_type type, json_t *pod, void *arg)
{
	struct start_watch *sw = arg;
	if (type == KUBE_EV_DELETED || (type == KUBE_EV_RELIST && !pod)) {
		sw->kind = ERR_INTERNAL;
		snprintf(sw->why, sizeof sw->why, "%s", _("the pod was deleted before its runner dialled"));
		sw->level = 2;
		return 1;
	}
	char why[1024];
	enum err_kind kind = ERR_INTERNAL;
	int level = pod_problem(pod, &kind, why, sizeof why);
	sw->level = level;
	if (level) {
		sw->kind = kind;
		snprintf(sw->why, sizeof sw->why, "%s", why);
	}
	return level == 2;
}

/* The API's client, made again where create() let it go. */
static struct kube *api(struct ksb *p)
{
	struct err e = {{0}};
	if (!p->k)
		p->k = open_api(conf(), 0, &e);
	return p->k;
}

/* Why the pod's runner went away, from its status (which the kubelet
 * writes a moment after): 1 with *kind and why set, 0 when it says
 * nothing. */
static int pod_why_dead(struct ksb *p, enum err_kind *kind, char *why, size_t len)
{
	double until = clock_mono() + KUBE_STATUS_S;
	for (;;) {
		struct err e = {{0}};
		json_t *pod = api(p) ? kube_pod_get(p->k, p->name, &e) : NULL;
		int level = pod ? pod_problem(pod, kind, why, len) : 0;
		json_decref(pod);
		if (level == 2 || !pod || clock_mono() >= until)
			return level == 2;
		clock_sleep(0.25);
	}
}

/* ---- create ---- */

static void kb_free(struct ksb *p)
{
	free(p->task_id);
	free(p->name);
	free(p->uid);
	free(p->door_host);
	free(p->probe);
	free(p->owner);
	free(p->instance);
	free(p->ns);
	free(p->template_dir);
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	free(p);
}

static enum kube_role role_of(const char *id)
{
	if (!strncmp(id, "tpl-", 4))
		return KUBE_ROLE_SETUP;
	if (!strncmp(id, "vfy-", 4) || !strncmp(id, "tst-", 4))
		return KUBE_ROLE_VERIFY;
	return KUBE_ROLE_TASK;
}

/* The probes the runner makes: the configured ones and the API server's
 * address as paddock reaches it. */
static char *probe_list(const struct kube_conf *kc, struct kube *k)
{
	struct buf b = { 0 };
	for (size_t i = 0; i < kc->nprobe; i++)
		buf_printf(&b, "%s%s", b.len ? "," : "", kc->probe[i]);
	if (!kc->nprobe)
		buf_printf(&b, "169.254.169.254:80");
	const char *srv = kube_server(k);
	const char *host = srv ? strstr(srv, "://") : NULL;
	if (host) {
		host += 3;
		size_t n = strcspn(host, "/");
		char *hp = xstrndup(host, n);
		if (!strchr(hp[0] == '[' ? strchr(hp, ']') ? strchr(hp, ']') : hp : hp, ':')) {
			char *with = xasprintf("%s:443", hp);
			free(hp);
			hp = with;
		}
		buf_printf(&b, ",%s", hp);
		free(hp);
	}
	return buf_detach(&b);
}

/* Makes the pod (or adopts the one a lost answer made); p->name, p->uid
 * and p->door set. */
/* What pod_make tells the process that waits for the runner: the name of
 * each pod before it is posted (its door must listen by then), and the
 * uid of the one made. */
struct pod_hooks {
	int (*named)(struct ksb *p, struct err *e);
	int (*made)(struct ksb *p, struct err *e);
	int fd;                /* the starter's socket (pod_start) */
};

/* Long: posts the pod, adopts or steps past a name taken. */
static int pod_make(struct ksb *p, const struct pod_hooks *h, struct err *e)
{
	for (unsigned attempt = 0; attempt < KUBE_ATTEMPTS; attempt++) {
		p->so.attempt = attempt;
		free(p->name);
		p->name = kube_spec_pod_name(&p->so, e);
		if (!p->name || h->named(p, e) < 0)
			return -1;
		json_t *pod = kube_spec_pod(&p->so, e);
		if (!pod)
			return -1;
		json_t *made = kube_pod_create(p->k, pod, e);
		json_decref(pod);
		if (!made && e->kind == ERR_CONFLICT &&
		    !strcmp(kube_last_reason(p->k), "AlreadyExists")) {
			made = kube_pod_get(p->k, p->name, e);
			const char *owner = made ? jstr(json_object_get(json_object_get(made, "metadata"),
			                                                "annotations"), KUBE_SPEC_OWNER) : NULL;
			if (made && !kube_spec_pod_is_ours(made, &p->so)) {
				json_decref(made);
				return err_set(e, _("kubernetes: a pod named %s is there and is not paddock's; "
				                    "remove it or use a namespace of paddock's own"), p->name);
			}
			if (made && (!owner || strcmp(owner, p->owner))) {
				/* A dead owner's (the janitor's to remove too): the
				 * next name. */
				const char *uid = jstr(json_object_get(made, "metadata"), "uid");
				struct err ignored = {{0}};
				kube_pod_delete(p->k, p->name, uid, 0, &ignored);
				json_decref(made);
				continue;
			}
		}
		if (!made)
			return err_prefix(e, _("kubernetes: cannot create pod %s"), p->name);
		const char *uid = jstr(json_object_get(made, "metadata"), "uid");
		p->uid = xstrdup(uid ? uid : "");
		json_decref(made);
		return h->made(p, e);
	}
	return err_set(e, _("kubernetes: pods named pdk-%s-... of dead owners are in the way; "
	                    "the janitor removes them"), p->task_id);
}

/* The gateway through the runner's session (runner_gateway): each
 * connection to a gateway port in the pod is a stream this process joins
 * to the gateway's bridge socket while it waits on the session. */
static int pod_gateway(struct ksb *p, const struct sandbox_spec *spec, struct err *e)
{
	if (!spec->net.bridge_dir)
		return 0;
	int ports[RP_STREAMS_MAX];
	size_t n = 0;
	for (const char *s = spec->net.bridge_ports ? spec->net.bridge_ports : ""; *s;) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > 65535 || (*end && *end != ',') || n == RP_STREAMS_MAX)
			return err_set(e, _("kubernetes: the gateway's ports are not a list of ports: %s"),
			               spec->net.bridge_ports);
		ports[n++] = (int)v;
		s = *end ? end + 1 : end;
	}
	runner_gateway(p->rn, spec->net.bridge_dir, ports, n);
	return 0;
}

/* The error of a pod whose runner never dialled in t seconds, with what
 * its log ends with (the runner says why it cannot reach the front door):
 * the one time the pod's log is read. */
static void runner_silent(struct ksb *p, double t, struct err *e)
{
	struct buf log = { 0 };
	struct err le = {{0}};
	char *tail = NULL;
	if (kube_pod_log(p->k, p->name, 1024, &log, &le) == 0 && log.len) {
		while (log.len && log.data[log.len - 1] == '\n')
			log.data[--log.len] = '\0';
		tail = sanitize_quote_str(log.data);
	}
	err_set(e, _("kubernetes: pod %s's runner did not reach the front door in %.0f s "
	             "(kubernetes.start-timeout); check kubernetes.front-door and the "
	             "NetworkPolicy that allows it%s%s"), p->name, t, tail ? _("; its log ends: ") : "",
	        tail ? tail : "");
	free(tail);
	buf_free(&log);
}

/* The start timeout passed: the last thing the pod's status said, or
 * what its log ends with. */
static void start_timed_out(struct ksb *p, const struct start_watch *sw, struct err *e)
{
	const struct kube_conf *kc = conf();
	double t = kc->start_timeout > 0 ? kc->start_timeout : 300;
	if (sw->level)
		err_kind_set(e, sw->kind, _("kubernetes: %s (waited %.0f s: kubernetes.start-timeout)"),
		             sw->why, t);
	else
		runner_silent(p, t, e);
}

/* The runner's next connection to the session, handed in by the front
 * door (runner_set_resume): a `runner` hand-off of the pod's uid; -1
 * when none waits (a fault now is the runner's word only: its session
 * ends when its connection does not come back); RUNNER_RESUME_GONE when
 * the pod ended. */
static int pod_resume(void *arg)
{
	struct ksb *p = arg;
	struct err ignored = {{0}};
	int fd = door_runner(p->door, clock_mono() - 1, NULL, 0, &ignored);
	if (fd >= 0)
		return fd;
	/* A pod that ended (OOM-killed, evicted, deleted) has no runner
	 * to come back: its end, not the resume time, ends the session. */
	struct err e = {{0}};
	json_t *pod = api(p) ? kube_pod_get(p->k, p->name, &e) : NULL;
	enum err_kind kind;
	char why[1024];
	int gone = pod ? pod_problem(pod, &kind, why, sizeof why) == 2 : e.kind == ERR_NOT_FOUND;
	json_decref(pod);
	return gone ? RUNNER_RESUME_GONE : -1;
}

/* The runner dialled: its session, which may resume on the pod's next
 * connection. */
static int pod_session(struct ksb *p, int fd, struct err *e)
{
	p->rn = runner_open(fd, clock_mono() + KUBE_HELLO_S, e);
	if (!p->rn)
		return -1;
	/* The runner redials kc->resume_timeout from when it saw the break,
	 * which may be after paddock did. */
	runner_set_resume(p->rn, door_fd(p->door), conf()->resume_timeout + KUBE_RESUME_SLACK_S,
	                  pod_resume, p);
	return 0;
}

/* pod_make's hooks in the process that waits for the runner. */
static int door_named(struct ksb *p, struct err *e)
{
	door_close(p->door);
	p->door = door_open(sandbox_options()->data_dir, p->name, e);
	return p->door ? 0 : -1;
}

static int door_made(struct ksb *p, struct err *e)
{
	return door_expect_uid(p->door, p->uid, e);
}

/* What waits at the door now: 1 when it settles the start (the runner
 * came: its session made; or its fault), with *rc; 0 when nothing does. */
static int pod_door(struct ksb *p, int *rc, struct err *e)
{
	char fault[600] = "";
	struct err de = {{0}};
	int fd = door_runner(p->door, clock_mono() - 1, fault, sizeof fault, &de);
	if (fd >= 0) {
		*rc = pod_session(p, fd, e);
		return 1;
	}
	if (fault[0]) {
		*rc = err_set(e, _("kubernetes: the pod's runner refused to run: %s"), fault);
		return 1;
	}
	return 0;
}

/* The pod ended before its runner dialled: a runner that refused to run
 * sent its fault, then exited, and its words, if they are on their way
 * (a second), say more than the pod's end.  -1 with e set. */
static int pod_ended(struct ksb *p, enum err_kind kind, const char *why, struct err *e)
{
	char fault[600] = "";
	struct err de = {{0}};
	int fd = p->door ? door_runner(p->door, clock_mono() + 1.0, fault, sizeof fault, &de) : -1;
	if (fd >= 0)
		close(fd);
	if (fault[0])
		return err_set(e, _("kubernetes: the pod's runner refused to run: %s"), fault);
	return err_kind_set(e, kind, "kubernetes: %s", why);
}

/* Waits for the pod's runner: its connection through the front door, or
 * a cause that ends the wait (pod_problem), or the start timeout. */
static int pod_wait_runner(struct ksb *p, struct err *e)
{
	const struct kube_conf *kc = conf();
	double deadline = clock_mono() + (kc->start_timeout > 0 ? kc->start_timeout : 300);
	int wake = door_fd(p->door);
	struct kube_watch w = { .name = p->name, .wake_fd = &wake };
	struct start_watch sw = { .kind = ERR_INTERNAL };
	int rc = -1;
	while (!pod_door(p, &rc, e)) {
		double left = deadline - clock_mono();
		if (left <= 0) {
			start_timed_out(p, &sw, e);
			break;
		}
		int wr = kube_watch_pod(p->k, &w, left, on_start_event, &sw, e);
		if (wr < 0) {
			err_prefix(e, _("kubernetes: pod %s"), p->name);
			break;
		}
		if (wr > 0) {
			pod_ended(p, sw.kind, sw.why, e);
			break;
		}
	}
	kube_watch_end(&w);
	return rc;
}

/* ---- the pod's start, in a process of its own ----
 *
 * Talking TLS to the API server leaves OpenSSL's caches (its providers'
 * algorithms, some 300 KiB) in a process for good, and a supervisor
 * lives as long as its task: so a copy of it (the starter) makes the pod
 * and watches it start, and ends with that.  It tells this process, one
 * line each on a socket:
 *   name <attempt> <pod>    the next pod's name: answered "ok" once its
 *                           door listens, before the pod is posted
 *   uid <uid>               the pod made
 *   ended <kind> <message>  the pod ended before its runner dialled
 *   fail <kind> <message>   the start failed (the error, whole)
 * and ends when this process closes its end (the runner came). */

#define STARTER_LINE 2048

/* One line to the socket: newlines in the text become spaces. */
static int starter_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int starter_say(int fd, const char *fmt, ...)
{
	char line[STARTER_LINE];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	return fsx_write_all(fd, line, (size_t)n);
}

static int starter_named(struct ksb *p, struct err *e)
{
	int fd = p->hooks->fd;
	char ok[3];
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	if (starter_say(fd, "name %u %s", p->so.attempt, p->name) < 0 ||
	    poll(&pf, 1, (int)(KUBE_HELLO_S * 1000)) != 1 || read(fd, ok, sizeof ok) != 3 ||
	    memcmp(ok, "ok\n", 3))
		return err_set(e, _("kubernetes: the door of pod %s did not open"), p->name);
	return 0;
}

static int starter_made(struct ksb *p, struct err *e)
{
	(void)e;
	return starter_say(p->hooks->fd, "uid %s", p->uid);
}

/* The starter (a forked copy): makes the pod and watches it until its
 * runner dialled (the socket's other end closes), it ended, or the start
 * timeout passed. */
static int starter_run(void *arg)
{
	struct ksb *p = arg;
	const struct pod_hooks *h = p->hooks;
	const struct kube_conf *kc = conf();
	struct err e = {{0}};
	if (!(p->k = open_api(kc, 0, &e)) || pod_make(p, h, &e) < 0) {
		starter_say(h->fd, "fail %d %s", (int)e.kind, e.msg);
		return 0;
	}
	double deadline = clock_mono() + (kc->start_timeout > 0 ? kc->start_timeout : 300);
	int wake = h->fd;
	struct kube_watch w = { .name = p->name, .wake_fd = &wake };
	struct start_watch sw = { .kind = ERR_INTERNAL };
	for (;;) {
		double left = deadline - clock_mono();
		if (left <= 0) {
			start_timed_out(p, &sw, &e);
			starter_say(h->fd, "fail %d %s", (int)e.kind, e.msg);
			break;
		}
		int wr = kube_watch_pod(p->k, &w, left, on_start_event, &sw, &e);
		if (wr < 0) {
			err_prefix(&e, _("kubernetes: pod %s"), p->name);
			starter_say(h->fd, "fail %d %s", (int)e.kind, e.msg);
			break;
		}
		if (wr > 0) {
			starter_say(h->fd, "ended %d %s", (int)sw.kind, sw.why);
			break;
		}
		char c;
		if (recv(h->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
			break;   /* the runner came */
	}
	return 0;
}

/* One line from the starter: 1 when it settles the start (rc in *rc), 0
 * to go on. */
static int starter_line(struct ksb *p, int fd, char *line, int *rc, struct err *e)
{
	char *rest = strchr(line, ' ');
	if (rest)
		*rest++ = '\0';
	if (!strcmp(line, "name") && rest) {
		char *name = strchr(rest, ' ');
		if (!name)
			goto bad;
		p->so.attempt = (unsigned)strtoul(rest, NULL, 10);
		free(p->name);
		p->name = xstrdup(name + 1);
		if (door_named(p, e) < 0 || fsx_write_all(fd, "ok\n", 3) < 0) {
			*rc = -1;
			return 1;
		}
		return 0;
	}
	if (!strcmp(line, "uid") && rest) {
		free(p->uid);
		p->uid = xstrdup(rest);
		if (door_made(p, e) < 0) {
			*rc = -1;
			return 1;
		}
		return 0;
	}
	if ((!strcmp(line, "fail") || !strcmp(line, "ended")) && rest) {
		char *msg = strchr(rest, ' ');
		enum err_kind kind = (enum err_kind)atoi(rest);
		msg = msg ? msg + 1 : "";
		if (!strcmp(line, "fail"))
			err_kind_set(e, kind, "%s", msg);
		else
			pod_ended(p, kind, msg, e);
		*rc = -1;
		return 1;
	}
bad:
	*rc = err_set(e, _("kubernetes: the process that starts pod %s said something else"),
	              p->name ? p->name : p->task_id);
	return 1;
}

/* Long: makes the pod and waits for its runner (pod_make, pod_wait_runner)
 * with the API's work in the starter; in this process itself where a copy
 * cannot be made (threads). */
static int pod_start(struct ksb *p, struct err *e)
{
	static const struct pod_hooks here = { door_named, door_made, -1 };
	int sv[2];
	kube_free(p->k);
	p->k = NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err_errno(e, _("kubernetes: cannot start pod %s"), p->task_id);
	struct pod_hooks h = { starter_named, starter_made, sv[1] };
	p->hooks = &h;
	struct child c = { .fn = starter_run, .arg = p, .flags = CHILD_DIE_WITH_PARENT };
	struct err ce = {{0}};
	int started = child_threads() <= 1 && child_start(&c, &ce) == 0;
	close(sv[1]);
	p->hooks = NULL;
	if (!started) {
		close(sv[0]);
		if (!(p->k = open_api(conf(), 0, e)))
			return -1;
		return pod_make(p, &here, e) < 0 || pod_wait_runner(p, e) < 0 ? -1 : 0;
	}
	const struct kube_conf *kc = conf();
	/* The starter bounds itself (the start timeout); this, the hang of
	 * a starter that does not. */
	double deadline = clock_mono() + (kc->start_timeout > 0 ? kc->start_timeout : 300) + 60;
	char buf[STARTER_LINE];
	size_t len = 0;
	int rc = -1;
	for (;;) {
		struct pollfd pf[2] = { { sv[0], POLLIN, 0 },
		                        { p->door ? door_fd(p->door) : -1, POLLIN, 0 } };
		double left = deadline - clock_mono();
		if (left <= 0) {
			err_set(e, _("kubernetes: pod %s did not start, and the process that starts it "
			             "did not say why"), p->name ? p->name : p->task_id);
			break;
		}
		if (poll(pf, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			err_errno(e, _("kubernetes: cannot wait for pod %s"), p->task_id);
			break;
		}
		if (pf[1].revents && pod_door(p, &rc, e))
			break;
		if (!pf[0].revents)
			continue;
		ssize_t n = read(sv[0], buf + len, sizeof buf - 1 - len);
		if (n <= 0) {
			err_set(e, _("kubernetes: pod %s did not start, and the process that starts it "
			             "did not say why"), p->name ? p->name : p->task_id);
			break;
		}
		len += (size_t)n;
		char *nl;
		int settled = 0;
		while (!settled && (nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			settled = starter_line(p, sv[0], buf, &rc, e);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
		}
		if (settled)
			break;
		if (len == sizeof buf - 1) {
			rc = err_set(e, _("kubernetes: the process that starts pod %s said something "
			                  "else"), p->name ? p->name : p->task_id);
			break;
		}
	}
	close(sv[0]);
	child_kill(&c, SIGKILL);
	child_finish(&c);
	return rc;
}

/* Output of a RUN of paddock's own, kept (at most 4 KiB) for a message,
 * or written to a file. */
struct own_out {
	struct buf text;
	int fd;
	uint64_t written;
	int failed;
};

static void own_output(void *arg, uint32_t id, uint64_t offset, const char *data, size_t len)
{
	(void)id;
	(void)offset;
	struct own_out *o = arg;
	if (o->fd >= 0) {
		if (!o->failed && fsx_write_all(o->fd, data, len) < 0)
			o->failed = 1;
		o->written += len;
	} else if (o->text.len < 4096) {
		buf_add(&o->text, data, len < 4096 - o->text.len ? len : 4096 - o->text.len);
	}
}

static char *const own_env[] = { "PATH=" KUBE_PATH, "LANG=C.UTF-8", "HOME=" SANDBOX_HOME, NULL };

/* Runs argv (paddock's own command) in the pod: its input the file in_fd
 * (size bytes; -1: none), its output to out_fd (-1: kept for the
 * message, at most 4 KiB), within deadline.  0 when it exited 0. */
static int own_run(struct ksb *p, char *const *argv, int in_fd, uint64_t size, int out_fd,
                   uint64_t out_max, double deadline, struct err *e)
{
	struct own_out o = { .fd = out_fd };
	struct runner_cmd rc = { .argv = argv, .env = own_env, .cwd = SANDBOX_WORKDIR,
	                         .flags = RP_RUN_FRESH | (in_fd >= 0 ? RP_RUN_STDIN : 0),
	                         .output = own_output, .arg = &o };
	rc.limits.output = out_max;
	rc.limits.time_ms = (uint64_t)((deadline - clock_mono()) * 1000.0) + 1;
	uint32_t id = runner_start(p->rn, &rc, e);
	if (!id) {
		buf_free(&o.text);
		return runner_fault(p->rn) != RUNNER_OK ? err_kind_mark(e, ERR_RUNNER) : -1;
	}
	int rcode = 0;
	if (in_fd >= 0) {
		char chunk[RP_CHUNK];
		uint64_t sent = 0;
		while (rcode == 0 && sent < size) {
			size_t room = runner_stdin_room(p->rn, id);
			if (!room) {
				int st = runner_step(p->rn, id, clock_mono() + 0.2 < deadline ? clock_mono() + 0.2 : deadline, e);
				if (st < 0 || clock_mono() >= deadline)
					rcode = st < 0 ? -1 : err_set(e, _("kubernetes: sending the workspace timed out"));
				if (st == 1)
					break; /* it ended early: its END says why */
				continue;
			}
			size_t want = size - sent < sizeof chunk ? (size_t)(size - sent) : sizeof chunk;
			if (want > room)
				want = room;
			ssize_t n = read(in_fd, chunk, want);
			if (n <= 0) {
				rcode = err_errno(e, _("cannot read the workspace's tar"));
				break;
			}
			if (runner_stdin(p->rn, id, chunk, (size_t)n, e) < 0)
				rcode = -1;
			sent += (uint64_t)n;
		}
		if (rcode == 0 && runner_stdin(p->rn, id, "", 0, e) < 0)
			rcode = -1;
	}
	struct runner_end end;
	if (rcode == 0 && runner_wait(p->rn, id, deadline, &end, e) < 0)
		rcode = -1;
	if (rcode == 0 && (end.how != RP_END_EXITED || end.code != 0 || o.failed)) {
		char *text = sanitize_quote_str(o.text.len ? o.text.data : end.message);
		rcode = err_set(e, _("kubernetes: %s in the pod failed (%s %d): %s"), argv[0],
		                end.how == RP_END_EXITED ? "exit status" : "signal", end.code, text);
		free(text);
	}
	if (rcode < 0 && runner_fault(p->rn) != RUNNER_OK)
		err_kind_mark(e, ERR_RUNNER);
	buf_free(&o.text);
	return rcode;
}

/* Writes len bytes at inside, mode, through the runner. */
static int put_mem(struct ksb *p, const char *inside, const char *data, size_t len, unsigned mode,
                   struct err *e)
{
	int fd = memfd_create("paddock-put", MFD_CLOEXEC);
	if (fd < 0)
		return err_errno(e, _("cannot create a memory file"));
	int rc = fsx_write_all(fd, data, len) < 0 || lseek(fd, 0, SEEK_SET) < 0
	         ? err_errno(e, _("cannot write a memory file"))
	         : runner_file_put(p->rn, inside, mode, fd, len, clock_mono() + SANDBOX_FILE_SECONDS, e);
	close(fd);
	if (rc < 0 && runner_fault(p->rn) != RUNNER_OK)
		err_kind_mark(e, ERR_RUNNER);
	return rc;
}

/* Where files[i].host is shown in the pod (its root is the image's,
 * read-only): under /paddock/files, at the same path. */
#define KUBE_FILES "/paddock/files"

static const char *const make_dirs[] = { "mkdir", "-p", "--", NULL };

/* The folders the home's files and the host files need, made by one
 * mkdir -p. */
static int make_parents(struct ksb *p, const struct sandbox_spec *spec, double deadline,
                        struct err *e)
{
	char **argv = xcalloc(4 + spec->nhome_files + spec->nfiles, sizeof *argv);
	size_t n = 0;
	for (; make_dirs[n]; n++)
		argv[n] = (char *)make_dirs[n];
	size_t first = n;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < spec->nhome_files; i++) {
		const char *f = spec->home_files[i].path, *slash = f ? strrchr(f, '/') : NULL;
		if (!f || f[0] == '/' || strstr(f, ".."))
			rc = err_set(e, _("bad home file path %s"), f ? f : "(null)");
		else
			argv[n++] = slash ? xasprintf(SANDBOX_HOME "/%.*s", (int)(slash - f), f)
			                  : xstrdup(SANDBOX_HOME);
	}
	for (size_t i = 0; rc == 0 && i < spec->nfiles; i++) {
		const char *f = spec->files[i].host, *slash = strrchr(f, '/');
		argv[n++] = xasprintf(KUBE_FILES "%.*s", (int)(slash - f), f);
	}
	argv[n] = NULL;
	if (rc == 0 && n > first)
		rc = own_run(p, argv, -1, 0, -1, 0, deadline, e);
	for (size_t i = first; i < n; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

/* A file in <data>/blobs with no name (gone with its descriptor). */
static int blob_tmpfile(const char *data_dir, struct err *e)
{
	char *dir = paths_blobs_dir(data_dir);
	int fd = fsx_mkdir_p(dir, 0700, e) < 0 ? -1 : open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && !e->msg[0])
		err_errno(e, _("cannot create a file in %s"), dir);
	free(dir);
	return fd;
}

/* The normalised tar (tarblob.h) of the host folder dir (a template, an
 * agent's install), made once: content-addressed in <data>/blobs, its
 * name beside the folder in <dir>.blob with the folder's inode and
 * mtime, so that a folder made again (an agent installed anew) gets a
 * blob of its own.  The blob's path, malloc'd; NULL with e set. */
static char *ws_blob(const char *dir, struct err *e)
{
	const char *data_dir = sandbox_options()->data_dir;
	char *note = xasprintf("%s.blob", dir), *path = NULL, *id = NULL;
	char hex[TARBLOB_HEX];
	struct buf b = { 0 };
	struct err ignored = {{0}};
	struct stat st;
	if (stat(dir, &st) < 0) {
		err_errno(e, _("cannot read %s"), dir);
		goto out;
	}
	id = xasprintf(" %llu %lld.%09ld", (unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec,
	               st.st_mtim.tv_nsec);
	if (fsx_read_file(note, 256, &b, &ignored) == 0 && b.len > TARBLOB_HEX - 1 &&
	    !strcmp(b.data + TARBLOB_HEX - 1, id)) {
		b.data[TARBLOB_HEX - 1] = '\0';
		path = paths_blob(data_dir, b.data);
		if (access(path, R_OK) == 0)
			goto out;
		free(path);
		path = NULL;
	}
	if (tarblob_store_dir(data_dir, dir, NULL, hex, e) < 0)
		goto out;
	path = paths_blob(data_dir, hex);
	/* Beside and renamed: another process may read it meanwhile. */
	char *tmp = xasprintf("%s.%ld", note, (long)getpid());
	char *text = xasprintf("%s%s", hex, id);
	if (fsx_write_file(tmp, text, strlen(text), 0644, &ignored) < 0 || rename(tmp, note) < 0)
		unlink(tmp);
	free(text);
	free(tmp);
out:
	buf_free(&b);
	free(id);
	free(note);
	return path;
}

/* The host folder tpl's tar piped into tar -x in the pod's folder into:
 * the workspace (a direct one's made for the set-up alone, not kept), or
 * an agent's install. */
static int ws_send(struct ksb *p, const char *tpl, const char *into, int direct, double deadline,
                   struct err *e)
{
	char *blob = NULL;
	int fd = -1, rc = -1;
	struct stat st;
	if (direct) {
		fd = blob_tmpfile(sandbox_options()->data_dir, e);
		if (fd >= 0 && (tarblob_from_dir(tpl, fd, NULL, NULL, NULL, e) < 0 ||
		                lseek(fd, 0, SEEK_SET) < 0)) {
			close(fd);
			fd = -1;
		}
	} else if ((blob = ws_blob(tpl, e)) && (fd = open(blob, O_RDONLY | O_CLOEXEC)) < 0) {
		err_errno(e, _("cannot open %s"), blob);
	}
	if (fd < 0) {
		err_prefix(e, _("kubernetes: the workspace of %s"), tpl);
	} else if (fstat(fd, &st) < 0) {
		err_errno(e, _("cannot read the workspace of %s"), tpl);
	} else {
		char *const untar[] = { "tar", "-x", "-p", "-f", "-", "-C", (char *)into, NULL };
		rc = own_run(p, untar, fd, (uint64_t)st.st_size, -1, 0, deadline, e);
	}
	if (fd >= 0)
		close(fd);
	free(blob);
	return rc;
}

/* Everything the pod needs before its first command: the workspace, the
 * git configuration, the prompt, the home's files, the host files. */
static int pod_fill(struct ksb *p, const struct sandbox_spec *spec, struct err *e)
{
	double deadline = clock_mono() + 600;
	/* The agent's install, where bwrap shows it (its CLIs on PATH). */
	if (spec->agent_dir &&
	    ws_send(p, spec->agent_dir, SANDBOX_AGENT_DIR, 0, deadline, e) < 0)
		return err_prefix(e, _("the agent's install"));
	if (ws_send(p, spec->ws.template_dir, SANDBOX_WORKDIR, p->direct, deadline, e) < 0 ||
	    put_mem(p, KUBE_GITCONFIG, sandbox_gitconfig_data, strlen(sandbox_gitconfig_data), 0444,
	            e) < 0 ||
	    make_parents(p, spec, deadline, e) < 0)
		return -1;
	if (spec->prompt_file) {
		if (sandbox_runner_put(p->rn, spec->prompt_file, SANDBOX_PROMPT, 0644, SANDBOX_PROMPT_MAX,
		                       e) < 0)
			return err_prefix(e, _("cannot copy the prompt into the sandbox"));
	} else if (put_mem(p, SANDBOX_PROMPT, "", 0, 0644, e) < 0) {
		return -1;
	}
	for (size_t i = 0; i < spec->nhome_files; i++) {
		char *inside = xasprintf(SANDBOX_HOME "/%s", spec->home_files[i].path);
		int rc = put_mem(p, inside, spec->home_files[i].content,
		                 strlen(spec->home_files[i].content), 0600, e);
		free(inside);
		if (rc < 0)
			return -1;
	}
	for (size_t i = 0; i < spec->nfiles; i++) {
		char *inside = xasprintf(KUBE_FILES "%s", spec->files[i].host);
		int rc = sandbox_runner_put(p->rn, spec->files[i].host, inside, 0555, 64u << 20, e);
		free(inside);
		if (rc < 0)
			return -1;
		p->files = xrealloc(p->files, (p->nfiles + 1) * sizeof *p->files);
		p->files[p->nfiles++] = xstrdup(spec->files[i].host);
	}
	return 0;
}

static void kb_destroy(struct sandbox *sb);

static int conf_check(struct err *e);

static int kb_create(struct sandbox **out, const struct sandbox_spec *spec, struct err *e)
{
	*out = NULL;
	if (conf_check(e) < 0)
		return -1;
	const struct kube_conf *kc = conf();
	if (!spec->task_id || !*spec->task_id)
		return err_set(e, _("the sandbox needs a task id"));
	if (!spec->ws.template_dir || spec->ws.template_dir[0] != '/')
		return err_set(e, _("the workspace %s is not a directory"),
		               spec->ws.template_dir ? spec->ws.template_dir : "(none)");
	if (spec->net.netns_fd >= 0)
		return err_set(e, _("the kubernetes backend cannot join a network namespace"));
	struct ksb *p = xcalloc(1, sizeof *p);
	p->task_id = xstrdup(spec->task_id);
	p->limits = spec->limits;
	p->direct = spec->ws.direct;
	p->template_dir = xstrdup(spec->ws.template_dir);
	p->owner = owner_of(getpid());
	p->instance = paths_instance_id(sandbox_options()->data_dir, e);
	int port = 0;
	if (!p->owner || !p->instance ||
	    split_hostport(kc->door, &p->door_host, &port) < 0 || !(p->k = open_api(kc, 0, e))) {
		if (!p->owner)
			err_set(e, _("cannot read this process's start time in /proc"));
		kb_destroy((struct sandbox *)(void *)p);
		return -1;
	}
	p->probe = probe_list(kc, p->k);
	p->so = (struct kube_spec_opts){
		.namespace = p->ns = xstrdup(kube_namespace(p->k)), .instance = p->instance,
		.task = p->task_id,
		.role = role_of(p->task_id), .image = kc->image,
		.runner_image = kc->runner_image ? kc->runner_image : kc->image,
		.runner_path = kc->runner_path ? kc->runner_path : KUBE_CONF_RUNNER_PATH,
		.limits = &p->limits, .runtime_class = kc->runtime_class,
		.host_users_false = !kc->host_users, .front_door = p->door_host,
		.front_door_port = port, .front_door_cidr = kc->door_cidr, .audience = kc->audience,
		.gateway_ports = spec->net.bridge_dir ? spec->net.bridge_ports : NULL,
		.probe = p->probe, .owner = p->owner, .agent = spec->agent_dir != NULL,
		.resume_seconds = kc->resume_timeout,
	};
	p->agent = spec->agent_dir != NULL;
	/* A task's pod is kept at its gate (paddock.gate-timeout): the
	 * backstop is past that. */
	if (p->so.role == KUBE_ROLE_TASK)
		p->so.deadline = (long)(p->limits.timeout > 0 ? p->limits.timeout : 86400) +
		                 (long)sandbox_options()->keep_seconds + KUBE_SPEC_DEADLINE_SLACK;
	if (pod_start(p, e) < 0 || pod_gateway(p, spec, e) < 0 || pod_fill(p, spec, e) < 0) {
		kb_destroy((struct sandbox *)(void *)p);
		return -1;
	}
	/* Not kept for the task's life (its TLS context and CA are most of
	 * a supervisor's own memory): made again for the pod's end. */
	kube_free(p->k);
	p->k = NULL;
	malloc_trim(0);
	*out = (struct sandbox *)(void *)p;
	return 0;
}

/* ---- run ---- */

/* After the session failed: the pod's own account of why, when it has
 * one (OOMKilled, Evicted), replaces the runner's. */
static int pod_failed(struct ksb *p, struct err *e)
{
	if (e->kind != ERR_RUNNER)
		return -1;
	enum err_kind kind;
	char why[1024];
	if (pod_why_dead(p, &kind, why, sizeof why)) {
		p->dead = 1;
		/* A runner that gave up on a lost connection ended its pod:
		 * the loss is the cause, the pod's end its consequence. */
		if (kind == ERR_INTERNAL && p->rn && runner_lost(p->rn)) {
			char lost[ERR_MAX];
			snprintf(lost, sizeof lost, "%s", e->msg);
			err_kind_set(e, ERR_RUNNER, "%s (kubernetes: %s)", lost, why);
		} else
			err_kind_set(e, kind == ERR_INTERNAL ? ERR_RUNNER : kind, "kubernetes: %s", why);
	}
	return -1;
}

static char *translate_file(const struct ksb *p, const char *a);

static int kb_run(struct sandbox *sb, const struct sandbox_cmd *cmd, struct sandbox_result *r,
                  struct err *e)
{
	struct ksb *p = ksb(sb);
	int begun = sandbox_run_begin(cmd, r, e);
	if (begun != 0)
		return begun < 0 ? -1 : 0;
	struct buf envb = { 0 };
	char *fixed[] = {
		p->agent ? "PATH=" SANDBOX_AGENT_DIR "/node_modules/.bin:" KUBE_PATH : "PATH=" KUBE_PATH,
		"HOME=" SANDBOX_HOME, "USER=agent", "LOGNAME=agent", "LANG=C.UTF-8",
		"TMPDIR=/tmp", "PADDOCK_PROMPT_FILE=" SANDBOX_PROMPT, "PADDOCK_WORK=" SANDBOX_WORKDIR,
		"PADDOCK_OUT=" SANDBOX_OUTDIR, "GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_SYSTEM=" KUBE_GITCONFIG,
	};
	size_t nf = sizeof fixed / sizeof *fixed, nc = 0, na = 0;
	while (cmd->env && cmd->env[nc])
		nc++;
	while (cmd->argv[na])
		na++;
	char **env = xcalloc(nf + nc + 2, sizeof *env);
	size_t n = 0;
	for (size_t i = 0; i < nf; i++)
		env[n++] = xstrdup(fixed[i]);
	env[n++] = xasprintf("PADDOCK_TASK_ID=%s", p->task_id);
	for (size_t i = 0; i < nc; i++) {
		/* A later NAME= replaces an earlier one, as env(1) would. */
		size_t k = strcspn(cmd->env[i], "=") + 1, j;
		for (j = 0; j < n && strncmp(env[j], cmd->env[i], k); j++)
			;
		if (j < n)
			free(env[j]);
		env[j < n ? j : n++] = xstrdup(cmd->env[i]);
	}
	char **argv = xcalloc(na + 1, sizeof *argv);
	for (size_t i = 0; i < na; i++)
		argv[i] = translate_file(p, cmd->argv[i]);
	int rc = sandbox_runner_run(p->rn, cmd, argv, env, SANDBOX_WORKDIR, &p->limits, RP_RUN_FRESH,
	                            NULL, NULL, r, e);
	for (size_t i = 0; i < na; i++)
		free(argv[i]);
	free(argv);
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(env);
	buf_free(&envb);
	return rc < 0 ? pod_failed(p, e) : rc;
}

/* A host file the spec showed (an agent's script), as the pod has it. */
static char *translate_file(const struct ksb *p, const char *a)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i], a))
			return xasprintf(KUBE_FILES "%s", a);
	return xstrdup(a);
}

/* ---- copies ---- */

static int kb_copy_out(struct sandbox *sb, const char *inside, const char *host, uint64_t cap,
                       struct err *e)
{
	struct ksb *p = ksb(sb);
	const char *under, *rel;
	if (sandbox_inside_split(inside, &under, &rel, e) < 0)
		return -1;
	return sandbox_runner_get(p->rn, inside, host, cap, e) < 0 ? pod_failed(p, e) : 0;
}

static int kb_copy_in(struct sandbox *sb, const char *host, const char *inside, struct err *e)
{
	struct ksb *p = ksb(sb);
	int rc;
	if (!strcmp(inside, SANDBOX_PROMPT)) {
		rc = sandbox_runner_put(p->rn, host, SANDBOX_PROMPT, 0644, SANDBOX_PROMPT_MAX, e);
	} else {
		const char *under, *rel;
		if (sandbox_inside_split(inside, &under, &rel, e) < 0)
			return -1;
		if (strcmp(under, SANDBOX_OUTDIR) || strchr(rel, '/'))
			return err_set(e, _("%s: files go in directly under %s"), inside, SANDBOX_OUTDIR);
		/* Read-only inside, as the other backends leave it. */
		rc = sandbox_runner_put(p->rn, host, inside, 0444, (uint64_t)p->limits.disk, e);
	}
	return rc < 0 ? pod_failed(p, e) : 0;
}

/* ---- a direct workspace back to the host ---- */

/* The blob hex unpacked in place of the folder dir: beside it first,
 * then the two swapped, so that dir is whole, the old or the new. */
static int blob_replace_dir(const char *data_dir, const char *hex, const char *dir, struct err *e)
{
	char *blob = paths_blob(data_dir, hex), *fresh = xasprintf("%s.new", dir);
	int rc = -1, fd = open(blob, O_RDONLY | O_CLOEXEC);
	struct err ignored = {{0}};
	fsx_rm_rf(fresh, &ignored);
	if (fd < 0)
		err_errno(e, _("cannot open %s"), blob);
	else if (mkdir(fresh, 0755) < 0)
		err_errno(e, _("cannot create %s"), fresh);
	else if (tarblob_extract(fd, fresh, (uid_t)-1, (gid_t)-1, e) == 0) {
		if (renameat2(AT_FDCWD, fresh, AT_FDCWD, dir, RENAME_EXCHANGE) < 0)
			err_errno(e, _("cannot put %s in place of %s"), fresh, dir);
		else
			rc = 0;
	}
	fsx_rm_rf(fresh, &ignored);
	if (fd >= 0)
		close(fd);
	free(blob);
	free(fresh);
	return rc;
}

/* finish(): the pod's /work, as a normalised tar (the pod's tar, its
 * stream the agent's side's: normalised, stored, then unpacked), in
 * place of the template on the host, which the set-up's commands did not
 * write. */
static int kb_finish(struct sandbox *sb, struct err *e)
{
	struct ksb *p = ksb(sb);
	if (!p->direct)
		return 0;
	const char *data_dir = sandbox_options()->data_dir;
	int fd = blob_tmpfile(data_dir, e);
	if (fd < 0)
		return -1;
	int rc = -1;
	static char *const tarc[] = { "tar", "-c", "-f", "-", "-C", SANDBOX_WORKDIR, ".", NULL };
	uint64_t cap = p->limits.disk ? (uint64_t)p->limits.disk + (64u << 20) : 0;
	char hex[TARBLOB_HEX];
	if (own_run(p, tarc, -1, 0, fd, cap, clock_mono() + 600, e) < 0)
		pod_failed(p, e);
	else if (lseek(fd, 0, SEEK_SET) < 0 || tarblob_store(data_dir, fd, NULL, hex, e) < 0)
		err_prefix(e, _("the workspace the set-up left"));
	else if (blob_replace_dir(data_dir, hex, p->template_dir, e) == 0)
		rc = 0;
	close(fd);
	/* No <template>.blob here: the folder is still the build's, renamed
	 * after; a task's ws_blob() finds the same blob by its content. */
	return rc;
}

/* ---- destroy ---- */

static void kb_destroy(struct sandbox *sb)
{
	struct ksb *p = ksb(sb);
	if (!p)
		return;
	/* The channel's end makes the runner kill everything and exit. */
	runner_close(p->rn);
	door_close(p->door);
	if (p->uid && api(p)) {
		struct err e = {{0}};
		kube_pod_delete(p->k, p->name, p->uid, KUBE_SPEC_GRACE, &e);
	}
	kube_free(p->k);
	kb_free(p);
}

/* ---- janitor ---- */

/* Whether the owner annotation names a process that is still there. */
static int owner_alive(const char *owner)
{
	const char *dot1 = owner ? strchr(owner, '.') : NULL;
	if (!dot1)
		return 0;
	long pid = strtol(dot1 + 1, NULL, 10);
	if (pid <= 0)
		return 0;
	char *now = owner_of((pid_t)pid);
	int alive = now && !strcmp(now, owner);
	free(now);
	return alive;
}

static atomic_int janitor_busy;
/* Each of the janitor's requests, at most; and how long the process's
 * exit waits for a janitor still at work (its TLS must not be torn down
 * under it by OpenSSL's exit handler). */
#define JANITOR_REQUEST_S 5.0
#define JANITOR_EXIT_S 12.0

static void janitor_wait(void)
{
	double until = clock_mono() + JANITOR_EXIT_S;
	while (atomic_load(&janitor_busy) && clock_mono() < until)
		clock_sleep(0.01);
}

/* The instance's pods whose owner is gone, deleted.  Off the caller's
 * loop: a thread of its own (the scheduler's loop must not wait on the
 * API). */
static void *janitor_run(void *arg)
{
	(void)arg;
	const struct sandbox_options *o = sandbox_options();
	struct err e = {{0}};
	char *instance = paths_instance_id(o->data_dir, &e);
	struct kube *k = instance ? open_api(o->kube, JANITOR_REQUEST_S, &e) : NULL;
	if (k) {
		char *sel = xasprintf(KUBE_SPEC_MANAGED_BY "=paddock," KUBE_SPEC_INSTANCE "=%s", instance);
		json_t *list = kube_pod_list(k, sel, &e);
		json_t *pod;
		size_t i;
		json_array_foreach(json_object_get(list, "items"), i, pod) {
			json_t *md = json_object_get(pod, "metadata");
			const char *name = jstr(md, "name"), *uid = jstr(md, "uid");
			const char *owner = jstr(json_object_get(md, "annotations"), KUBE_SPEC_OWNER);
			if (!name || json_object_get(md, "deletionTimestamp") || owner_alive(owner))
				continue;
			struct err de = {{0}};
			kube_pod_delete(k, name, uid, 0, &de);
		}
		json_decref(list);
		free(sel);
	}
	kube_free(k);
	free(instance);
	atomic_store(&janitor_busy, 0);
	return NULL;
}

static void kb_janitor(void)
{
	const struct sandbox_options *o = sandbox_options();
	if (!o->kube || !o->data_dir || !o->kube->image)
		return;
	int idle = 0;
	if (!atomic_compare_exchange_strong(&janitor_busy, &idle, 1))
		return;
	static int registered;
	if (!registered++)
		atexit(janitor_wait);
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, janitor_run, NULL) != 0)
		atomic_store(&janitor_busy, 0);
	pthread_attr_destroy(&a);
}

/* ---- preflight, owner, term ---- */

/* What create() needs of the configuration (no request made). */
static int conf_check(struct err *e)
{
	const struct sandbox_options *o = sandbox_options();
	const struct kube_conf *kc = o->kube;
	if (!kc || !o->data_dir)
		return err_set(e, _("the kubernetes backend is not set up in this process"));
	if (!kc->image)
		return err_set(e, _("kubernetes: set [kubernetes] image to the sandbox image (the "
		                    "agents' CLIs, git, tar and the toolchains); see paddock(1), "
		                    "KUBERNETES"));
	if (!kc->door)
		return err_set(e, _("kubernetes: set [kubernetes] front-door to the IP address and port "
		                    "the pods dial to reach paddock (a Service's, or this host's); see "
		                    "paddock(1), KUBERNETES"));
	return 0;
}

/* And the API: reachable, paddock's user allowed, the namespace made
 * as the manifest makes it, its policies before any pod (kube_check.h). */
static int kb_preflight(struct err *e)
{
	if (conf_check(e) < 0)
		return -1;
	return kube_check_preflight(conf(), NULL, sandbox_options()->data_dir, e);
}

static void kb_owner(uid_t *uid, gid_t *gid)
{
	*uid = geteuid();
	*gid = getegid();
}

static int kb_term(struct sandbox *sb)
{
	(void)sb;
	return 1;
}

static const struct sandbox_backend kube_backend = {
	.name = "kubernetes",
	.nets = SANDBOX_NET_BRIDGE,
	.create = kb_create,
	.run = kb_run,
	.copy_out = kb_copy_out,
	.copy_in = kb_copy_in,
	.finish = kb_finish,
	.term = kb_term,
	.destroy = kb_destroy,
	.preflight = kb_preflight,
	.janitor = kb_janitor,
	.owner = kb_owner,
};

const struct sandbox_backend *sandbox_backend_kube(void)
{
	return &kube_backend;
}
