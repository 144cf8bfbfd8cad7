#include "autoconfig.h"
#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fsx.h"
#include "i18n.h"
#include "urlmatch.h"

#define HOST_MAX 253

int egress_host_normalize(const char *in, size_t len, char **out, struct err *e)
{
	*out = NULL;
	if (len > 0 && in[len - 1] == '.')
		len--;  /* one trailing dot: "example.com." is example.com */
	if (len == 0)
		return err_set(e, _("the host name is empty"));
	if (len > HOST_MAX)
		return err_set(e, _("the host name is longer than %d characters"), HOST_MAX);
	char *h = xmalloc(len + 1);
	size_t label = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c >= 0x80) {
			free(h);
			return err_set(e, _("the host name is not ASCII; write an internationalised "
			                    "name in its xn-- form"));
		}
		if (c == '.') {
			if (label == 0) {
				free(h);
				return err_set(e, _("the host name has an empty label"));
			}
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63) {
				free(h);
				return err_set(e, _("a label of the host name is longer than 63 characters"));
			}
		} else {
			free(h);
			return err_set(e, _("the host name contains '%c', which no host name has"),
			               isprint(c) ? c : '?');
		}
		h[i] = (char)tolower(c);
	}
	h[len] = '\0';
	if (label == 0) {
		free(h);
		return err_set(e, _("the host name has an empty label"));
	}
	*out = h;
	return 0;
}

/* Digits only, 1-65535. */
static int port_parse(const char *s, size_t n, int *port)
{
	long v = 0;
	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

/* host (no port) into a normalised name or address literal. */
static int host_part(const char *s, size_t n, char **host, int *is_ip, struct err *e)
{
	char tmp[INET6_ADDRSTRLEN + 2];
	unsigned char bin[16];

	*is_ip = 0;
	if (n > 0 && s[0] == '[') {
		if (n < 3 || s[n - 1] != ']' || n - 2 >= sizeof tmp)
			return err_set(e, _("the address in brackets is not an IPv6 address"));
		memcpy(tmp, s + 1, n - 2);
		tmp[n - 2] = '\0';
		if (inet_pton(AF_INET6, tmp, bin) != 1)
			return err_set(e, _("the address in brackets is not an IPv6 address"));
		/* Canonical text, so that rules compare equal. */
		inet_ntop(AF_INET6, bin, tmp, sizeof tmp);
		*host = xstrdup(tmp);
		*is_ip = 1;
		return 0;
	}
	if (memchr(s, '@', n))
		return err_set(e, _("the target has a user name (user@host), which is refused"));
	if (memchr(s, '%', n))
		return err_set(e, _("the host name contains '%%', which is refused"));
	if (egress_host_normalize(s, n, host, e) < 0)
		return -1;
	/* Dotted digits: an IPv4 literal, in inet_aton's odd forms too
	 * (0x7f.1, 2130706433), which must not pass as a name. */
	if (strspn(*host, "0123456789abcdefx.") == strlen(*host)) {
		struct in_addr a;
		if (inet_aton(*host, &a) == 1) {
			free(*host);
			inet_ntop(AF_INET, &a, tmp, sizeof tmp);
			*host = xstrdup(tmp);
			*is_ip = 1;
		}
	}
	return 0;
}

int egress_authority_parse(const char *auth, char **host, int *port, int *is_ip,
                           struct err *e)
{
	*host = NULL;
	size_t n = strlen(auth);
	const char *colon = NULL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)auth[i] <= ' ' || auth[i] == '/' || auth[i] == '\\' ||
		    auth[i] == '?' || auth[i] == '#')
			return err_set(e, _("the target '%.80s' is not host:port"), auth);
	if (auth[0] == '[') {
		const char *close = strchr(auth, ']');
		if (!close || close[1] != ':')
			return err_set(e, _("the target '%.80s' is not [address]:port"), auth);
		colon = close + 1;
	} else {
		colon = strrchr(auth, ':');
		if (!colon || memchr(auth, ':', (size_t)(colon - auth)))
			return err_set(e, _("the target '%.80s' is not host:port"), auth);
	}
	if (port_parse(colon + 1, strlen(colon + 1), port) < 0)
		return err_set(e, _("the port of '%.80s' is not a number from 1 to 65535"), auth);
	return host_part(auth, (size_t)(colon - auth), host, is_ip, e);
}

