/* kube_spec: the sandbox Pod and the admin's objects (kube_spec.h), field
 * by field as a reviewer would check them: the Pod Security "restricted"
 * settings on the pod and on both containers, no token automounted, no
 * service links or DNS, the emptyDirs and their sizes, the resources from
 * [limits], the projected token (nothing secret in the spec), the names
 * and labels; then hostile options (a task id or image with capitals,
 * spaces, newlines, 300 characters; limits of 0 or huge) refused with a
 * message, never a malformed name or an injected field.  With
 * KUBE_SPEC_OUT set, every object built is written there as JSON
 * (NAME.json) for tests/kube-spec.test, which checks them against the
 * real Kubernetes schemas. */
#include "autoconfig.h"
#include "kube_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sandbox.h"
#include "tap.h"
#include "testlib.h"

/* The value at a dotted path ("spec.containers.0.image"); borrowed. */
static json_t *at(json_t *j, const char *path)
{
	char *p = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(p, ".", &save); k && j; k = strtok_r(NULL, ".", &save)) {
		if (json_is_array(j))
			j = json_array_get(j, strtoul(k, NULL, 10));
		else
			j = json_object_get(j, k);
	}
	free(p);
	return j;
}

static const char *str(json_t *j, const char *path)
{
	const char *s = json_string_value(at(j, path));
	return s ? s : "(none)";
}

/* One key of an object whose keys have dots (labels), "(none)" if absent. */
static const char *key(json_t *obj, const char *k)
{
	const char *s = json_string_value(json_object_get(obj, k));
	return s ? s : "(none)";
}

static const char *label(json_t *j, const char *k)
{
	return key(at(j, "metadata.labels"), k);
}

static int is_false(json_t *j, const char *path)
{
	return json_is_false(at(j, path));
}

static int is_true(json_t *j, const char *path)
{
	return json_is_true(at(j, path));
}

