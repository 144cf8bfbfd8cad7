/* kube_spec: the Kubernetes objects paddock creates or prints (kube_spec.h). */
#include "autoconfig.h"
#include "kube_spec.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "i18n.h"
#include "sandbox.h"
#include "task.h"

/* The runner's and the prompt's emptyDirs: small, whatever the limits. */
#define SMALL_DIR "64Mi"
/* The largest byte count written as a quantity: 1 EiB.  The API's own
 * bound is near 2^63; a figure this large is a mistake anyway. */
#define BYTES_MAX (UINT64_C(1) << 60)
#define CPUS_MAX 100000.0

const char *kube_role_name(enum kube_role r)
{
	switch (r) {
	case KUBE_ROLE_TASK: return "task";
	case KUBE_ROLE_VERIFY: return "verify";
	case KUBE_ROLE_SETUP: return "setup";
	}
	return NULL;
}

static int is_alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

/* A DNS-1123 label: at most 63 of [a-z0-9-], alphanumeric at both ends. */
static int dns_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 63 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum_lower(s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* A label value that is not empty: at most 63 of [A-Za-z0-9._-],
 * alphanumeric at both ends. */
static int label_value(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

/* A task id, or one of paddock's sandbox ids: a DNS label of at most
 * KUBE_SPEC_ID_MAX (the pod's name stays a hostname). */
static int task_ok(const char *s)
{
	return s && (task_id_valid(s, 0) || (strlen(s) <= KUBE_SPEC_ID_MAX && dns_label(s)));
}

/* An image reference as a container runtime reads one: the name's
 * path lowercase (a registry host before the first '/' may have
 * capitals when it has a '.' or ':' or is localhost), then an optional
 * :tag and @digest; no space or control character, at most 1024 bytes. */
static int image_ref(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 1024 || !is_alnum(s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && !strchr("._-/:@+", s[i]))
			return 0;
	const char *at = strchr(s, '@');
	size_t name_end = at ? (size_t)(at - s) : n;
	if (at && (!strchr(at + 1, ':') || strchr(at + 1, '@') || strchr(at + 1, '/')))
		return 0;
	const char *slash = memchr(s, '/', name_end);
	size_t path_from = 0;
	if (slash) {
		size_t hl = (size_t)(slash - s);
		if (memchr(s, '.', hl) || memchr(s, ':', hl) || (hl == 9 && !memcmp(s, "localhost", 9)))
			path_from = hl + 1;
	}
	/* the tag: after the last ':' of the name that follows the last '/' */
	const char *last_slash = NULL;
	for (size_t i = path_from; i < name_end; i++)
		if (s[i] == '/')
			last_slash = s + i;
	const char *colon = NULL;
	for (const char *p = last_slash ? last_slash : s + path_from; p < s + name_end; p++)
		if (*p == ':')
			colon = p;
	size_t path_end = colon ? (size_t)(colon - s) : name_end;
	if (path_end <= path_from)
		return 0;
	if (colon) { /* a tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
		size_t tl = (size_t)(s + name_end - colon) - 1;
		if (tl == 0 || tl > 128 || colon[1] == '.' || colon[1] == '-')
			return 0;
		for (size_t i = 1; i <= tl; i++)
			if (!is_alnum(colon[i]) && !strchr("_.-", colon[i]))
				return 0;
	}
	for (size_t i = path_from; i < path_end; i++) {
		if (s[i] == ':' || s[i] == '@' || s[i] == '+' || (s[i] >= 'A' && s[i] <= 'Z'))
			return 0;
		if (s[i] == '/' && (i + 1 == path_end || s[i + 1] == '/'))
			return 0;
	}
	return 1;
}

static int ip_literal(const char *s, int *v6)
{
	unsigned char a[16];
	if (!s)
		return 0;
	if (inet_pton(AF_INET, s, a) == 1) {
		*v6 = 0;
		return 1;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		*v6 = 1;
		return 1;
	}
	return 0;
}

/* "a.b.c.d/n" or "x::y/n": an address and a prefix length in range. */
static int cidr(const char *s)
{
	const char *sl = s ? strchr(s, '/') : NULL;
	if (!sl || strlen(s) > 64)
		return 0;
	char addr[65];
	memcpy(addr, s, (size_t)(sl - s));
	addr[sl - s] = 0;
	int v6;
	if (!ip_literal(addr, &v6))
		return 0;
	const char *p = sl + 1;
	if (!*p || strlen(p) > 3)
		return 0;
	int len = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		len = len * 10 + (*p - '0');
	}
	if (sl[1] == '0' && sl[2])
		return 0;
	return len <= (v6 ? 128 : 32);
}

/* A builder's result: json_pack fails only on a mistake here, which
 * must not pass for success. */
static json_t *built(json_t *j, struct err *e)
{
	if (!j)
		err_set(e, _("kubernetes: internal error building an object"));
	return j;
}

static uint64_t or_disk(uint64_t v, const struct limits *l)
{
	return v ? v : l->disk;
}

/* Checks every option a builder may use; 0, or -1 with e set. */
static int opts_check(const struct kube_spec_opts *o, int pod, struct err *e)
{
	if (!dns_label(o->namespace))
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: the namespace must be a DNS label (at most 63 lowercase letters, digits and '-')"));
	if (!label_value(o->instance))
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: the instance id must be at most 63 letters, digits, '.', '_' or '-', beginning and ending with a letter or digit"));
	const struct limits *l = o->limits;
	if (!l || l->memory == 0 || l->disk == 0)
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: a sandbox needs a memory and a disk limit ([limits] memory, disk)"));
	if (l->memory > BYTES_MAX || l->disk > BYTES_MAX || o->size_work > BYTES_MAX ||
	    o->size_out > BYTES_MAX || o->size_home > BYTES_MAX || o->size_tmp > BYTES_MAX)
		return err_kind_set(e, ERR_INVALID, _("kubernetes: a memory or disk limit is larger than 1 EiB"));
	if (!(l->cpus >= 0) || l->cpus > CPUS_MAX || !(l->timeout >= 0) || l->timeout > 1e9)
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the cpu or timeout limit is out of range"));
	if (!pod) {
		if (o->max_pods > 100000)
			return err_kind_set(e, ERR_INVALID, _("kubernetes: the quota's pods are at most 100000"));
		int v6;
		if (!ip_literal(o->front_door, &v6) || o->front_door_port < 1 || o->front_door_port > 65535)
			return err_kind_set(e, ERR_INVALID,
			                    _("kubernetes: the front door must be an IP address and a port from 1 to 65535"));
		if (o->front_door_cidr && !cidr(o->front_door_cidr))
			return err_kind_set(e, ERR_INVALID, _("kubernetes: the front door's CIDR must be an address and a prefix length (10.0.0.0/24)"));
		return 0;
	}
	if (!task_ok(o->task))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: not a task id"));
	if (!kube_role_name(o->role))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: no such sandbox role"));
	if ((o->gateway_ports && strspn(o->gateway_ports, "0123456789,") != strlen(o->gateway_ports)) ||
	    (o->probe && (strlen(o->probe) > 4096 ||
	                  strspn(o->probe, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:,[]-") !=
	                      strlen(o->probe))))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the runner's ports and probes must be lists of ports and HOST:PORT"));
	if (o->owner && (strlen(o->owner) > 253 ||
	                 strspn(o->owner, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./:-_") !=
	                     strlen(o->owner)))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the owner annotation must be a short word"));
	if (!image_ref(o->image) || !image_ref(o->runner_image))
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: an image must be an image reference (lowercase name, optional :tag and @digest, no spaces)"));
	if (!o->runner_path || o->runner_path[0] != '/' || strlen(o->runner_path) > 4096 ||
	    strspn(o->runner_path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+") !=
	        strlen(o->runner_path))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the runner's path must be an absolute path"));
	if (o->runtime_class && !dns_label(o->runtime_class))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the runtime class must be a DNS label"));
	if (o->audience && (!*o->audience || strlen(o->audience) > 253 ||
	                    strpbrk(o->audience, " \t\r\n\"\\")))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the token's audience must be 1 to 253 characters without spaces or quotes"));
	if (o->token_seconds && (o->token_seconds < 600 || o->token_seconds > 86400 * 366))
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the token's lifetime must be from 600 s to a year"));
	if (o->deadline < 0 || o->deadline > 86400L * 366 * 10)
		return err_kind_set(e, ERR_INVALID, _("kubernetes: the pod's deadline is out of range"));
	int v6;
	if (!ip_literal(o->front_door, &v6) || o->front_door_port < 1 || o->front_door_port > 65535)
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: the front door must be an IP address and a port from 1 to 65535"));
	return 0;
}

char *kube_spec_pod_name(const struct kube_spec_opts *o, struct err *e)
{
	if (!task_ok(o->task)) {
		err_kind_set(e, ERR_INVALID, _("kubernetes: not a task id"));
		return NULL;
	}
	const char *role = kube_role_name(o->role);
	if (!role) {
		err_kind_set(e, ERR_INVALID, _("kubernetes: no such sandbox role"));
		return NULL;
	}
	return xasprintf("pdk-%s-%s-%u", o->task, role, o->attempt);
}

static json_t *quantity_bytes(uint64_t n)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRIu64, n);
	return json_string(s);
}

static json_t *quantity_cpus(double cpus)
{
	long m = (long)(cpus * 1000 + 0.5); /* no libm in the engine */
	char s[32];
	snprintf(s, sizeof s, "%ldm", m < 1 ? 1 : m);
	return json_string(s);
}

static json_t *labels(const struct kube_spec_opts *o, int pod)
{
	json_t *l = json_pack("{ss ss}", KUBE_SPEC_MANAGED_BY, "paddock", KUBE_SPEC_INSTANCE, o->instance);
	if (pod) {
		json_object_set_new(l, KUBE_SPEC_TASK, json_string(o->task));
		json_object_set_new(l, KUBE_SPEC_ROLE, json_string(kube_role_name(o->role)));
	}
	return l;
}

static json_t *metadata(const struct kube_spec_opts *o, const char *name, int namespaced)
{
	json_t *m = json_pack("{ss so}", "name", name, "labels", labels(o, 0));
	if (namespaced)
		json_object_set_new(m, "namespace", json_string(o->namespace));
	return m;
}

/* What PSS "restricted" asks of every container, and a read-only root. */
static json_t *container_security(void)
{
	return json_pack("{sb sb sb sb si si s{s[s]} s{ss}}", "allowPrivilegeEscalation", 0,
	                 "privileged", 0, "readOnlyRootFilesystem", 1, "runAsNonRoot", 1,
	                 "runAsUser", SANDBOX_INNER_UID, "runAsGroup", SANDBOX_INNER_UID,
	                 "capabilities", "drop", "ALL", "seccompProfile", "type", "RuntimeDefault");
}

static json_t *resources(const struct limits *l)
{
	json_t *q = json_pack("{so so}", "memory", quantity_bytes(l->memory), "ephemeral-storage",
	                      quantity_bytes(l->disk));
	if (l->cpus > 0)
		json_object_set_new(q, "cpu", quantity_cpus(l->cpus));
	/* requests = limits: the Guaranteed class */
	return json_pack("{sO so}", "requests", q, "limits", q);
}

static json_t *empty_dir(const char *name, json_t *size)
{
	return json_pack("{ss s{so}}", "name", name, "emptyDir", "sizeLimit", size);
}

static json_t *mount(const char *name, const char *path, int ro)
{
	json_t *m = json_pack("{ss ss}", "name", name, "mountPath", path);
	if (ro)
		json_object_set_new(m, "readOnly", json_true());
	return m;
}

static json_t *env(const struct kube_spec_opts *o)
{
	int v6 = 0;
	ip_literal(o->front_door, &v6);
	char *door = v6 ? xasprintf("[%s]:%d", o->front_door, o->front_door_port)
	                : xasprintf("%s:%d", o->front_door, o->front_door_port);
	char *name = kube_spec_pod_name(o, NULL);
	json_t *a = json_pack("[{ss ss} {ss ss} {ss ss} {ss ss} {ss ss} {ss ss} {ss ss} {ss ss}"
	                      " {ss ss} {ss ss} {ss ss}]",
	                      "name", "HOME", "value", SANDBOX_HOME, "name", "TMPDIR", "value", "/tmp",
	                      "name", "PADDOCK_TASK_ID", "value", o->task, "name", "PADDOCK_WORK", "value",
	                      SANDBOX_WORKDIR, "name", "PADDOCK_OUT", "value", SANDBOX_OUTDIR, "name",
	                      "PADDOCK_PROMPT_FILE", "value", SANDBOX_PROMPT, "name", "PADDOCK_FRONT_DOOR",
	                      "value", door, "name", "PADDOCK_TOKEN_FILE", "value", KUBE_SPEC_TOKEN_PATH,
	                      "name", "PADDOCK_POD", "value", name ? name : "", "name",
	                      "PADDOCK_GATEWAY_PORTS", "value", o->gateway_ports ? o->gateway_ports : "",
	                      "name", "PADDOCK_PROBE", "value", o->probe ? o->probe : "");
	if (o->resume_seconds > 0) {
		char secs[32];
		snprintf(secs, sizeof secs, "%.0f", o->resume_seconds);
		json_array_append_new(a, json_pack("{ss ss}", "name", "PADDOCK_RUNNER_RESUME_SECONDS",
		                                   "value", secs));
	}
	free(name);
	free(door);
	return a;
}

#define RUNNER_DIR "/runner"
#define RUNNER_FILE "paddock-runner"

/* The init container's share (it runs cp once), never above the
 * limits: the limit range's max is the limits. */
static json_t *init_resources(const struct limits *l)
{
	const uint64_t small = 64u << 20;
	json_t *q = json_pack("{so so}", "memory", quantity_bytes(l->memory < small ? l->memory : small),
	                      "ephemeral-storage", quantity_bytes(l->disk < small ? l->disk : small));
	json_object_set_new(q, "cpu", quantity_cpus(l->cpus > 0 && l->cpus < 0.1 ? l->cpus : 0.1));
	return q;
}

static json_t *init_container(const struct kube_spec_opts *o)
{
	json_t *q = init_resources(o->limits);
	return json_pack("{ss ss s[ssss] so s{sO so} s[o] ss}", "name", "runner", "image",
	                 o->runner_image, "command", "cp", "--", o->runner_path,
	                 RUNNER_DIR "/" RUNNER_FILE, "securityContext", container_security(),
	                 "resources", "requests", q, "limits", q, "volumeMounts",
	                 mount("runner", RUNNER_DIR, 0), "terminationMessagePolicy",
	                 "FallbackToLogsOnError");
}

static json_t *main_container(const struct kube_spec_opts *o)
{
	json_t *runner = mount("runner", SANDBOX_RUNNER, 1);
	json_object_set_new(runner, "subPath", json_string(RUNNER_FILE));
	/* /paddock holds PADDOCK_PROMPT_FILE, which the runner writes */
	return json_pack("{ss ss s[s] ss so so so s[ooooooo] ss}", "name", "sandbox", "image",
	                 o->image, "command", SANDBOX_RUNNER, "workingDir", SANDBOX_WORKDIR,
	                 "env", env(o), "securityContext", container_security(), "resources",
	                 resources(o->limits), "volumeMounts", mount("work", SANDBOX_WORKDIR, 0),
	                 mount("out", SANDBOX_OUTDIR, 0), mount("home", SANDBOX_HOME, 0),
	                 mount("tmp", "/tmp", 0), mount("paddock", "/paddock", 0), runner,
	                 mount("token", KUBE_SPEC_TOKEN_DIR, 1), "terminationMessagePolicy",
	                 "FallbackToLogsOnError");
}

/* With o->agent: the agent's install, a volume of its own. */
static void add_agent(const struct kube_spec_opts *o, json_t *spec)
{
	if (!o->agent)
		return;
	json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
	json_array_append_new(json_object_get(c, "volumeMounts"), mount("agent", SANDBOX_AGENT_DIR, 0));
	json_array_append_new(json_object_get(spec, "volumes"),
	                      empty_dir("agent", quantity_bytes(o->limits->disk)));
}

static long deadline(const struct kube_spec_opts *o)
{
	if (o->deadline)
		return o->deadline;
	if (o->limits->timeout <= 0)
		return 86400;
	long t = (long)o->limits->timeout;
	return t + (t < o->limits->timeout) + KUBE_SPEC_DEADLINE_SLACK;
}

json_t *kube_spec_pod(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 1, e) < 0)
		return NULL;
	char *name = kube_spec_pod_name(o, e);
	if (!name)
		return NULL;
	const struct limits *l = o->limits;
	json_t *token = json_pack("{ss s{s[{s{ss sI ss}}] si}}", "name", "token", "projected", "sources",
	                          "serviceAccountToken", "audience",
	                          o->audience ? o->audience : KUBE_SPEC_AUDIENCE, "expirationSeconds",
	                          (json_int_t)(o->token_seconds ? o->token_seconds : 3600), "path",
	                          "token", "defaultMode", 0400);
	json_t *spec = json_pack(
	    "{ss sb sb ss s{s[s]} ss si sI sb sb sb"
	    " s{sb si si si s{ss}} s[o] s[o] s[ooooooo]}",
	    "serviceAccountName", KUBE_SPEC_SERVICE_ACCOUNT, "automountServiceAccountToken", 0,
	    "enableServiceLinks", 0, "dnsPolicy", "None", "dnsConfig", "nameservers", "127.0.0.1",
	    "restartPolicy", "Never", "terminationGracePeriodSeconds", KUBE_SPEC_GRACE,
	    "activeDeadlineSeconds", (json_int_t)deadline(o), "hostNetwork", 0, "hostPID", 0, "hostIPC",
	    0, "securityContext", "runAsNonRoot", 1, "runAsUser", SANDBOX_INNER_UID, "runAsGroup",
	    SANDBOX_INNER_UID, "fsGroup", SANDBOX_INNER_UID, "seccompProfile", "type", "RuntimeDefault",
	    "initContainers", init_container(o), "containers", main_container(o), "volumes",
	    empty_dir("work", quantity_bytes(or_disk(o->size_work, l))),
	    empty_dir("out", quantity_bytes(or_disk(o->size_out, l))),
	    empty_dir("home", quantity_bytes(or_disk(o->size_home, l))),
	    empty_dir("tmp", quantity_bytes(or_disk(o->size_tmp, l))),
	    empty_dir("paddock", json_string(SMALL_DIR)), empty_dir("runner", json_string(SMALL_DIR)),
	    token);
	add_agent(o, spec);
	if (o->runtime_class)
		json_object_set_new(spec, "runtimeClassName", json_string(o->runtime_class));
	if (o->host_users_false)
		json_object_set_new(spec, "hostUsers", json_false());
	json_t *pod = json_pack("{ss ss s{ss ss so} so}", "apiVersion", "v1", "kind", "Pod", "metadata",
	                        "name", name, "namespace", o->namespace, "labels", labels(o, 1), "spec",
	                        spec);
	if (pod && o->owner)
		json_object_set_new(json_object_get(pod, "metadata"), "annotations",
		                    json_pack("{ss}", KUBE_SPEC_OWNER, o->owner));
	free(name);
	return built(pod, e);
}

int kube_spec_pod_is_ours(const json_t *pod, const struct kube_spec_opts *o)
{
	json_t *have = json_object_get(json_object_get(pod, "metadata"), "labels");
	if (!json_is_object(have) || !label_value(o->instance) || !o->task || !kube_role_name(o->role))
		return 0;
	json_t *want = labels(o, 1);
	int ours = 1;
	const char *k;
	json_t *v;
	json_object_foreach(want, k, v) {
		json_t *h = json_object_get(have, k);
		if (!json_is_string(h) || strcmp(json_string_value(h), json_string_value(v)) != 0)
			ours = 0;
	}
	json_decref(want);
	return ours;
}

json_t *kube_spec_namespace(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	json_t *m = metadata(o, o->namespace, 0);
	json_t *l = json_object_get(m, "labels");
	static const char *const modes[] = { "enforce", "warn", "audit" };
	for (size_t i = 0; i < 3; i++) {
		char k[64];
		snprintf(k, sizeof k, "pod-security.kubernetes.io/%s", modes[i]);
		json_object_set_new(l, k, json_string("restricted"));
		snprintf(k, sizeof k, "pod-security.kubernetes.io/%s-version", modes[i]);
		json_object_set_new(l, k, json_string("latest"));
	}
	return built(json_pack("{ss ss so}", "apiVersion", "v1", "kind", "Namespace", "metadata", m), e);
}

/* n pods' worth of per (at least least): 0 on overflow. */
static int times(uint64_t per, uint64_t least, unsigned n, uint64_t *out)
{
	uint64_t v = per > least ? per : least;
	return !__builtin_mul_overflow(v, (uint64_t)n, out);
}

json_t *kube_spec_quota(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	const struct limits *l = o->limits;
	unsigned n = o->max_pods ? o->max_pods : 100;
	uint64_t mem, disk;
	/* a pod's share is the larger of its init container and its main one */
	if (!times(l->memory, 64u << 20, n, &mem) || !times(l->disk, 64u << 20, n, &disk)) {
		err_kind_set(e, ERR_INVALID, _("kubernetes: the quota's pods times the limits is too large"));
		return NULL;
	}
	char pods[16];
	snprintf(pods, sizeof pods, "%u", n);
	json_t *hard = json_pack("{ss so so so so so}", "pods", pods, "requests.memory",
	                         quantity_bytes(mem), "limits.memory", quantity_bytes(mem),
	                         "requests.ephemeral-storage", quantity_bytes(disk),
	                         "limits.ephemeral-storage", quantity_bytes(disk), "services",
	                         json_string("0"));
	if (l->cpus > 0) {
		double cpus = (l->cpus > 0.1 ? l->cpus : 0.1) * n;
		json_object_set_new(hard, "requests.cpu", quantity_cpus(cpus));
		json_object_set_new(hard, "limits.cpu", quantity_cpus(cpus));
	}
	return built(json_pack("{ss ss so s{so}}", "apiVersion", "v1", "kind", "ResourceQuota", "metadata",
	                 metadata(o, KUBE_SPEC_QUOTA, 1), "spec", "hard", hard), e);
}

json_t *kube_spec_limit_range(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	json_t *res = resources(o->limits);
	json_t *q = json_incref(json_object_get(res, "limits"));
	json_decref(res);
	return built(json_pack("{ss ss so s{s[{ss sO sO so}]}}", "apiVersion", "v1", "kind", "LimitRange",
	                 "metadata", metadata(o, KUBE_SPEC_LIMIT_RANGE, 1), "spec", "limits", "type",
	                 "Container", "default", q, "defaultRequest", q, "max", q), e);
}

json_t *kube_spec_service_account(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	return built(json_pack("{ss ss so sb}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata",
	                 metadata(o, KUBE_SPEC_SERVICE_ACCOUNT, 1), "automountServiceAccountToken", 0), e);
}

json_t *kube_spec_policy_deny(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	/* no rules: nothing in or out of any pod of the namespace */
	return built(json_pack("{ss ss so s{s{} s[ss]}}", "apiVersion", "networking.k8s.io/v1", "kind",
	                 "NetworkPolicy", "metadata", metadata(o, KUBE_SPEC_POLICY_DENY, 1), "spec",
	                 "podSelector", "policyTypes", "Ingress", "Egress"), e);
}

json_t *kube_spec_policy_front_door(const struct kube_spec_opts *o, struct err *e)
{
	if (opts_check(o, 0, e) < 0)
		return NULL;
	int v6 = 0;
	ip_literal(o->front_door, &v6);
	char *block = o->front_door_cidr ? xstrdup(o->front_door_cidr)
	                                 : xasprintf("%s/%d", o->front_door, v6 ? 128 : 32);
	json_t *p = json_pack(
	    "{ss ss so s{s{s{ss ss}} s[s] s[{s[{s{ss}}] s[{ss si}]}]}}", "apiVersion",
	    "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata",
	    metadata(o, KUBE_SPEC_POLICY_FRONT_DOOR, 1), "spec", "podSelector", "matchLabels",
	    KUBE_SPEC_MANAGED_BY, "paddock", KUBE_SPEC_INSTANCE, o->instance, "policyTypes", "Egress",
	    "egress", "to", "ipBlock", "cidr", block, "ports", "protocol", "TCP", "port",
	    o->front_door_port);
	free(block);
	return built(p, e);
}

json_t *kube_spec_manifest(const struct kube_spec_opts *o, struct err *e)
{
	json_t *(*const build[])(const struct kube_spec_opts *, struct err *) = {
		kube_spec_namespace, kube_spec_service_account, kube_spec_quota,
		kube_spec_limit_range, kube_spec_policy_deny, kube_spec_policy_front_door,
	};
	json_t *items = json_array();
	for (size_t i = 0; i < sizeof build / sizeof *build; i++) {
		json_t *it = build[i](o, e);
		if (!it) {
			json_decref(items);
			return NULL;
		}
		json_array_append_new(items, it);
	}
	return built(json_pack("{ss ss so}", "apiVersion", "v1", "kind", "List", "items", items), e);
}