int egress_url_parse(const char *url, char **host, int *port, int *is_ip, char **path,
                     struct err *e)
{
	*host = NULL;
	*path = NULL;
	if (strncasecmp(url, "http://", 7) != 0)
		return err_set(e, _("only http:// targets are forwarded; use CONNECT for https"));
	const char *a = url + 7;
	size_t alen = strcspn(a, "/?#");
	const char *rest = a + alen;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return err_set(e, _("the target contains spaces or control characters"));
	const char *colon = NULL;
	if (alen && a[0] == '[') {
		const char *close = memchr(a, ']', alen);
		if (!close)
			return err_set(e, _("the address in brackets is not an IPv6 address"));
		if (close + 1 < a + alen) {
			if (close[1] != ':')
				return err_set(e, _("the target is not http://host[:port]/path"));
			colon = close + 1;
		}
	} else {
		colon = memchr(a, ':', alen);
	}
	*port = 80;
	size_t hlen = colon ? (size_t)(colon - a) : alen;
	if (colon && port_parse(colon + 1, (size_t)(a + alen - colon - 1), port) < 0)
		return err_set(e, _("the port of the target is not a number from 1 to 65535"));
	if (host_part(a, hlen, host, is_ip, e) < 0)
		return -1;
	if (*rest == '#') {
		free(*host);
		*host = NULL;
		return err_set(e, _("the target has a fragment"));
	}
	/* A fragment is the client's business, never sent. */
	size_t plen = strcspn(rest, "#");
	*path = *rest == '/' ? xstrndup(rest, plen) : xasprintf("/%.*s", (int)plen, rest);
	return 0;
}

int egress_rule_parse(const char *text, struct egress_rule *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	const char *h = text;
	int wildcard = 0;
	if (strncmp(h, "*.", 2) == 0) {
		wildcard = 1;
		h += 2;
	}
	size_t n = strlen(h);
	const char *colon = NULL;
	if (h[0] == '[') {
		const char *close = strchr(h, ']');
		if (close && close[1] == ':')
			colon = close + 1;
	} else {
		colon = strrchr(h, ':');
	}
	int port = 0, is_ip = 0;
	if (colon) {
		if (port_parse(colon + 1, strlen(colon + 1), &port) < 0)
			return err_set(e, _("'%s' has a port that is not a number from 1 to 65535"), text);
		n = (size_t)(colon - h);
	}
	char *host = NULL;
	if (strchr(h, '*') || host_part(h, n, &host, &is_ip, e) < 0) {
		if (!host && strchr(h, '*'))
			err_set(e, _("'%s' is not a host: write example.com, *.example.com, or either "
			             "with :PORT"), text);
		return -1;
	}
	if (wildcard && is_ip) {
		free(host);
		return err_set(e, _("'%s': a wildcard needs a domain, not an address"), text);
	}
	out->host = host;
	out->wildcard = wildcard;
	out->port = port;
	return 0;
}

void egress_rule_free(struct egress_rule *r)
{
	free(r->host);
	r->host = NULL;
}

int egress_rules_allow(const struct egress_rule *rules, size_t n, const char *host, int port,
                       int plain_http)
{
	for (size_t i = 0; i < n; i++) {
		const struct egress_rule *r = &rules[i];
		if (r->port ? r->port != port : !(port == 443 || (plain_http && port == 80)))
			continue;
		if (urlmatch_host(r->host, r->wildcard, host))
			return 1;
	}
	return 0;
}

int egress_cidr_parse(const char *text, struct egress_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 8];
	if (strlen(text) >= sizeof buf)
		return -1;
	strcpy(buf, text);
	char *slash = strchr(buf, '/');
	long bits = -1;
	if (slash) {
		*slash = '\0';
		char *end;
		if (!isdigit((unsigned char)slash[1]))
			return -1;
		bits = strtol(slash + 1, &end, 10);
		if (*end)
			return -1;
	}
	memset(out, 0, sizeof *out);
	if (inet_pton(AF_INET, buf, out->addr) == 1) {
		out->family = AF_INET;
		if (bits < 0)
			bits = 32;
		if (bits > 32)
			return -1;
	} else if (inet_pton(AF_INET6, buf, out->addr) == 1) {
		out->family = AF_INET6;
		if (bits < 0)
			bits = 128;
		if (bits > 128)
			return -1;
	} else {
		return -1;
	}
	out->bits = (int)bits;
	return 0;
}

static int prefix_eq(const unsigned char *a, const unsigned char *b, int bits)
{
	int whole = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t)whole) != 0)
		return 0;
	if (rest) {
		unsigned char mask = (unsigned char)(0xff << (8 - rest));
		return (a[whole] & mask) == (b[whole] & mask);
	}
	return 1;
}

/* The IPv4 address an IPv6 one stands for (mapped ::ffff:a.b.c.d,
 * compatible ::a.b.c.d, NAT64 64:ff9b::/96), or 0. */