static long long num(json_t *j, const char *path)
{
	json_t *v = at(j, path);
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static const char *outdir;

static void save(const char *name, json_t *j)
{
	if (!outdir || !j)
		return;
	char *path = xasprintf("%s/%s.json", outdir, name);
	tap_ok(json_dump_file(j, path, JSON_INDENT(1) | JSON_SORT_KEYS) == 0, "%s written", path);
	free(path);
}

static struct limits lim;

static struct kube_spec_opts base(void)
{
	lim = (struct limits){ .timeout = 1800, .memory = 4ull << 30, .pids = 512,
		               .disk = 8ull << 30, .output = 16 << 20, .cpus = 2 };
	return (struct kube_spec_opts){
		.namespace = "paddock-sandboxes", .instance = "inst-7f3a", .task = "k3x9m2qa7d",
		.role = KUBE_ROLE_TASK, .attempt = 1, .image = "registry.example.com/team/agents:1.4",
		.runner_image = "registry.example.com/paddock/runner@sha256:"
		                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		.runner_path = "/usr/lib/paddock/paddock-runner", .limits = &lim,
		.size_work = 6ull << 30, .front_door = "10.0.0.5", .front_door_port = 7443,
	};
}

/* Both containers: what PSS "restricted" asks, and a read-only root. */
static void container_checks(json_t *c, const char *which)
{
	tap_ok(is_false(c, "securityContext.allowPrivilegeEscalation"),
	       "%s: allowPrivilegeEscalation false", which);
	tap_ok(is_false(c, "securityContext.privileged"), "%s: not privileged", which);
	tap_ok(is_true(c, "securityContext.readOnlyRootFilesystem"), "%s: read-only root", which);
	tap_ok(is_true(c, "securityContext.runAsNonRoot") &&
	           num(c, "securityContext.runAsUser") == SANDBOX_INNER_UID &&
	           num(c, "securityContext.runAsGroup") == SANDBOX_INNER_UID,
	       "%s: non-root, uid and gid 1000", which);
	json_t *drop = at(c, "securityContext.capabilities.drop");
	tap_ok(json_array_size(drop) == 1 && !strcmp(str(drop, "0"), "ALL") &&
	           !at(c, "securityContext.capabilities.add"),
	       "%s: every capability dropped, none added", which);
	tap_ok(!strcmp(str(c, "securityContext.seccompProfile.type"), "RuntimeDefault"),
	       "%s: seccomp RuntimeDefault", which);
	tap_ok(!at(c, "ports") && !at(c, "envFrom"), "%s: no ports, no envFrom", which);
}

static json_t *mount_of(json_t *c, const char *path)
{
	size_t i;
	json_t *m;
	json_array_foreach(at(c, "volumeMounts"), i, m)
		if (!strcmp(str(m, "mountPath"), path))
			return m;
	return NULL;
}

static json_t *volume(json_t *pod, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(at(pod, "spec.volumes"), i, v)
		if (!strcmp(str(v, "name"), name))
			return v;
	return NULL;
}

static void pod_checks(void)
{
	struct kube_spec_opts o = base();
	struct err e = { 0 };
	json_t *pod = kube_spec_pod(&o, &e);
	tap_ok(pod != NULL, "the task's pod is built %s", e.msg);
	if (!pod)
		return;
	save("pod-task", pod);
	tap_ok(!strcmp(str(pod, "apiVersion"), "v1") && !strcmp(str(pod, "kind"), "Pod"), "a v1 Pod");
	tap_ok(!strcmp(str(pod, "metadata.name"), "pdk-k3x9m2qa7d-task-1"), "named pdk-<task>-<role>-<n>: %s",
	       str(pod, "metadata.name"));
	tap_ok(!strcmp(str(pod, "metadata.namespace"), "paddock-sandboxes"), "in the namespace");
	json_t *l = at(pod, "metadata.labels");
	tap_ok(json_object_size(l) == 4 && !strcmp(key(l, "app.kubernetes.io/managed-by"), "paddock") &&
	           !strcmp(key(l, "paddock.dev/instance"), "inst-7f3a") &&
	           !strcmp(key(l, "paddock.dev/task"), "k3x9m2qa7d") &&
	           !strcmp(key(l, "paddock.dev/role"), "task"),
	       "labelled managed-by paddock, instance, task and role");
	json_t *s = at(pod, "spec");
	tap_ok(is_false(s, "automountServiceAccountToken"), "no service-account token automounted");
	tap_ok(!strcmp(str(s, "serviceAccountName"), KUBE_SPEC_SERVICE_ACCOUNT),
	       "runs as the manifest's service account");
	tap_ok(is_false(s, "enableServiceLinks"), "no service links");
	tap_ok(!strcmp(str(s, "dnsPolicy"), "None") && json_array_size(at(s, "dnsConfig.nameservers")) == 1 &&
	           !strcmp(str(s, "dnsConfig.nameservers.0"), "127.0.0.1") && !at(s, "dnsConfig.searches"),
	       "dnsPolicy None, the one nameserver loopback");
	tap_ok(!strcmp(str(s, "restartPolicy"), "Never"), "restartPolicy Never");
	tap_ok(num(s, "terminationGracePeriodSeconds") >= 0 && num(s, "terminationGracePeriodSeconds") <= 5,
	       "a short grace period: %lld", num(s, "terminationGracePeriodSeconds"));
	tap_ok(num(s, "activeDeadlineSeconds") == 1800 + KUBE_SPEC_DEADLINE_SLACK,
	       "activeDeadlineSeconds: the timeout and the slack");
	tap_ok(is_false(s, "hostNetwork") && is_false(s, "hostPID") && is_false(s, "hostIPC"),
	       "no host namespaces");
	tap_ok(!at(s, "runtimeClassName") && !at(s, "hostUsers"), "no runtime class or hostUsers unless asked");
	tap_ok(is_true(s, "securityContext.runAsNonRoot") && num(s, "securityContext.runAsUser") == 1000 &&
	           num(s, "securityContext.runAsGroup") == 1000 && num(s, "securityContext.fsGroup") == 1000,
	       "pod: non-root, uid, gid and fsGroup 1000");
	tap_ok(!strcmp(str(s, "securityContext.seccompProfile.type"), "RuntimeDefault"),
	       "pod: seccomp RuntimeDefault");
	tap_ok(json_array_size(at(s, "containers")) == 1 && json_array_size(at(s, "initContainers")) == 1,
	       "one init container, one container");
	json_t *init = at(s, "initContainers.0"), *c = at(s, "containers.0");
	container_checks(init, "init");
	container_checks(c, "main");
	tap_ok(!strcmp(str(init, "image"), o.runner_image) && !strcmp(str(init, "command.0"), "cp") &&
	           !strcmp(str(init, "command.2"), o.runner_path) &&
	           !strcmp(str(init, "command.3"), "/runner/paddock-runner") &&
	           !strcmp(str(init, "volumeMounts.0.name"), "runner"),
	       "the init container copies the runner into its emptyDir");
	tap_ok(!strcmp(str(c, "image"), o.image) && json_array_size(at(c, "command")) == 1 &&
	           !strcmp(str(c, "command.0"), SANDBOX_RUNNER) && !at(c, "args") &&
	           !strcmp(str(c, "workingDir"), "/work"),
	       "the main container runs the runner as PID 1, in /work");
	json_t *rm = mount_of(c, SANDBOX_RUNNER);
	tap_ok(rm && !strcmp(str(rm, "name"), "runner") && is_true(rm, "readOnly") &&
	           !strcmp(str(rm, "subPath"), "paddock-runner"),
	       "the runner is mounted read-only at /paddock/runner");
	static const struct { const char *path, *vol, *size; } dirs[] = {
		{ "/work", "work", "6442450944" }, { "/out", "out", "8589934592" },
		{ "/home/agent", "home", "8589934592" }, { "/tmp", "tmp", "8589934592" },
		{ "/paddock", "paddock", "64Mi" },
	};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		json_t *m = mount_of(c, dirs[i].path), *v = volume(pod, dirs[i].vol);
		tap_ok(m && !strcmp(str(m, "name"), dirs[i].vol) && !at(m, "readOnly") && v &&
		           !strcmp(str(v, "emptyDir.sizeLimit"), dirs[i].size) && json_object_size(v) == 2,
		       "%s: a writable emptyDir of %s", dirs[i].path, dirs[i].size);
	}
	tap_ok(!strcmp(str(volume(pod, "runner"), "emptyDir.sizeLimit"), "64Mi"), "the runner's emptyDir is sized");
	json_t *tv = volume(pod, "token"), *tm = mount_of(c, KUBE_SPEC_TOKEN_DIR);
	tap_ok(tv && !strcmp(str(tv, "projected.sources.0.serviceAccountToken.audience"), "paddock") &&
	           num(tv, "projected.sources.0.serviceAccountToken.expirationSeconds") == 3600 &&
	           json_array_size(at(tv, "projected.sources")) == 1 && tm && is_true(tm, "readOnly"),
	       "the credential: a projected token with paddock's audience, read-only");
	size_t i;
	json_t *v;
	int only = 1;
	json_array_foreach(at(s, "volumes"), i, v)
		only &= at(v, "emptyDir") || at(v, "projected");
	tap_ok(only && json_array_size(at(s, "volumes")) == 7, "only emptyDirs and the projected token");
	json_t *env = at(c, "env");
	int secret = 0, door = 0, tokenfile = 0;
	json_array_foreach(env, i, v) {
		secret |= at(v, "valueFrom") != NULL;
		door |= !strcmp(str(v, "name"), "PADDOCK_FRONT_DOOR") && !strcmp(str(v, "value"), "10.0.0.5:7443");
		tokenfile |= !strcmp(str(v, "name"), "PADDOCK_TOKEN_FILE") &&
		             !strcmp(str(v, "value"), KUBE_SPEC_TOKEN_PATH);
	}
	tap_ok(door && tokenfile && !secret, "env: the front door, the token's file, nothing from secrets");
	json_t *r = at(c, "resources");
	tap_ok(!strcmp(str(r, "limits.memory"), "4294967296") && !strcmp(str(r, "limits.cpu"), "2000m") &&
	           !strcmp(str(r, "limits.ephemeral-storage"), "8589934592") &&
	           json_equal(at(r, "limits"), at(r, "requests")),
	       "resources from [limits], requests equal to limits");
	tap_ok(!strcmp(str(init, "resources.limits.memory"), "67108864") &&
	           !strcmp(str(init, "resources.limits.cpu"), "100m") &&
	           !strcmp(str(init, "resources.limits.ephemeral-storage"), "67108864") &&
	           json_equal(at(init, "resources.limits"), at(init, "resources.requests")),
	       "the init container has limits too (a quota asks for them)");
	char *dump = json_dumps(pod, 0);
	tap_ok(!strstr(dump, "hostPath") && !strstr(dump, "Secret") && !strstr(dump, "secret"),
	       "no hostPath, no secret anywhere");
	free(dump);
	tap_ok(kube_spec_pod_is_ours(pod, &o), "the pod is ours by its labels");
	struct kube_spec_opts other = o;
	other.instance = "another";
	tap_ok(!kube_spec_pod_is_ours(pod, &other), "not another instance's");
	other = o;
	other.role = KUBE_ROLE_VERIFY;
	tap_ok(!kube_spec_pod_is_ours(pod, &other), "not the verification's");
	json_t *bare = json_pack("{s{ss}}", "metadata", "name", "pdk-k3x9m2qa7d-task-1");
	tap_ok(!kube_spec_pod_is_ours(bare, &o), "a same-named pod without our labels is not ours");
	json_decref(bare);

	static const enum kube_role roles[] = { KUBE_ROLE_TASK, KUBE_ROLE_VERIFY, KUBE_ROLE_SETUP };
	int names_ok = 1;
	for (size_t ri = 0; ri < 3; ri++) {
		struct kube_spec_opts n = o;
		n.role = roles[ri];
		n.attempt = ri == 2 ? 4294967295u : (unsigned)ri;
		char *name = kube_spec_pod_name(&n, &e);
		size_t len = name ? strlen(name) : 0;
		names_ok &= name && len <= 63 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == len &&
		            name[len - 1] != '-';
		free(name);
	}
	tap_ok(names_ok, "every role's name, the largest attempt's too, is a DNS label of at most 63");

	json_t *again = kube_spec_pod(&o, &e);
	tap_ok(json_equal(pod, again), "the same options build the same pod");
	json_decref(again);
	json_decref(pod);
}

