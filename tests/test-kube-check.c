/* kube_check (the prepared namespace, as the kubernetes backend's
 * preflight and paddock doctor check it) against the contract server
 * tests/kube-api-server.py, over TLS with a CA made here; and the data
 * directory's instance id (paths_instance_id) the objects are labelled
 * with. */
#include "autoconfig.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "config.h"
#include "doctor.h"
#include "kube.h"
#include "kube_check.h"
#include "kube_spec.h"
#include "paths.h"
#include "tap.h"
#include "testlib.h"

static char *T;
static int port;
static struct child srv;
static const struct limits lim = { .memory = 1u << 30, .disk = 2u << 30, .cpus = 1, .timeout = 600 };

static void server_start(const char *objects)
{
	char *tf = testlib_fmt("%s/server-token", T);
	testlib_write_file(tf, "tok-A-0123456789\n");
	const char *args[] = { "--token-file", tf, "--forbid-namespace", "ns-forbidden", "--objects",
		objects, NULL };
	port = testlib_kube_server(&srv, T, args);
}

static char *kubeconfig(const char *name, const char *token, const char *ns)
{
	char *p = testlib_fmt("%s/%s", T, name);
	testlib_write_file(p,
		"apiVersion: v1\nkind: Config\ncurrent-context: main\n"
		"clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:%d\n"
		"    certificate-authority: %s/ca.crt\n"
		"contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n%s"
		"users:\n- name: u1\n  user:\n    token: %s\n",
		port, T, ns ? testlib_fmt("    namespace: %s\n", ns) : "", token);
	return p;
}

/* ---- the instance id ---- */

static void test_instance(void)
{
	char *data = testlib_fmt("%s/data", T);
	mkdir(data, 0700);
	struct err e = {{0}};
	mode_t old = umask(077);
	char *a = paths_instance_id(data, &e);
	umask(old);
	ok(a && strlen(a) == PADDOCK_INSTANCE_LEN && strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789") ==
	   PADDOCK_INSTANCE_LEN && a[0] >= 'a' && a[0] <= 'z',
	   "a new data directory gets an instance id of %d lowercase letters and digits: %s",
	   PADDOCK_INSTANCE_LEN, a ? a : e.msg);
	struct stat st = {0};
	char *file = paths_instance(data);
	int st_ok = stat(file, &st) == 0;
	ok(st_ok && (st.st_mode & 07777) == 0644,
	   "<data>/instance is 0644 whatever the umask (every process that needs it reads it): %o",
	   (unsigned)(st.st_mode & 07777));
	char *b = paths_instance_id(data, &e);
	ok(a && b && !strcmp(a, b), "read again, it is the same id");
	char *left = testlib_sh_out("ls -A %s | grep -v '^instance$' | tr '\\n' ' '", data);
	ok(left && !*left, "no temporary file is left beside it: '%s'", left ? left : "");
	/* Another data directory, another id. */
	char *data2 = testlib_fmt("%s/data2", T);
	mkdir(data2, 0700);
	char *c = paths_instance_id(data2, &e);
	ok(c && a && strcmp(a, c) != 0, "another data directory gets another id");
	/* An id someone wrote there is kept as it is, if it is a label value. */
	testlib_write_file(testlib_keep(paths_instance(data2)), "Prod.paddock-1\n");
	char *d = paths_instance_id(data2, &e);
	ok(d && !strcmp(d, "Prod.paddock-1"), "an id written by hand is used: %s", d ? d : e.msg);
	testlib_write_file(testlib_keep(paths_instance(data2)), "bad id\n");
	char *f = paths_instance_id(data2, &e);
	ok(!f && strstr(e.msg, "does not hold an instance id"), "a file that holds no label value is refused: %s",
	   e.msg);
	unlink(testlib_keep(paths_instance(data2)));
	if (symlink(file, testlib_keep(paths_instance(data2))) == 0) {
		char *g = paths_instance_id(data2, &e);
		ok(!g, "a symlink in its place is not followed: %s", e.msg);
		free(g);
	}
	char *h = paths_instance_id(testlib_fmt("%s/nowhere", T), &e);
	ok(!h && strstr(e.msg, "nowhere"), "no data directory: an error that names it: %s", e.msg);
	free(a);
	free(b);
	free(c);
	free(d);
	free(file);
}

/* ---- the options ---- */

