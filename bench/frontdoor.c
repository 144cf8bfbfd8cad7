/* bench/frontdoor.c: what the front door (frontdoor.h) and the pods'
 * doors (door.h) cost paddock's host, against the contract server: N
 * pods, each with its door and a runner that dials at the same moment;
 * the time until every runner is handed on, one hand-off's latency with
 * a TokenReview and with the cached review, and the resident memory the
 * front door and the N doors with their sessions add (VmRSS).
 *
 *   frontdoor KUBECONFIG DATA_DIR N
 * prints: "all_ms review_ms cached_ms door_kb_per_task frontdoor_kb" */
#include "autoconfig.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "door.h"
#include "frontdoor.h"
#include "kube.h"

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static char *mint(struct kube *k, const char *pod, char **uid)
{
	struct err e = {{0}};
	json_t *p = json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
	                      "metadata", "name", pod, "spec", "containers", "name", "main", "image", "busybox");
	json_t *made = kube_pod_create(k, p, &e);
	json_decref(p);
	if (!made) {
		fprintf(stderr, "bench: %s\n", e.msg);
		exit(1);
	}
	*uid = xstrdup(json_string_value(json_object_get(json_object_get(made, "metadata"), "uid")));
	json_decref(made);
	char *body = xasprintf("{\"namespace\": \"%s\", \"pod\": \"%s\", \"uid\": \"%s\", "
	                       "\"serviceAccount\": \"paddock-sandbox\", \"audience\": \"paddock\", \"seconds\": 3600}",
	                       kube_namespace(k), pod, *uid);
	json_t *j = NULL;
	kube_request(k, "POST", "/_fake/tokens", body, &j, &e);
	free(body);
	char *t = xstrdup(json_string_value(json_object_get(j, "token")));
	json_decref(j);
	return t;
}

static int dial(int port, const char *pod, const char *tok)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
		return -1;
	char *p = xasprintf("PADDOCK-DOOR 1 runner %s 0\n%s\n", pod, tok);
	if (write(fd, p, strlen(p)) < 0)
		fd = -1;
	free(p);
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[3]);
	struct err e = {{0}};
	struct kube_opts ko = { .kubeconfig = argv[1], .timeout = 10 };
	struct kube *k = kube_open(&ko, &e);
	if (!k) {
		fprintf(stderr, "bench: %s\n", e.msg);
		return 1;
	}
	char **tok = xcalloc((size_t)n + 1, sizeof *tok), **uid = xcalloc((size_t)n + 1, sizeof *uid);
	char **pod = xcalloc((size_t)n + 1, sizeof *pod);
	for (int i = 0; i <= n; i++) {
		pod[i] = xasprintf("pdk-bench%04d-agent-1", i);
		tok[i] = mint(k, pod[i], &uid[i]);
	}
	long r0 = rss_kb();
	struct frontdoor *f;
	struct frontdoor_opts o = { .listen = "127.0.0.1:0", .data_dir = argv[2], .kube = &ko };
	if (frontdoor_start(&o, &f, &e) < 0) {
		fprintf(stderr, "bench: %s\n", e.msg);
		return 1;
	}
	int port = frontdoor_port(f);
	long r1 = rss_kb();
	/* One runner alone: with its review, then again from the cache. */
	struct door *d = door_open(argv[2], pod[n], &e);
	door_expect_uid(d, uid[n], &e);
	double t0 = clock_mono();
	int c = dial(port, pod[n], tok[n]);
	int fd = door_runner(d, clock_mono() + 10, NULL, 0, &e);
	double review = clock_mono() - t0;
	close(fd);
	close(c);
	door_close(d);
	d = door_open(argv[2], pod[n], &e);
	door_expect_uid(d, uid[n], &e);
	t0 = clock_mono();
	c = dial(port, pod[n], tok[n]);
	fd = door_runner(d, clock_mono() + 10, NULL, 0, &e);
	double cached = clock_mono() - t0;
	close(fd);
	close(c);
	door_close(d);

	long r2 = rss_kb();
	struct door **doors = xcalloc((size_t)n, sizeof *doors);
	int *cl = xcalloc((size_t)n, sizeof *cl), *fds = xcalloc((size_t)n, sizeof *fds);
	for (int i = 0; i < n; i++) {
		doors[i] = door_open(argv[2], pod[i], &e);
		door_expect_uid(doors[i], uid[i], &e);
	}
	t0 = clock_mono();
	for (int i = 0; i < n; i++)
		cl[i] = dial(port, pod[i], tok[i]);
	int got = 0;
	for (int i = 0; i < n; i++)
		got += (fds[i] = door_runner(doors[i], t0 + 30, NULL, 0, &e)) >= 0;
	double all = clock_mono() - t0;
	long r3 = rss_kb();
	if (got != n)
		fprintf(stderr, "bench: %d of %d handed on: %s\n", got, n, e.msg);
	printf("%.1f %.2f %.2f %.1f %ld\n", all * 1000, review * 1000, cached * 1000, (double)(r3 - r2) / n, r1 - r0);
	for (int i = 0; i < n; i++) {
		close(fds[i]);
		close(cl[i]);
		door_close(doors[i]);
	}
	frontdoor_stop(f);
	kube_free(k);
	return 0;
}
