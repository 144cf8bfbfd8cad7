/* kube: the Kubernetes API client (kube.h) against the loopback contract
 * server tests/kube-api-server.py, over TLS with a CA made here: pods
 * created, got, listed, deleted with a uid precondition, watched (split
 * and coalesced chunks, bookmarks, 410 as a status and as an event, drops);
 * retries and Retry-After; the credentials (tokens that rotate, client
 * certificates, exec plugins, in the cluster) and the settings refused;
 * and the attacks: another CA, hostile plugins, streams and messages. */
#include "autoconfig.h"
#include "kube.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "tap.h"
#include "testlib.h"

static char *T;
static int port;
static struct child srv;
static size_t log_seen;

/* ---- the server and its record ---- */

static void certs(void)
{
	const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
	/* The test CA and the server's: testlib_kube_server's; these are the
	 * client side's (another CA of the same name, a client CA and its
	 * certificate). */
	int rc = testlib_sh(
		"cd %s && "
		"printf 'extendedKeyUsage=clientAuth\\n' >cli.ext && "
		"openssl req -x509 %s -keyout other.key -out other.crt -days 2 -subj /CN=test-ca 2>/dev/null && "
		"openssl req -x509 %s -keyout cca.key -out cca.crt -days 2 -subj /CN=client-ca 2>/dev/null && "
		"openssl req %s -keyout cli.key -out cli.csr -subj /CN=paddock-user 2>/dev/null && "
		"openssl x509 -req -in cli.csr -CA cca.crt -CAkey cca.key -CAcreateserial -out cli.crt -days 2 "
		"-extfile cli.ext 2>/dev/null",
		T, ec, ec, ec);
	if (rc != 0) {
		printf("Bail out! openssl cannot make the test certificates\n");
		exit(1);
	}
}

static void server_start(void)
{
	char *tf = testlib_fmt("%s/server-token", T), *ff = testlib_fmt("%s/faults", T);
	testlib_write_file(tf, "tok-A-0123456789\n");
	testlib_write_file(ff, "%s", "");
	const char *args[] = { "--client-ca", testlib_fmt("%s/cca.crt", T), "--token-file", tf,
		"--faults", ff, "--grace-scale", "0.2", "--bookmark-interval", "0.3", "--start-delay", "0.1",
		"--forbid-namespace", "ns-forbidden", NULL };
	port = testlib_kube_server(&srv, T, args);
}

static int by_time(const void *a, const void *b)
{
	double x = json_real_value(json_object_get(*(json_t *const *)a, "time"));
	double y = json_real_value(json_object_get(*(json_t *const *)b, "time"));
	return x < y ? -1 : x > y;
}

/* The requests the server recorded since the last call, in the order
 * they came (a watch is recorded when its stream ends), once at least
 * nwatch watches are among them (or 5 s passed).  New reference. */
static json_t *requests_n(int nwatch)
{
	json_t *all = json_array();
	size_t n = 0, got = 0;
	for (int tries = 0; tries < 100; tries++) {
		char *text = testlib_slurp(testlib_fmt("%s/requests.log", T));
		json_array_clear(all);
		n = 0;
		int w = 0;
		for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
			if (n++ < log_seen)
				continue;
			json_t *j = json_loads(line, 0, NULL);
			if (j) {
				w += json_object_get(json_object_get(j, "query"), "watch") != NULL;
				json_array_append_new(all, j);
			}
		}
		free(text);
		got = n;
		if (w >= nwatch)
			break;
		clock_sleep(0.05);
	}
	log_seen = got;
	size_t cnt = json_array_size(all);
	json_t **v = xcalloc(cnt + 1, sizeof *v);
	for (size_t i = 0; i < cnt; i++)
		v[i] = json_incref(json_array_get(all, i));
	qsort(v, cnt, sizeof *v, by_time);
	json_array_clear(all);
	for (size_t i = 0; i < cnt; i++)
		json_array_append_new(all, v[i]);
	free(v);
	return all;
}

static json_t *requests(void)
{
	return requests_n(0);
}

static const char *rq(json_t *r, const char *a, const char *b)
{
	json_t *v = json_object_get(r, a);
	if (b)
		v = json_object_get(v, b);
	return json_string_value(v);
}

static void fault(const char *line)
{
	char *f = testlib_fmt("%s/faults", T);
	FILE *fp = fopen(f, "a");
	fprintf(fp, "%s\n", line);
	fclose(fp);
}

/* ---- kubeconfigs ---- */

static char *kubeconfig(const char *name, const char *cluster_extra, const char *user, const char *ctx_extra)
{
	char *p = testlib_fmt("%s/%s", T, name);
	testlib_write_file(p,
		"apiVersion: v1\nkind: Config\ncurrent-context: main\n"
		"clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:%d\n%s"
		"contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n%s"
		"- name: other\n  context:\n    cluster: c1\n    user: u1\n"
		"users:\n- name: u1\n  user:\n%s",
		port, cluster_extra ? cluster_extra : testlib_fmt("    certificate-authority: %s/ca.crt\n", T),
		ctx_extra ? ctx_extra : "    namespace: ns1\n", user);
	return p;
}

static struct kube *open_cfg(const char *path, struct err *e)
{
	struct kube_opts o = { .kubeconfig = path, .timeout = 5, .retries = 3, .retry_after_max = 1,
	                       .exec_timeout = 5 };
	return kube_open(&o, e);
}

static json_t *pod(const char *name, const char *task)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:[{s:s, s:s}], s:b}}", "apiVersion", "v1", "kind",
	                 "Pod", "metadata", "name", name, "labels", "app.kubernetes.io/managed-by", "paddock",
	                 "paddock.dev/task", task, "spec", "containers", "name", "main", "image", "busybox",
	                 "automountServiceAccountToken", 0);
}

static const char *meta(json_t *o, const char *k)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

/* ---- pods ---- */