static void test_conf(void)
{
	struct kube_conf kc = { .door = NULL, .max_pods = 100 };
	struct kube_check_conf c;
	struct err e = {{0}};
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", "ns1", &e) < 0 && e.kind == ERR_INVALID &&
	   strstr(e.msg, "front-door is not set"), "no front door: refused, saying what to set: %s", e.msg);
	kc.door = "[fd00::5]:7433";
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", "ns1", &e) == 0 && !strcmp(c.spec.front_door, "fd00::5") &&
	   c.spec.front_door_port == 7433 && !strcmp(c.spec.namespace, "ns1"), "an IPv6 front door: %s",
	   c.spec.front_door ? c.spec.front_door : e.msg);
	kube_check_conf_free(&c);
	kc.door = "10.0.0.5:7433";
	kc.namespace = "from-conf";
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", NULL, &e) == 0 && !strcmp(c.spec.namespace, "from-conf"),
	   "the namespace of [kubernetes]");
	kube_check_conf_free(&c);
	kc.namespace = NULL;
	kc.kubeconfig = kubeconfig("kc-ns", "tok-A-0123456789", "from-kubeconfig");
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", NULL, &e) == 0 &&
	   !strcmp(c.spec.namespace, "from-kubeconfig"), "else the kubeconfig context's: %s", e.msg);
	kube_check_conf_free(&c);
	kc.kubeconfig = testlib_fmt("%s/no-kubeconfig", T);
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", NULL, &e) < 0 && e.kind == ERR_INVALID &&
	   strstr(e.msg, "no namespace"), "no namespace anywhere: refused: %s", e.msg);
	kc.door_cidr = "10.0.0.0/99";
	ok(kube_check_conf_init(&c, &kc, &lim, "inst1", "ns1", &e) < 0 && e.kind == ERR_INVALID &&
	   strstr(e.msg, "CIDR"), "a bad front-door-cidr: refused: %s", e.msg);
	kc.door_cidr = NULL;
	ok(kube_check_conf_init(&c, &kc, &lim, "bad instance", "ns1", &e) < 0 && e.kind == ERR_INVALID,
	   "an instance id that is no label value: refused: %s", e.msg);
}

/* ---- against the API ---- */

static struct kube *K;
static struct kube_spec_opts O;

static long req(const char *method, const char *path, json_t *body)
{
	struct err e = {{0}};
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	long code = kube_request(K, method, path, text, NULL, &e);
	free(text);
	json_decref(body);
	return code;
}

static const char *path_of(const char *kind, const char *name)
{
	if (!strcmp(kind, "networkpolicies"))
		return testlib_fmt("/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies%s%s", O.namespace,
		                   name ? "/" : "", name ? name : "");
	if (!strcmp(kind, "namespaces"))
		return testlib_fmt("/api/v1/namespaces%s%s", name ? "/" : "", name ? name : "");
	return testlib_fmt("/api/v1/namespaces/%s/%s%s%s", O.namespace, kind, name ? "/" : "", name ? name : "");
}

/* Replaces the object kind/name by obj (the manifest's when NULL). */
static void put_back(const char *kind, const char *name, json_t *obj)
{
	struct err e = {{0}};
	req("DELETE", path_of(kind, name), NULL);
	if (!obj) {
		json_t *(*build)(const struct kube_spec_opts *, struct err *) =
			!strcmp(kind, "namespaces") ? kube_spec_namespace :
			!strcmp(kind, "serviceaccounts") ? kube_spec_service_account :
			!strcmp(kind, "resourcequotas") ? kube_spec_quota :
			!strcmp(name, KUBE_SPEC_POLICY_DENY) ? kube_spec_policy_deny : kube_spec_policy_front_door;
		obj = build(&O, &e);
	}
	long code = req("POST", path_of(kind, NULL), obj);
	if (code != 201)
		printf("# put_back %s/%s: %ld\n", kind, name, code);
}

/* The front door's policy with one change made by fn. */
static json_t *door_policy(void (*fn)(json_t *spec))
{
	struct err e = {{0}};
	json_t *p = kube_spec_policy_front_door(&O, &e);
	fn(json_object_get(p, "spec"));
	return p;
}

static json_t *rule0(json_t *spec)
{
	return json_array_get(json_object_get(spec, "egress"), 0);
}

