/* The allowlisting proxy: CONNECT and absolute-form http:// requests to
 * allowed hosts, resolved and checked here, then relayed as tunnels. */
#include "autoconfig.h"
#include "gateway_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "clock.h"

/* ---- the allowlisting proxy ---- */

static void refuse(struct gw *g, struct conn *c, int status, const char *why)
{
	char msg[512];
	if (c->thost)
		snprintf(msg, sizeof msg, "%s:%d refused: %s", c->thost, c->tport, why);
	else
		snprintf(msg, sizeof msg, "refused: %s", why);
	gw_answer(c, status, msg);
	gw_record(g, c, "refused", why);
}

static int addr_allowed_internal(struct gw *g, const struct sockaddr *sa)
{
	for (size_t i = 0; i < g->nallow; i++)
		if (egress_cidr_contains(&g->allow[i], sa))
			return 1;
	return 0;
}

void gw_addr_text(const struct sockaddr_storage *ss, char *out, size_t len)
{
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)len);
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out,
		          (socklen_t)len);
}

/* Every address must pass, not just the first: the connect may fall back
 * to any of them. */
static void check_and_connect(struct gw *g, struct conn *c)
{
	for (size_t i = 0; i < c->naddrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		const char *why = egress_addr_internal(sa);
		if (why && !addr_allowed_internal(g, sa)) {
			char ip[INET6_ADDRSTRLEN], msg[200];
			gw_addr_text(&c->addrs[i], ip, sizeof ip);
			snprintf(msg, sizeof msg, "resolves to a %s address %s", why, ip);
			refuse(g, c, 403, msg);
			return;
		}
	}
	if (g->ntunnels >= g->cfg->gw_max_tunnels) {
		refuse(g, c, 429, "too many open connections for this task (gateway.max-tunnels)");
		return;
	}
	g->ntunnels++;
	c->tunnel_counted = 1;
	c->nexta = 0;
	gw_start_connect(g, c);
}

static void lookup_start(struct gw *g, struct conn *c)
{
	struct lookup *l = xcalloc(1, sizeof *l);
	l->conn = c;
	l->name = xstrdup(c->thost);
	l->hints.ai_socktype = SOCK_STREAM;
	l->hints.ai_family = AF_UNSPEC;
	l->cb.ar_name = l->name;
	l->cb.ar_request = &l->hints;
	l->list[0] = &l->cb;
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	if (getaddrinfo_a(GAI_NOWAIT, l->list, 1, &sev) != 0) {
		free(l->name);
		free(l);
		refuse(g, c, 502, "the name could not be looked up");
		return;
	}
	l->next = g->lookups;
	g->lookups = l;
	c->lookup = l;
	c->st = C_RESOLVING;
}

/* Lookups are polled (SIGEV_NONE): no threads or signals of ours. */
void gw_lookups_poll(struct gw *g)
{
	struct lookup **pp = &g->lookups;
	while (*pp) {
		struct lookup *l = *pp;
		int rc = gai_error(&l->cb);
		if (rc == EAI_INPROGRESS) {
			pp = &l->next;
			continue;
		}
		*pp = l->next;
		struct conn *c = l->conn;
		if (c) {
			c->lookup = NULL;
			c->naddrs = 0;
			for (struct addrinfo *ai = rc == 0 ? l->cb.ar_result : NULL;
			     ai && c->naddrs < MAX_ADDRS; ai = ai->ai_next) {
				if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
					continue;
				memcpy(&c->addrs[c->naddrs++], ai->ai_addr, ai->ai_addrlen);
			}
			if (c->naddrs == 0)
				refuse(g, c, 502, rc == 0 ? "the name has no address"
				                          : "the name could not be resolved");
			else
				check_and_connect(g, c);
		}
		if (l->cb.ar_result)
			freeaddrinfo(l->cb.ar_result);
		free(l->name);
		free(l);
	}
}