static void test_pods(void)
{
	struct err e = {{0}};
	struct kube *k = open_cfg(kubeconfig("kc-token", NULL, "    token: tok-A-0123456789\n", NULL), &e);
	ok(k != NULL, "a kubeconfig with a CA file and a token opens: %s", e.msg);
	if (!k)
		return;
	is_str(kube_namespace(k), "ns1", "the namespace is the context's");
	json_t *p = pod("p1", "t1");
	json_t *made = kube_pod_create(k, p, &e);
	ok(made && meta(made, "uid") && meta(made, "resourceVersion"), "POST pods: the created pod, with uid and resourceVersion: %s", e.msg);
	json_t *r = requests(), *last = json_array_get(r, json_array_size(r) - 1);
	is_str(rq(last, "method", NULL), "POST", "recorded: POST");
	is_str(rq(last, "path", NULL), "/api/v1/namespaces/ns1/pods", "recorded: in the context's namespace");
	is_str(rq(last, "headers", "Content-Type"), "application/json", "recorded: the body is JSON");
	is_str(rq(last, "headers", "Accept"), "application/json", "recorded: JSON is asked for");
	is_str(meta(json_object_get(last, "body"), "name"), "p1", "recorded: the body sent is the pod");
	ok(rq(last, "auth", NULL) && !strncmp(rq(last, "auth", NULL), "token:", 6), "the bearer token was accepted");
	json_decref(r);

	json_t *again = kube_pod_create(k, p, &e);
	ok(!again && e.kind == ERR_CONFLICT && !strcmp(kube_last_reason(k), "AlreadyExists") && kube_last_code(k) == 409,
	   "a second create is 409 AlreadyExists, for the caller to adopt or not");
	ok(strstr(e.msg, "pods \"p1\" already exists") != NULL, "its message is the API's: %s", e.msg);
	json_decref(p);

	json_t *got = kube_pod_get(k, "p1", &e);
	is_str(got ? meta(got, "uid") : NULL, meta(made, "uid"), "GET the pod by name");
	json_decref(got);
	got = kube_pod_get(k, "nope", &e);
	ok(!got && e.kind == ERR_NOT_FOUND && strstr(e.msg, "pods \"nope\" not found"), "a missing pod is ERR_NOT_FOUND: %s", e.msg);

	p = pod("p2", "t2");
	json_decref(kube_pod_create(k, p, &e));
	json_decref(p);
	json_t *l = kube_pod_list(k, "app.kubernetes.io/managed-by=paddock,paddock.dev/task=t1", &e);
	json_t *items = json_object_get(l, "items");
	ok(json_array_size(items) == 1 && !strcmp(meta(json_array_get(items, 0), "name"), "p1"),
	   "list by label selector: only the task's pod");
	ok(meta(l, "resourceVersion") != NULL, "the list has the resourceVersion to watch from");
	json_decref(l);
	r = requests();
	last = json_array_get(r, json_array_size(r) - 1);
	is_str(rq(last, "query", "labelSelector"), "app.kubernetes.io/managed-by=paddock,paddock.dev/task=t1",
	       "recorded: the labelSelector as sent");
	json_decref(r);
	l = kube_pod_list(k, NULL, &e);
	is_int(json_array_size(json_object_get(l, "items")), 2, "list without a selector: both");
	json_decref(l);

	p = pod("Bad_Name", "t3");
	ok(!kube_pod_create(k, p, &e) && e.kind == ERR_INVALID && kube_last_code(k) == 422 &&
	   strstr(e.msg, "metadata.name"), "an invalid pod is 422, the field named: %s", e.msg);
	json_decref(p);

	ok(kube_pod_delete(k, "p1", "not-its-uid", 1, &e) < 0 && e.kind == ERR_CONFLICT &&
	   strstr(e.msg, "Precondition failed"), "DELETE with another uid is refused (409): %s", e.msg);
	got = kube_pod_get(k, "p1", &e);
	ok(got != NULL, "and the pod is still there");
	json_decref(got);
	ok(kube_pod_delete(k, "p2", NULL, 0, &e) == 0, "DELETE with grace 0: %s", e.msg);
	got = kube_pod_get(k, "p2", &e);
	ok(!got && e.kind == ERR_NOT_FOUND, "the pod is gone at once");
	ok(kube_pod_delete(k, "p2", NULL, 0, &e) < 0 && e.kind == ERR_NOT_FOUND, "a second DELETE is ERR_NOT_FOUND");
	ok(kube_pod_delete(k, "p1", meta(made, "uid"), 0, &e) == 0, "DELETE with its uid: %s", e.msg);
	r = requests();
	last = json_array_get(r, json_array_size(r) - 1);
	json_t *body = json_object_get(last, "body");
	is_str(json_string_value(json_object_get(json_object_get(body, "preconditions"), "uid")), meta(made, "uid"),
	       "recorded: the uid precondition");
	is_int(json_integer_value(json_object_get(body, "gracePeriodSeconds")), 0, "recorded: the grace period");
	json_decref(r);
	json_decref(made);

	p = pod("p9", "t9");
	json_object_set_new(json_object_get(p, "metadata"), "namespace", json_string("elsewhere"));
	ok(!kube_pod_create(k, p, &e) && e.kind == ERR_INVALID && strstr(e.msg, "does not match"),
	   "a pod for another namespace is refused (400): %s", e.msg);
	json_decref(p);
	kube_free(k);
}

/* ---- the watch ---- */

struct seen {
	struct kube *k2;
	char uid[64];
	int added, running, deleting, deleted, relist, relist_null, modified;
	int stop_on;   /* 1: DELETED, 2: RELIST, 3: Running */
};

static int on_event(enum kube_event_type t, json_t *obj, void *arg)
{
	struct seen *s = arg;
	const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
	switch (t) {
	case KUBE_EV_ADDED:
		s->added++;
		break;
	case KUBE_EV_MODIFIED:
		s->modified++;
		if (meta(obj, "deletionTimestamp")) {
			s->deleting++;
		} else if (phase && !strcmp(phase, "Running")) {
			s->running++;
			if (s->stop_on == 3)
				return 3;
			if (s->k2) {
				struct err e = {{0}};
				if (kube_pod_delete(s->k2, meta(obj, "name"), s->uid, 1, &e) < 0)
					printf("# delete: %s\n", e.msg);
			}
		}
		break;
	case KUBE_EV_DELETED:
		s->deleted++;
		if (s->stop_on == 1)
			return 1;
		break;
	case KUBE_EV_RELIST:
		s->relist++;
		s->relist_null += obj == NULL;
		if (s->stop_on == 2)
			return 2;
		break;
	}
	return 0;
}

static json_t *watched(json_t *r, size_t *n)
{
	json_t *out = json_array(), *it;
	size_t i;
	json_array_foreach(r, i, it)
		if (rq(it, "query", "watch"))
			json_array_append(out, it);
	*n = json_array_size(out);
	return out;
}

