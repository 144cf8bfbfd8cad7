/* The receiving side of the front door; see door.h. */
#include "autoconfig.h"
#include "door.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "fsx.h"
#include "i18n.h"
#include "paths.h"
#include "sanitize.h"

/* The front door sends its message right after connecting. */
#define DOOR_CTL_SECS 2.0
#define DOOR_UID_MAX 64

struct door {
	char *path;            /* <pod>.sock */
	int lfd;
	char uid[DOOR_UID_MAX + 1];   /* "" until door_expect_uid */
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

/* ---- the API ---- */

struct door *door_open(const char *data_dir, const char *pod, struct err *e)
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
	struct sockaddr_un sa;
	int dirfd;
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->lfd < 0 || fsx_unix_addr(d->path, &sa, &dirfd, e) < 0) {
		if (d->lfd < 0)
			err_errno(e, _("cannot make the socket %s"), d->path);
		door_close(d);
		return NULL;
	}
	/* Left by a dead process of this pod's name: replaced. */
	unlink(d->path);
	mode_t old = umask(077);
	int rc = bind(d->lfd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (dirfd >= 0)
		close(dirfd);
	if (rc < 0 || chmod(d->path, 0600) < 0 || listen(d->lfd, 16) < 0) {
		err_errno(e, _("cannot listen on %s"), d->path);
		door_close(d);
		return NULL;
	}
	return d;
}

int door_expect_uid(struct door *d, const char *pod_uid, struct err *e)
{
	(void)e;
	snprintf(d->uid, sizeof d->uid, "%s", pod_uid);
	return 0;
}

int door_fd(const struct door *d)
{
	return d->lfd;
}

/* The one message of a hand-off on c (waited for DOOR_CTL_SECS): its
 * descriptor, or -1 (c closed either way). */
static int door_take(struct door *d, int c, int *kind, char *msg)
{
	struct pollfd p = { .fd = c, .events = POLLIN };
	char m[DOOR_MSG_MAX + 1];
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { m, DOOR_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                     .msg_controllen = sizeof cbuf };
	ssize_t n = poll(&p, 1, (int)(DOOR_CTL_SECS * 1000)) == 1
	            ? recvmsg(c, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) : -1;
	close(c);
	int fd = -1, nfds = 0;
	for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++) {
			int f;
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof f);
			if (nfds++ == 0)
				fd = f;
			else
				close(f);
		}
	}
	int port;
	char uid[DOOR_UID_MAX + 1];
	struct stat st;
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 1 || fstat(fd, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || door_parse(m, (size_t)n, kind, &port, uid, msg) < 0 ||
	    !*d->uid || strcmp(uid, d->uid)) {
		/* Not one, or a stale pod's. */
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int door_runner(struct door *d, double deadline, char *fault, size_t faultlen, struct err *e)
{
	if (fault && faultlen)
		fault[0] = 0;
	while (d->lfd >= 0) {
		int c = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return err_errno(e, _("cannot take a connection on %s"), d->path);
			double left = deadline - clock_mono();
			if (left <= 0)
				break;
			struct pollfd p = { .fd = d->lfd, .events = POLLIN };
			poll(&p, 1, left > 3600 ? 3600000 : (int)(left * 1000) + 1);
			continue;
		}
		struct ucred cr;
		socklen_t len = sizeof cr;
		/* The folder is 0700 already; a peer of another uid is refused
		 * all the same (root's aside). */
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    (cr.uid != geteuid() && cr.uid != 0)) {
			close(c);
			continue;
		}
		int kind;
		char msg[DOOR_FAULT_MAX + 1];
		int fd = door_take(d, c, &kind, msg);
		if (fd < 0)
			continue;
		if (kind == 2) {
			close(fd);
			/* The pod's words: data, quoted. */
			char *q = sanitize_quote_str(msg);
			if (fault && faultlen)
				snprintf(fault, faultlen, "%s", q);
			err_set(e, _("the sandbox pod stopped before it ran anything: %s"), q);
			free(q);
			return -1;
		}
		/* The socket stays: the pod's next `runner` connection is its
		 * session's, resumed (runner_set_resume). */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
	}
	return err_kind_set(e, ERR_UNAVAILABLE,
	                    _("the sandbox pod's runner did not dial the front door in time"));
}

void door_close(struct door *d)
{
	if (!d)
		return;
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->path);
	}
	free(d->path);
	free(d);
}
