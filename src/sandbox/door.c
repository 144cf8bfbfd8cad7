#include "autoconfig.h"
#include "door.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "i18n.h"
#include "paths.h"
#include "sanitize.h"

/* Hand-offs waiting for their one message, and runner or fault ones kept
 * for door_runner: small bounds, a pod dials once. */
#define DOOR_CTL 16
#define DOOR_KEPT 4
#define DOOR_UID_MAX 64
/* The front door sends its message right after connecting. */
#define DOOR_CTL_SECS 2.0

struct half {
	char *buf;
	size_t len, off;
	int eof, shut;
};

struct relay {
	int in, out;       /* in: the pod's TCP connection; out: the gateway's socket */
	struct half up, down;
};

struct ctl {
	int fd;
	double deadline;
};

struct kept {
	int fd;
	int fault;
	char uid[DOOR_UID_MAX + 1];
	char msg[DOOR_FAULT_MAX + 1];
};

struct door {
	char *path;
	char *bridge_dir;
	int lfd, stopfd;
	pthread_t th;
	/* The thread's alone. */
	struct ctl ctl[DOOR_CTL];
	size_t nctl;
	struct relay *relays;
	size_t nrelays;
	/* Shared with door_runner and door_expect_uid, under mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char uid[DOOR_UID_MAX + 1];   /* "" until door_expect_uid */
	struct kept kept[DOOR_KEPT];
	size_t nkept;
	int runner_given;
};

int door_pod_ok(const char *pod)
{
	size_t n = strlen(pod);
	if (n == 0 || n > 63 || pod[0] == '-' || pod[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((pod[i] >= 'a' && pod[i] <= 'z') || (pod[i] >= '0' && pod[i] <= '9') || pod[i] == '-'))
			return 0;
	return 1;
}

int door_addr(const char *path, struct sockaddr_un *sa, int *dirfd, struct err *e)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof sa->sun_path) {
		memcpy(sa->sun_path, path, strlen(path) + 1);
		return 0;
	}
	/* A data directory deep enough that the name does not fit. */
	const char *slash = strrchr(path, '/');
	char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	*dirfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (*dirfd < 0)
		return err_errno(e, _("cannot open the folder of %s"), path);
	int n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, slash ? slash + 1 : path);
	if (n < 0 || (size_t)n >= sizeof sa->sun_path) {
		close(*dirfd);
		*dirfd = -1;
		return err_set(e, _("the socket name %s is too long"), path);
	}
	return 0;
}

/* ---- relays ---- */

static void relay_close(struct relay *r)
{
	close(r->in);
	close(r->out);
	r->in = r->out = -1;
	free(r->up.buf);
	free(r->down.buf);
	r->up.buf = r->down.buf = NULL;
}

/* Moves what `from` has into h, and what h holds into `to`; a read side
 * that ended is passed on as a half-close once h is drained.  -1 when the
 * relay is done with (an error). */
static int relay_pump(int from, int to, struct half *h, short rev_from)
{
	if ((rev_from & (POLLIN | POLLHUP | POLLERR)) && !h->eof && h->len == 0) {
		ssize_t n = recv(from, h->buf, DOOR_RELAY_BUF, MSG_DONTWAIT);
		if (n > 0) {
			h->len = (size_t)n;
			h->off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			h->eof = 1;
		}
	}
	while (h->off < h->len) {
		ssize_t n = send(to, h->buf + h->off, h->len - h->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -1;
		}
		h->off += (size_t)n;
	}
	if (h->off == h->len)
		h->len = h->off = 0;
	if (h->eof && h->len == 0 && !h->shut) {
		shutdown(to, SHUT_WR);
		h->shut = 1;
	}
	return 0;
}