static void pod_variants(void)
{
	struct kube_spec_opts o = base();
	struct err e = { 0 };
	o.role = KUBE_ROLE_VERIFY;
	o.attempt = 0;
	o.runtime_class = "gvisor";
	o.host_users_false = 1;
	o.front_door = "fd00::5";
	o.audience = "paddock:inst-7f3a";
	o.token_seconds = 600;
	o.deadline = 7200;
	lim.cpus = 0.0004;
	json_t *pod = kube_spec_pod(&o, &e);
	tap_ok(pod != NULL, "the verification pod is built %s", e.msg);
	save("pod-verify", pod);
	tap_ok(!strcmp(str(pod, "metadata.name"), "pdk-k3x9m2qa7d-verify-0"), "named for the role");
	tap_ok(!strcmp(label(pod, KUBE_SPEC_ROLE), "verify"), "labelled role verify");
	tap_ok(!strcmp(str(pod, "spec.runtimeClassName"), "gvisor") && is_false(pod, "spec.hostUsers"),
	       "runtimeClassName and hostUsers false when asked");
	tap_ok(num(pod, "spec.activeDeadlineSeconds") == 7200, "the deadline given");
	/* The agent's install, put there by the backend: a volume of its own
	 * at the path bwrap shows it, sized by limits.disk. */
	o.agent = 1;
	json_t *ap = kube_spec_pod(&o, &e);
	save("pod-agent", ap);
	json_t *am = NULL, *av = NULL, *it;
	size_t k;
	json_array_foreach(at(ap, "spec.containers.0.volumeMounts"), k, it)
		if (!strcmp(str(it, "name"), "agent"))
			am = it;
	json_array_foreach(at(ap, "spec.volumes"), k, it)
		if (!strcmp(str(it, "name"), "agent"))
			av = it;
	tap_ok(am && !strcmp(str(am, "mountPath"), SANDBOX_AGENT_DIR) && av && at(av, "emptyDir") &&
	           !strcmp(str(av, "emptyDir.sizeLimit"), "8589934592") &&
	           json_array_size(at(ap, "spec.volumes")) == 8,
	       "with an agent: an emptyDir at %s sized by limits.disk, nothing else more", SANDBOX_AGENT_DIR);
	json_decref(ap);
	o.agent = 0;
	tap_ok(!strcmp(str(pod, "spec.containers.0.resources.limits.cpu"), "1m"),
	       "a tiny cpu limit is 1m, never 0");
	tap_ok(!strcmp(str(pod, "spec.initContainers.0.resources.limits.cpu"), "1m"),
	       "the init container's cpu is within the limits (the limit range's max)");
	lim.memory = 1 << 20;
	json_t *small = kube_spec_pod(&o, &e);
	tap_ok(small && !strcmp(str(small, "spec.initContainers.0.resources.limits.memory"), "1048576"),
	       "and so is its memory %s", e.msg);
	json_decref(small);
	json_t *env = at(pod, "spec.containers.0.env");
	size_t i;
	json_t *v;
	int door = 0;
	json_array_foreach(env, i, v)
		door |= !strcmp(str(v, "value"), "[fd00::5]:7443");
	tap_ok(door, "an IPv6 front door is bracketed");
	json_decref(pod);

	o = base();
	o.role = KUBE_ROLE_SETUP;
	lim.cpus = 0;
	lim.timeout = 0;
	pod = kube_spec_pod(&o, &e);
	save("pod-setup", pod);
	tap_ok(pod && !at(pod, "spec.containers.0.resources.limits.cpu") &&
	           num(pod, "spec.activeDeadlineSeconds") == 86400,
	       "no cpu limit when limits.cpus is 0; a day's deadline without a timeout");
	json_decref(pod);
}

