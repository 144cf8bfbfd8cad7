/* dial: paddock-runner's way to paddock's front door (dial.h). */
#define _GNU_SOURCE
#include "dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double dial_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial_port(const char *s, size_t n)
{
	int port = 0;
	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		port = port * 10 + (s[i] - '0');
	}
	return port >= 1 && port <= 65535 ? port : -1;
}

/* host (an IP address, IPv6 without brackets) and port into a; 0, or -1. */
static int dial_addr_set(struct dial_addr *a, const char *host, size_t hlen, const char *port,
                         size_t plen)
{
	char h[64];
	int p = dial_port(port, plen);
	if (p < 0 || hlen == 0 || hlen >= sizeof h)
		return -1;
	memcpy(h, host, hlen);
	h[hlen] = 0;
	memset(a, 0, sizeof *a);
	struct sockaddr_in *v4 = (struct sockaddr_in *)&a->sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a->sa;
	if (inet_pton(AF_INET, h, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)p);
		a->len = sizeof *v4;
		snprintf(a->text, sizeof a->text, "%s:%d", h, p);
	} else if (inet_pton(AF_INET6, h, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
		a->len = sizeof *v6;
		snprintf(a->text, sizeof a->text, "[%s]:%d", h, p);
	} else {
		return -1;
	}
	return 0;
}

/* IPv4:PORT or [IPv6]:PORT, n bytes of s. */
static int dial_hostport(struct dial_addr *a, const char *s, size_t n)
{
	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close || close + 1 >= s + n || close[1] != ':')
			return -1;
		return dial_addr_set(a, s + 1, (size_t)(close - s - 1), close + 2,
		                     n - (size_t)(close + 2 - s));
	}
	const char *colon = memrchr(s, ':', n);
	if (!colon || memchr(s, ':', (size_t)(colon - s)))
		return -1;
	return dial_addr_set(a, s, (size_t)(colon - s), colon + 1, n - (size_t)(colon + 1 - s));
}

static int dial_pod_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > DIAL_POD_MAX || s[0] == '-' || s[n - 1] == '-')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static void dial_note(char *note, size_t len, const char *entry, size_t n)
{
	size_t used = strlen(note);
	if (used < len)
		snprintf(note + used, len - used,
		         "%snot probed: \"%.*s\" is not an IP address and port (the pod has no DNS)",
		         used ? "; " : "", (int)(n > 80 ? 80 : n), entry);
}

/* PADDOCK_PROBE's entries, then the API server's service address. */
static int dial_probes_from_env(struct dial *d, char *why, size_t whylen, char *note,
                                size_t notelen)
{
	const char *list = getenv("PADDOCK_PROBE");
	for (const char *s = list ? list : ""; *s;) {
		size_t n = strcspn(s, ",");
		if (n && d->nprobes == DIAL_PROBES_MAX) {
			snprintf(why, whylen, "PADDOCK_PROBE names more than %d targets", DIAL_PROBES_MAX);
			return -1;
		}
		if (n && dial_hostport(&d->probes[d->nprobes], s, n) == 0)
			d->nprobes++;
		else if (n)
			dial_note(note, notelen, s, n);
		s += n + (s[n] == ',');
	}
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	if (host && *host && port && *port) {
		if (d->nprobes == DIAL_PROBES_MAX) {
			snprintf(why, whylen, "PADDOCK_PROBE names more than %d targets", DIAL_PROBES_MAX - 1);
			return -1;
		}
		if (dial_addr_set(&d->probes[d->nprobes], host, strlen(host), port, strlen(port)) == 0)
			d->nprobes++;
		else
			dial_note(note, notelen, host, strlen(host));
	}
	return 0;
}