static int v6_embedded_v4(const unsigned char *a6, unsigned char *v4)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char zero[12] = { 0 };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* 64:ff9b:1::/48, NAT64 for local use: the IPv4 address is in the
	 * last 32 bits too. */
	static const unsigned char nat64l[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
	if (memcmp(a6, nat64l, 6) == 0) {
		memcpy(v4, a6 + 12, 4);
		return 1;
	}
	if (memcmp(a6, mapped, 12) == 0 || memcmp(a6, nat64, 12) == 0 ||
	    (memcmp(a6, zero, 12) == 0 && (a6[12] | a6[13] | a6[14] | a6[15]) != 0 &&
	     !(a6[12] == 0 && a6[13] == 0 && a6[14] == 0 && a6[15] == 1))) {
		memcpy(v4, a6 + 12, 4);
		return 1;
	}
	return 0;
}

int egress_cidr_contains(const struct egress_cidr *c, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET && c->family == AF_INET)
		return prefix_eq((const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr,
		                 c->addr, c->bits);
	if (sa->sa_family == AF_INET6 && c->family == AF_INET6)
		return prefix_eq((const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr,
		                 c->addr, c->bits);
	return 0;
}

static const char *v4_internal(const unsigned char *a)
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	static const struct { uint32_t net; int bits; const char *why; } nets[] = {
		{ 0x00000000, 8, "this-network" },
		{ 0x0a000000, 8, "private" },
		{ 0x64400000, 10, "shared (CGNAT)" },
		{ 0x7f000000, 8, "loopback" },
		{ 0xa9fe0000, 16, "link-local" },
		{ 0xac100000, 12, "private" },
		{ 0xc0000000, 24, "IETF protocol assignments" },
		{ 0xc0000200, 24, "documentation" },
		{ 0xc6336400, 24, "documentation" },
		{ 0xcb007100, 24, "documentation" },
		{ 0xc0a80000, 16, "private" },
		{ 0xc6120000, 15, "benchmarking" },
		{ 0xe0000000, 4, "multicast" },
		{ 0xf0000000, 4, "reserved" },
	};
	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
		uint32_t mask = nets[i].bits ? 0xffffffffu << (32 - nets[i].bits) : 0;
		if ((v & mask) == nets[i].net)
			return nets[i].why;
	}
	return NULL;
}

const char *egress_addr_internal(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_internal((const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr);
	if (sa->sa_family != AF_INET6)
		return "not an IP address";
	const unsigned char *a = (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	unsigned char v4[4];
	static const unsigned char zero[16] = { 0 };
	if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
		return a[15] ? "loopback" : "unspecified";
	if (v6_embedded_v4(a, v4)) {
		const char *why = v4_internal(v4);
		return why ? why : NULL;
	}
	if ((a[0] & 0xfe) == 0xfc)
		return "unique local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return "site-local";
	if (a[0] == 0xff)
		return "multicast";
	/* 2001:db8::/32 documentation, 100::/64 discard. */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return "documentation";
	if (a[0] == 0x01 && a[1] == 0x00 && memcmp(a + 2, zero, 6) == 0)
		return "discard";
	return NULL;
}

struct egress_hosts {
	struct hosts_entry {
		char *name;
		struct sockaddr_storage addr;
	} *v;
	size_t n;
};

int egress_hosts_load(const char *path, struct egress_hosts **out, struct err *e)
{
	struct buf b = {0};
	*out = NULL;
	if (fsx_read_file(path, 16 << 20, &b, e) < 0) {
		buf_free(&b);
		return -1;
	}
	struct egress_hosts *h = xcalloc(1, sizeof *h);
	char *save = NULL;
	for (char *line = strtok_r(b.data ? b.data : "", "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s2 = NULL;
		char *addr = strtok_r(line, " \t\r", &s2);
		if (!addr)
			continue;
		struct sockaddr_storage ss;
		memset(&ss, 0, sizeof ss);
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
			s4->sin_family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1)
			s6->sin6_family = AF_INET6;
		else
			continue;
		for (char *name = strtok_r(NULL, " \t\r", &s2); name;
		     name = strtok_r(NULL, " \t\r", &s2)) {
			char *norm;
			struct err ne;
			if (egress_host_normalize(name, strlen(name), &norm, &ne) < 0)
				continue;
			h->v = xrealloc(h->v, (h->n + 1) * sizeof *h->v);
			h->v[h->n].name = norm;
			h->v[h->n].addr = ss;
			h->n++;
		}
	}
	buf_free(&b);
	*out = h;
	return 0;
}

size_t egress_hosts_lookup(const struct egress_hosts *h, const char *name,
                           struct sockaddr_storage *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; h && i < h->n && k < max; i++)
		if (strcmp(h->v[i].name, name) == 0)
			out[k++] = h->v[i].addr;
	return k;
}

void egress_hosts_free(struct egress_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].name);
	free(h->v);
	free(h);
}
