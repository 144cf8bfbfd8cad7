/* urlmatch: URLs and the configuration's allow-lists of URLs and hosts,
 * compared as parsed URLs, never as text.  A URL is parsed once, with
 * libcurl's URL API (the parser the request itself goes through), into
 * scheme, host, port and path; each field is compared on its own, so a
 * wildcard never reaches from one field into another (fnmatch on the
 * text let the pattern of any name below x, any path, take
 * "http://127.0.0.1/?.x/", the same with '#', and "http://a.x@127.0.0.1/").
 *
 * A URL paddock sends to (urlmatch_parse) is http or https, has no
 * user name or password, no fragment, no percent-encoded dot, slash or
 * backslash in its path, and parses; its host is lowercased without a
 * trailing dot, an IPv4 address in its dotted form (libcurl reads
 * 2130706433 and 0x7f.1 as 127.0.0.1), an IPv6 address in brackets; its
 * port is the scheme's default when none is written; its path has no
 * "." or ".." segment left.
 *
 * A pattern (urlmatch_pattern_parse) is a URL of that form whose host
 * may start with "*." and whose path may hold shell wildcards:
 *   - scheme: equal;
 *   - host: equal, or for "*.suffix" one or more labels below suffix
 *     (a.suffix, a.b.suffix), never suffix itself; the suffix is a name
 *     (not an address), and "*" appears nowhere else in the host;
 *   - port: equal (the scheme's default when the pattern writes none);
 *   - path: fnmatch(3) with FNM_PATHNAME, so "*" and "[...]" stay within
 *     one segment; a path ending in a segment "**" matches any path below
 *     the segments before it.
 *   A query in the URL is not compared; a pattern has none ('?' would
 *   start one). */
#ifndef PADDOCK_URLMATCH_H
#define PADDOCK_URLMATCH_H

#include <stddef.h>
#include "err.h"

struct urlmatch_url {
	char *scheme;          /* "http" or "https" */
	char *host;            /* normalised as above */
	int port;
	char *path;            /* "/" at least */
};

/* Flags of urlmatch_parse. */
#define URLMATCH_USERINFO 1   /* accept (and ignore) a user name */

/* Parses text into *out (its strings owned by *out; free with
 * urlmatch_url_free).  -1 with the reason when it is not a URL of the
 * form above. */
int urlmatch_parse(const char *text, unsigned flags, struct urlmatch_url *out, struct err *e);
void urlmatch_url_free(struct urlmatch_url *u);

struct urlmatch_pattern {
	struct urlmatch_url u; /* u.host: the suffix of a "*." host */
	int wildcard;          /* the host was "*.suffix" */
	int below;             /* the path's last segment was "**": u.path is
	                          the part before it, ending in '/' */
};

/* Parses a pattern into *out (free with urlmatch_pattern_free).  -1 with
 * the reason when it is not one. */
int urlmatch_pattern_parse(const char *text, struct urlmatch_pattern *out, struct err *e);
void urlmatch_pattern_free(struct urlmatch_pattern *p);

/* 1 when the pattern matches the parsed URL. */
int urlmatch_match(const struct urlmatch_pattern *p, const struct urlmatch_url *u);

/* 1 when url parses (urlmatch_parse, no user name) and one of the n
 * patterns matches it; a pattern that does not parse matches nothing. */
int urlmatch_allowed(const char *const *patterns, size_t n, const char *url);

/* The host rule of every allow-list: 1 when host (normalised) is rule, or
 * with wildcard, a name one or more labels below rule. */
int urlmatch_host(const char *rule, int wildcard, const char *host);

/* 1 when url is plain http to this machine: its host, as libcurl reads
 * it and as written, is 127.0.0.1, localhost or [::1] (not 127.1 nor
 * 2130706433); a user name in it is ignored. */
int urlmatch_is_loopback_http(const char *url);

#endif
