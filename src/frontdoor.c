#include "autoconfig.h"
#include "frontdoor.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "door.h"
#include "fsx.h"
#include "i18n.h"
#include "kube_spec.h"
#include "paths.h"
#include "sanitize.h"

/* A review's own time (the API's answer), past the preamble's. */
#define REVIEW_SECS 15.0
#define LINE1_MAX 128
#define MESSAGE_MAX DOOR_FAULT_MAX

enum { KIND_RUNNER, KIND_GATEWAY, KIND_FAULT };
static const char *const kind_names[] = { "runner", "gateway", "fault" };

/* A preamble that parsed; pointers into the connection's buffer. */
struct preamble {
	int kind, port;
	char pod[64];
	const char *token;
	size_t toklen;
	const char *msg;     /* fault: its message (NUL-terminated in place) */
};

/* READING: the preamble comes; WAITING: it came, its review waits for
 * room in the queue (both count as in preamble); REVIEWING: a reviewer
 * has it. */
enum { CONN_READING, CONN_WAITING, CONN_REVIEWING };

struct conn {
	int fd;
	int state;
	double deadline;
	uint64_t job;           /* CONN_REVIEWING: the review it waits for */
	size_t lines;           /* newlines read so far */
	struct buf b;           /* the preamble as read */
	struct preamble p;
	char peer[80];
};

struct job {
	uint64_t id;
	char *token;            /* owned; zeroed before it is freed */
	char pod[64];
	/* The answer. */
	int ok;
	char uid[72];
	char *why;              /* a refusal's reason (sanitized), or NULL */
	struct job *next;
};

struct cached {
	unsigned char hash[SHA256_DIGEST_LENGTH];
	char pod[64];
	char uid[72];
	double until;           /* monotonic; 0: free */
};

struct frontdoor {
	char *data_dir, *ns, *audience;
	FILE *log;
	double preamble_secs;
	size_t max_pending, max_reviews;
	int lfd, stopfd, port;
	pthread_t th;
	/* The door thread's alone. */
	struct conn **conns;
	size_t nconns, nreading, nreviewing;
	struct cached *cache;
	uint64_t next_job;
	double log_second;
	int log_count, log_dropped;
	/* Reviewers. */
	struct kube *kube[FRONTDOOR_REVIEWERS];
	pthread_t rth[FRONTDOOR_REVIEWERS];
	int nrth;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *todo, **todo_tail, *done;
	int stopping;
	int donefd;             /* eventfd: a review is done */
};

/* ---- the log ---- */

/* One refusal line, sanitized; rate-limited so a flood of junk cannot
 * flood the log. */
static void fd_refuse(struct frontdoor *f, const char *peer, const char *pod, const char *why)
{
	double now = clock_mono();
	if (now - f->log_second >= 1.0) {
		f->log_second = now;
		f->log_count = 0;
	}
	if (f->log_count++ >= FRONTDOOR_LOG_BURST) {
		f->log_dropped++;
		return;
	}
	struct buf line = {0}, clean = {0};
	if (pod)
		buf_printf(&line, _("paddock: front door: refused %s (pod %s): %s"), peer, pod, why);
	else
		buf_printf(&line, _("paddock: front door: refused %s: %s"), peer, why);
	if (f->log_dropped)
		buf_printf(&line, _(" (and %d more refusals not logged)"), f->log_dropped);
	f->log_dropped = 0;
	sanitize_visible(line.data, line.len, 0, &clean, NULL);
	fprintf(f->log, "%s\n", clean.data ? clean.data : "");
	fflush(f->log);
	buf_free(&line);
	buf_free(&clean);
}

/* ---- the preamble ---- */

static int token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-';
}

/* A port as the preamble writes it: decimal, no sign, no leading zero. */
static int port_parse(const char *s, size_t n, int *port)
{
	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*port = v;
	return 0;
}