/* Hostile options: an error that says which, or a valid object. */
static void hostile(void)
{
	char long_id[301];
	memset(long_id, 'a', 300);
	long_id[300] = 0;
	const char *tasks[] = { "K3X9M2QA7D", "k3x9 m2qa7", "k3x9m2qa7\n", long_id, "", "../../etc", "k3x9m2qa7d\",\"x\":\"" };
	for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++) {
		struct kube_spec_opts o = base();
		o.task = tasks[i];
		struct err e = { 0 };
		json_t *pod = kube_spec_pod(&o, &e);
		char *name = kube_spec_pod_name(&o, &e);
		tap_ok(!pod && !name && e.kind == ERR_INVALID && strstr(e.msg, "task id"),
		       "task id %zu refused: %s", i, e.msg);
		json_decref(pod);
		free(name);
	}
	const char *images[] = { "Registry/Team/Agents", "agents:1 --privileged", "agents\nimage: evil",
	                         long_id, "", "agents:", "-agents", "a//b", "agents@sha256", "a@b@c:1",
	                         "agents:v1+x", "agents:-x", "agents:\"x\"" };
	char huge[1100];
	memset(huge, 'a', sizeof huge - 1);
	huge[sizeof huge - 1] = 0;
	for (size_t i = 0; i <= sizeof images / sizeof *images; i++) {
		struct kube_spec_opts o = base();
		o.image = i < sizeof images / sizeof *images ? images[i] : huge;
		struct err e = { 0 };
		if (i == 3) { /* 300 lowercase letters are a valid name, kept as it is */
			json_t *pod = kube_spec_pod(&o, &e);
			tap_ok(pod && !strcmp(str(pod, "spec.containers.0.image"), long_id),
			       "a 300-letter image name is taken as it is %s", e.msg);
			json_decref(pod);
			continue;
		}
		json_t *pod = kube_spec_pod(&o, &e);
		tap_ok(!pod && e.kind == ERR_INVALID && strstr(e.msg, "image"), "image %zu refused: %s", i, e.msg);
		json_decref(pod);
	}
	const char *fine[] = { "busybox", "localhost:5000/a/b:tag", "Registry.Example.com:5000/team/x@sha256:abcd",
	                       "ghcr.io/o/r:v1.2-rc_3" };
	for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
		struct kube_spec_opts o = base();
		o.image = fine[i];
		struct err e = { 0 };
		json_t *pod = kube_spec_pod(&o, &e);
		tap_ok(pod && !strcmp(str(pod, "spec.containers.0.image"), fine[i]), "image %s taken %s", fine[i], e.msg);
		json_decref(pod);
	}
	const char *nss[] = { "Paddock", "pad dock", "pad\ndock", long_id, "", "-x", "x-" };
	for (size_t i = 0; i < sizeof nss / sizeof *nss; i++) {
		struct kube_spec_opts o = base();
		o.namespace = nss[i];
		struct err e = { 0 };
		json_t *pod = kube_spec_pod(&o, &e), *m = kube_spec_manifest(&o, &e);
		tap_ok(!pod && !m && strstr(e.msg, "namespace"), "namespace %zu refused: %s", i, e.msg);
	}
	const char *insts[] = { "in st", "in\nst", long_id, "", "-x", "a=b,c" };
	for (size_t i = 0; i < sizeof insts / sizeof *insts; i++) {
		struct kube_spec_opts o = base();
		o.instance = insts[i];
		struct err e = { 0 };
		json_t *pod = kube_spec_pod(&o, &e), *m = kube_spec_manifest(&o, &e);
		tap_ok(!pod && !m && strstr(e.msg, "instance"), "instance %zu refused: %s", i, e.msg);
	}
	struct kube_spec_opts o = base();
	struct err e = { 0 };
	lim.memory = 0;
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "memory"), "no memory limit: refused: %s", e.msg);
	o = base();
	lim.disk = 0;
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "disk"), "no disk limit: refused: %s", e.msg);
	o = base();
	lim.memory = UINT64_MAX;
	tap_ok(!kube_spec_pod(&o, &e) && !kube_spec_quota(&o, &e) && strstr(e.msg, "EiB"),
	       "a huge memory limit: refused: %s", e.msg);
	o = base();
	lim.cpus = 1e300;
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "cpu"), "a huge cpu limit: refused: %s", e.msg);
	o = base();
	lim.memory = UINT64_C(1) << 60;
	lim.disk = UINT64_C(1) << 60;
	lim.cpus = 100000;
	json_t *pod = kube_spec_pod(&o, &e);
	save("pod-huge", pod);
	tap_ok(pod && !strcmp(str(pod, "spec.containers.0.resources.limits.memory"), "1152921504606846976") &&
	           !strcmp(str(pod, "spec.containers.0.resources.limits.cpu"), "100000000m"),
	       "the largest limits taken, as plain quantities %s", e.msg);
	json_decref(pod);
	o.max_pods = 100000;
	json_t *q = kube_spec_quota(&o, &e);
	tap_ok(!q && strstr(e.msg, "too large"), "a quota that overflows is refused: %s", e.msg);
	o = base();
	o.runner_path = "usr/bin/runner";
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "runner"), "a relative runner path: refused");
	o = base();
	o.runner_path = "/usr/bin/run ner\n";
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "runner"), "a runner path with spaces: refused");
	o = base();
	o.runtime_class = "gVisor";
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "runtime"), "a runtime class with capitals: refused");
	o = base();
	o.front_door = "paddock.example.com";
	tap_ok(!kube_spec_pod(&o, &e) && !kube_spec_manifest(&o, &e) && strstr(e.msg, "front door"),
	       "a front door by name: refused (no DNS in the pod): %s", e.msg);
	o = base();
	o.front_door_port = 70000;
	tap_ok(!kube_spec_manifest(&o, &e) && strstr(e.msg, "port"), "a port out of range: refused");
	const char *cidrs[] = { "10.0.0.0/33", "10.0.0.0", "10.0.0.0/", "10.0.0.0/8 ", "fd00::/129", "x/8", "10.0.0.0/08" };
	for (size_t i = 0; i < sizeof cidrs / sizeof *cidrs; i++) {
		o = base();
		o.front_door_cidr = cidrs[i];
		tap_ok(!kube_spec_policy_front_door(&o, &e) && strstr(e.msg, "CIDR"), "CIDR %s refused", cidrs[i]);
	}
	o = base();
	o.audience = "paddock\",\"x";
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "audience"), "an audience with quotes: refused");
	o = base();
	o.token_seconds = 60;
	tap_ok(!kube_spec_pod(&o, &e) && strstr(e.msg, "600"), "a token lifetime under the API's least: refused");
	o = base();
	o.role = (enum kube_role)7;
	tap_ok(!kube_spec_pod(&o, &e) && !kube_spec_pod_name(&o, &e), "no such role: refused");
}