/* A gateway hand-off: the pod's connection relayed to <bridge_dir>/<port>. */
static void door_relay_start(struct door *d, int fd, int port)
{
	struct sockaddr_un sa;
	int dirfd = -1, g = -1;
	char *path = d->bridge_dir ? xasprintf("%s/%d", d->bridge_dir, port) : NULL;
	struct err e = {{0}};
	if (path && d->nrelays < DOOR_RELAYS && door_addr(path, &sa, &dirfd, &e) == 0) {
		/* Non-blocking: a gateway whose backlog is full refuses at
		 * once instead of stalling every relay. */
		g = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (g >= 0 && connect(g, (struct sockaddr *)&sa, sizeof sa) < 0) {
			close(g);
			g = -1;
		}
		if (dirfd >= 0)
			close(dirfd);
	}
	free(path);
	if (g < 0) {
		/* No gateway at that port, or too many: the pod sees a close. */
		close(fd);
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	struct relay *r = &d->relays[d->nrelays++];
	*r = (struct relay){ .in = fd, .out = g };
	r->up.buf = xmalloc(DOOR_RELAY_BUF);
	r->down.buf = xmalloc(DOOR_RELAY_BUF);
}

/* ---- hand-offs ---- */

/* Parses "<kind> <port> <uid>\n[<message>\n]".  0, or -1 when it is not
 * one. */
static int door_parse(char *m, size_t n, int *kind, int *port, char *uid, char *msg)
{
	if (n == 0 || n >= DOOR_MSG_MAX || memchr(m, 0, n) || m[n - 1] != '\n')
		return -1;
	m[n] = 0;
	char *nl = strchr(m, '\n');
	*nl = 0;
	char *rest = nl + 1;
	char k[16];
	unsigned p;
	int used = 0;
	if (sscanf(m, "%15s %5u %64s%n", k, &p, uid, &used) != 3 || (size_t)used != strlen(m) || p > 65535)
		return -1;
	for (const char *c = uid; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return -1;
	*port = (int)p;
	msg[0] = 0;
	if (!strcmp(k, "runner") && p == 0 && !*rest)
		*kind = 0;
	else if (!strcmp(k, "gateway") && p > 0 && !*rest)
		*kind = 1;
	else if (!strcmp(k, "fault") && p == 0 && *rest) {
		size_t ml = strlen(rest) - 1;
		if (rest[ml] != '\n' || ml > DOOR_FAULT_MAX || memchr(rest, '\n', ml))
			return -1;
		memcpy(msg, rest, ml);
		msg[ml] = 0;
		*kind = 2;
	} else
		return -1;
	return 0;
}

/* Reads a hand-off's one message and acts on it; the control connection
 * is closed either way.  0, or -1 when the message has not come yet (the
 * connection is left open). */
static int door_take(struct door *d, int cfd)
{
	char m[DOOR_MSG_MAX + 1];
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { m, DOOR_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	ssize_t n = recvmsg(cfd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	close(cfd);
	int fd = -1, nfds = 0;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
			if (nfds++ == 0)
				fd = f;
			else
				close(f);
		}
	}
	int kind, port;
	char uid[DOOR_UID_MAX + 1], msg[DOOR_FAULT_MAX + 1];
	struct stat st;
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 1 || fstat(fd, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || door_parse(m, (size_t)n, &kind, &port, uid, msg) < 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	pthread_mutex_lock(&d->mu);
	int stale = *d->uid ? strcmp(uid, d->uid) != 0 : kind == 1;
	if (stale || (kind == 0 && d->runner_given) || (kind != 1 && d->nkept == DOOR_KEPT)) {
		pthread_mutex_unlock(&d->mu);
		close(fd);
		return 0;
	}
	if (kind == 1) {
		pthread_mutex_unlock(&d->mu);
		door_relay_start(d, fd, port);
		return 0;
	}
	struct kept *k = &d->kept[d->nkept++];
	k->fd = fd;
	k->fault = kind == 2;
	snprintf(k->uid, sizeof k->uid, "%s", uid);
	snprintf(k->msg, sizeof k->msg, "%s", msg);
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return 0;
}

/* ---- the thread ---- */

static void door_accept(struct door *d)
{
	for (;;) {
		int c = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0)
			return;
		struct ucred cr;
		socklen_t len = sizeof cr;
		/* The folder is 0700 already; a peer of another uid is refused
		 * all the same (root's helper aside). */
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || (cr.uid != geteuid() && cr.uid != 0)) {
			close(c);
			continue;
		}
		/* The front door sends its message as it connects: taken at
		 * once, the bound below holds only the slow ones. */
		if (door_take(d, c) == 0)
			continue;
		if (d->nctl == DOOR_CTL) {
			close(d->ctl[0].fd);
			memmove(d->ctl, d->ctl + 1, (DOOR_CTL - 1) * sizeof d->ctl[0]);
			d->nctl--;
		}
		d->ctl[d->nctl++] = (struct ctl){ c, clock_mono() + DOOR_CTL_SECS };
	}
}

/* The relays' poll entries after pfd[base], two per relay. */
static void door_relays_step(struct door *d, const struct pollfd *pfd, size_t base, size_t polled)
{
	for (size_t i = 0; i < polled; i++) {
		struct relay *r = &d->relays[i];
		short rin = pfd[base + 2 * i].revents, rout = pfd[base + 2 * i + 1].revents;
		int err = relay_pump(r->in, r->out, &r->up, rin) < 0 || relay_pump(r->out, r->in, &r->down, rout) < 0;
		/* A hang-up after the end of what it sent: that side is gone both
		 * ways (and would keep waking poll). */
		int in_gone = (rin & (POLLHUP | POLLERR)) && r->up.eof;
		int out_gone = (rout & (POLLHUP | POLLERR)) && r->down.eof && r->down.shut;
		if (err || (r->up.shut && r->down.shut) || in_gone || out_gone || ((rin | rout) & POLLNVAL))
			relay_close(r);
	}
	size_t k = 0;
	for (size_t i = 0; i < d->nrelays; i++)
		if (d->relays[i].in >= 0)
			d->relays[k++] = d->relays[i];
	d->nrelays = k;
}

static void *door_run(void *arg)
{
	struct door *d = arg;
	struct pollfd *pfd = xcalloc(2 + DOOR_CTL + 2 * DOOR_RELAYS, sizeof *pfd);
	for (;;) {
		size_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = d->stopfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->lfd, .events = POLLIN };
		for (size_t i = 0; i < d->nctl; i++)
			pfd[n++] = (struct pollfd){ .fd = d->ctl[i].fd, .events = POLLIN };
		size_t base = n, polled = d->nrelays;
		for (size_t i = 0; i < polled; i++) {
			struct relay *r = &d->relays[i];
			pfd[n++] = (struct pollfd){ .fd = r->in,
			                            .events = (short)((!r->up.eof && !r->up.len ? POLLIN : 0) |
			                                              (r->down.len ? POLLOUT : 0)) };
			pfd[n++] = (struct pollfd){ .fd = r->out,
			                            .events = (short)((!r->down.eof && !r->down.len ? POLLIN : 0) |
			                                              (r->up.len ? POLLOUT : 0)) };
		}
		if (poll(pfd, n, d->nctl ? 250 : -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		door_relays_step(d, pfd, base, polled);
		double now = clock_mono();
		size_t k = 0;
		for (size_t i = 0; i < d->nctl; i++) {
			if (pfd[2 + i].revents && door_take(d, d->ctl[i].fd) == 0)
				continue;
			if (now > d->ctl[i].deadline)
				close(d->ctl[i].fd);
			else
				d->ctl[k++] = d->ctl[i];
		}
		d->nctl = k;
		if (pfd[1].revents & POLLIN)
			door_accept(d);
	}
	free(pfd);
	return NULL;
}

/* ---- the API ---- */

struct door *door_open(const char *data_dir, const char *pod, const char *bridge_dir, struct err *e)
{
	if (!door_pod_ok(pod)) {
		err_set(e, _("%s is not a pod name"), pod);
		return NULL;
	}
	char *dir = paths_door_dir(data_dir);
	struct stat st;
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &st) < 0) {
		err_errno(e, _("cannot make %s"), dir);
		free(dir);
		return NULL;
	}
	/* Only paddock's user may hand connections in. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		err_set(e, _("%s must be a folder of paddock's user, mode 0700"), dir);
		free(dir);
		return NULL;
	}
	free(dir);
	struct door *d = xcalloc(1, sizeof *d);
	d->path = paths_door_socket(data_dir, pod);
	d->bridge_dir = bridge_dir ? xstrdup(bridge_dir) : NULL;
	d->stopfd = -1;
	struct sockaddr_un sa;
	int dirfd;
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->lfd < 0 || door_addr(d->path, &sa, &dirfd, e) < 0) {
		if (d->lfd < 0)
			err_errno(e, _("cannot make the socket %s"), d->path);
		goto fail;
	}
	/* A socket left by a dead process of this pod's name: replaced. */
	unlink(d->path);
	mode_t old = umask(077);
	int rc = bind(d->lfd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (dirfd >= 0)
		close(dirfd);
	if (rc < 0 || chmod(d->path, 0600) < 0 || listen(d->lfd, 64) < 0) {
		err_errno(e, _("cannot listen on %s"), d->path);
		unlink(d->path);
		goto fail;
	}
	d->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->relays = xcalloc(DOOR_RELAYS, sizeof *d->relays);
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* Signals stay the process's main thread's. */
	sigset_t all, prev;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &prev);
	rc = d->stopfd < 0 ? -1 : pthread_create(&d->th, NULL, door_run, d);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	if (rc != 0) {
		err_set(e, _("cannot start the thread of %s"), d->path);
		unlink(d->path);
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv);
		goto fail;
	}
	return d;