static void test_watch(void)
{
	struct err e = {{0}};
	char *cfg = kubeconfig("kc-watch", NULL, "    token: tok-A-0123456789\n", NULL);
	struct kube *k = open_cfg(cfg, &e), *k2 = open_cfg(cfg, &e);
	if (!k || !k2) {
		ok(0, "open: %s", e.msg);
		return;
	}
	json_t *p = pod("w1", "tw"), *made = kube_pod_create(k, p, &e);
	json_decref(p);
	struct seen s = { .k2 = k2, .stop_on = 1 };
	snprintf(s.uid, sizeof s.uid, "%s", meta(made, "uid"));
	struct kube_watch w = { .name = "w1", .rv = xstrdup(meta(made, "resourceVersion")) };
	json_decref(requests());
	int rc = kube_watch_pod(k, &w, 10, on_event, &s, &e);
	is_int(rc, 1, "the watch ends with the callback's answer: %s", e.msg);
	ok(s.running == 1 && s.deleting == 1 && s.deleted == 1,
	   "events in order: Running, then deletionTimestamp (graceful delete), then DELETED (%d %d %d)",
	   s.running, s.deleting, s.deleted);
	size_t n;
	json_t *r = requests_n(1), *ws = watched(r, &n), *w0 = json_array_get(ws, 0);
	ok(n >= 1, "one watch request or more");
	is_str(rq(w0, "query", "fieldSelector"), "metadata.name=w1", "recorded: fieldSelector=metadata.name=w1");
	is_str(rq(w0, "query", "allowWatchBookmarks"), "true", "recorded: allowWatchBookmarks=true");
	is_str(rq(w0, "query", "resourceVersion"), meta(made, "resourceVersion"), "recorded: from the create's resourceVersion");
	ok(json_is_true(json_object_get(w0, "split")) , "the server split an event across chunks");
	json_t *it;
	size_t i;
	int dels = 0;
	json_array_foreach(r, i, it)
		if (!strcmp(rq(it, "method", NULL), "DELETE")) {
			dels++;
			is_int(json_integer_value(json_object_get(json_object_get(it, "body"), "gracePeriodSeconds")), 1,
			       "recorded: DELETE with a short grace period");
		}
	is_int(dels, 1, "one DELETE");
	json_decref(ws);
	json_decref(r);
	kube_watch_end(&w);
	json_decref(made);

	/* Bookmarks, and the deadline. */
	p = pod("w2", "tw");
	made = kube_pod_create(k, p, &e);
	json_decref(p);
	memset(&s, 0, sizeof s);
	s.stop_on = 0;
	w = (struct kube_watch){ .name = "w2" };
	double t0 = clock_mono();
	rc = kube_watch_pod(k, &w, 1.2, on_event, &s, &e);
	double took = clock_mono() - t0;
	is_int(rc, 0, "a watch without an answer ends at its deadline: %s", e.msg);
	ok(took >= 1.1 && took < 3, "after about the time asked (%.2f s)", took);
	ok(s.added == 1, "without a resourceVersion: the pod as listed first");
	ok(w.bookmarks >= 1, "bookmarks seen (%u)", w.bookmarks);
	r = requests_n(1);
	ws = watched(r, &n);
	json_t *lastw = json_array_get(ws, n - 1);
	ok(n >= 1 && json_is_true(json_object_get(lastw, "coalesced")), "the server sent two events in one chunk");
	json_decref(ws);
	json_decref(r);

	/* A wake descriptor ends a quiet watch at once (the backend waits
	 * for its runner's connection and the pod's events together), and
	 * the next watch goes on from where it was. */
	int wake[2];
	ok(pipe(wake) == 0, "a pipe");
	w.wake_fd = &wake[0];
	rc = kube_watch_pod(k, &w, 0.5, on_event, &s, &e);
	is_int(rc, 0, "a quiet watch with a wake descriptor: %s", e.msg);
	ok(!w.woken, "not woken while the descriptor is quiet");
	char *rv_before = xstrdup(w.rv ? w.rv : "");
	(void)!write(wake[1], "x", 1);
	t0 = clock_mono();
	rc = kube_watch_pod(k, &w, 20, on_event, &s, &e);
	took = clock_mono() - t0;
	is_int(rc, 0, "woken: no error: %s", e.msg);
	ok(w.woken, "woken by the descriptor");
	ok(took < 5, "long before the 20 s asked (%.2f s)", took);
	ok(w.rv && !strcmp(w.rv, rv_before), "the resourceVersion kept for the next watch");
	free(rv_before);
	close(wake[0]);
	close(wake[1]);
	kube_watch_end(&w);
	json_decref(made);

	/* 410 as an ERROR event, then as the HTTP status, then a real
	 * expired resourceVersion: re-listed, then watched from the list. */
	const char *faults[] = {
		"{\"action\": \"gone\", \"watch\": true, \"path\": \"/pods$\"}",
		"{\"action\": \"status\", \"code\": 410, \"reason\": \"Expired\", \"watch\": true, \"path\": \"/pods$\"}",
		NULL,
	};
	for (int f = 0; f < 3; f++) {
		p = pod(f == 0 ? "g0" : f == 1 ? "g1" : "g2", "tg");
		made = kube_pod_create(k, p, &e);
		json_decref(p);
		clock_sleep(0.2);
		if (faults[f]) {
			fault(faults[f]);
		} else {
			json_t *x = NULL;
			kube_request(k, "POST", "/_fake/compact", "{}", &x, &e);
			json_decref(x);
		}
		memset(&s, 0, sizeof s);
		w = (struct kube_watch){ .name = meta(made, "name"), .rv = xstrdup(meta(made, "resourceVersion")) };
		json_decref(requests());
		rc = kube_watch_pod(k, &w, 0.8, on_event, &s, &e);
		const char *what = f == 0 ? "an ERROR event with code 410" : f == 1 ? "a 410 status" : "a compacted history";
		ok(rc == 0 && w.relists == 1 && s.relist == 1 && s.relist_null == 0,
		   "%s: re-listed once, the pod as listed given (rc %d, %u): %s", what, rc, w.relists, e.msg);
		r = requests_n(2);
		int state = 0;
		json_array_foreach(r, i, it) {
			if (state == 0 && rq(it, "query", "watch"))
				state = 1;
			else if (state == 1 && !rq(it, "query", "watch") && rq(it, "query", "fieldSelector"))
				state = 2;
			else if (state == 2 && rq(it, "query", "watch") &&
			         strcmp(rq(it, "query", "resourceVersion"), meta(made, "resourceVersion")) > 0)
				state = 3;
		}
		is_int(state, 3, "%s: watch, list, then watch again from the list's resourceVersion", what);
		json_decref(r);
		kube_watch_end(&w);
		json_decref(made);
	}

	/* A stream dropped mid-event: opened again from the last
	 * resourceVersion seen, no event twice. */
	p = pod("d1", "td");
	made = kube_pod_create(k, p, &e);
	json_decref(p);
	fault("{\"action\": \"drop\", \"after\": 1, \"watch\": true, \"times\": 1}");
	memset(&s, 0, sizeof s);
	s.stop_on = 3;
	w = (struct kube_watch){ .name = "d1", .rv = xstrdup(meta(made, "resourceVersion")) };
	json_decref(requests());
	rc = kube_watch_pod(k, &w, 5, on_event, &s, &e);
	ok(rc == 3 && s.running == 1 && w.reconnects == 1, "a dropped stream is opened again; the event seen once (rc %d, %d, %u): %s",
	   rc, s.running, w.reconnects, e.msg);
	r = requests_n(2);
	ws = watched(r, &n);
	ok(n == 2 && !strcmp(rq(json_array_get(ws, 1), "query", "resourceVersion"), meta(made, "resourceVersion")),
	   "the second watch starts from the last resourceVersion seen");
	json_decref(ws);
	json_decref(r);
	kube_watch_end(&w);

	/* A stream that keeps dropping ends the watch, bounded. */
	fault("{\"action\": \"drop\", \"after\": 1, \"watch\": true, \"times\": 4}");
	memset(&s, 0, sizeof s);
	w = (struct kube_watch){ .name = "d1", .rv = xstrdup(meta(made, "resourceVersion")) };
	t0 = clock_mono();
	rc = kube_watch_pod(k, &w, 20, on_event, &s, &e);
	ok(rc < 0 && strstr(e.msg, "keeps dropping") && clock_mono() - t0 < 8,
	   "a stream that keeps dropping fails after a few tries: %s", e.msg);
	kube_watch_end(&w);
	json_decref(made);
	json_decref(requests());

	/* Hostile streams: a line of more than KUBE_EVENT_MAX, a line that
	 * is not JSON. */
	fault("{\"action\": \"huge\", \"size\": 1200000, \"watch\": true}");
	w = (struct kube_watch){ .name = "w2" };
	t0 = clock_mono();
	rc = kube_watch_pod(k, &w, 10, on_event, &s, &e);
	ok(rc < 0 && strstr(e.msg, "longer than") && clock_mono() - t0 < 5, "a line over 1 MiB without a newline fails the watch: %s",
	   e.msg);
	kube_watch_end(&w);
	fault("{\"action\": \"garbage\", \"watch\": true}");
	w = (struct kube_watch){ .name = "w2" };
	rc = kube_watch_pod(k, &w, 10, on_event, &s, &e);
	ok(rc < 0 && strstr(e.msg, "not a watch event"), "a line that is not JSON fails the watch: %s", e.msg);
	kube_watch_end(&w);
	clock_sleep(0.5);
	json_decref(requests());
	kube_free(k);
	kube_free(k2);
}