/* The first line (without its newline): "PADDOCK-DOOR 1 KIND POD PORT". */
static int line1_parse(const char *l, size_t n, struct preamble *p)
{
	const char *head = "PADDOCK-DOOR 1 ";
	size_t hl = strlen(head);
	if (n <= hl || memcmp(l, head, hl))
		return -1;
	const char *f[3];
	size_t fl[3], k = 0;
	const char *s = l + hl, *end = l + n;
	while (k < 3) {
		const char *sp = memchr(s, ' ', (size_t)(end - s));
		const char *e = sp ? sp : end;
		f[k] = s;
		fl[k++] = (size_t)(e - s);
		if (!sp)
			break;
		s = sp + 1;
	}
	if (k != 3 || f[2] + fl[2] != end)
		return -1;
	p->kind = -1;
	for (int i = 0; i < 3; i++)
		if (fl[0] == strlen(kind_names[i]) && !memcmp(f[0], kind_names[i], fl[0]))
			p->kind = i;
	if (p->kind < 0 || fl[1] >= sizeof p->pod || port_parse(f[2], fl[2], &p->port) < 0)
		return -1;
	memcpy(p->pod, f[1], fl[1]);
	p->pod[fl[1]] = 0;
	if (!door_pod_ok(p->pod) || (p->kind == KIND_GATEWAY ? (p->port < 1 || p->port > 65535) : p->port != 0))
		return -1;
	return 0;
}

/* The lines after the first, once all are read: the token, the message. */
static int rest_parse(char *b, size_t n, struct preamble *p)
{
	char *l2 = memchr(b, '\n', n) + 1;
	char *e2 = memchr(l2, '\n', (size_t)(b + n - l2));
	p->token = l2;
	p->toklen = (size_t)(e2 - l2);
	if (p->toklen == 0 || p->toklen > FRONTDOOR_TOKEN_MAX)
		return -1;
	for (size_t i = 0; i < p->toklen; i++)
		if (!token_char(l2[i]))
			return -1;
	*e2 = 0;
	p->msg = NULL;
	if (p->kind == KIND_FAULT) {
		char *l3 = e2 + 1;
		size_t ml = (size_t)(b + n - l3) - 1;
		if (ml > MESSAGE_MAX)
			return -1;
		for (size_t i = 0; i < ml; i++)
			if ((unsigned char)l3[i] < 0x20 || l3[i] == 0x7f)
				return -1;
		l3[ml] = 0;
		p->msg = l3;
	}
	return 0;
}

/* Reads what the connection has of its preamble, never past its end
 * (scratch: FRONTDOOR_PREAMBLE_MAX + 1 bytes, the door thread's).  1 when
 * it is complete and parsed, 0 when more is to come, -1 (with *why, NULL
 * when it is not worth a line) when it is not a preamble or it ended. */
static int conn_read(struct conn *c, char *scratch, const char **why)
{
	size_t have = c->b.len, room = FRONTDOOR_PREAMBLE_MAX - have;
	*why = _("a malformed preamble");
	/* What came so far and what waits, seen together; only what is
	 * consumed is kept (a connection in preamble holds little). */
	memcpy(scratch, c->b.data ? c->b.data : "", have);
	ssize_t n = recv(c->fd, scratch + have, room, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		*why = NULL;
		return -1;
	}
	size_t take = (size_t)n;
	for (size_t i = have; i < have + (size_t)n; i++) {
		if (scratch[i] != '\n')
			continue;
		if (++c->lines == 1 && line1_parse(scratch, i, &c->p) < 0)
			return -1;
		if (c->lines == 1 && c->p.kind == KIND_GATEWAY) {
			/* The gateway comes through the runner's own session
			 * (runner.h): a pod has no other connection to make. */
			*why = _("a gateway connection of its own (the gateway is reached through the "
			         "runner's connection)");
			return -1;
		}
		if (c->lines == (c->p.kind == KIND_FAULT ? 3u : 2u)) {
			take = i + 1 - have;
			break;
		}
	}
	/* Exactly the preamble's bytes are consumed: what follows is the
	 * hand-off's. */
	if (recv(c->fd, scratch + have, take, MSG_DONTWAIT) != (ssize_t)take)
		return -1;
	buf_add(&c->b, scratch + have, take);
	explicit_bzero(scratch, have + (size_t)n);
	/* A line longer than any valid one ends it early. */
	const char *last = memrchr(c->b.data, '\n', c->b.len);
	size_t cur = c->b.len - (last ? (size_t)(last - c->b.data) + 1 : 0);
	size_t max = c->lines == 0 ? LINE1_MAX : c->lines == 1 ? FRONTDOOR_TOKEN_MAX : MESSAGE_MAX;
	int done = c->lines >= (c->p.kind == KIND_FAULT ? 3u : 2u);
	if (cur > max || (!done && c->b.len >= FRONTDOOR_PREAMBLE_MAX) || memchr(c->b.data, 0, c->b.len))
		return -1;
	if (!done)
		return 0;
	return rest_parse(c->b.data, c->b.len, &c->p) < 0 ? -1 : 1;
}

