/* test-client: paddock's API client (client.h) against a tiny HTTP server
 * on loopback that answers each connection with a canned reply and keeps
 * what it was sent: the token refused over plain http to another machine
 * (before any connection), no redirect followed, a body over the cap,
 * the API's errors and their kinds, event streams whole, garbled and cut
 * short. */
#include "autoconfig.h"
#include "client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "buf.h"
#include "err.h"
#include "sanitize.h"
#include "tap.h"
#include "testlib.h"

/* ---- the server: one reply per connection ---- */

struct srv {
	int fd, port;
	pthread_t th;
	const char *reply;         /* head and body, sent as is */
	size_t reply_len;
	size_t big;                /* then this many 'x's */
	struct buf got;            /* every request's bytes */
	int conns;
	pthread_mutex_t mu;
	int stop;
};

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	for (;;) {
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			return NULL;
		pthread_mutex_lock(&s->mu);
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop) {
			close(c);
			return NULL;
		}
		/* The request: headers, then a Content-Length's body. */
		struct buf req = {0};
		char b[4096];
		size_t want = 0;
		for (;;) {
			char *end = req.data ? strstr(req.data, "\r\n\r\n") : NULL;
			if (end && !want) {
				const char *cl = strcasestr(req.data, "\r\nContent-Length:");
				want = (size_t)(end + 4 - req.data) + (cl && cl < end ? strtoul(cl + 17, NULL,
				                                                                   10) : 0);
			}
			if (want && req.len >= want)
				break;
			ssize_t n = read(c, b, sizeof b);
			if (n <= 0)
				break;
			buf_add(&req, b, (size_t)n);
		}
		pthread_mutex_lock(&s->mu);
		buf_add(&s->got, req.data ? req.data : "", req.len);
		s->conns++;
		pthread_mutex_unlock(&s->mu);
		buf_free(&req);
		ssize_t w0 = send(c, s->reply, s->reply_len, MSG_NOSIGNAL);
		(void)w0;
		memset(b, 'x', sizeof b);
		for (size_t left = s->big; left > 0;) {
			size_t n = left > sizeof b ? sizeof b : left;
			ssize_t w = send(c, b, n, MSG_NOSIGNAL);
			if (w <= 0)
				break;
			left -= (size_t)w;
		}
		close(c);
	}
}

static void srv_start(struct srv *s)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (bind(s->fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(s->fd, 8) < 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &al) < 0) {
		perror("test-client: listen");
		exit(1);
	}
	s->port = ntohs(a.sin_port);
	pthread_create(&s->th, NULL, srv_main, s);
}

static void srv_reply(struct srv *s, const char *reply, size_t big)
{
	pthread_mutex_lock(&s->mu);
	s->reply = reply;
	s->reply_len = strlen(reply);
	s->big = big;
	buf_reset(&s->got);
	s->conns = 0;
	pthread_mutex_unlock(&s->mu);
}

static void srv_stop(struct srv *s)
{
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_mutex_unlock(&s->mu);
	/* Wake the accept. */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)s->port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(c, (struct sockaddr *)&a, sizeof a) < 0)
		perror("test-client: connect");
	close(c);
	pthread_join(s->th, NULL);
	close(s->fd);
	buf_free(&s->got);
	pthread_mutex_destroy(&s->mu);
}

static const char *srv_got(struct srv *s)
{
	return s->got.data ? s->got.data : "";
}

/* ---- opening ---- */

static void test_open(void)
{
	struct err e = {{0}};
	struct client *c = client_open("http://10.1.2.3:8080", "secret", &e);
	ok(!c && strstr(e.msg, "plain http") && e.kind == ERR_INVALID,
	   "a token over plain http to another machine is refused at open (%s)", e.msg);
	c = client_open("http://paddock.example.com/", "secret", &e);
	ok(!c, "a host name over plain http too");
	c = client_open("http://127.1/", "secret", &e);
	ok(c != NULL, "127.1 (libcurl's 127.0.0.1) is this machine");
	client_close(c);
	c = client_open("http://127.0.0.1@10.1.2.3/", "secret", &e);
	ok(!c, "a user name that looks like loopback is refused (%s)", e.msg);
	c = client_open("http://10.1.2.3:8080", NULL, &e);
	ok(c != NULL, "plain http without a token is allowed");
	client_close(c);
	c = client_open("https://paddock.example.com/prefix/", "secret", &e);
	ok(c != NULL, "https with a token and a path prefix is allowed");
	is_str(c ? client_url(c) : "", "https://paddock.example.com/prefix/", "client_url as given");
	client_close(c);
	c = client_open("ftp://127.0.0.1/", NULL, &e);
	ok(!c, "ftp is refused (%s)", e.msg);
	c = client_open("127.0.0.1:8080", NULL, &e);
	ok(!c, "a URL without a scheme is refused");
	c = client_open("http://127.0.0.1/?x=1", NULL, &e);
	ok(!c, "a URL with a query is refused");
	c = client_open("http://127.0.0.1/", "a\r\nX-Evil: 1", &e);
	ok(!c, "a token with a line break is refused");
	c = client_open("", NULL, &e);
	ok(!c, "no URL is refused");

	char *x = client_escape("a b/ü?&=~._-");
	is_str(x, "a%20b%2F%C3%BC%3F%26%3D~._-", "client_escape keeps only unreserved characters");
	free(x);
}