/* ---- retries ---- */

static int count(json_t *r, const char *method)
{
	json_t *it;
	size_t i;
	int n = 0;
	json_array_foreach(r, i, it)
		n += !strcmp(rq(it, "method", NULL), method);
	return n;
}

static void test_retries(void)
{
	struct err e = {{0}};
	char *cfg = kubeconfig("kc-retry", NULL, "    token: tok-A-0123456789\n", NULL);
	struct kube *k = open_cfg(cfg, &e);
	if (!k) {
		ok(0, "open: %s", e.msg);
		return;
	}
	json_decref(requests());
	fault("{\"method\": \"GET\", \"path\": \"/r1$\", \"action\": \"status\", \"code\": 429, \"retry_after\": 1}");
	json_t *p = pod("r1", "tr");
	json_decref(kube_pod_create(k, p, &e));
	json_decref(p);
	double t0 = clock_mono();
	json_t *got = kube_pod_get(k, "r1", &e);
	double took = clock_mono() - t0;
	ok(got != NULL, "a 429 is retried: %s", e.msg);
	ok(took >= 0.9, "after the Retry-After it gave (%.2f s)", took);
	json_t *r = requests(), *it;
	size_t i;
	is_int(count(r, "GET"), 2, "two GETs");
	int viol = 0;
	json_array_foreach(r, i, it)
		viol += json_object_get(it, "violation") != NULL;
	is_int(viol, 0, "none sooner than Retry-After");
	json_decref(r);
	json_decref(got);

	fault("{\"method\": \"GET\", \"path\": \"/r1$\", \"action\": \"status\", \"code\": 429, \"retry_after\": 7200}");
	t0 = clock_mono();
	got = kube_pod_get(k, "r1", &e);
	took = clock_mono() - t0;
	ok(got && took < 2.5, "a Retry-After of two hours is bounded (retry_after_max 1 s: %.2f s)", took);
	json_decref(got);
	json_decref(requests());

	fault("{\"method\": \"GET\", \"path\": \"/r1$\", \"action\": \"status\", \"code\": 429, "
	      "\"retry_after\": \"Wed, 21 Oct 2015 07:28:00 GMT\"}");
	t0 = clock_mono();
	got = kube_pod_get(k, "r1", &e);
	ok(got && clock_mono() - t0 < 1, "a Retry-After as an HTTP date in the past: retried at once: %s", e.msg);
	json_decref(got);
	json_decref(requests());

	fault("{\"method\": \"GET\", \"path\": \"/r1$\", \"action\": \"status\", \"code\": 503, \"times\": 4}");
	got = kube_pod_get(k, "r1", &e);
	ok(!got && e.kind == ERR_UNAVAILABLE && strstr(e.msg, "503"), "503 after every retry fails: %s", e.msg);
	r = requests();
	is_int(count(r, "GET"), 4, "the request and its 3 retries, no more");
	json_decref(r);
	fault("{\"method\": \"GET\", \"path\": \"/r1$\", \"action\": \"stall\", \"seconds\": 4}");
	struct kube_opts o = { .kubeconfig = cfg, .timeout = 1, .retries = 3 };
	struct kube *kt = kube_open(&o, &e);
	t0 = clock_mono();
	got = kube_pod_get(kt, "r1", &e);
	took = clock_mono() - t0;
	ok(!got && took < 2.5 && strstr(e.msg, "within"), "a server that stalls: the request times out (%.2f s): %s", took, e.msg);
	kube_free(kt);
	json_decref(requests());

	/* Nobody listening: a few tries, then says so. */
	char *closed = testlib_fmt("%s/kc-closed", T);
	testlib_write_file(closed, "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c}\n"
	                   "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', certificate-authority: %s/ca.crt}\n", T);
	kt = open_cfg(closed, &e);
	t0 = clock_mono();
	got = kt ? kube_pod_get(kt, "r1", &e) : NULL;
	took = clock_mono() - t0;
	ok(!got && strstr(e.msg, "cannot reach the Kubernetes API at https://127.0.0.1:1") && took > 1 && took < 5,
	   "a server nobody answers for: retried with backoff, then said (%.2f s): %s", took, e.msg);
	kube_free(kt);

	/* 401 and 403 are not retried; no token in any message. */
	struct kube *kb = open_cfg(kubeconfig("kc-bad", NULL, "    token: wrong-secret-token\n", NULL), &e);
	got = kube_pod_get(kb, "r1", &e);
	ok(!got && strstr(e.msg, "401") && !strstr(e.msg, "wrong-secret-token"), "a bad token: 401, said without the token: %s", e.msg);
	r = requests();
	is_int(count(r, "GET"), 1, "a 401 is not retried");
	json_decref(r);
	kube_free(kb);

	struct kube *kf = open_cfg(kubeconfig("kc-forbid", NULL, "    token: tok-A-0123456789\n",
	                                      "    namespace: ns-forbidden\n"), &e);
	p = pod("f1", "tf");
	ok(!kube_pod_create(kf, p, &e) && strstr(e.msg, "403") && strstr(e.msg, "cannot create resource"),
	   "403 names what is forbidden: %s", e.msg);
	json_decref(p);
	r = requests();
	is_int(count(r, "POST"), 1, "a 403 is not retried");
	json_decref(r);
	kube_free(kf);

	fault("{\"method\": \"GET\", \"action\": \"echo\"}");
	struct kube_opts once = { .kubeconfig = cfg, .timeout = 5, .retries = -1 };
	kt = kube_open(&once, &e);
	got = kube_pod_get(kt, "r1", &e);
	kube_free(kt);
	ok(!got && strstr(e.msg, "[token]") && !strstr(e.msg, "tok-A-0123456789"),
	   "a server that quotes the token back: the message has it masked: %s", e.msg);
	json_decref(requests());
	kube_free(k);
}