/* ---- connections ---- */

static void conn_free(struct frontdoor *f, size_t i)
{
	struct conn *c = f->conns[i];
	if (c->fd >= 0)
		close(c->fd);
	if (c->b.data)
		explicit_bzero(c->b.data, c->b.len);
	buf_free(&c->b);
	if (c->state != CONN_REVIEWING)
		f->nreading--;
	else
		f->nreviewing--;
	free(c);
	f->conns[i] = f->conns[--f->nconns];
}

static size_t conn_find_job(struct frontdoor *f, uint64_t id)
{
	for (size_t i = 0; i < f->nconns; i++)
		if (f->conns[i]->state == CONN_REVIEWING && f->conns[i]->job == id)
			return i;
	return (size_t)-1;
}

static void peer_name(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char h[64], p[8];
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(out, len, "?");
		return;
	}
	snprintf(out, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, p);
}

static void fd_accept(struct frontdoor *f)
{
	for (int i = 0; i < 64; i++) {
		int c = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			return;
		if (f->nreading >= f->max_pending) {
			/* The oldest in preamble makes room: a flood of idle
			 * connections cannot keep a fresh runner out. */
			size_t old = (size_t)-1;
			for (size_t k = 0; k < f->nconns; k++)
				if (f->conns[k]->state != CONN_REVIEWING &&
				    (old == (size_t)-1 || f->conns[k]->deadline < f->conns[old]->deadline))
					old = k;
			fd_refuse(f, f->conns[old]->peer, NULL, _("too many connections in preamble; the oldest is dropped"));
			conn_free(f, old);
		}
		int one = 1, idle = 30, intvl = 10, cnt = 3;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		/* As the runner's end (runner/dial.c): a pod whose node went
		 * away without a word is noticed in about a minute, and its
		 * session waits for the runner's next connection from then
		 * (runner_set_resume), not for the task's timeout. */
		setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
		setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
		setsockopt(c, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
		setsockopt(c, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
		struct conn *n = xcalloc(1, sizeof *n);
		n->fd = c;
		n->state = CONN_READING;
		n->deadline = clock_mono() + f->preamble_secs;
		peer_name(c, n->peer, sizeof n->peer);
		f->conns[f->nconns++] = n;
		f->nreading++;
	}
}

/* ---- the hand-off ---- */

/* Hands c to its pod's door.  0, or -1 with *why (no one waits). */
static int fd_handoff(struct frontdoor *f, struct conn *c, const char *uid, const char **why)
{
	char *path = paths_door_socket(f->data_dir, c->p.pod);
	struct sockaddr_un sa;
	int dirfd = -1, rc = -1;
	struct err e = {{0}};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	*why = _("no paddock process waits for this pod");
	if (s >= 0 && fsx_unix_addr(path, &sa, &dirfd, &e) == 0 && connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
		struct buf m = {0};
		buf_printf(&m, "%s %d %s\n", kind_names[c->p.kind], c->p.port, uid);
		if (c->p.msg)
			buf_printf(&m, "%s\n", c->p.msg);
		char cbuf[CMSG_SPACE(sizeof(int))];
		memset(cbuf, 0, sizeof cbuf);
		struct iovec iov = { m.data, m.len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                     .msg_controllen = sizeof cbuf };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &c->fd, sizeof(int));
		if (sendmsg(s, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)m.len)
			rc = 0;
		else
			*why = _("the pod's paddock process did not take the connection");
		buf_free(&m);
	}
	if (dirfd >= 0)
		close(dirfd);
	if (s >= 0)
		close(s);
	free(path);
	return rc;
}

static struct cached *cache_find(struct frontdoor *f, const unsigned char *h)
{
	double now = clock_mono();
	for (size_t i = 0; i < FRONTDOOR_CACHE_MAX; i++)
		if (f->cache[i].until > now && !memcmp(f->cache[i].hash, h, sizeof f->cache[i].hash))
			return &f->cache[i];
	return NULL;
}

static void cache_put(struct frontdoor *f, const unsigned char *h, const char *pod, const char *uid)
{
	struct cached *slot = &f->cache[0];
	for (size_t i = 0; i < FRONTDOOR_CACHE_MAX; i++)
		if (f->cache[i].until < slot->until)
			slot = &f->cache[i];
	memcpy(slot->hash, h, sizeof slot->hash);
	snprintf(slot->pod, sizeof slot->pod, "%s", pod);
	snprintf(slot->uid, sizeof slot->uid, "%s", uid);
	slot->until = clock_mono() + FRONTDOOR_CACHE_SECS;
}

/* A connection whose token is known good for uid: handed on (closed
 * either way); a door that is gone forgets the token's review. */
static void conn_handoff(struct frontdoor *f, size_t i, const char *uid, struct cached *entry)
{
	struct conn *c = f->conns[i];
	const char *why;
	if (fd_handoff(f, c, uid, &why) < 0) {
		fd_refuse(f, c->peer, c->p.pod, why);
		if (entry)
			entry->until = 0;
	}
	conn_free(f, i);
}

/* A WAITING connection's review queued, when there is room (else it
 * waits: many runners dialing at once are reviewed in turn, not
 * refused). */
static void conn_review(struct frontdoor *f, struct conn *c)
{
	if (f->nreviewing >= f->max_reviews)
		return;
	struct job *j = xcalloc(1, sizeof *j);
	j->token = xstrndup(c->p.token, c->p.toklen);
	snprintf(j->pod, sizeof j->pod, "%s", c->p.pod);
	pthread_mutex_lock(&f->mu);
	j->id = ++f->next_job;
	*f->todo_tail = j;
	f->todo_tail = &j->next;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	c->job = j->id;
	c->state = CONN_REVIEWING;
	f->nreading--;
	f->nreviewing++;
	c->deadline = clock_mono() + REVIEW_SECS;
}

/* A complete preamble: the cache or a review decides. */
static void conn_ready(struct frontdoor *f, size_t i)
{
	struct conn *c = f->conns[i];
	unsigned char h[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)c->p.token, c->p.toklen, h);
	struct cached *hit = cache_find(f, h);
	if (hit && !strcmp(hit->pod, c->p.pod)) {
		char uid[sizeof hit->uid];
		memcpy(uid, hit->uid, sizeof uid);
		conn_handoff(f, i, uid, hit);
		return;
	}
	c->state = CONN_WAITING;
	conn_review(f, c);
}

