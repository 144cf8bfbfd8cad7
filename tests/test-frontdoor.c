/* frontdoor and door: the kubernetes backend's front door (frontdoor.h)
 * on 127.0.0.1 and the receiving side (door.h), against the contract
 * server tests/kube-api-server.py (TLS, its TokenReview and bound
 * tokens).  The attacks first: tokens of another pod, audience or
 * service account, expired, of a pod gone, never issued, and a review
 * the API refuses; malformed preambles field by field; a slow client, a
 * flood of idle connections; a stale pod's uid.  Then what works: the
 * runner's socket handed on with nothing over-read, and a second runner
 * too (a resume), a fault's message; a gateway connection of its own
 * refused (the gateway comes through the runner's session); and no token
 * in any line or message. */
#include "autoconfig.h"
#include "door.h"
#include "frontdoor.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "kube.h"
#include "tap.h"
#include "testlib.h"

static char *T, *data, *logpath;
static int api_port, door_port;
static struct child srv;
static struct kube *api;
static struct frontdoor *fdoor;
static FILE *logfp;
static char *tokens[64];
/* The main front door's reviews at once. */
#define REVIEWS 6
static size_t ntokens;

/* ---- the contract server ---- */

static void server_start(void)
{
	char *tf = testlib_fmt("%s/server-token", T), *ff = testlib_fmt("%s/faults", T);
	testlib_write_file(tf, "tok-API-0123456789\n");
	testlib_write_file(ff, "%s", "");
	const char *args[] = { "--token-file", tf, "--faults", ff, "--start-delay", "0.1", NULL };
	api_port = testlib_kube_server(&srv, T, args);
}

static void fault(const char *line)
{
	FILE *fp = fopen(testlib_fmt("%s/faults", T), "a");
	fprintf(fp, "%s\n", line);
	fclose(fp);
}

/* A pod in ns1; its uid (kept). */
static char *mkpod(const char *name)
{
	struct err e = {{0}};
	json_t *p = json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
	                      "metadata", "name", name, "spec", "containers", "name", "main", "image", "busybox");
	json_t *made = kube_pod_create(api, p, &e);
	json_decref(p);
	if (!made) {
		printf("Bail out! %s\n", e.msg);
		exit(1);
	}
	char *uid = testlib_keep(xstrdup(json_string_value(
		json_object_get(json_object_get(made, "metadata"), "uid"))));
	json_decref(made);
	return uid;
}

/* A bound token, as the kubelet writes it into the pod (kept). */
static char *mint(const char *pod, const char *uid, const char *sa, const char *aud, double seconds)
{
	struct err e = {{0}};
	char *body = testlib_fmt("{\"namespace\": \"ns1\", \"pod\": \"%s\", \"uid\": \"%s\", \"serviceAccount\": \"%s\", "
	                         "\"audience\": \"%s\", \"seconds\": %g}", pod, uid, sa, aud, seconds);
	json_t *j = NULL;
	kube_request(api, "POST", "/_fake/tokens", body, &j, &e);
	char *t = testlib_keep(xstrdup(json_string_value(json_object_get(j, "token"))));
	json_decref(j);
	if (ntokens < sizeof tokens / sizeof tokens[0])
		tokens[ntokens++] = t;
	return t;
}

static char *good(const char *pod, const char *uid)
{
	return mint(pod, uid, "paddock-sandbox", "paddock", 3600);
}

/* ---- clients ---- */

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)door_port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		printf("# connect: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void put(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static int say(const char *kind, const char *pod, int port, const char *token, const char *msg, const char *after)
{
	int fd = dial();
	char *p = testlib_fmt("PADDOCK-DOOR 1 %s %s %d\n%s\n%s%s%s", kind, pod, port, token, msg ? msg : "",
	                      msg ? "\n" : "", after ? after : "");
	put(fd, p, strlen(p));
	return fd;
}

/* 1 when the other side closed fd within secs having sent nothing. */
static int closed_within(int fd, double secs)
{
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, (int)(secs * 1000)) <= 0)
		return 0;
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

static char *log_text(void)
{
	fflush(logfp);
	char *t = testlib_slurp(logpath);
	return testlib_keep(t ? t : xstrdup(""));
}