static void wide_cidr(json_t *s)
{
	json_object_set_new(json_object_get(json_array_get(json_object_get(rule0(s), "to"), 0), "ipBlock"),
	                    "cidr", json_string("0.0.0.0/0"));
}
static void near_cidr(json_t *s)
{
	json_object_set_new(json_object_get(json_array_get(json_object_get(rule0(s), "to"), 0), "ipBlock"),
	                    "cidr", json_string("10.0.0.0/24"));
}
static void no_ports(json_t *s) { json_object_del(rule0(s), "ports"); }
static void no_to(json_t *s) { json_object_del(rule0(s), "to"); }
static void other_port(json_t *s)
{
	json_object_set_new(json_array_get(json_object_get(rule0(s), "ports"), 0), "port", json_integer(22));
}
static void port_range(json_t *s)
{
	json_object_set_new(json_array_get(json_object_get(rule0(s), "ports"), 0), "endPort", json_integer(9000));
}
static void udp(json_t *s)
{
	json_object_set_new(json_array_get(json_object_get(rule0(s), "ports"), 0), "protocol", json_string("UDP"));
}
static void pod_peer(json_t *s)
{
	json_array_append_new(json_object_get(rule0(s), "to"), json_pack("{s:{}}", "namespaceSelector"));
}
static void second_rule(json_t *s)
{
	json_array_append_new(json_object_get(s, "egress"),
	                      json_pack("{s:[{s:{s:s}}]}", "to", "ipBlock", "cidr", "8.8.8.8/32"));
}
static void other_pods(json_t *s)
{
	json_object_set_new(json_object_get(json_object_get(s, "podSelector"), "matchLabels"),
	                    KUBE_SPEC_INSTANCE, json_string("someone-else"));
}