/* The reviews done: their connections handed on or refused. */
static void fd_reviews_done(struct frontdoor *f)
{
	uint64_t v;
	if (read(f->donefd, &v, sizeof v) < 0) {
		/* Nothing yet: the eventfd is non-blocking. */
	}
	pthread_mutex_lock(&f->mu);
	struct job *j = f->done;
	f->done = NULL;
	pthread_mutex_unlock(&f->mu);
	while (j) {
		struct job *next = j->next;
		unsigned char h[SHA256_DIGEST_LENGTH];
		SHA256((const unsigned char *)j->token, strlen(j->token), h);
		struct cached *entry = NULL;
		if (j->ok) {
			cache_put(f, h, j->pod, j->uid);
			entry = cache_find(f, h);
		}
		size_t i = conn_find_job(f, j->id);
		if (i != (size_t)-1) {
			if (j->ok)
				conn_handoff(f, i, j->uid, entry);
			else {
				fd_refuse(f, f->conns[i]->peer, f->conns[i]->p.pod, j->why);
				conn_free(f, i);
			}
		}
		explicit_bzero(j->token, strlen(j->token));
		free(j->token);
		free(j->why);
		free(j);
		j = next;
	}
	/* Room again: the connections waiting for it, oldest first. */
	while (f->nreviewing < f->max_reviews) {
		struct conn *old = NULL;
		for (size_t i = 0; i < f->nconns; i++)
			if (f->conns[i]->state == CONN_WAITING && (!old || f->conns[i]->deadline < old->deadline))
				old = f->conns[i];
		if (!old)
			break;
		conn_review(f, old);
	}
}

