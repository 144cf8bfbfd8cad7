/* kube-tool: paddock's Kubernetes client (src/sandbox/kube.h) from the
 * command line, for the shell tests: tests/kube-kubectl.test runs it and
 * kubectl for the same operations against tests/kube-api-server.py and
 * compares their requests in the server's log; tests/kube-kubelet.test
 * creates and watches pods with it.
 *
 *   kube-tool KUBECONFIG create FILE          kube_pod_create; the pod's uid
 *   kube-tool KUBECONFIG get NAME             kube_pod_get; the pod (JSON)
 *   kube-tool KUBECONFIG list SELECTOR        kube_pod_list; the names
 *   kube-tool KUBECONFIG delete NAME UID|- GRACE   kube_pod_delete
 *   kube-tool KUBECONFIG watch NAME SECONDS   kube_watch_pod from now; one
 *                                             line per event: TYPE PHASE
 *                                             then the status (JSON)
 *
 * Errors go to stderr as "kube-tool: MESSAGE" with the HTTP status,
 * exit status 1 (2: usage). */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube.h"

static int usage(void)
{
	fputs("usage: kube-tool KUBECONFIG create FILE | get NAME | list SELECTOR |"
	      " delete NAME UID|- GRACE | watch NAME SECONDS\n", stderr);
	return 2;
}

static int fail(struct kube *k, const struct err *e)
{
	fprintf(stderr, "kube-tool: %s (HTTP %ld %s)\n", e->msg, kube_last_code(k), kube_last_reason(k));
	return 1;
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	puts(s ? s : "null");
	free(s);
}

static int on_event(enum kube_event_type type, json_t *obj, void *arg)
{
	(void)arg;
	static const char *const names[] = { "ADDED", "MODIFIED", "DELETED", "RELIST" };
	json_t *st = json_object_get(obj, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	char *s = st ? json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	printf("%s %s %s\n", names[type], phase ? phase : "-", s ? s : "{}");
	free(s);
	fflush(stdout);
	return type == KUBE_EV_DELETED;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	struct err e = {{0}};
	struct kube_opts o = { .kubeconfig = argv[1], .timeout = 10, .retries = 3, .retry_after_max = 2 };
	struct kube *k = kube_open(&o, &e);
	if (!k) {
		fprintf(stderr, "kube-tool: %s\n", e.msg);
		return 1;
	}
	const char *verb = argv[2];
	int rc = 0;
	if (!strcmp(verb, "create") && argc == 4) {
		json_error_t je;
		json_t *pod = json_load_file(argv[3], 0, &je);
		if (!pod) {
			fprintf(stderr, "kube-tool: %s: %s\n", argv[3], je.text);
			rc = 1;
		} else {
			json_t *made = kube_pod_create(k, pod, &e);
			if (made)
				puts(json_string_value(json_object_get(json_object_get(made, "metadata"), "uid")));
			else
				rc = fail(k, &e);
			json_decref(made);
			json_decref(pod);
		}
	} else if (!strcmp(verb, "get") && argc == 4) {
		json_t *pod = kube_pod_get(k, argv[3], &e);
		if (pod)
			print_json(pod);
		else
			rc = fail(k, &e);
		json_decref(pod);
	} else if (!strcmp(verb, "list") && argc == 4) {
		json_t *list = kube_pod_list(k, argv[3], &e);
		if (!list) {
			rc = fail(k, &e);
		} else {
			size_t i;
			json_t *it;
			json_array_foreach(json_object_get(list, "items"), i, it)
				puts(json_string_value(json_object_get(json_object_get(it, "metadata"), "name")));
		}
		json_decref(list);
	} else if (!strcmp(verb, "delete") && argc == 6) {
		if (kube_pod_delete(k, argv[3], strcmp(argv[4], "-") ? argv[4] : NULL, atoi(argv[5]), &e) < 0)
			rc = fail(k, &e);
	} else if (!strcmp(verb, "watch") && argc == 5) {
		struct kube_watch w = { .name = argv[3] };
		if (kube_watch_pod(k, &w, atof(argv[4]), on_event, NULL, &e) < 0)
			rc = fail(k, &e);
		kube_watch_end(&w);
	} else {
		rc = usage();
	}
	kube_free(k);
	return rc;
}