void gw_proxy_request(struct gw *g, struct conn *c)
{
	const char *url = c->url.data ? c->url.data : "";
	struct err e = {{0}};
	int is_ip = 0;

	snprintf(c->method, sizeof c->method, "%s", http_method_str(c->parser.method));
	if (c->parser.method == HTTP_CONNECT) {
		c->kind = "tunnel";
		if (egress_authority_parse(url, &c->thost, &c->tport, &is_ip, &e) < 0) {
			refuse(g, c, 400, e.msg);
			return;
		}
	} else {
		c->kind = "http";
		c->keep_alive = 0;
		if (url[0] == '/') {
			refuse(g, c, 400, "not a proxy request: send http://HOST/PATH or CONNECT "
			                  "HOST:PORT (set HTTPS_PROXY and HTTP_PROXY)");
			return;
		}
		if (egress_url_parse(url, &c->thost, &c->tport, &is_ip, &c->tpath, &e) < 0) {
			refuse(g, c, 400, e.msg);
			return;
		}
		c->path = xstrndup(c->tpath, strcspn(c->tpath, "?#"));
		c->tplain = 1;
		if (c->too_big) {
			refuse(g, c, 413, "the request body is over gateway.max-body");
			return;
		}
	}
	if (!egress_rules_allow(g->rules, g->nrules, c->thost, c->tport, c->tplain)) {
		refuse(g, c, 403, is_ip ? "an address that is not on the allowlist"
		                        : "not on the allowlist (repo allow-host)");
		return;
	}
	c->naddrs = 0;
	if (is_ip) {
		struct sockaddr_storage *ss = &c->addrs[0];
		memset(ss, 0, sizeof *ss);
		if (inet_pton(AF_INET, c->thost, &((struct sockaddr_in *)ss)->sin_addr) == 1)
			ss->ss_family = AF_INET;
		else if (inet_pton(AF_INET6, c->thost, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
			ss->ss_family = AF_INET6;
		c->naddrs = ss->ss_family ? 1 : 0;
	} else {
		c->naddrs = egress_hosts_lookup(g->hosts, c->thost, c->addrs, MAX_ADDRS);
	}
	if (c->naddrs > 0) {
		check_and_connect(g, c);
	} else if (is_ip || !g->cfg->gw_dns) {
		refuse(g, c, 502, "the name cannot be resolved (gateway.dns is off and "
		                  "gateway.hosts-file does not list it)");
	} else {
		lookup_start(g, c);
	}
}

static void set_port(struct sockaddr_storage *ss, int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

static void tunnel_ready(struct gw *g, struct conn *c)
{
	(void)g;
	c->st = C_TUNNEL;
	if (c->parser.method == HTTP_CONNECT) {
		gw_out_printf(c, "HTTP/1.1 200 Connection established\r\n\r\n");
		c->status = 200;
		/* Bytes the client sent after its CONNECT head (a TLS hello). */
		buf_add(&c->uout, c->in.data ? c->in.data : "", c->in.len);
		c->bytes_up += c->in.len;
	} else {
		struct buf *u = &c->uout;
		buf_printf(u, "%s %s HTTP/1.1\r\n", c->method, c->tpath);
		if (c->tport == 80)
			buf_printf(u, "Host: %s\r\n", c->thost);
		else if (strchr(c->thost, ':'))
			buf_printf(u, "Host: [%s]:%d\r\n", c->thost, c->tport);
		else
			buf_printf(u, "Host: %s:%d\r\n", c->thost, c->tport);
		/* The Host the client sent is not trusted: the checked one is used. */
		for (size_t i = 0; i < c->nhdrs; i++) {
			const char *n = c->hdrs[i].name;
			if (strcasecmp(n, "host") == 0 || strcasecmp(n, "connection") == 0 ||
			    strcasecmp(n, "keep-alive") == 0 || strncasecmp(n, "proxy-", 6) == 0 ||
			    strcasecmp(n, "transfer-encoding") == 0 || strcasecmp(n, "te") == 0 ||
			    strcasecmp(n, "upgrade") == 0 || strcasecmp(n, "content-length") == 0)
				continue;
			buf_printf(u, "%s: %s\r\n", n, c->hdrs[i].value);
		}
		if (c->body.len)
			buf_printf(u, "Content-Length: %zu\r\n", c->body.len);
		buf_adds(u, "Connection: close\r\n\r\n");
		buf_add(u, c->body.data ? c->body.data : "", c->body.len);
		c->bytes_up += c->body.len;
	}
	buf_reset(&c->in);
}

void gw_start_connect(struct gw *g, struct conn *c)
{
	while (c->nexta < c->naddrs) {
		struct sockaddr_storage *ss = &c->addrs[c->nexta++];
		set_port(ss, c->tport);
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		/* Both sides of a tunnel go without Nagle: a client's small
		 * writes would otherwise wait for the upstream's delayed ack. */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
		                                         : sizeof(struct sockaddr_in6);
		if (connect(fd, (struct sockaddr *)ss, len) == 0) {
			c->ufd = fd;
			tunnel_ready(g, c);
			return;
		}
		if (errno == EINPROGRESS) {
			c->ufd = fd;
			c->st = C_CONNECTING;
			c->deadline = clock_mono() + CONNECT_TIMEOUT;
			return;
		}
		close(fd);
	}
	char msg[300];
	snprintf(msg, sizeof msg, "paddock gateway: cannot connect to %s:%d", c->thost, c->tport);
	gw_answer(c, 502, msg);
	gw_record(g, c, "allowed", "connection failed");
}

void gw_connect_done(struct gw *g, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		tunnel_ready(g, c);
		return;
	}
	close(c->ufd);
	c->ufd = -1;
	gw_start_connect(g, c);
}

void gw_tunnel_upstream_read(struct gw *g, struct conn *c)
{
	(void)g;
	char tmp[16384];
	ssize_t n = recv(c->ufd, tmp, sizeof tmp, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->upstream_eof = 1;
		return;
	}
	if (c->tplain && c->bytes_down == 0 && n > 12 && strncmp(tmp, "HTTP/1.", 7) == 0)
		c->status = atoi(tmp + 9);
	buf_add(&c->out, tmp, (size_t)n);
	c->bytes_down += (size_t)n;
}

void gw_tunnel_progress(struct gw *g, struct conn *c)
{
	if (c->ufd >= 0 && gw_flush_to(c->ufd, &c->uout, &c->uout_off) < 0) {
		c->st = C_DEAD;
		return;
	}
	if (c->client_eof && c->uout.len == 0 && !c->shut_upstream && c->ufd >= 0) {
		shutdown(c->ufd, SHUT_WR);
		c->shut_upstream = 1;
	}
	if (c->upstream_eof && c->out.len == 0) {
		c->st = C_DEAD;
		return;
	}
	(void)g;
}