/* ---- the reviewers ---- */

/* Decides one job: j->ok, j->uid, or j->why. */
static void review_one(struct frontdoor *f, struct kube *k, struct job *j)
{
	struct kube_review r;
	struct err e = {{0}};
	char *user = xasprintf("system:serviceaccount:%s:%s", f->ns, KUBE_SPEC_SERVICE_ACCOUNT);
	if (kube_token_review(k, j->token, f->audience, &r, &e) < 0)
		j->why = xasprintf(_("the token could not be reviewed: %s"), e.msg);
	else if (!r.authenticated)
		j->why = xasprintf(_("the Kubernetes API did not accept the token: %s"), r.error ? r.error : "");
	else if (!r.username || strcmp(r.username, user))
		j->why = xasprintf(_("the token is the user %s's, not %s's"), r.username ? r.username : "?", user);
	else if (!r.pod_name || strcmp(r.pod_name, j->pod)) {
		char *q = sanitize_quote_str(r.pod_name ? r.pod_name : "");
		j->why = xasprintf(_("the token is the pod %s's, not this pod's"), *q ? q : "?");
		free(q);
	} else if (!r.pod_uid || strlen(r.pod_uid) >= sizeof j->uid || strpbrk(r.pod_uid, " \n"))
		j->why = xstrdup(_("the token's review names no pod uid"));
	else {
		j->ok = 1;
		snprintf(j->uid, sizeof j->uid, "%s", r.pod_uid);
	}
	kube_review_free(&r);
	free(user);
}

struct reviewer {
	struct frontdoor *f;
	int n;
};

static void *reviewer_run(void *arg)
{
	struct reviewer *rv = arg;
	struct frontdoor *f = rv->f;
	struct kube *k = f->kube[rv->n];
	free(rv);
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->todo && !f->stopping)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stopping)
			break;
		struct job *j = f->todo;
		f->todo = j->next;
		if (!f->todo)
			f->todo_tail = &f->todo;
		pthread_mutex_unlock(&f->mu);
		review_one(f, k, j);
		pthread_mutex_lock(&f->mu);
		j->next = f->done;
		f->done = j;
		uint64_t one = 1;
		if (write(f->donefd, &one, sizeof one) < 0) {
			/* Counter full: the door thread is waking already. */
		}
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* ---- the door thread ---- */

static void fd_expire(struct frontdoor *f)
{
	double now = clock_mono();
	for (size_t i = f->nconns; i-- > 0;) {
		struct conn *c = f->conns[i];
		if (now < c->deadline)
			continue;
		fd_refuse(f, c->peer, c->state != CONN_READING ? c->p.pod : NULL,
		          c->state == CONN_READING ? _("no complete preamble in time") : _("the token's review took too long"));
		conn_free(f, i);
	}
}