fail:
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->stopfd >= 0)
		close(d->stopfd);
	free(d->relays);
	free(d->path);
	free(d->bridge_dir);
	free(d);
	return NULL;
}

/* Closes kept[i] and removes it; under mu. */
static void door_drop(struct door *d, size_t i)
{
	close(d->kept[i].fd);
	memmove(d->kept + i, d->kept + i + 1, (d->nkept - i - 1) * sizeof d->kept[0]);
	d->nkept--;
}

void door_expect_uid(struct door *d, const char *pod_uid)
{
	pthread_mutex_lock(&d->mu);
	snprintf(d->uid, sizeof d->uid, "%s", pod_uid);
	for (size_t i = d->nkept; i-- > 0;)
		if (strcmp(d->kept[i].uid, d->uid))
			door_drop(d, i);
	pthread_mutex_unlock(&d->mu);
}

int door_runner(struct door *d, double deadline, char *fault, size_t faultlen, struct err *e)
{
	if (fault && faultlen)
		fault[0] = 0;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		for (size_t i = 0; i < d->nkept; i++) {
			struct kept *k = &d->kept[i];
			if (*d->uid && strcmp(k->uid, d->uid))
				continue;
			if (k->fault) {
				/* The pod's words: data, quoted. */
				char *q = sanitize_quote_str(k->msg);
				if (fault && faultlen)
					snprintf(fault, faultlen, "%s", q);
				err_set(e, _("the sandbox pod stopped before it ran anything: %s"), q);
				free(q);
				door_drop(d, i);
				pthread_mutex_unlock(&d->mu);
				return -1;
			}
			int fd = k->fd;
			memmove(d->kept + i, d->kept + i + 1, (d->nkept - i - 1) * sizeof d->kept[0]);
			d->nkept--;
			d->runner_given = 1;
			pthread_mutex_unlock(&d->mu);
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			return fd;
		}
		double left = deadline - clock_mono();
		if (left <= 0)
			break;
		struct timespec ts = { (time_t)deadline, (long)((deadline - (double)(time_t)deadline) * 1e9) };
		pthread_cond_timedwait(&d->cv, &d->mu, &ts);
	}
	pthread_mutex_unlock(&d->mu);
	return err_kind_set(e, ERR_UNAVAILABLE, _("the sandbox pod's runner did not dial the front door in time"));
}

void door_close(struct door *d)
{
	if (!d)
		return;
	uint64_t one = 1;
	if (write(d->stopfd, &one, sizeof one) < 0) {
		/* An eventfd's counter does not overflow from one write. */
	}
	pthread_join(d->th, NULL);
	for (size_t i = 0; i < d->nrelays; i++)
		relay_close(&d->relays[i]);
	for (size_t i = 0; i < d->nctl; i++)
		close(d->ctl[i].fd);
	for (size_t i = 0; i < d->nkept; i++)
		close(d->kept[i].fd);
	close(d->lfd);
	close(d->stopfd);
	unlink(d->path);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	free(d->relays);
	free(d->path);
	free(d->bridge_dir);
	free(d);
}