/* The log's line that holds what (kept), or "". */
static char *log_line(const char *what)
{
	const char *lt = log_text(), *hit = strstr(lt, what);
	if (!hit)
		return "";
	const char *a = hit, *b = strchr(hit, '\n');
	while (a > lt && a[-1] != '\n')
		a--;
	return testlib_keep(xstrndup(a, b ? (size_t)(b - a) : strlen(a)));
}

static int log_count(const char *what)
{
	int n = 0;
	for (const char *p = log_text(); (p = strstr(p, what)); p++)
		n++;
	return n;
}

static int count_reviews(void)
{
	char *t = testlib_slurp(testlib_fmt("%s/requests.log", T));
	int n = 0;
	for (const char *p = t ? t : ""; (p = strstr(p, "/tokenreviews")); p++)
		n++;
	free(t);
	return n;
}

/* ---- a runner handed on ---- */

static void test_runner(void)
{
	struct err e = {{0}};
	const char *pod = "pdk-t1-agent-1";
	char *uid = mkpod(pod), *tok = good(pod, uid);
	struct door *d = door_open(data, pod, &e);
	ok(d != NULL, "door_open: %s", e.msg);
	struct stat st;
	ok(stat(testlib_fmt("%s/door", data), &st) == 0 && (st.st_mode & 0777) == 0700, "door/ is 0700");
	ok(stat(testlib_fmt("%s/door/%s.sock", data, pod), &st) == 0 && (st.st_mode & 0777) == 0600 &&
	   S_ISSOCK(st.st_mode), "the pod's socket is 0600");
	door_expect_uid(d, uid, &e);
	double t0 = clock_mono();
	int c = say("runner", pod, 0, tok, NULL, "HELLO 1 right after the preamble\n");
	int fd = door_runner(d, clock_mono() + 10, NULL, 0, &e);
	ok(fd >= 0, "a good runner preamble reaches door_runner: %s", e.msg);
	printf("# handed on in %.3f s\n", clock_mono() - t0);
	char got[128] = "";
	ssize_t n = fd >= 0 ? recv(fd, got, sizeof got - 1, 0) : -1;
	got[n > 0 ? n : 0] = 0;
	is_str(got, "HELLO 1 right after the preamble\n", "the bytes after the preamble arrive unchanged: nothing over-read");
	struct sockaddr_in mine, peer;
	socklen_t l1 = sizeof mine, l2 = sizeof peer;
	getsockname(c, (struct sockaddr *)&mine, &l1);
	ok(fd >= 0 && getpeername(fd, (struct sockaddr *)&peer, &l2) == 0 && peer.sin_port == mine.sin_port,
	   "door_runner's fd is the runner's own TCP connection");
	int ka = 0, idle = 0, intvl = 0, cnt = 0;
	socklen_t kl = sizeof ka;
	if (fd >= 0) {
		getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, &kl);
		kl = sizeof idle;
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, &kl);
		kl = sizeof intvl;
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, &kl);
		kl = sizeof cnt;
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, &kl);
	}
	ok(ka && idle + intvl * cnt <= 60,
	   "paddock's end of a pod's connection has keepalives: one that drops without a word is "
	   "noticed within a minute (idle %d s, %d probes %d s apart)", idle, cnt, intvl);
	put(fd, "OK\n", 3);
	n = recv(c, got, sizeof got - 1, 0);
	got[n > 0 ? n : 0] = 0;
	is_str(got, "OK\n", "and what paddock writes reaches the runner");

	/* A second runner is the session's next connection (one that
	 * resumes it: runner.h), handed on while the door is open; its
	 * token's review was cached. */
	int reviews = count_reviews();
	int c2 = say("runner", pod, 0, tok, NULL, "RESUME\n");
	int fd2 = door_runner(d, clock_mono() + 10, NULL, 0, &e);
	n = fd2 >= 0 ? recv(fd2, got, sizeof got - 1, 0) : -1;
	got[n > 0 ? n : 0] = 0;
	is_str(got, "RESUME\n", "a second runner hand-off reaches door_runner too (a resume)");
	is_int(count_reviews(), reviews, "the token's review was cached: no second TokenReview");
	if (fd2 >= 0)
		close(fd2);
	close(c2);
	close(c);
	close(fd);
	door_close(d);
	ok(stat(testlib_fmt("%s/door/%s.sock", data, pod), &st) < 0, "door_close removes the socket");

	/* The pod's supervisor is gone: nobody takes the connection.  (A
	 * second first: the refusals before filled this second's lines.) */
	clock_sleep(1.1);
	c = say("runner", pod, 0, tok, NULL, NULL);
	ok(closed_within(c, 5), "a runner whose door is gone is closed");
	close(c);
	clock_sleep(0.2);
	ok(strstr(log_text(), "(pod pdk-t1-agent-1): no paddock process waits for this pod") != NULL,
	   "and the log says no one waits for it");

	/* The pod's token, but the door waits for another uid (a pod made
	 * again under the same name): the front door hands it on, the door
	 * closes it. */
	d = door_open(data, pod, &e);
	door_expect_uid(d, "0f0f0f0f-not-the-pods-uid", &e);
	int before = log_count("\n");
	c = say("runner", pod, 0, tok, NULL, NULL);
	ok(door_runner(d, clock_mono() + 2, NULL, 0, &e) < 0 && strstr(e.msg, "did not dial"),
	   "door_runner does not take a hand-off of a pod uid other than door_expect_uid's: %s", e.msg);
	ok(closed_within(c, 5), "it closes it");
	ok(log_count("\n") == before, "the door did: the front door refused nothing");
	close(c);
	door_close(d);

	/* A stale pod: the same name, another uid; the first pod's token is
	 * refused. */
	struct err de = {{0}};
	kube_pod_delete(api, pod, NULL, 0, &de);
	char *uid2 = mkpod(pod);
	d = door_open(data, pod, &e);
	door_expect_uid(d, uid2, &e);
	c = say("runner", pod, 0, tok, NULL, NULL);
	ok(door_runner(d, clock_mono() + 2, NULL, 0, &e) < 0,
	   "door_runner does not get the token of a pod deleted and made again under its name");
	ok(closed_within(c, 5), "it is refused");
	close(c);
	door_close(d);
}