static void *fd_run(void *arg)
{
	struct frontdoor *f = arg;
	size_t max = 3 + f->max_pending + f->max_reviews;
	struct pollfd *pfd = xcalloc(max, sizeof *pfd);
	struct conn **polled = xcalloc(max, sizeof *polled);
	char *scratch = xmalloc(FRONTDOOR_PREAMBLE_MAX + 1);
	for (;;) {
		size_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = f->stopfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = f->donefd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = f->lfd, .events = POLLIN };
		size_t base = n;
		for (size_t i = 0; i < f->nconns && n < max; i++) {
			polled[n - base] = f->conns[i];
			pfd[n++] = (struct pollfd){ .fd = f->conns[i]->fd,
			                            .events = f->conns[i]->state == CONN_READING ? POLLIN : 0 };
		}
		if (poll(pfd, n, f->nconns ? 250 : -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		for (size_t k = base; k < n; k++) {
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			/* Connections move as others are freed: found again. */
			size_t i;
			for (i = 0; i < f->nconns && f->conns[i] != polled[k - base]; i++)
				;
			if (i == f->nconns)
				continue;
			if (f->conns[i]->state != CONN_READING) {
				/* Gone while its token is reviewed. */
				if (pfd[k].revents & (POLLHUP | POLLERR))
					conn_free(f, i);
				continue;
			}
			const char *why = NULL;
			int r = conn_read(f->conns[i], scratch, &why);
			if (r < 0) {
				if (why)
					fd_refuse(f, f->conns[i]->peer, NULL, why);
				conn_free(f, i);
			} else if (r > 0) {
				conn_ready(f, i);
			}
		}
		if (pfd[1].revents)
			fd_reviews_done(f);
		fd_expire(f);
		if (pfd[2].revents & POLLIN)
			fd_accept(f);
	}
	free(pfd);
	free(polled);
	free(scratch);
	return NULL;
}

/* ---- start and stop ---- */

static int fd_listen(struct frontdoor *f, const char *addr, struct err *e)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	if (!colon || hl >= sizeof host)
		return err_set(e, _("the front door's address %s is not ADDRESS:PORT"), addr);
	memcpy(host, addr, hl);
	host[hl] = 0;
	char *h = host;
	if (h[0] == '[' && hl > 2 && h[hl - 1] == ']') {
		h[hl - 1] = 0;
		h++;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE }, *ai;
	if (getaddrinfo(h, colon + 1, &hints, &ai) != 0)
		return err_set(e, _("the front door's address %s is not ADDRESS:PORT"), addr);
	int one = 1;
	f->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (f->lfd >= 0)
		setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (f->lfd < 0 || bind(f->lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(f->lfd, 1024) < 0) {
		freeaddrinfo(ai);
		return err_errno(e, _("the front door cannot listen on %s"), addr);
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(f->lfd, (struct sockaddr *)&ss, &sl);
	f->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                         : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}


static int fd_threads(struct frontdoor *f, struct err *e)
{
	sigset_t all, prev;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &prev);
	int rc = 0;
	for (int i = 0; i < FRONTDOOR_REVIEWERS && rc == 0; i++) {
		struct reviewer *rv = xcalloc(1, sizeof *rv);
		*rv = (struct reviewer){ f, i };
		rc = pthread_create(&f->rth[i], NULL, reviewer_run, rv);
		if (rc == 0)
			f->nrth++;
		else
			free(rv);
	}
	if (rc == 0 && pthread_create(&f->th, NULL, fd_run, f) != 0)
		rc = -1;
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	return rc == 0 ? 0 : err_set(e, _("cannot start the front door's threads"));
}

static void fd_free(struct frontdoor *f)
{
	pthread_mutex_lock(&f->mu);
	f->stopping = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	for (int i = 0; i < f->nrth; i++)
		pthread_join(f->rth[i], NULL);
	while (f->nconns)
		conn_free(f, f->nconns - 1);
	for (struct job *lists[2] = { f->todo, f->done }, **l = lists; l < lists + 2; l++)
		for (struct job *j = *l, *next; j; j = next) {
			next = j->next;
			explicit_bzero(j->token, strlen(j->token));
			free(j->token);
			free(j->why);
			free(j);
		}
	for (int i = 0; i < FRONTDOOR_REVIEWERS; i++)
		kube_free(f->kube[i]);
	if (f->lfd >= 0)
		close(f->lfd);
	if (f->stopfd >= 0)
		close(f->stopfd);
	if (f->donefd >= 0)
		close(f->donefd);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f->conns);
	free(f->cache);
	free(f->data_dir);
	free(f->ns);
	free(f->audience);
	free(f);
}

