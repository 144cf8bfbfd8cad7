/* egress: the decisions of the gateway's allowlisting proxy, kept apart
 * from its sockets so that each can be tested alone (the rules as users
 * write them: paddock-config(5), EGRESS).
 *
 * A host name from a request is normalised before it is compared: ASCII
 * only (internationalised names must come in their xn-- form), lowercased,
 * one trailing dot dropped, no empty label, no userinfo, '%', space or
 * bracket.  Rules are "host", "*.suffix" (any name below suffix, not the
 * suffix itself), each with an optional ":port"; a rule without a port
 * allows 443 (and 80 for plain-HTTP requests).  A raw IP address matches
 * only a rule that names that address.
 *
 * Resolved addresses are refused when they are internal: loopback,
 * RFC 1918 private, CGNAT 100.64/10, link-local (169.254/16, fe80::/10),
 * unique local fc00::/7, multicast, unspecified, "this network" 0/8,
 * broadcast, and IPv4-mapped or NAT64 forms of any of those; unless an
 * allow-address CIDR of the configuration covers them. */
#ifndef PADDOCK_EGRESS_H
#define PADDOCK_EGRESS_H

#include <stddef.h>
#include <sys/socket.h>
#include "err.h"

struct egress_rule {
	char *host;            /* normalised; for "*.x" the suffix "x" */
	int wildcard;          /* 1: "*.host" */
	int port;              /* 0: the default ports */
};

/* Parses one allow-host entry.  On success *out owns its string. */
int egress_rule_parse(const char *text, struct egress_rule *out, struct err *e);
void egress_rule_free(struct egress_rule *r);

/* Normalises the host name of a request (len bytes at in) into a new
 * string.  Refuses what the header comment lists, with a reason. */
int egress_host_normalize(const char *in, size_t len, char **out, struct err *e);

/* A CONNECT target, "host:port" or "[v6]:port", strictly: the port is
 * required, 1-65535, digits only.  *host is normalised (an IPv6 address
 * without brackets); *is_ip says whether it is an address literal. */
int egress_authority_parse(const char *auth, char **host, int *port, int *is_ip,
                           struct err *e);

/* An absolute-form request target "http://host[:port]/path?query".
 * Only http: (https goes through CONNECT).  *path is "/" when empty. */
int egress_url_parse(const char *url, char **host, int *port, int *is_ip, char **path,
                     struct err *e);

/* 1 when a rule allows host:port (plain_http: port 80 is a default one). */
int egress_rules_allow(const struct egress_rule *rules, size_t n, const char *host, int port,
                       int plain_http);

struct egress_cidr {
	int family;            /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int bits;
};

/* "10.0.0.0/8", "fd00::/8", or one address (a /32 or /128). */
int egress_cidr_parse(const char *text, struct egress_cidr *out);
int egress_cidr_contains(const struct egress_cidr *c, const struct sockaddr *sa);

/* Why the address is internal ("loopback", "private", ...), or NULL when
 * it is a public address. */
const char *egress_addr_internal(const struct sockaddr *sa);

/* The hosts file the tests (and split-horizon setups) give the gateway:
 * /etc/hosts syntax, names compared after normalisation. */
struct egress_hosts;
int egress_hosts_load(const char *path, struct egress_hosts **out, struct err *e);
/* Fills up to max addresses (port 0) for name; returns how many (0: not
 * listed). */
size_t egress_hosts_lookup(const struct egress_hosts *h, const char *name,
                           struct sockaddr_storage *out, size_t max);
void egress_hosts_free(struct egress_hosts *h);

#endif