/* ---- credentials ---- */

static void test_rotation(void)
{
	struct err e = {{0}};
	char *tf = testlib_fmt("%s/client-token", T), *sf = testlib_fmt("%s/server-token", T);
	testlib_write_file(tf, "tok-A-0123456789\n");
	struct kube *k = open_cfg(kubeconfig("kc-file", NULL, "    tokenFile: client-token\n", NULL), &e);
	ok(k != NULL, "tokenFile, relative to the kubeconfig: %s", e.msg);
	if (!k)
		return;
	json_t *l = kube_pod_list(k, NULL, &e);
	ok(l != NULL, "a request with the file's token: %s", e.msg);
	json_decref(l);
	testlib_sh("cd %s && echo tok-B-9876543210 >t.new && mv t.new client-token && cp client-token server-token", T);
	l = kube_pod_list(k, NULL, &e);
	ok(l != NULL, "the token rotated: the file is read again: %s", e.msg);
	json_decref(l);
	json_t *r = requests();
	size_t n = json_array_size(r);
	ok(n >= 2 && strcmp(rq(json_array_get(r, n - 1), "auth", NULL), rq(json_array_get(r, n - 2), "auth", NULL)),
	   "recorded: another token after the rotation");
	json_decref(r);
	kube_free(k);

	/* In the cluster: the service account's files, the env. */
	char *sa = testlib_fmt("%s/sa", T);
	testlib_sh("mkdir -p %s && cp %s/ca.crt %s/ca.crt && cp %s %s/token && printf 'ns-in\\n' >%s/namespace", sa, T, sa, sf, sa,
	           sa);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", testlib_fmt("%d", port), 1);
	struct kube_opts o = { .incluster = 1, .incluster_dir = sa, .timeout = 5 };
	k = kube_open(&o, &e);
	ok(k && !strcmp(kube_namespace(k), "ns-in"), "in the cluster: the service account's namespace: %s", e.msg);
	if (k) {
		l = kube_pod_list(k, NULL, &e);
		ok(l != NULL, "in the cluster: a request with the service account's token: %s", e.msg);
		json_decref(l);
		testlib_sh("cd %s && echo tok-C-5555555555 >sa/t.new && mv sa/t.new sa/token && cp sa/token server-token", T);
		l = kube_pod_list(k, NULL, &e);
		ok(l != NULL, "in the cluster: the rotated token is read again: %s", e.msg);
		json_decref(l);
		kube_free(k);
	}
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	testlib_sh("cd %s && echo tok-A-0123456789 >server-token", T);
	k = kube_open(&o, &e);
	ok(!k && strstr(e.msg, "KUBERNETES_SERVICE_HOST"), "in the cluster without the env: says so: %s", e.msg);
	json_decref(requests());
}

static void test_client_cert(void)
{
	struct err e = {{0}};
	struct kube *k = open_cfg(kubeconfig("kc-cert", NULL,
		testlib_fmt("    client-certificate: %s/cli.crt\n    client-key: %s/cli.key\n", T, T), NULL), &e);
	json_t *l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "a client certificate (files): %s", e.msg);
	json_decref(l);
	json_t *r = requests();
	is_str(rq(json_array_get(r, json_array_size(r) - 1), "auth", NULL), "cert:paddock-user", "recorded: the certificate's user");
	json_decref(r);
	kube_free(k);
	char *cd = testlib_sh_out("base64 -w0 %s/cli.crt", T), *kd = testlib_sh_out("base64 -w0 %s/cli.key", T);
	char *ca = testlib_sh_out("base64 -w0 %s/ca.crt", T);
	k = open_cfg(kubeconfig("kc-certdata", testlib_fmt("    certificate-authority-data: %s\n", ca),
		testlib_fmt("    client-certificate-data: %s\n    client-key-data: %s\n", cd, kd), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "a client certificate, key and CA as -data: %s", e.msg);
	json_decref(l);
	r = requests();
	is_str(rq(json_array_get(r, json_array_size(r) - 1), "auth", NULL), "cert:paddock-user", "recorded: the certificate's user");
	json_decref(r);
	kube_free(k);
}

static char *plugin(const char *name, const char *body)
{
	char *p = testlib_fmt("%s/%s", T, name);
	testlib_write_file(p, "#!/bin/sh\necho run >>%s/%s.count\nprintf '%%s\\n' \"$KUBERNETES_EXEC_INFO\" >%s/%s.info\n%s", T, name, T,
	                   name, body);
	testlib_sh("chmod +x %s", p);
	return p;
}