int dial_from_env(struct dial *d, char *why, size_t whylen, char *note, size_t notelen)
{
	memset(d, 0, sizeof *d);
	note[0] = 0;
	const char *door = getenv("PADDOCK_FRONT_DOOR"), *pod = getenv("PADDOCK_POD");
	const char *ports = getenv("PADDOCK_GATEWAY_PORTS"), *secs = getenv("PADDOCK_RUNNER_DIAL_SECONDS");
	d->token_file = getenv("PADDOCK_TOKEN_FILE");
	if (!door || dial_hostport(&d->door, door, strlen(door)) < 0) {
		snprintf(why, whylen, "PADDOCK_FRONT_DOOR is not an IP address and port such as "
		         "10.0.0.5:7433 or [fd00::5]:7433");
		return -1;
	}
	if (!d->token_file || d->token_file[0] != '/') {
		snprintf(why, whylen, "PADDOCK_TOKEN_FILE does not name a file by its absolute path");
		return -1;
	}
	if (!pod || !dial_pod_ok(pod)) {
		snprintf(why, whylen, "PADDOCK_POD is not a pod's name (a DNS-1123 label)");
		return -1;
	}
	strcpy(d->pod, pod);
	for (const char *s = ports ? ports : ""; *s;) {
		size_t n = strcspn(s, ",");
		int p = dial_port(s, n);
		if (p < 0 || d->nports == DIAL_PORTS_MAX) {
			snprintf(why, whylen, "PADDOCK_GATEWAY_PORTS is not a list of at most %d ports "
			         "such as 8081,3128", DIAL_PORTS_MAX);
			return -1;
		}
		d->ports[d->nports++] = p;
		s += n + (s[n] == ',');
	}
	d->seconds = DIAL_SECONDS;
	if (secs && *secs) {
		char *end;
		double v = strtod(secs, &end);
		if (*end || !(v > 0 && v <= 3600)) {
			snprintf(why, whylen, "PADDOCK_RUNNER_DIAL_SECONDS is not a number of seconds");
			return -1;
		}
		d->seconds = v;
	}
	d->resume_seconds = DIAL_RESUME_SECONDS;
	const char *rs = getenv("PADDOCK_RUNNER_RESUME_SECONDS");
	if (rs && *rs) {
		char *end;
		double v = strtod(rs, &end);
		if (*end || !(v > 0 && v <= 3600)) {
			snprintf(why, whylen, "PADDOCK_RUNNER_RESUME_SECONDS is not a number of seconds");
			return -1;
		}
		d->resume_seconds = v;
	}
	return dial_probes_from_env(d, why, whylen, note, notelen);
}

/* What a failed connect says about a closed target: refused, unreachable
 * (no route, no address of that family here, a network or host down, a
 * filter that rejects) or timed out (one that drops). */
static int dial_closed(int err)
{
	return err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH ||
	       err == ENETDOWN || err == EHOSTDOWN || err == EADDRNOTAVAIL ||
	       err == ETIMEDOUT || err == EACCES || err == EPERM || err == EAFNOSUPPORT;
}

/* Every probe started at once, then one poll loop over those still
 * connecting until each has answered or the time is up. */
int dial_probe(const struct dial *d, char *which, size_t len, char *why, size_t whylen)
{
	int fd[DIAL_PROBES_MAX];
	int answered = -1;
	size_t pending = 0;
	for (size_t i = 0; i < d->nprobes; i++) {
		const struct dial_addr *a = &d->probes[i];
		fd[i] = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 && errno == EAFNOSUPPORT)
			continue;   /* no such network here: unreachable */
		if (fd[i] < 0) {
			snprintf(why, whylen, "cannot probe %s: %s", a->text, strerror(errno));
			for (size_t j = 0; j < i; j++)
				if (fd[j] >= 0)
					close(fd[j]);
			return -1;
		}
		if (connect(fd[i], (const struct sockaddr *)&a->sa, a->len) == 0 ||
		    (errno != EINPROGRESS && !dial_closed(errno))) {
			if (answered < 0)
				answered = (int)i;
		} else if (errno == EINPROGRESS) {
			pending++;
			continue;
		}
		close(fd[i]);
		fd[i] = -1;
	}
	double until = dial_now() + DIAL_PROBE_SECONDS;
	while (pending && answered < 0) {
		struct pollfd pf[DIAL_PROBES_MAX];
		size_t idx[DIAL_PROBES_MAX], n = 0;
		for (size_t i = 0; i < d->nprobes; i++)
			if (fd[i] >= 0) {
				pf[n] = (struct pollfd){ fd[i], POLLOUT, 0 };
				idx[n++] = i;
			}
		double left = until - dial_now();
		if (left <= 0)
			break;
		int r = poll(pf, (nfds_t)n, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			break;
		for (size_t k = 0; r > 0 && k < n; k++) {
			if (!pf[k].revents)
				continue;
			size_t i = idx[k];
			int err = 0;
			socklen_t el = sizeof err;
			if (getsockopt(fd[i], SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				err = errno;
			if ((err == 0 || !dial_closed(err)) && (answered < 0 || (int)i < answered))
				answered = (int)i;
			close(fd[i]);
			fd[i] = -1;
			pending--;
		}
	}
	for (size_t i = 0; i < d->nprobes; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (answered < 0)
		return 0;
	snprintf(which, len, "%s", d->probes[answered].text);
	return 1;
}

long dial_token(const char *path, char *tok, char *why, size_t whylen)
{
	/* Room for the token and some trailing whitespace; a file longer
	 * than that is refused whatever it holds. */
	static const size_t room = DIAL_TOKEN_MAX + 64;
	char *buf = malloc(room + 1);
	if (!buf)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int err = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		free(buf);
		errno = err;
		return -1;
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, room + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n > room)
			break;
	}
	close(fd);
	while (n && n <= room && buf[n - 1] && strchr(" \t\r\n\v\f", buf[n - 1]))
		n--;
	long rc = -2;
	if (n > DIAL_TOKEN_MAX)
		snprintf(why, whylen, "the token in %s is longer than %d bytes", path, DIAL_TOKEN_MAX);
	else if (n == 0)
		snprintf(why, whylen, "the token file %s is empty", path);
	else {
		size_t ok = 0;
		/* buf[ok] first: strchr finds the terminator too. */
		while (ok < n && buf[ok] && strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                                   "0123456789._-", buf[ok]))
			ok++;
		if (ok < n) {
			snprintf(why, whylen, "the token in %s has a character other than "
			         "A-Z, a-z, 0-9, '.', '_' and '-'", path);
		} else {
			memcpy(tok, buf, n);
			tok[n] = 0;
			rc = (long)n;
		}
	}
	explicit_bzero(buf, room + 1);
	free(buf);
	return rc;
}