static void test_checks(void)
{
	struct err e = {{0}};
	ok(kube_check_api(K, &O, &e) == 0, "the API answers and takes the token: %s", e.msg);
	ok(kube_check_all(K, &O, &e) == 0, "everything the manifest gives is in place: all checks pass: %s", e.msg);

	/* Each object missing in turn: the message names it and the fix. */
	static const struct { const char *kind, *name, *want; } miss[] = {
		{ "networkpolicies", KUBE_SPEC_POLICY_DENY, "NetworkPolicy paddock-default-deny is missing" },
		{ "networkpolicies", KUBE_SPEC_POLICY_FRONT_DOOR, "NetworkPolicy paddock-front-door is missing" },
		{ "serviceaccounts", KUBE_SPEC_SERVICE_ACCOUNT, "ServiceAccount paddock-sandbox is missing" },
		{ "resourcequotas", KUBE_SPEC_QUOTA, "ResourceQuota paddock-quota is missing" },
		{ "namespaces", "ns-pdk", "namespace ns-pdk does not exist" },
	};
	for (size_t i = 0; i < sizeof miss / sizeof *miss; i++) {
		req("DELETE", path_of(miss[i].kind, miss[i].name), NULL);
		int rc = kube_check_all(K, &O, &e);
		ok(rc < 0 && strstr(e.msg, miss[i].want) && strstr(e.msg, KUBE_CHECK_FIX),
		   "without %s/%s the check fails, naming it and the fix: %s", miss[i].kind, miss[i].name, e.msg);
		put_back(miss[i].kind, miss[i].name, NULL);
	}
	ok(kube_check_all(K, &O, &e) == 0, "all back in place: the checks pass again: %s", e.msg);

	/* A front door policy that allows more than the front door. */
	static const struct { void (*fn)(json_t *); const char *want, *what; } wide[] = {
		{ wide_cidr, "allows egress to 0.0.0.0/0, more than the front door's 10.0.0.5/32", "0.0.0.0/0" },
		{ near_cidr, "allows egress to 10.0.0.0/24,", "the front door's /24" },
		{ no_ports, "every port", "any port (no ports)" },
		{ no_to, "every address", "any address (no 'to')" },
		{ other_port, "allows port 22;", "another port" },
		{ port_range, "allows a range of ports", "a port range" },
		{ udp, "allows protocol UDP;", "UDP" },
		{ pod_peer, "allows egress to pods", "a namespaceSelector peer" },
		{ second_rule, "allows egress to 8.8.8.8/32,", "a second rule to another address" },
		{ other_pods, "does not select this paddock's pods", "a podSelector of another instance" },
	};
	for (size_t i = 0; i < sizeof wide / sizeof *wide; i++) {
		put_back("networkpolicies", KUBE_SPEC_POLICY_FRONT_DOOR, door_policy(wide[i].fn));
		int rc = kube_check_one(K, &O, KUBE_CHECK_POLICY_DOOR, &e);
		ok(rc < 0 && e.kind == ERR_INVALID && strstr(e.msg, wide[i].want) &&
		   strstr(e.msg, "NetworkPolicy paddock-front-door in namespace ns-pdk") && strstr(e.msg, KUBE_CHECK_FIX),
		   "a front door policy widened to %s is refused, naming it: %s", wide[i].what, e.msg);
		ok(kube_check_all(K, &O, &e) < 0, "and the preflight's check refuses it too");
	}
	put_back("networkpolicies", KUBE_SPEC_POLICY_FRONT_DOOR, NULL);

	/* A narrower CIDR than the configured one is fine. */
	struct kube_spec_opts wider = O;
	wider.front_door_cidr = "10.0.0.0/16";
	ok(kube_check_one(K, &wider, KUBE_CHECK_POLICY_DOOR, &e) == 0,
	   "a policy narrower than front-door-cidr passes: %s", e.msg);

	/* A default-deny that is not one. */
	json_t *d = kube_spec_policy_deny(&O, &e);
	json_object_set_new(json_object_get(d, "spec"), "egress", json_pack("[{}]"));
	put_back("networkpolicies", KUBE_SPEC_POLICY_DENY, d);
	ok(kube_check_one(K, &O, KUBE_CHECK_POLICY_DENY, &e) < 0 && strstr(e.msg, "has egress rules"),
	   "a default-deny with an egress rule (allow all) is refused: %s", e.msg);
	d = kube_spec_policy_deny(&O, &e);
	json_array_remove(json_object_get(json_object_get(d, "spec"), "policyTypes"), 1);
	put_back("networkpolicies", KUBE_SPEC_POLICY_DENY, d);
	ok(kube_check_one(K, &O, KUBE_CHECK_POLICY_DENY, &e) < 0 && strstr(e.msg, "does not deny both directions"),
	   "a default-deny of ingress only is refused: %s", e.msg);
	d = kube_spec_policy_deny(&O, &e);
	json_object_set_new(json_object_get(d, "spec"), "podSelector",
	                    json_pack("{s:{s:s}}", "matchLabels", "a", "b"));
	put_back("networkpolicies", KUBE_SPEC_POLICY_DENY, d);
	ok(kube_check_one(K, &O, KUBE_CHECK_POLICY_DENY, &e) < 0 && strstr(e.msg, "selects only some pods"),
	   "a default-deny of some pods only is refused: %s", e.msg);
	put_back("networkpolicies", KUBE_SPEC_POLICY_DENY, NULL);

	/* The service account mounts its token. */
	json_t *sa = kube_spec_service_account(&O, &e);
	json_object_del(sa, "automountServiceAccountToken");
	put_back("serviceaccounts", KUBE_SPEC_SERVICE_ACCOUNT, sa);
	ok(kube_check_one(K, &O, KUBE_CHECK_SERVICE_ACCOUNT, &e) < 0 && strstr(e.msg, "automountServiceAccountToken"),
	   "a service account that mounts its token (the default) is refused: %s", e.msg);
	put_back("serviceaccounts", KUBE_SPEC_SERVICE_ACCOUNT, NULL);
	ok(kube_check_all(K, &O, &e) == 0, "all back in place: %s", e.msg);

	/* 403: the API does not let paddock read them. */
	struct kube_spec_opts forb = O;
	forb.namespace = "ns-forbidden";
	ok(kube_check_one(K, &forb, KUBE_CHECK_NAMESPACE, &e) == 1 && strstr(e.msg, "may not read the namespace"),
	   "a 403 on the namespace itself is not a failure (a Role in the namespace cannot grant it): %s", e.msg);
	ok(kube_check_all(K, &forb, &e) < 0 && strstr(e.msg, "403 Forbidden") && strstr(e.msg, "networkpolicies"),
	   "a 403 on the policies: a clear message with the API's: %s", e.msg);

	/* 401: not authenticated. */
	struct err e2 = {{0}};
	struct kube_opts ko = { .kubeconfig = kubeconfig("kc-bad", "wrong-token-000", "ns-pdk"), .timeout = 5 };
	struct kube *bad = kube_open(&ko, &e2);
	ok(bad && kube_check_api(bad, &O, &e2) < 0 && strstr(e2.msg, "did not accept paddock's credentials"),
	   "a wrong token: the API check says the credentials were refused: %s", e2.msg);
	kube_free(bad);
}