int frontdoor_start(const struct frontdoor_opts *o, struct frontdoor **out, struct err *e)
{
	struct frontdoor *f = xcalloc(1, sizeof *f);
	f->lfd = f->stopfd = f->donefd = -1;
	f->data_dir = xstrdup(o->data_dir);
	f->audience = xstrdup(o->audience ? o->audience : KUBE_SPEC_AUDIENCE);
	f->log = o->log ? o->log : stderr;
	f->preamble_secs = o->preamble_secs > 0 ? o->preamble_secs : FRONTDOOR_PREAMBLE_SECS;
	f->max_pending = o->max_pending > 0 ? (size_t)o->max_pending : FRONTDOOR_PENDING;
	f->max_reviews = o->max_reviews > 0 ? (size_t)o->max_reviews : FRONTDOOR_QUEUE;
	f->conns = xcalloc(f->max_pending + f->max_reviews, sizeof *f->conns);
	f->cache = xcalloc(FRONTDOOR_CACHE_MAX, sizeof *f->cache);
	f->todo_tail = &f->todo;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	for (int i = 0; i < FRONTDOOR_REVIEWERS; i++) {
		if (!(f->kube[i] = kube_open(o->kube, e))) {
			err_prefix(e, _("the front door cannot reach the Kubernetes API"));
			fd_free(f);
			return -1;
		}
	}
	f->ns = xstrdup(o->ns ? o->ns : kube_namespace(f->kube[0]));
	/* Room for every connection in preamble to hold a descriptor. */
	fsx_nofile_raise(4096);
	f->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->stopfd < 0 || f->donefd < 0) {
		err_errno(e, _("cannot start the front door"));
		fd_free(f);
		return -1;
	}
	if (fd_listen(f, o->listen, e) < 0 || fd_threads(f, e) < 0) {
		/* Threads started are stopped by fd_free; fd_run never started
		 * when fd_threads failed. */
		fd_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

int frontdoor_start_config(const struct config *cfg, const char *data_dir, struct frontdoor **out,
                           struct err *e)
{
	const struct kube_conf *kc = &cfg->kube;
	struct kube_opts ko = { .kubeconfig = kc->kubeconfig, .context = kc->context, .timeout = 5,
	                        .retries = 2, .retry_after_max = 2 };
	char *listen = NULL;
	if (!kc->door_listen) {
		const char *colon = kc->door ? strrchr(kc->door, ':') : NULL;
		listen = colon ? xasprintf("0.0.0.0:%s", colon + 1) : xasprintf("0.0.0.0:%d", KUBE_CONF_DOOR_PORT);
	}
	struct frontdoor_opts o = { .listen = kc->door_listen ? kc->door_listen : listen, .data_dir = data_dir,
	                            .kube = &ko, .ns = kc->namespace, .audience = kc->audience };
	int rc = frontdoor_start(&o, out, e);
	free(listen);
	return rc;
}

int frontdoor_port(const struct frontdoor *f)
{
	return f->port;
}

void frontdoor_stop(struct frontdoor *f)
{
	if (!f)
		return;
	uint64_t one = 1;
	if (write(f->stopfd, &one, sizeof one) < 0) {
		/* One write does not overflow an eventfd. */
	}
	pthread_join(f->th, NULL);
	fd_free(f);
}