static int runs(const char *name)
{
	char *c = testlib_slurp(testlib_fmt("%s/%s.count", T, name));
	int n = 0;
	for (char *p = c; p && (p = strstr(p, "run")); p += 3)
		n++;
	free(c);
	return n;
}

static char *exec_user(const char *cmd, const char *api)
{
	return testlib_fmt("    exec:\n      apiVersion: %s\n      command: %s\n      args: [\"--mode\", \"x\"]\n"
	                   "      env:\n      - name: PLUGIN_SECRET_DIR\n        value: %s\n",
	                   api ? api : "client.authentication.k8s.io/v1", cmd, T);
}

static void test_exec(void)
{
	struct err e = {{0}};
	plugin("good.sh", "[ \"$1 $2\" = '--mode x' ] || exit 7\n"
	       "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
	       "{\"token\":\"%s\",\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}' \"$(cat $PLUGIN_SECRET_DIR/server-token)\"\n");
	struct kube *k = open_cfg(kubeconfig("kc-exec", NULL, exec_user("./good.sh", NULL), NULL), &e);
	json_t *l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "an exec plugin (relative to the kubeconfig, its args and env) gives the token: %s", e.msg);
	json_decref(l);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	json_decref(l);
	is_int(runs("good.sh"), 1, "its credential is kept until it expires");
	char *info = testlib_slurp(testlib_fmt("%s/good.sh.info", T));
	ok(info && strstr(info, "\"kind\":\"ExecCredential\"") && strstr(info, "\"interactive\":false"),
	   "KUBERNETES_EXEC_INFO says it is not interactive");
	free(info);
	kube_free(k);

	/* The server stops believing a credential the plugin said is good
	 * until 2099: the 401 asks the plugin again, once. */
	k = open_cfg(kubeconfig("kc-exec-rot", NULL, exec_user("./good.sh", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	json_decref(l);
	testlib_sh("cd %s && echo tok-E-3333333333 >server-token", T);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "a credential the server no longer takes: the plugin is asked again after the 401: %s", e.msg);
	json_decref(l);
	is_int(runs("good.sh"), 3, "once more, not every request");
	testlib_sh("cd %s && echo tok-A-0123456789 >server-token", T);
	kube_free(k);

	plugin("old.sh", "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":"
	       "{\"token\":\"%s\",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}}' \"$(cat $PLUGIN_SECRET_DIR/server-token)\"\n");
	k = open_cfg(kubeconfig("kc-exec-old", NULL, exec_user(testlib_fmt("%s/old.sh", T),
	                                                        "client.authentication.k8s.io/v1beta1"), NULL), &e);
	for (int i = 0; i < 2; i++) {
		l = k ? kube_pod_list(k, NULL, &e) : NULL;
		ok(l != NULL, "v1beta1, an expired credential: asked again (%d): %s", i, e.msg);
		json_decref(l);
	}
	is_int(runs("old.sh"), 2, "an expired credential is asked for again");
	kube_free(k);

	char *cert = testlib_sh_out("awk '{printf \"%%s\\\\n\", $0}' %s/cli.crt", T);
	char *key = testlib_sh_out("awk '{printf \"%%s\\\\n\", $0}' %s/cli.key", T);
	plugin("cert.sh", testlib_fmt("printf '%%s' '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	                              "\"status\":{\"clientCertificateData\":\"%s\",\"clientKeyData\":\"%s\"}}'\n", cert, key));
	k = open_cfg(kubeconfig("kc-exec-cert", NULL, exec_user("./cert.sh", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "an exec plugin's client certificate: %s", e.msg);
	json_decref(l);
	json_t *r = requests();
	is_str(rq(json_array_get(r, json_array_size(r) - 1), "auth", NULL), "cert:paddock-user", "recorded: the certificate's user");
	json_decref(r);
	kube_free(k);

	plugin("inject.sh", "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
	       "{\"token\":\"%s\\\\r\\\\nX-Injected: 1\"}}' \"$(cat $PLUGIN_SECRET_DIR/server-token)\"\n");
	k = open_cfg(kubeconfig("kc-exec-inject", NULL, exec_user("./inject.sh", NULL), NULL), &e);
	json_decref(requests());
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "characters a token cannot have") && !strstr(e.msg, "tok-A"),
	   "a plugin's token with a line break (a header of its own) is refused: %s", e.msg);
	r = requests();
	is_int(json_array_size(r), 0, "and nothing was sent");
	json_decref(r);
	kube_free(k);
	k = open_cfg(kubeconfig("kc-token-space", NULL, "    token: \"tok A\"\n", NULL), &e);
	ok(!k && strstr(e.msg, "characters a token cannot have"), "a kubeconfig token with a space is refused: %s", e.msg);

	plugin("slow.sh", "sleep 30 &\necho $! >$PLUGIN_SECRET_DIR/slow.pid\nwait\n");
	struct kube_opts so = { .kubeconfig = kubeconfig("kc-exec-slow", NULL, exec_user("./slow.sh", NULL), NULL),
	                        .timeout = 5, .exec_timeout = 0.5 };
	k = kube_open(&so, &e);
	double t0 = clock_mono();
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "did not finish within") && clock_mono() - t0 < 3, "a plugin that hangs is stopped: %s", e.msg);
	char *pid = testlib_slurp(testlib_fmt("%s/slow.pid", T));
	ok(pid && testlib_sh("for i in $(seq 50); do ps -o stat= -p %d | grep -qv Z || exit 0; sleep 0.1; done; exit 1",
	                     atoi(pid)) == 0,
	   "with what it started");
	free(pid);
	kube_free(k);

	plugin("garbage.sh", "echo 'hello, I am not JSON'\n");
	k = open_cfg(kubeconfig("kc-exec-garbage", NULL, exec_user("./garbage.sh", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "printed no ExecCredential"), "a plugin that prints garbage: %s", e.msg);
	kube_free(k);
	plugin("fail.sh", "echo 'error: login required; run gcloud auth login' >&2\nexit 3\n");
	k = open_cfg(kubeconfig("kc-exec-fail", NULL, exec_user("./fail.sh", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "exit status 3") && strstr(e.msg, "login required"), "a plugin that fails: %s", e.msg);
	kube_free(k);
	plugin("empty.sh", "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{}}'\n");
	k = open_cfg(kubeconfig("kc-exec-empty", NULL, exec_user("./empty.sh", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "neither a token"), "a credential with nothing in it: %s", e.msg);
	kube_free(k);
	k = open_cfg(kubeconfig("kc-exec-none", NULL, exec_user("./no-such-plugin", NULL), NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "no-such-plugin"), "a plugin that is not there: %s", e.msg);
	kube_free(k);
	char *hinted = testlib_fmt("%s      installHint: \"install it with: apt-get install no-such-plugin\"\n",
	                           exec_user("./no-such-plugin", NULL));
	k = open_cfg(kubeconfig("kc-exec-hint", NULL, hinted, NULL), &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "not installed") && strstr(e.msg, "apt-get install no-such-plugin"),
	   "a plugin that is not there, with the kubeconfig's installHint: %s", e.msg);
	kube_free(k);
	json_decref(requests());
}

/* ---- TLS and settings refused ---- */

/* $KUBECONFIG as a list: merged as kubectl merges it (the first file to
 * set current-context or a name wins; a missing file passed over), each
 * entry's relative files from its own file's folder. */
static void test_kubeconfig_list(void)
{
	struct err e = {{0}};
	testlib_sh("mkdir -p %s/kca %s/kcb && cp %s/ca.crt %s/kcb/ca.crt && echo tok-A-0123456789 >%s/kcb/tok",
	           T, T, T, T, T);
	testlib_write_file(testlib_fmt("%s/kca/config", T),
		"apiVersion: v1\nkind: Config\ncurrent-context: first\n"
		"contexts:\n- name: first\n  context:\n    cluster: cb\n    user: ub\n    namespace: ns-from-a\n");
	testlib_write_file(testlib_fmt("%s/kcb/config", T),
		"apiVersion: v1\nkind: Config\ncurrent-context: second\n"
		"clusters:\n- name: cb\n  cluster:\n    server: https://127.0.0.1:%d\n    certificate-authority: ca.crt\n"
		"contexts:\n- name: first\n  context:\n    cluster: nowhere\n    user: nobody\n"
		"- name: second\n  context:\n    cluster: cb\n    user: ub\n    namespace: ns-from-b\n"
		"users:\n- name: ub\n  user:\n    tokenFile: tok\n", port);
	char *list = testlib_fmt("%s/kc-missing:%s/kca/config:%s/kcb/config", T, T, T);
	char *saved = getenv("KUBECONFIG") ? xstrdup(getenv("KUBECONFIG")) : NULL;
	setenv("KUBECONFIG", list, 1);
	struct kube_opts o = { .timeout = 5, .retries = 3, .retry_after_max = 1 };
	struct kube *k = kube_open(&o, &e);
	ok(k != NULL, "a KUBECONFIG list with a missing file opens: %s", e.msg);
	if (k) {
		is_str(kube_namespace(k), "ns-from-a", "the first file's current-context and its context win");
		json_t *l = kube_pod_list(k, NULL, &e);
		ok(l != NULL, "the second file's cluster (its CA relative to its own folder) and user (its token file): %s",
		   e.msg);
		json_decref(l);
	}
	kube_free(k);
	setenv("KUBECONFIG", testlib_fmt("%s/kc-missing:%s/kc-missing2", T, T), 1);
	k = kube_open(&o, &e);
	ok(!k && strstr(e.msg, "none of the kubeconfig files"), "a list of missing files: %s", e.msg);
	kube_free(k);
	if (saved)
		setenv("KUBECONFIG", saved, 1);
	else
		unsetenv("KUBECONFIG");
	free(saved);
}

static void test_refused(void)
{
	struct err e = {{0}};
	struct kube *k = open_cfg(kubeconfig("kc-other", testlib_fmt("    certificate-authority: %s/other.crt\n", T),
	                                     "    token: tok-A-0123456789\n", NULL), &e);
	double t0 = clock_mono();
	json_t *l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(k && !l && strstr(e.msg, "not who the configured CA says it is") && clock_mono() - t0 < 2,
	   "a server certificate from another CA is refused at once: %s", e.msg);
	ok(!strstr(e.msg, "tok-A"), "without the token in the message");
	json_t *r = requests();
	is_int(json_array_size(r), 0, "and no request reached the server");
	if (json_array_size(r)) {
		char *d = json_dumps(r, JSON_COMPACT);
		printf("# %s\n", d);
		free(d);
	}
	json_decref(r);
	kube_free(k);

	char *ins = kubeconfig("kc-insecure", "    insecure-skip-tls-verify: true\n", "    token: tok-A-0123456789\n", NULL);
	k = open_cfg(ins, &e);
	ok(!k && strstr(e.msg, "insecure-skip-tls-verify"), "insecure-skip-tls-verify is refused: %s", e.msg);
	struct kube_opts o = { .kubeconfig = ins, .allow_insecure = 1, .timeout = 5 };
	k = kube_open(&o, &e);
	l = k ? kube_pod_list(k, NULL, &e) : NULL;
	ok(l != NULL, "unless the caller allows it: %s", e.msg);
	json_decref(l);
	kube_free(k);

	struct {
		const char *text, *want, *what;
	} bad[] = {
		{ "current-context: main\nclusters: [\n", "not valid YAML", "YAML that does not parse" },
		{ "- a\n- b\n", "not a kubeconfig", "a list, not a kubeconfig" },
		{ "clusters: []\n", "no current-context", "no current-context" },
		{ "current-context: x\ncontexts: []\n", "no context named 'x'", "a missing context" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\n", "names no cluster", "a missing cluster" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n",
		  "names the user 'u'", "a missing user" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n",
		  "https only", "a server over http" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		  "users:\n- name: u\n  user: {client-certificate-data: QUJD}\n", "without its key", "a certificate without its key" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		  "users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n", "auth-provider", "an auth-provider" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		  "users:\n- name: u\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1}}\n", "no command", "an exec without a command" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
		  "users:\n- name: u\n  user: {exec: {command: x, apiVersion: client.authentication.k8s.io/v1alpha1}}\n", "v1alpha1", "an exec of another apiVersion" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: '!!notbase64'}\n",
		  "not base64", "a CA that is not base64" },
		{ "current-context: m\ncontexts:\n- name: m\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority: /nonexistent/ca}\n",
		  "cannot be read", "a CA file that is not there" },
		{ "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
		  "not a kubeconfig", "aliases that expand a small file to a million nodes" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *p = testlib_fmt("%s/bad-%zu", T, i);
		testlib_write_file(p, "%s", bad[i].text);
		k = open_cfg(p, &e);
		ok(!k && strstr(e.msg, bad[i].want), "%s is refused: %s", bad[i].what, e.msg);
		kube_free(k);
	}
	k = open_cfg(testlib_fmt("%s/no-such-kubeconfig", T), &e);
	ok(!k && strstr(e.msg, "cannot read the kubeconfig"), "a kubeconfig that is not there: %s", e.msg);

	/* KUBECONFIG, and a named context. */
	setenv("KUBECONFIG", testlib_fmt("%s:/nonexistent", kubeconfig("kc-env", NULL, "    token: tok-A-0123456789\n",
	                                                                 "    namespace: from-env\n")), 1);
	struct kube_opts oe = { .context = NULL };
	k = kube_open(&oe, &e);
	ok(k && !strcmp(kube_namespace(k), "from-env"), "KUBECONFIG's first file: %s", e.msg);
	kube_free(k);
	oe.context = "other";
	k = kube_open(&oe, &e);
	ok(k && !strcmp(kube_namespace(k), "default"), "a named context, without a namespace: default: %s", e.msg);
	kube_free(k);
	unsetenv("KUBECONFIG");
}

/* ---- TokenReview ---- */

static char *mint(struct kube *k, const char *podname, const char *uid, const char *sa, const char *aud,
                  double seconds)
{
	struct err e = {{0}};
	char *body = testlib_fmt("{\"namespace\": \"ns1\", \"pod\": \"%s\", \"uid\": \"%s\", "
	                         "\"serviceAccount\": \"%s\", \"audience\": \"%s\", \"seconds\": %g}",
	                         podname, uid, sa, aud, seconds);
	json_t *j = NULL;
	kube_request(k, "POST", "/_fake/tokens", body, &j, &e);
	char *t = xstrdup(json_string_value(json_object_get(j, "token")));
	json_decref(j);
	return testlib_keep(t);
}

static void test_review(void)
{
	struct err e = {{0}};
	struct kube *k = open_cfg(kubeconfig("kc-review", NULL, "    token: tok-A-0123456789\n", NULL), &e);
	json_t *p = pod("rv1", "trv");
	json_t *made = kube_pod_create(k, p, &e);
	json_decref(p);
	const char *uid = meta(made, "uid");
	char *good = mint(k, "rv1", uid, "paddock-sandbox", "paddock", 3600);
	struct kube_review r;
	ok(kube_token_review(k, good, "paddock", &r, &e) == 0 && r.authenticated, "a pod's token is authenticated: %s",
	   e.msg);
	is_str(r.username, "system:serviceaccount:ns1:paddock-sandbox", "the user is the pod's service account");
	is_str(r.pod_name, "rv1", "the extra pod-name is the pod's");
	is_str(r.pod_uid, uid, "the extra pod-uid is the pod's");
	ok(r.error == NULL, "and no error");
	kube_review_free(&r);
	json_t *rs = requests(), *last = json_array_get(rs, json_array_size(rs) - 1);
	json_t *body = json_object_get(last, "body");
	is_str(rq(last, "path", NULL), "/apis/authentication.k8s.io/v1/tokenreviews", "recorded: POST tokenreviews");
	is_str(json_string_value(json_object_get(body, "kind")), "TokenReview", "recorded: a TokenReview");
	is_str(json_string_value(json_object_get(body, "apiVersion")), "authentication.k8s.io/v1", "recorded: v1");
	is_str(json_string_value(json_array_get(json_object_get(json_object_get(body, "spec"), "audiences"), 0)),
	       "paddock", "recorded: the audience asked for");
	json_decref(rs);

	struct {
		const char *tok, *aud, *want, *what;
	} no[] = {
		{ good, "other-audience", "invalid for the target audiences", "a token of another audience" },
		{ mint(k, "rv1", uid, "paddock-sandbox", "paddock", -1), "paddock", "expired", "an expired token" },
		{ mint(k, "rv-gone", "uid-of-a-pod-gone", "paddock-sandbox", "paddock", 3600), "paddock", "not found",
		  "the token of a pod gone" },
		{ "eyJnever-issued-0123456789", "paddock", "token lookup failed", "a token never issued" },
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		int rc = kube_token_review(k, no[i].tok, no[i].aud, &r, &e);
		ok(rc == 0 && !r.authenticated && r.error && strstr(r.error, no[i].want) && !r.pod_name,
		   "%s is not authenticated: %s", no[i].what, r.error ? r.error : e.msg);
		ok(!r.error || !strstr(r.error, no[i].tok), "and the token is not in its error");
		kube_review_free(&r);
	}

	/* paddock's user may not create tokenreviews: 403, a message that
	 * says so, and a hostile server that quotes the token is scrubbed. */
	fault("{\"method\": \"POST\", \"path\": \"tokenreviews\", \"action\": \"status\", \"code\": 403, "
	      "\"reason\": \"Forbidden\", \"message\": \"tokenreviews.authentication.k8s.io is forbidden: User "
	      "\\\"system:serviceaccount:paddock:paddock\\\" cannot create resource \\\"tokenreviews\\\" in API group "
	      "\\\"authentication.k8s.io\\\" at the cluster scope\"}");
	ok(kube_token_review(k, good, "paddock", &r, &e) < 0 && kube_last_code(k) == 403 &&
	   strstr(e.msg, "cannot create resource") && strstr(e.msg, "403"), "403 on tokenreviews is an error: %s", e.msg);
	ok(!strstr(e.msg, good), "without the token");
	kube_review_free(&r);
	char *echo = testlib_fmt("{\"method\": \"POST\", \"path\": \"tokenreviews\", \"action\": \"status\", "
	                         "\"code\": 400, \"message\": \"bad token %s\"}", good);
	fault(echo);
	ok(kube_token_review(k, good, "paddock", &r, &e) < 0 && strstr(e.msg, "bad token [token]") && !strstr(e.msg, good),
	   "a server that quotes the reviewed token: scrubbed: %s", e.msg);
	kube_review_free(&r);
	json_decref(requests());
	json_decref(made);
	kube_free(k);
}

int main(void)
{
	if (testlib_sh("command -v openssl >/dev/null && command -v python3 >/dev/null") != 0) {
		printf("1..0 # SKIP the contract server needs openssl and python3 (scripts/install-deps --tests)\n");
		return 0;
	}
	T = testlib_tmpdir("kube");
	certs();
	server_start();
	test_pods();
	test_watch();
	test_retries();
	test_rotation();
	test_client_cert();
	test_exec();
	test_refused();
	test_kubeconfig_list();
	test_review();
	child_kill(&srv, SIGTERM);
	child_finish(&srv);
	testlib_end();
	return tap_done();
}