long dial_preamble(char *buf, const char *kind, const char *pod, int port, const char *tok,
                   size_t toklen, const char *msg, char *why, size_t whylen)
{
	int fault = strcmp(kind, "fault") == 0;
	if (!fault && strcmp(kind, "runner") != 0) {
		snprintf(why, whylen, "no preamble of kind %s", kind);
		return -1;
	}
	if (!dial_pod_ok(pod) || port != 0 ||
	    toklen == 0 || toklen > DIAL_TOKEN_MAX || (fault != (msg != NULL))) {
		snprintf(why, whylen, "a bad preamble");
		return -1;
	}
	size_t mlen = msg ? strlen(msg) : 0;
	for (size_t i = 0; i < mlen; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f) {
			snprintf(why, whylen, "a message with a control character");
			return -1;
		}
	if (mlen > DIAL_MESSAGE_MAX) {
		snprintf(why, whylen, "a message longer than %d bytes", DIAL_MESSAGE_MAX);
		return -1;
	}
	int head = snprintf(buf, DIAL_PREAMBLE_MAX, "PADDOCK-DOOR 1 %s %s %d\n", kind, pod, port);
	size_t n = (size_t)head;
	if (head < 0 || n + toklen + 1 + (msg ? mlen + 1 : 0) > DIAL_PREAMBLE_MAX) {
		snprintf(why, whylen, "a preamble longer than %d bytes", DIAL_PREAMBLE_MAX);
		return -1;
	}
	memcpy(buf + n, tok, toklen);
	n += toklen;
	buf[n++] = '\n';
	if (msg) {
		memcpy(buf + n, msg, mlen);
		n += mlen;
		buf[n++] = '\n';
	}
	return (long)n;
}

int dial_start(const struct dial *d)
{
	int fd = socket(d->door.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1, idle = 30, intvl = 10, cnt = 3;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* A connection that drops without a word (a node gone, a NAT
	 * forgetting it) is noticed in about a minute, not hours. */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	if (connect(fd, (const struct sockaddr *)&d->door.sa, d->door.len) < 0 &&
	    errno != EINPROGRESS) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int dial_wait(int fd, double deadline)
{
	for (;;) {
		struct pollfd p = { fd, POLLOUT, 0 };
		double left = deadline - dial_now();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0) {
			int err = 0;
			socklen_t el = sizeof err;
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				return -1;
			if (err) {
				errno = err;
				return -1;
			}
			return 0;
		}
	}
}

int dial_write(int fd, const char *p, size_t len, double deadline)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd pf = { fd, POLLOUT, 0 };
		double left = deadline - dial_now();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		poll(&pf, 1, (int)(left * 1000) + 1);
	}
	return 0;
}