/* ---- requests ---- */

static void test_requests(struct srv *s)
{
	struct err e = {{0}};
	char *url = xasprintf("http://127.0.0.1:%d/api/", s->port);
	struct client *c = client_open(url, "tok-123", &e);
	ok(c != NULL, "open %s", url);

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{\"tasks\": []}", 0);
	json_t *j = client_get_json(c, "/tasks?status=review", &e);
	ok(json_is_array(json_object_get(j, "tasks")), "GET: the parsed body");
	json_decref(j);
	ok(strstr(srv_got(s), "GET /api/tasks?status=review HTTP/1.1\r\n") != NULL,
	   "the path goes below the URL's prefix");
	ok(strstr(srv_got(s), "\r\nAuthorization: Bearer tok-123\r\n") != NULL,
	   "the token is sent as a bearer token");

	json_t *body = json_pack("{s:s}", "notes", "fix it");
	long st = 0;
	j = client_post_json(c, "/tasks/abc/reject", body, &st, &e);
	json_decref(body);
	ok(j && st == 200, "POST: 200 and the answer");
	json_decref(j);
	ok(strstr(srv_got(s), "POST /api/tasks/abc/reject") && strstr(srv_got(s), "Content-Type: "
	   "application/json") && strstr(srv_got(s), "{\"notes\":\"fix it\"}"),
	   "POST sends the JSON body");

	/* A redirect is not followed: the token does not reach its target. */
	struct srv other;
	srv_start(&other);
	srv_reply(&other, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close"
	          "\r\n\r\n{}", 0);
	char *redir = xasprintf("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:%d/stolen\r\n"
	                        "Content-Length: 0\r\nConnection: close\r\n\r\n", other.port);
	srv_reply(s, redir, 0);
	struct client_resp r;
	st = client_request(c, "GET", "/tasks", NULL, NULL, 5, &r, &e);
	is_int(st, 302, "a redirect comes back as its status");
	client_resp_free(&r);
	usleep(100000);
	pthread_mutex_lock(&other.mu);
	is_int(other.conns, 0, "the redirect's target got no request (the token stayed)");
	pthread_mutex_unlock(&other.mu);
	srv_stop(&other);
	free(redir);

	/* A body over the cap fails cleanly. */
	char *huge = xasprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	                       "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	                       (size_t)CLIENT_BODY_MAX + 4096);
	srv_reply(s, huge, (size_t)CLIENT_BODY_MAX + 4096);
	err_clear(&e);
	st = client_request(c, "GET", "/tasks/x/diff", NULL, NULL, 30, &r, &e);
	ok(st == -1 && e.kind == ERR_REMOTE && strstr(e.msg, "larger than"),
	   "a body over CLIENT_BODY_MAX fails (%s)", e.msg);
	ok(r.body.data == NULL && r.json == NULL, "and nothing of it is kept");
	free(huge);
	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
	          "\r\n", (size_t)CLIENT_BODY_MAX + 4096);
	st = client_request(c, "GET", "/tasks/x/diff", NULL, NULL, 60, &r, &e);
	ok(st == -1 && e.kind == ERR_REMOTE && strstr(e.msg, "larger than"),
	   "so does one without a Content-Length, read up to the cap (%s)", e.msg);

	/* The API's errors: message and kind. */
	srv_reply(s, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"error\": \"token 'r' has the role read; POST "
	          "/tasks needs the role submit\", \"code\": \"read_only\", \"x\": 1}", 0);
	err_clear(&e);
	j = client_post_json(c, "/tasks", NULL, &st, &e);
	ok(!j && st == 403 && e.kind == ERR_FORBIDDEN && strstr(e.msg, "needs the role submit"),
	   "a 403 is ERR_FORBIDDEN with the API's message (%s)", e.msg);
	ok(strstr(srv_got(s), "") && strstr(srv_got(s), "\r\n\r\n{}"),
	   "POST without a body sends {}");
	srv_reply(s, "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{\"error\":\"not at review\",\"code\":\"wrong_state\","
	          "\"st\":1}", 0);
	j = client_post_json(c, "/tasks/a/approve", NULL, NULL, &e);
	ok(!j && e.kind == ERR_WRONG_STATE, "409 wrong_state is ERR_WRONG_STATE");
	srv_reply(s, "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{\"error\":\"busy\",\"code\":\"refused\"}  ", 0);
	j = client_post_json(c, "/tasks/a/approve", NULL, NULL, &e);
	ok(!j && e.kind == ERR_CONFLICT, "409 refused is ERR_CONFLICT");
	srv_reply(s, "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n"
	          "Connection: close\r\n\r\n<h1>\x1b]0;pwned\x07gone</h1>\nsecond line", 0);
	j = client_get_json(c, "/tasks/zz", &e);
	ok(!j && e.kind == ERR_NOT_FOUND && strstr(e.msg, "HTTP 404") && !strstr(e.msg, "second"),
	   "a 404 that is not the API's: the status and the body's first line");
	char *q = sanitize_quote_str(e.msg);
	ok(!strchr(q, '\x1b') && !strchr(q, '\x07'), "its escape sequence does not reach the "
	   "terminal raw once quoted (%s)", q);
	free(q);
	srv_reply(s, "HTTP/1.1 503 Busy\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{\"error\":\"the store is busy\",\"code\":\"unavail\"}", 0);
	j = client_get_json(c, "/tasks", &e);
	ok(!j && e.kind == ERR_UNAVAILABLE, "503 is ERR_UNAVAILABLE");
	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{\"a\":", 0);
	j = client_get_json(c, "/tasks", &e);
	ok(!j && e.kind == ERR_REMOTE, "a 200 whose JSON is cut short fails (%s)", e.msg);
	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 0);
	j = client_post_json(c, "/x", NULL, NULL, &e);
	ok(json_is_null(j), "an empty 2xx body is json null");
	json_decref(j);
	client_close(c);

	/* Nothing listens: no answer, -1. */
	c = client_open("http://127.0.0.1:1/", "t", &e);
	st = client_request(c, "GET", "/tasks", NULL, NULL, 5, &r, &e);
	ok(st == -1 && e.kind == ERR_UNAVAILABLE, "a refused connection is ERR_UNAVAILABLE (%s)",
	   e.msg);
	client_close(c);
	free(url);
}