/* The preflight, from the configuration's pieces. */
static void test_preflight(const char *data)
{
	struct err e = {{0}};
	struct kube_conf kc = { .kubeconfig = kubeconfig("kc-pf", "tok-A-0123456789", "ns-pdk"),
	                        .door = "10.0.0.5:7433", .max_pods = 100 };
	ok(kube_check_preflight(&kc, &lim, data, &e) == 0, "the preflight passes with everything in place: %s", e.msg);
	ok(kube_check_preflight(&kc, NULL, data, &e) == 0,
	   "and without the limits (sandbox_options() has none; the checks compare none): %s", e.msg);
	req("DELETE", path_of("networkpolicies", KUBE_SPEC_POLICY_DENY), NULL);
	ok(kube_check_preflight(&kc, &lim, data, &e) < 0 && strstr(e.msg, "paddock-default-deny is missing"),
	   "without the default-deny policy the preflight refuses: %s", e.msg);
	put_back("networkpolicies", KUBE_SPEC_POLICY_DENY, NULL);
	kc.door = NULL;
	ok(kube_check_preflight(&kc, &lim, data, &e) < 0 && strstr(e.msg, "front-door is not set"),
	   "without a front door the preflight refuses: %s", e.msg);
}

/* paddock doctor's kubernetes lines, one per check. */
static const struct doctor_check *line(const struct doctor *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

static void test_doctor(const char *data)
{
	struct config cfg;
	config_init_defaults(&cfg);
	free(cfg.sandbox_backend);
	cfg.sandbox_backend = xstrdup("kubernetes");
	cfg.limits = lim;
	cfg.kube.kubeconfig = xstrdup(kubeconfig("kc-doc", "tok-A-0123456789", "ns-pdk"));
	cfg.kube.door = xstrdup("10.0.0.5:7433");
	cfg.kube.door_listen = xstrdup("127.0.0.1:0");
	struct doctor d;
	doctor_run(&d, &cfg, NULL, data);
	static const char *const names[] = { "k8s-config", "k8s-door", "k8s-api", "k8s-namespace", "k8s-deny",
	                                     "k8s-door-policy", "k8s-account", "k8s-quota" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const struct doctor_check *c = line(&d, names[i]);
		ok(c && c->status == DOCTOR_OK, "doctor: %s ok: %s", names[i], c ? c->detail : "(no line)");
	}
	doctor_free(&d);
	req("DELETE", path_of("networkpolicies", KUBE_SPEC_POLICY_FRONT_DOOR), NULL);
	doctor_run(&d, &cfg, NULL, data);
	const struct doctor_check *c = line(&d, "k8s-door-policy");
	ok(c && c->status == DOCTOR_FAIL && strstr(c->detail, "paddock-front-door is missing") && c->fix &&
	   strstr(c->fix, KUBE_CHECK_FIX) && !d.can_run,
	   "doctor: without the front door's policy, that line fails with the fix, and tasks cannot run: %s",
	   c ? c->detail : "(no line)");
	doctor_free(&d);
	put_back("networkpolicies", KUBE_SPEC_POLICY_FRONT_DOOR, NULL);
	free(cfg.kube.kubeconfig);
	cfg.kube.kubeconfig = xstrdup(testlib_fmt("%s/no-such-kubeconfig", T));
	cfg.kube.namespace = xstrdup("ns-pdk");
	doctor_run(&d, &cfg, NULL, data);
	c = line(&d, "k8s-config");
	ok(c && c->status == DOCTOR_FAIL && !line(&d, "k8s-api"),
	   "doctor: an unreadable kubeconfig fails its line, and nothing is asked of the API: %s",
	   c ? c->detail : "(no line)");
	doctor_free(&d);
	config_free(&cfg);
}

int main(void)
{
	if (testlib_sh("command -v openssl >/dev/null && command -v python3 >/dev/null") != 0) {
		printf("1..0 # SKIP the contract server needs openssl and python3 (scripts/install-deps --tests)\n");
		return 0;
	}
	T = testlib_tmpdir("kube-check");
	test_instance();
	char *data = testlib_fmt("%s/data", T);
	struct err e = {{0}};
	char *instance = paths_instance_id(data, &e);
	O = (struct kube_spec_opts){ .namespace = "ns-pdk", .instance = instance, .limits = &lim,
	                             .front_door = "10.0.0.5", .front_door_port = 7433, .max_pods = 100 };
	json_t *m = kube_spec_manifest(&O, &e);
	char *objects = testlib_fmt("%s/objects.json", T);
	json_dump_file(m, objects, 0);
	json_decref(m);
	server_start(objects);
	test_conf();
	struct kube_opts ko = { .kubeconfig = kubeconfig("kc", "tok-A-0123456789", "ns-pdk"), .timeout = 5 };
	K = kube_open(&ko, &e);
	if (!K) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	test_checks();
	test_preflight(data);
	test_doctor(data);
	kube_free(K);
	free(instance);
	child_kill(&srv, SIGTERM);
	child_finish(&srv);
	testlib_end();
	return tap_done();
}