/* ---- refusals ---- */

struct slow {
	pthread_t th;
	char *pre;
	double opened, closed;
};

/* One byte a second, until the front door closes the connection. */
static void *slow_run(void *arg)
{
	struct slow *s = arg;
	int fd = dial();
	s->opened = clock_mono();
	for (size_t i = 0; i < strlen(s->pre) && clock_mono() - s->opened < 20; i++) {
		if (send(fd, s->pre + i, 1, MSG_NOSIGNAL) != 1 || closed_within(fd, 1.0))
			break;
	}
	s->closed = clock_mono();
	close(fd);
	return NULL;
}

static struct slow slow_client;
static struct door *slow_door;

static void test_refused(void)
{
	struct err e = {{0}};
	const char *pod = "pdk-t2-agent-1";
	char *uid = mkpod(pod);
	char *uid3 = mkpod("pdk-t3-agent-1");
	char *tok = good(pod, uid);
	struct door *d = door_open(data, pod, &e);
	door_expect_uid(d, uid, &e);

	/* The slow client runs meanwhile (10 s), through other tests. */
	slow_client.pre = testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s\n", pod, tok);
	pthread_create(&slow_client.th, NULL, slow_run, &slow_client);
	clock_sleep(0.3);
	const char *fast = "pdk-t4-agent-1";
	char *uid4 = mkpod(fast);
	struct door *d4 = door_open(data, fast, &e);
	door_expect_uid(d4, uid4, &e);
	double t0 = clock_mono();
	int c = say("runner", fast, 0, good(fast, uid4), NULL, NULL);
	int fd = door_runner(d4, clock_mono() + 5, NULL, 0, &e);
	ok(fd >= 0 && clock_mono() - t0 < 2, "while a slow client dribbles its preamble, another is served at once (%.2f s)",
	   clock_mono() - t0);
	close(fd);
	close(c);
	door_close(d4);

	struct {
		const char *tok, *want, *what;
	} bad[] = {
		{ good("pdk-t3-agent-1", uid3), "the token is the pod pdk-t3-agent-1's, not this pod's",
		  "another pod's token (another task's credential)" },
		{ mint(pod, uid, "paddock-sandbox", "other-audience", 3600), "invalid for the target audiences",
		  "a token of another audience" },
		{ mint(pod, uid, "paddock-sandbox", "paddock", -1), "Token has expired", "an expired token" },
		{ mint(pod, "uid-of-a-pod-gone", "paddock-sandbox", "paddock", 3600), "not found", "a token of a pod gone" },
		{ "eyJnever-issued-0123456789", "token lookup failed", "a token never issued" },
		{ mint(pod, uid, "default", "paddock", 3600), "not system:serviceaccount:ns1:paddock-sandbox's",
		  "a token of another service account" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = say("runner", pod, 0, bad[i].tok, NULL, "HELLO\n");
		ok(closed_within(c, 5), "refused and closed, without an answer: %s", bad[i].what);
		close(c);
		clock_sleep(0.05);
		const char *line = log_line(bad[i].want);
		ok(!strncmp(line, "paddock: front door: refused 127.0.0.1:", 39) && strstr(line, "(pod pdk-t2-agent-1)"),
		   "the log names the reason, the peer and the pod: %s", line);
	}
	/* The API refuses the review itself (paddock's user may not create
	 * tokenreviews), with a hostile message. */
	fault("{\"method\": \"POST\", \"path\": \"tokenreviews\", \"action\": \"status\", \"code\": 403, "
	      "\"message\": \"tokenreviews is forbidden \\u001b[31mred\"}");
	c = say("runner", pod, 0, tok, NULL, NULL);
	ok(closed_within(c, 8), "a review the API refuses (403): closed");
	close(c);
	clock_sleep(0.05);
	ok(strstr(log_text(), "the token could not be reviewed") != NULL, "the log says the review failed");
	ok(!strchr(log_text(), 0x1b), "and the API's escape is not in the log");

	/* Malformed preambles, each field; one more byte of each would be
	 * a token of this pod's. */
	char big[10300];
	memset(big, 'a', sizeof big);
	big[10241] = 0;
	struct {
		const char *text, *what;
	} bad_pre[] = {
		{ testlib_fmt("PADDOCK-DOOR 1 shell %s 0\n%s\n", pod, tok), "an unknown kind" },
		{ testlib_fmt("PADDOCK-DOOR 1 RUNNER %s 0\n%s\n", pod, tok), "a kind in uppercase" },
		{ testlib_fmt("PADDOCK-DOOR 2 runner %s 0\n%s\n", pod, tok), "another version" },
		{ testlib_fmt("paddock-door 1 runner %s 0\n%s\n", pod, tok), "another magic" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner pdk/t2 0\n%s\n", tok), "a pod name with '/'" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner .. 0\n%s\n", tok), "the pod name '..'" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner ../door/pdk-t2-agent-1 0\n%s\n", tok), "a pod name with '../'" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner PDK-T2-AGENT-1 0\n%s\n", tok), "a pod name in uppercase" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s-%s 0\n%s\n", pod, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", tok),
		  "a pod name of 64 bytes" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner -pdk 0\n%s\n", tok), "a pod name that starts with '-'" },
		{ testlib_fmt("PADDOCK-DOOR 1 gateway %s 0\n%s\n", pod, tok), "port 0 for a gateway" },
		{ testlib_fmt("PADDOCK-DOOR 1 gateway %s 65536\n%s\n", pod, tok), "port 65536 for a gateway" },
		{ testlib_fmt("PADDOCK-DOOR 1 gateway %s 08081\n%s\n", pod, tok), "a port with a leading zero" },
		{ testlib_fmt("PADDOCK-DOOR 1 gateway %s -1\n%s\n", pod, tok), "a negative port" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 1\n%s\n", pod, tok), "a port for a runner" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s  0\n%s\n", pod, tok), "two spaces" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0 \n%s\n", pod, tok), "a trailing space" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0\r\n%s\n", pod, tok), "a CRLF" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0%s\n", pod, tok), "the first line's newline missing" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s x\n", pod, tok), "a token with a space" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n\n", pod), "an empty token" },
		{ testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s\n", pod, big), "10241 bytes" },
		{ testlib_fmt("PADDOCK-DOOR 1 fault %s 0\n%s\nthe message \033[2J\n", pod, tok), "a fault message with an escape" },
		{ testlib_fmt("PADDOCK-DOOR 1 fault %s 0\n%s\n%.513s\n", pod, tok, big), "a fault message of 513 bytes" },
		{ testlib_fmt("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "an HTTP request" },
	};
	for (size_t i = 0; i < sizeof bad_pre / sizeof bad_pre[0]; i++) {
		c = dial();
		put(c, bad_pre[i].text, strlen(bad_pre[i].text));
		ok(closed_within(c, 3), "a malformed preamble is closed: %s", bad_pre[i].what);
		close(c);
	}
	/* NUL bytes, in the first line and in the token. */
	char *nul1 = testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s\n", pod, tok);
	char *nul2 = testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s\n", pod, tok);
	nul1[13] = 0;
	nul2[strlen(nul2) - 4] = 0;
	const char *nuls[] = { nul1, nul2 };
	size_t nlen[] = { strlen(nul1 + 14) + 14, strlen(nul2) + 4 };
	for (size_t i = 0; i < 2; i++) {
		c = dial();
		put(c, nuls[i], nlen[i]);
		ok(closed_within(c, 3), "a preamble with a NUL byte in %s is closed", i ? "the token" : "the first line");
		close(c);
	}
	/* A token line without its newline: the preamble never ends. */
	c = dial();
	char *nonl = testlib_fmt("PADDOCK-DOOR 1 runner %s 0\n%s", pod, tok);
	put(c, nonl, strlen(nonl));
	shutdown(c, SHUT_WR);
	ok(closed_within(c, 3), "a preamble without its last newline, then the end: closed");
	close(c);
	ok(log_count("a malformed preamble") >= 10, "malformed preambles are logged (%d lines; at most %d a second)",
	   log_count("a malformed preamble"), FRONTDOOR_LOG_BURST);

	slow_door = d;
}

/* The slow client's end, after the tests that ran meanwhile. */
static void test_refused_end(void)
{
	struct err e = {{0}};
	struct door *d = slow_door;
	pthread_join(slow_client.th, NULL);
	double held = slow_client.closed - slow_client.opened;
	ok(held > 9 && held < 12.5, "a client that sends a byte a second is closed at 10 s (%.1f s)", held);
	ok(strstr(log_text(), "no complete preamble in time") != NULL, "and the log says why");
	ok(door_runner(d, clock_mono() + 0.2, NULL, 0, &e) < 0 && strstr(e.msg, "did not dial"),
	   "after every refusal, nothing reached the pod's door: %s", e.msg);
	door_close(d);
}

/* ---- a slow API ---- */

/* A review the API answers only after 2 s holds up no other connection
 * (reviews run apart from the preambles, several at once). */
static void test_slow_review(void)
{
	struct err e = {{0}};
	const char *slow = "pdk-t8-agent-1", *quick = "pdk-t9-agent-1";
	char *us = mkpod(slow), *uq = mkpod(quick);
	char *ts = good(slow, us), *tq = good(quick, uq);
	struct door *ds = door_open(data, slow, &e), *dq = door_open(data, quick, &e);
	door_expect_uid(ds, us, &e);
	door_expect_uid(dq, uq, &e);
	fault("{\"method\": \"POST\", \"path\": \"tokenreviews\", \"action\": \"stall\", \"seconds\": 2}");
	int cs = say("runner", slow, 0, ts, NULL, NULL);
	clock_sleep(0.3);
	double t0 = clock_mono();
	int cq = say("runner", quick, 0, tq, NULL, NULL);
	int fq = door_runner(dq, clock_mono() + 5, NULL, 0, &e);
	double took = clock_mono() - t0;
	ok(fq >= 0 && took < 1.5, "while one review stalls 2 s, another connection is reviewed and handed on (%.2f s)", took);
	int fs = door_runner(ds, clock_mono() + 8, NULL, 0, &e);
	ok(fs >= 0, "and the stalled one is handed on once the API answers: %s", e.msg);
	close(fq);
	close(fs);
	close(cq);
	close(cs);
	door_close(ds);
	door_close(dq);
}

/* ---- more runners at once than reviews at once ---- */

static void test_burst(void)
{
	enum { N = 24 };
	struct err e = {{0}};
	struct door *d[N];
	char *tok[N];
	int c[N], got = 0;
	for (int i = 0; i < N; i++) {
		char *pod = testlib_fmt("pdk-b%03d-agent-1", i);
		char *uid = mkpod(pod);
		tok[i] = mint(pod, uid, "paddock-sandbox", "paddock", 3600);
		d[i] = door_open(data, pod, &e);
		door_expect_uid(d[i], uid, &e);
	}
	int before = log_count("\n");
	double t0 = clock_mono();
	for (int i = 0; i < N; i++)
		c[i] = say("runner", testlib_fmt("pdk-b%03d-agent-1", i), 0, tok[i], NULL, NULL);
	for (int i = 0; i < N; i++) {
		int fd = door_runner(d[i], t0 + 10, NULL, 0, &e);
		got += fd >= 0;
		if (fd >= 0)
			close(fd);
		close(c[i]);
		door_close(d[i]);
	}
	ok(got == N && log_count("\n") == before,
	   "%d runners dialing at once (the review queue holds %d): all handed on, none refused (%.2f s)", N,
	   REVIEWS, clock_mono() - t0);
}

/* ---- 600 idle connections ---- */

static void test_flood(void)
{
	struct err e = {{0}};
	const char *pod = "pdk-t5-agent-1";
	char *uid = mkpod(pod);
	struct door *d = door_open(data, pod, &e);
	door_expect_uid(d, uid, &e);
	int idle[600];
	for (int i = 0; i < 600; i++)
		idle[i] = dial();
	clock_sleep(0.5);
	double t0 = clock_mono();
	int c = say("runner", pod, 0, good(pod, uid), NULL, NULL);
	int fd = door_runner(d, clock_mono() + 5, NULL, 0, &e);
	ok(fd >= 0, "with 600 idle connections open, a fresh good runner gets through (%.2f s): %s", clock_mono() - t0,
	   e.msg);
	struct pollfd p[600];
	for (int i = 0; i < 600; i++)
		p[i] = (struct pollfd){ idle[i], POLLIN, 0 };
	clock_sleep(0.3);
	poll(p, 600, 0);
	int gone = 0, first_gone = 1;
	for (int i = 0; i < 600; i++) {
		gone += p[i].revents != 0;
		/* The oldest are the ones dropped. */
		if (i < 600 - FRONTDOOR_PENDING && !p[i].revents)
			first_gone = 0;
		close(idle[i]);
	}
	ok(gone >= 600 - FRONTDOOR_PENDING + 1 && 600 - gone <= FRONTDOOR_PENDING && first_gone,
	   "at most %d stay in preamble: the %d oldest were dropped, %d held", FRONTDOOR_PENDING, gone, 600 - gone);
	clock_sleep(0.1);
	ok(strstr(log_text(), "too many connections in preamble") != NULL, "and the log says so");
	close(c);
	close(fd);
	door_close(d);
}

/* ---- a fault, and no gateway connection of its own ---- */

static void test_fault_gateway(void)
{
	struct err e = {{0}};
	const char *pod = "pdk-t6-agent-1";
	char *uid = mkpod(pod), *tok = good(pod, uid);
	struct door *d = door_open(data, pod, &e);
	door_expect_uid(d, uid, &e);
	/* The gateway comes through the runner's session now (runner.h): a
	 * connection of kind gateway, with the pod's own good token, is
	 * refused before any review, and nothing reaches the pod's door. */
	int c = say("gateway", pod, 8081, tok, NULL, "GET / HTTP/1.1\r\n\r\n");
	ok(closed_within(c, 5), "a gateway connection with a good token is closed without an answer");
	close(c);
	clock_sleep(0.1);
	ok(strstr(log_text(), "a gateway connection of its own") != NULL,
	   "the log says why: the gateway is reached through the runner's connection");
	ok(door_runner(d, clock_mono() + 0.3, NULL, 0, &e) < 0 && e.kind == ERR_UNAVAILABLE,
	   "and the pod's door got nothing");

	/* The runner found an open target: its fault reaches door_runner's
	 * caller. */
	const char *msg = "the pod reached 169.254.169.254:80, which the NetworkPolicies must close";
	c = say("fault", pod, 0, tok, msg, NULL);
	char fbuf[600];
	ok(door_runner(d, clock_mono() + 5, fbuf, sizeof fbuf, &e) < 0, "a fault comes back from door_runner as -1");
	is_str(fbuf, msg, "with the runner's message");
	ok(strstr(e.msg, msg) != NULL, "in the error too: %s", e.msg);
	close(c);
	door_close(d);
}

/* ---- a data directory too deep for a socket's name ---- */

static void test_long_path(void)
{
	struct err e = {{0}};
	char *deep = testlib_fmt("%s/%s", T, "a-folder-with-a-long-name-0123456789/another-folder-with-a-long-name-0123456789/data");
	testlib_sh("mkdir -p %s", deep);
	const char *pod = "pdk-t7-agent-1";
	char *uid = mkpod(pod);
	struct kube_opts ko = { .kubeconfig = testlib_fmt("%s/kubeconfig", T), .timeout = 5 };
	struct frontdoor_opts o = { .listen = "127.0.0.1:0", .data_dir = deep, .kube = &ko, .log = logfp };
	struct frontdoor *f2;
	ok(frontdoor_start(&o, &f2, &e) == 0, "a second front door, for a deep data directory: %s", e.msg);
	int keep = door_port;
	door_port = frontdoor_port(f2);
	struct door *d = door_open(deep, pod, &e);
	ok(d != NULL && strlen(deep) + 20 > sizeof(((struct sockaddr_un *)0)->sun_path),
	   "door_open where the socket's name is longer than sun_path: %s", e.msg);
	door_expect_uid(d, uid, &e);
	int c = say("runner", pod, 0, good(pod, uid), NULL, "X");
	int fd = door_runner(d, clock_mono() + 5, NULL, 0, &e);
	ok(fd >= 0, "and the front door hands the runner on there: %s", e.msg);
	close(fd);
	close(c);
	door_close(d);
	frontdoor_stop(f2);
	door_port = keep;
}

int main(void)
{
	if (testlib_sh("command -v openssl >/dev/null && command -v python3 >/dev/null") != 0) {
		printf("1..0 # SKIP the contract server needs openssl and python3 (scripts/install-deps --tests)\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	T = testlib_tmpdir("frontdoor");
	data = testlib_fmt("%s/data", T);
	mkdir(data, 0700);
	server_start();
	char *kc = testlib_fmt("%s/kubeconfig", T);
	testlib_write_file(kc,
		"apiVersion: v1\nkind: Config\ncurrent-context: main\n"
		"clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:%d\n    certificate-authority: %s/ca.crt\n"
		"contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n    namespace: ns1\n"
		"users:\n- name: u1\n  user:\n    token: tok-API-0123456789\n", api_port, T);
	struct err e = {{0}};
	struct kube_opts ko = { .kubeconfig = kc, .timeout = 5 };
	api = kube_open(&ko, &e);
	if (!api) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	logpath = testlib_fmt("%s/frontdoor.log", T);
	logfp = fopen(logpath, "w");
	/* Few reviews at once, for test_burst. */
	struct frontdoor_opts o = { .listen = "127.0.0.1:0", .data_dir = data, .kube = &ko, .log = logfp,
	                            .max_reviews = REVIEWS };
	if (frontdoor_start(&o, &fdoor, &e) < 0) {
		printf("Bail out! %s\n", e.msg);
		return 1;
	}
	door_port = frontdoor_port(fdoor);
	ok(door_port > 0, "the front door listens on 127.0.0.1:%d", door_port);

	test_refused();
	test_runner();
	test_fault_gateway();
	test_slow_review();
	test_burst();
	test_refused_end();
	test_flood();
	test_long_path();

	frontdoor_stop(fdoor);
	/* No token in any line. */
	const char *lt = log_text();
	int leaked = 0;
	for (size_t i = 0; i < ntokens; i++)
		leaked += strstr(lt, tokens[i]) != NULL;
	ok(leaked == 0 && *lt, "no token in any of the front door's %d log lines", log_count("\n"));
	printf("# the log:\n");
	for (const char *p = lt; *p;) {
		const char *nl = strchr(p, '\n');
		printf("#   %.*s\n", (int)(nl ? nl - p : (long)strlen(p)), p);
		p = nl ? nl + 1 : p + strlen(p);
	}
	fclose(logfp);
	kube_free(api);
	child_kill(&srv, SIGTERM);
	child_finish(&srv);
	testlib_end();
	return tap_done();
}