/* ---- events ---- */

struct seen {
	struct buf log;
	int stop_after;
	int n;
};

static int on_event(void *arg, const struct client_event *ev)
{
	struct seen *s = arg;
	buf_printf(&s->log, "[%s|%s|%s]", ev->id, ev->type, ev->data);
	return ++s->n == s->stop_after ? 7 : 0;
}

static void test_events(struct srv *s)
{
	struct err e = {{0}};
	char *url = xasprintf("http://127.0.0.1:%d", s->port);
	struct client *c = client_open(url, "tok", &e);
	struct seen sn = {0};

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
	          "\r\n: ping\n\nid: 1\nevent: step\ndata: {\"a\":1}\n\nid: 2\r\ndata: one\r\n"
	          "data: two\r\n\r\n: ping\n\n", 0);
	int rc = client_events(c, "/tasks/a/events", "0.5", on_event, &sn, &e);
	is_int(rc, 0, "a stream the server ends: 0");
	is_str(sn.log.data ? sn.log.data : "", "[1|step|{\"a\":1}][2|message|one\ntwo]",
	       "events, their ids and types, data lines joined, pings skipped, CRLF too");
	ok(strstr(srv_got(s), "\r\nLast-Event-ID: 0.5\r\n") && strstr(srv_got(s),
	   "Accept: text/event-stream"), "Last-Event-ID and Accept are sent");

	buf_reset(&sn.log);
	sn.n = 0;
	sn.stop_after = 1;
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	is_int(rc, 7, "the callback's non-zero value stops the stream and is returned");
	sn.stop_after = 0;

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
	          "\r\nid: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\"", 0);
	buf_reset(&sn.log);
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1 && strstr(e.msg, "within an event"), "a stream cut within an event is an "
	   "error (%s)", e.msg);
	is_str(sn.log.data ? sn.log.data : "", "[1|message|{\"a\":1}]", "the whole events before "
	       "it were passed on, the cut one not");

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
	          "\r\n<html>garbage</html>\n\n", 0);
	buf_reset(&sn.log);
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1 && sn.log.len == 0, "a garbage stream is an error, no event (%s)", e.msg);

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
	          "\r\ndata: a\0" "b\n\n", 0);
	/* The reply's length stops at the NUL: give it whole. */
	s->reply_len = strlen(s->reply) + 4;
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1, "a NUL byte in a stream is an error");

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
	          "\r\ndata: ", (size_t)2 << 20);
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1 && strstr(e.msg, "too long"), "a line over the cap is an error (%s)", e.msg);

	srv_reply(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	          "Connection: close\r\n\r\n{}", 0);
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1 && e.kind == ERR_REMOTE, "a 200 that is not a stream is an error (%s)", e.msg);

	srv_reply(s, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"error\":\"no task a\\u001b[2J\",\"code\":\"nst\"}",
	          0);
	rc = client_events(c, "/tasks/a/events", NULL, on_event, &sn, &e);
	ok(rc == -1 && e.kind == ERR_NOT_FOUND && strstr(e.msg, "no task a"),
	   "an error answer is the API's error (%s)", e.msg);
	char *q = sanitize_quote_str(e.msg);
	ok(!strchr(q, '\x1b'), "its escape is a mark once quoted (%s)", q);
	free(q);
	ok(client_events(c, "/x", "1\r\nX-Evil: 1", on_event, &sn, &e) == -1,
	   "a last id with a line break is refused");
	buf_free(&sn.log);
	client_close(c);
	free(url);
}

int main(void)
{
	struct srv s;
	srv_start(&s);
	test_open();
	test_requests(&s);
	test_events(&s);
	srv_stop(&s);
	return tap_done();
}