static void manifest_checks(void)
{
	struct kube_spec_opts o = base();
	o.front_door_cidr = "10.0.0.0/24";
	o.max_pods = 50;
	struct err e = { 0 };
	json_t *ns = kube_spec_namespace(&o, &e), *sa = kube_spec_service_account(&o, &e),
	       *q = kube_spec_quota(&o, &e), *lr = kube_spec_limit_range(&o, &e),
	       *deny = kube_spec_policy_deny(&o, &e), *door = kube_spec_policy_front_door(&o, &e),
	       *all = kube_spec_manifest(&o, &e);
	tap_ok(ns && sa && q && lr && deny && door && all, "the manifest's objects are built %s", e.msg);
	if (!(ns && sa && q && lr && deny && door && all))
		return;
	save("namespace", ns);
	save("serviceaccount", sa);
	save("resourcequota", q);
	save("limitrange", lr);
	save("networkpolicy-deny", deny);
	save("networkpolicy-front-door", door);
	save("manifest", all);
	json_t *l = at(ns, "metadata.labels");
	(void)l;
	tap_ok(!strcmp(str(ns, "kind"), "Namespace") && !strcmp(str(ns, "metadata.name"), "paddock-sandboxes") &&
	           !strcmp(label(ns, "pod-security.kubernetes.io/enforce"), "restricted") &&
	           !strcmp(label(ns, "pod-security.kubernetes.io/warn"), "restricted") &&
	           !strcmp(label(ns, "pod-security.kubernetes.io/audit"), "restricted"),
	       "the namespace enforces Pod Security restricted");
	tap_ok(!strcmp(str(sa, "metadata.name"), KUBE_SPEC_SERVICE_ACCOUNT) &&
	           is_false(sa, "automountServiceAccountToken") && !at(sa, "secrets"),
	       "the service account: no automount, no secrets");
	tap_ok(!strcmp(str(q, "spec.hard.pods"), "50") &&
	           !strcmp(key(at(q, "spec.hard"), "limits.memory"), "214748364800") &&
	           !strcmp(key(at(q, "spec.hard"), "limits.cpu"), "100000m"),
	       "the quota: 50 pods and their limits");
	tap_ok(json_equal(at(lr, "spec.limits.0.max"), at(lr, "spec.limits.0.default")) &&
	           !strcmp(str(lr, "spec.limits.0.max.memory"), "4294967296") &&
	           !strcmp(str(lr, "spec.limits.0.type"), "Container"),
	       "the limit range: a container's default and most are the limits");
	tap_ok(json_object_size(at(deny, "spec.podSelector")) == 0 &&
	           json_array_size(at(deny, "spec.policyTypes")) == 2 &&
	           !strcmp(str(deny, "spec.policyTypes.0"), "Ingress") &&
	           !strcmp(str(deny, "spec.policyTypes.1"), "Egress") && !at(deny, "spec.ingress") &&
	           !at(deny, "spec.egress"),
	       "default deny: every pod, ingress and egress, no rule");
	tap_ok(!strcmp(key(at(door, "spec.podSelector.matchLabels"), KUBE_SPEC_MANAGED_BY), "paddock") &&
	           !strcmp(key(at(door, "spec.podSelector.matchLabels"), KUBE_SPEC_INSTANCE), "inst-7f3a") &&
	           json_object_size(at(door, "spec.podSelector.matchLabels")) == 2 &&
	           json_array_size(at(door, "spec.policyTypes")) == 1 &&
	           !strcmp(str(door, "spec.policyTypes.0"), "Egress") && !at(door, "spec.ingress") &&
	           json_array_size(at(door, "spec.egress")) == 1 &&
	           json_array_size(at(door, "spec.egress.0.to")) == 1 &&
	           !strcmp(str(door, "spec.egress.0.to.0.ipBlock.cidr"), "10.0.0.0/24") &&
	           !at(door, "spec.egress.0.to.0.ipBlock.except") &&
	           json_array_size(at(door, "spec.egress.0.ports")) == 1 &&
	           !strcmp(str(door, "spec.egress.0.ports.0.protocol"), "TCP") &&
	           num(door, "spec.egress.0.ports.0.port") == 7443,
	       "the front door's policy: egress only, to its CIDR and TCP port");
	tap_ok(json_array_size(at(all, "items")) == 6 && !strcmp(str(all, "kind"), "List") &&
	           json_equal(at(all, "items.0"), ns) && json_equal(at(all, "items.5"), door),
	       "the manifest lists all six, the namespace first");
	o.front_door_cidr = NULL;
	json_t *d2 = kube_spec_policy_front_door(&o, &e);
	tap_ok(d2 && !strcmp(str(d2, "spec.egress.0.to.0.ipBlock.cidr"), "10.0.0.5/32"),
	       "without a CIDR, the front door's own address");
	json_decref(d2);
	json_t *objs[] = { ns, sa, q, lr, deny, door, all };
	for (size_t i = 0; i < sizeof objs / sizeof *objs; i++)
		json_decref(objs[i]);
}

int main(void)
{
	outdir = getenv("KUBE_SPEC_OUT");
	pod_checks();
	pod_variants();
	hostile();
	manifest_checks();
	testlib_end();
	return tap_done();
}
