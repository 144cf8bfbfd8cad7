/* test-egress: the allowlisting proxy's decisions (src/egress.h), attacks
 * first: host names that try to pass for others, authorities and URLs
 * with smuggled parts, IPv4 literals in inet_aton's odd spellings, rules
 * that must not match look-alike names, and internal addresses in every
 * form the header lists. */
#include "autoconfig.h"
#include "egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "tap.h"
#include "testlib.h"

/* ---- helpers ---- */

/* The normalised name, or "ERR" when refused. */
static const char *norm_n(const char *in, size_t len)
{
	static char out[512];
	char *h = NULL;
	struct err e = { { 0 } };
	if (egress_host_normalize(in, len, &h, &e) < 0) {
		if (h != NULL || !e.msg[0])
			return "BAD: refused without a message or with a result";
		return "ERR";
	}
	snprintf(out, sizeof out, "%s", h);
	free(h);
	return out;
}

static const char *norm(const char *in)
{
	return norm_n(in, strlen(in));
}

/* "host port ip" or "ERR: message". */
static const char *auth(const char *in)
{
	static char out[ERR_MAX + 300];
	char *host = NULL;
	int port = -1, is_ip = -1;
	struct err e = { { 0 } };
	if (egress_authority_parse(in, &host, &port, &is_ip, &e) < 0) {
		snprintf(out, sizeof out, "ERR: %s", e.msg);
		free(host);
		return out;
	}
	snprintf(out, sizeof out, "%s %d %s", host, port, is_ip ? "ip" : "name");
	free(host);
	return out;
}

static int refused(const char *result)
{
	return strncmp(result, "ERR: ", 5) == 0 && strlen(result) > 5;
}

/* "host port ip path" or "ERR: message". */
static const char *url(const char *in)
{
	static char out[ERR_MAX + 600];
	char *host = NULL, *path = NULL;
	int port = -1, is_ip = -1;
	struct err e = { { 0 } };
	if (egress_url_parse(in, &host, &port, &is_ip, &path, &e) < 0) {
		snprintf(out, sizeof out, "ERR: %s", e.msg);
		free(host);
		free(path);
		return out;
	}
	snprintf(out, sizeof out, "%s %d %s %s", host, port, is_ip ? "ip" : "name", path);
	free(host);
	free(path);
	return out;
}

/* "host wildcard port" or "ERR: message". */
static const char *rule(const char *in)
{
	static char out[ERR_MAX + 300];
	struct egress_rule r;
	struct err e = { { 0 } };
	if (egress_rule_parse(in, &r, &e) < 0) {
		snprintf(out, sizeof out, "ERR: %s", e.msg);
		return out;
	}
	snprintf(out, sizeof out, "%s %d %d", r.host, r.wildcard, r.port);
	egress_rule_free(&r);
	return out;
}

/* Whether the single rule text allows host:port. */
static int allows(const char *rule_text, const char *host, int port, int plain)
{
	struct egress_rule r;
	struct err e = { { 0 } };
	if (egress_rule_parse(rule_text, &r, &e) < 0)
		return -1;
	int v = egress_rules_allow(&r, 1, host, port, plain);
	egress_rule_free(&r);
	return v;
}

static struct sockaddr_storage sa(const char *text)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	else
		abort();
	return ss;
}

static const char *internal(const char *text)
{
	struct sockaddr_storage ss = sa(text);
	const char *why = egress_addr_internal((struct sockaddr *)&ss);
	return why ? why : "public";
}

static int cidr_has(const char *cidr, const char *addr)
{
	struct egress_cidr c;
	if (egress_cidr_parse(cidr, &c) < 0)
		return -1;
	struct sockaddr_storage ss = sa(addr);
	return egress_cidr_contains(&c, (struct sockaddr *)&ss);
}

static int cidr_ok(const char *text)
{
	struct egress_cidr c;
	return egress_cidr_parse(text, &c) == 0;
}

static char *repeat(char ch, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/* ---- host names ---- */

static void test_normalize(void)
{
	is_str(norm("example.com"), "example.com", "a plain name is kept");
	is_str(norm("ExAmple.COM"), "example.com", "upper case is lowered");
	is_str(norm("example.com."), "example.com", "one trailing dot is dropped");
	is_str(norm("ALLOWED.Test."), "allowed.test", "upper case and a trailing dot together");
	is_str(norm("example.com.."), "ERR", "two trailing dots are refused");
	is_str(norm("a..b"), "ERR", "an empty label in the middle is refused");
	is_str(norm(".a"), "ERR", "a leading dot (empty first label) is refused");
	is_str(norm("."), "ERR", "a lone dot is refused");
	is_str(norm(""), "ERR", "an empty name is refused");
	is_str(norm("ex\xc3\xa4mple.com"), "ERR", "UTF-8 bytes are refused (xn-- form only)");
	is_str(norm("ex\x80mple.com"), "ERR", "a stray byte over 0x7f is refused");
	is_str(norm("xn--exmple-cua.com"), "xn--exmple-cua.com", "the xn-- form passes");
	is_str(norm("%61llowed.test"), "ERR", "percent-encoding is refused");
	is_str(norm("allowed.test@evil.test"), "ERR", "'@' is refused");
	is_str(norm("allowed.test evil.test"), "ERR", "a space is refused");
	is_str(norm("[allowed.test]"), "ERR", "brackets are refused");
	is_str(norm("allowed.test:443"), "ERR", "a port is not part of a name");
	is_str(norm("allowed.test/x"), "ERR", "a slash is refused");
	is_str(norm("allowed\\.test"), "ERR", "a backslash is refused");
	is_str(norm("allowed.test\t"), "ERR", "a tab is refused");
	is_str(norm_n("allowed.test\0.evil.test", 23), "ERR", "a NUL byte inside the name is refused");
	is_str(norm_n("allowed.test\0", 13), "ERR", "a trailing NUL byte is refused");
	is_str(norm_n("allowed.testXXX", 12), "allowed.test", "only len bytes are read");
	is_str(norm("under_score.example"), "under_score.example", "'_' passes (SRV-style labels)");

	char *l63 = repeat('a', 63), *l64 = repeat('a', 64);
	char buf[600];
	snprintf(buf, sizeof buf, "%s.com", l63);
	is_str(norm(buf), buf, "a 63-character label passes");
	snprintf(buf, sizeof buf, "%s.com", l64);
	is_str(norm(buf), "ERR", "a 64-character label is refused");
	snprintf(buf, sizeof buf, "x.%s", l64);
	is_str(norm(buf), "ERR", "a 64-character last label is refused");
	/* 253 characters: four labels of 61 and one of 5, with dots. */
	char *l61 = repeat('b', 61);
	snprintf(buf, sizeof buf, "%s.%s.%s.%s.ccccc", l61, l61, l61, l61);
	is_int(strlen(buf), 253, "(the 253-character fixture)");
	is_str(norm(buf), buf, "a 253-character name passes");
	{
		char dotted[300];
		snprintf(dotted, sizeof dotted, "%s.", buf);
		char *h = NULL;
		struct err e = { { 0 } };
		int rc = egress_host_normalize(dotted, strlen(dotted), &h, &e);
		ok(rc == 0 && h && strcmp(h, buf) == 0,
		   "a 253-character name with its trailing dot (254 bytes) passes");
		free(h);
	}
	snprintf(buf, sizeof buf, "%s.%s.%s.%s.cccccc", l61, l61, l61, l61);
	is_int(strlen(buf), 254, "(the 254-character fixture)");
	is_str(norm(buf), "ERR", "a 254-character name is refused");
	free(l63);
	free(l64);
	free(l61);
}

/* ---- CONNECT authorities ---- */

static void test_authority(void)
{
	is_str(auth("example.com:443"), "example.com 443 name", "host:443");
	is_str(auth("Example.COM.:8443"), "example.com 8443 name", "host is normalised");
	is_str(auth("[::1]:443"), "::1 443 ip", "[::1]:443 is an IPv6 literal");
	is_str(auth("[0:0:0:0:0:0:0:1]:443"), "::1 443 ip", "an IPv6 literal is made canonical");
	is_str(auth("[::FFFF:127.0.0.1]:443"), "::ffff:127.0.0.1 443 ip",
	       "a mapped IPv6 literal is made canonical");
	is_str(auth("127.0.0.1:443"), "127.0.0.1 443 ip", "a dotted IPv4 literal");
	is_str(auth("example.com:65535"), "example.com 65535 name", "port 65535");
	is_str(auth("example.com:1"), "example.com 1 name", "port 1");
	ok(refused(auth("example.com")), "a missing port is refused");
	ok(refused(auth("example.com:")), "an empty port is refused");
	ok(refused(auth("example.com:0")), "port 0 is refused");
	ok(refused(auth("example.com:65536")), "port 65536 is refused");
	ok(refused(auth("example.com:443x")), "port 443x is refused");
	ok(refused(auth("example.com:+443")), "port +443 is refused");
	ok(refused(auth("example.com:-1")), "port -1 is refused");
	ok(refused(auth("example.com:0443x")), "port 0443x is refused");
	ok(refused(auth("example.com:000443")), "a six-digit port is refused");
	ok(refused(auth("example.com: 443")), "a space before the port is refused");
	ok(refused(auth("example.com:443:80")), "host:443:80 is refused");
	ok(refused(auth("user@example.com:443")), "user@host:443 is refused");
	ok(refused(auth("allowed.test@evil.test:443")), "allowed@evil:443 is refused");
	ok(refused(auth("user:pw@example.com:443")), "user:pw@host:443 is refused");
	ok(refused(auth("example.com:443/path")), "host:443/path is refused");
	ok(refused(auth("example.com:443?x")), "host:443?x is refused");
	ok(refused(auth("example.com:443#x")), "host:443#x is refused");
	ok(refused(auth("example.com\\@evil.test:443")), "a backslash is refused");
	ok(refused(auth("example.com%00:443")), "host%%00:443 is refused");
	ok(refused(auth("%61llowed.test:443")), "a percent-encoded host is refused");
	ok(refused(auth(":443")), "an empty host is refused");
	ok(refused(auth("example.com..:443")), "two trailing dots are refused");
	ok(refused(auth("::1:443")), "an IPv6 address without brackets is refused");
	ok(refused(auth("[::1]")), "[::1] without a port is refused");
	ok(refused(auth("[::1]443")), "[::1]443 is refused");
	ok(refused(auth("[::1]:")), "[::1]: is refused");
	ok(refused(auth("[::1%25eth0]:443")), "an IPv6 zone is refused");
	ok(refused(auth("[127.0.0.1]:443")), "an IPv4 address in brackets is refused");
	ok(refused(auth("[example.com]:443")), "a name in brackets is refused");
	ok(refused(auth("[]:443")), "empty brackets are refused");
	ok(refused(auth("[::1:443")), "an unclosed bracket is refused");
	ok(refused(auth("exa mple.com:443")), "a space inside is refused");
	ok(refused(auth("")), "an empty target is refused");

	/* inet_aton's odd spellings of 127.0.0.1 are addresses, not names. */
	is_str(auth("2130706433:443"), "127.0.0.1 443 ip", "2130706433 is 127.0.0.1");
	is_str(auth("0x7f.1:443"), "127.0.0.1 443 ip", "0x7f.1 is 127.0.0.1");
	is_str(auth("0X7F.1:443"), "127.0.0.1 443 ip", "0X7F.1 is 127.0.0.1");
	is_str(auth("0x7f000001:443"), "127.0.0.1 443 ip", "0x7f000001 is 127.0.0.1");
	is_str(auth("127.1:443"), "127.0.0.1 443 ip", "127.1 is 127.0.0.1");
	is_str(auth("127.0.1:443"), "127.0.0.1 443 ip", "127.0.1 is 127.0.0.1");
	is_str(auth("0177.0.0.1:443"), "127.0.0.1 443 ip", "0177.0.0.1 is 127.0.0.1");
	is_str(auth("0xa9.0xfe.0xa9.0xfe:80"), "169.254.169.254 80 ip",
	       "0xa9.0xfe.0xa9.0xfe is 169.254.169.254");
	is_str(auth("127.0.0.1.:443"), "127.0.0.1 443 ip", "127.0.0.1. is 127.0.0.1");
	is_str(auth("0:443"), "0.0.0.0 443 ip", "0 is 0.0.0.0");
	is_str(auth("1.2.3.4.5:443"), "1.2.3.4.5 443 name",
	       "five numbers are no address (a name, to be resolved)");
	is_str(auth("cafe.be:443"), "cafe.be 443 name", "hex-looking letters alone stay a name");
}

/* ---- absolute-form URLs ---- */

static void test_url(void)
{
	is_str(url("http://example.com"), "example.com 80 name /", "no path gives /");
	is_str(url("http://example.com/"), "example.com 80 name /", "path /");
	is_str(url("http://example.com/a/b?c=d"), "example.com 80 name /a/b?c=d", "path and query");
	is_str(url("http://example.com?c=d"), "example.com 80 name /?c=d", "a query without a path");
	is_str(url("http://Example.COM:8080/x"), "example.com 8080 name /x", "a port; host lowered");
	is_str(url("HTTP://example.com/"), "example.com 80 name /", "the scheme in upper case");
	is_str(url("http://example.com./"), "example.com 80 name /", "one trailing dot");
	is_str(url("http://[::1]:8080/x"), "::1 8080 ip /x", "an IPv6 literal with a port");
	is_str(url("http://[::1]/"), "::1 80 ip /", "an IPv6 literal without a port");
	is_str(url("http://2130706433/"), "127.0.0.1 80 ip /", "a decimal IPv4 literal");
	is_str(url("http://0x7f.1/"), "127.0.0.1 80 ip /", "a hex IPv4 literal");
	is_str(url("http://127.1/"), "127.0.0.1 80 ip /", "a short IPv4 literal");
	ok(refused(url("https://example.com/")), "https: is refused (CONNECT is for TLS)");
	ok(refused(url("ftp://example.com/")), "ftp: is refused");
	ok(refused(url("//example.com/")), "a scheme-relative target is refused");
	ok(refused(url("/path")), "an origin-form target is refused");
	ok(refused(url("http://user@example.com/")), "userinfo is refused");
	ok(refused(url("http://user:pw@example.com/")), "userinfo with a password is refused");
	ok(refused(url("http://allowed.test@evil.test/")), "allowed@evil is refused");
	ok(refused(url("http://allowed.test\\@evil.test/")), "a backslash is refused");
	ok(refused(url("http://example.com#frag")), "a fragment is refused");
	ok(refused(url("http://example.com:/")), "an empty port is refused");
	ok(refused(url("http://example.com:0/")), "port 0 is refused");
	ok(refused(url("http://example.com:65536/")), "port 65536 is refused");
	ok(refused(url("http://example.com:80x/")), "port 80x is refused");
	ok(refused(url("http://example.com:+80/")), "port +80 is refused");
	ok(refused(url("http:///path")), "an empty host is refused");
	ok(refused(url("http://")), "nothing after the scheme is refused");
	ok(refused(url("http://exa mple.com/")), "a space in the host is refused");
	ok(refused(url("http://example.com/a b")), "a space in the path is refused");
	ok(refused(url("http://example.com/a\rb")), "a CR in the path is refused");
	ok(refused(url("http://example.com/a\x7f")), "DEL in the path is refused");
	ok(refused(url("http://%65xample.com/")), "a percent-encoded host is refused");
	ok(refused(url("http://[::1/")), "an unclosed bracket is refused");
	ok(refused(url("http://[::1]x/")), "junk after the bracket is refused");
	ok(refused(url("http://[evil.test]/")), "a name in brackets is refused");
	ok(refused(url("http://example.com../")), "two trailing dots are refused");
}

/* ---- rules ---- */

static void test_rules(void)
{
	is_str(rule("example.com"), "example.com 0 0", "an exact rule");
	is_str(rule("Example.COM."), "example.com 0 0", "a rule is normalised");
	is_str(rule("*.example.com"), "example.com 1 0", "a wildcard rule");
	is_str(rule("*.Example.com:8443"), "example.com 1 8443", "a wildcard rule with a port");
	is_str(rule("example.com:8443"), "example.com 0 8443", "an exact rule with a port");
	is_str(rule("203.0.113.5"), "203.0.113.5 0 0", "an IPv4 rule");
	is_str(rule("[2001:DB8::5]:443"), "2001:db8::5 0 443", "an IPv6 rule with a port");
	is_str(rule("[2001:db8::5]"), "2001:db8::5 0 0", "an IPv6 rule without a port");

	const char *bad[] = { "", "*", "*.", "**.example.com", "*example.com", "foo.*.com",
	                      "example.*", "*.*.example.com", "example.com:0", "example.com:65536",
	                      "example.com:x", "example.com:", "user@example.com", "a..b",
	                      "example.com..", "exa mple.com", "%65xample.com", "*.203.0.113.5",
	                      "*.[::1]", "2001:db8::5", "[2001:db8::5", "example.com/path",
	                      "ex\xc3\xa4mple.com", NULL };
	for (size_t i = 0; bad[i]; i++)
		ok(refused(rule(bad[i])), "bad rule '%s' is refused with a message", bad[i]);
	const char *r = rule("foo.*.com");
	ok(strstr(r, "*.example.com") != NULL, "... the message for a misplaced '*' shows the forms");
	r = rule("*.203.0.113.5");
	ok(strstr(r, "wildcard") != NULL, "... a wildcard address is called so");

	/* Exact rules and the default ports. */
	is_int(allows("example.com", "example.com", 443, 0), 1, "exact: 443 allowed");
	is_int(allows("example.com", "example.com", 443, 1), 1, "exact: 443 allowed for plain http");
	is_int(allows("example.com", "example.com", 80, 1), 1, "exact: 80 allowed for plain http");
	is_int(allows("example.com", "example.com", 80, 0), 0, "exact: CONNECT to 80 refused");
	is_int(allows("example.com", "example.com", 8443, 0), 0, "exact: 8443 refused");
	is_int(allows("example.com", "example.com", 22, 0), 0, "exact: 22 refused");
	is_int(allows("example.com", "a.example.com", 443, 0), 0, "exact: a subdomain refused");
	is_int(allows("example.com", "example.co", 443, 0), 0, "exact: a prefix refused");
	is_int(allows("example.com", "example.com.evil.test", 443, 0), 0,
	       "exact: example.com.evil.test refused");
	is_int(allows("example.com", "evilexample.com", 443, 0), 0, "exact: evilexample.com refused");
	/* A port in the rule: that port only. */
	is_int(allows("example.com:8443", "example.com", 8443, 0), 1, "with :8443: 8443 allowed");
	is_int(allows("example.com:8443", "example.com", 443, 0), 0, "with :8443: 443 refused");
	is_int(allows("example.com:8443", "example.com", 80, 1), 0, "with :8443: 80 refused");
	is_int(allows("example.com:80", "example.com", 80, 0), 1, "with :80: CONNECT to 80 allowed");
	/* Wildcards. */
	is_int(allows("*.suffix.test", "a.suffix.test", 443, 0), 1, "*.suffix: a.suffix allowed");
	is_int(allows("*.suffix.test", "a.b.suffix.test", 443, 0), 1, "*.suffix: a.b.suffix allowed");
	is_int(allows("*.suffix.test", "suffix.test", 443, 0), 0, "*.suffix: suffix itself refused");
	is_int(allows("*.suffix.test", "evilsuffix.test", 443, 0), 0, "*.suffix: evilsuffix refused");
	is_int(allows("*.suffix.test", "evil-suffix.test", 443, 0), 0,
	       "*.suffix: evil-suffix refused");
	is_int(allows("*.suffix.test", "suffix.test.evil.test", 443, 0), 0,
	       "*.suffix: suffix.test.evil.test refused");
	is_int(allows("*.suffix.test", "a.suffix.test.evil", 443, 0), 0,
	       "*.suffix: a.suffix.test.evil refused");
	is_int(allows("*.suffix.test", "uffix.test", 443, 0), 0, "*.suffix: a shorter name refused");
	is_int(allows("*.suffix.test", "a.suffix.test", 8443, 0), 0, "*.suffix: port 8443 refused");
	is_int(allows("*.suffix.test", "a.suffix.test", 80, 1), 1, "*.suffix: plain http 80 allowed");
	is_int(allows("*.suffix.test:8443", "a.suffix.test", 8443, 0), 1,
	       "*.suffix:8443: 8443 allowed");
	is_int(allows("*.suffix.test:8443", "a.suffix.test", 443, 0), 0,
	       "*.suffix:8443: 443 refused");
	/* Addresses. */
	is_int(allows("203.0.113.5", "203.0.113.5", 443, 0), 1, "IP rule: that address allowed");
	is_int(allows("203.0.113.5", "203.0.113.50", 443, 0), 0, "IP rule: a longer one refused");
	is_int(allows("203.0.113.5", "3.0.113.5", 443, 0), 0, "IP rule: a suffix refused");
	is_int(allows("example.com", "203.0.113.5", 443, 0), 0, "a name rule allows no address");
	is_int(allows("[2001:db8::5]", "2001:db8::5", 443, 0), 1, "IPv6 rule: that address allowed");
	is_int(allows("[2001:db8::5]", "2001:db8::6", 443, 0), 0, "IPv6 rule: another refused");
	is_int(allows("0x7f.1", "127.0.0.1", 443, 0), 1,
	       "a rule in an odd IPv4 spelling names the address");

	/* Several rules: any may allow. */
	struct egress_rule rs[3];
	struct err e = { { 0 } };
	egress_rule_parse("one.test", &rs[0], &e);
	egress_rule_parse("*.two.test:8443", &rs[1], &e);
	egress_rule_parse("three.test:22", &rs[2], &e);
	is_int(egress_rules_allow(rs, 3, "one.test", 443, 0), 1, "list: the first rule allows");
	is_int(egress_rules_allow(rs, 3, "x.two.test", 8443, 0), 1, "list: the second rule allows");
	is_int(egress_rules_allow(rs, 3, "three.test", 22, 0), 1, "list: the third rule allows");
	is_int(egress_rules_allow(rs, 3, "three.test", 443, 0), 0, "list: no rule allows three:443");
	is_int(egress_rules_allow(rs, 3, "four.test", 443, 0), 0, "list: four.test refused");
	is_int(egress_rules_allow(rs, 0, "one.test", 443, 0), 0, "no rules: everything refused");
	for (size_t i = 0; i < 3; i++)
		egress_rule_free(&rs[i]);
}

/* ---- addresses ---- */

static void test_internal(void)
{
	/* IPv4, every range of the header. */
	is_str(internal("127.0.0.1"), "loopback", "127.0.0.1 is loopback");
	is_str(internal("127.255.255.254"), "loopback", "127.255.255.254 is loopback");
	is_str(internal("10.0.0.1"), "private", "10.0.0.1 is private");
	is_str(internal("10.255.255.255"), "private", "10.255.255.255 is private");
	is_str(internal("172.16.0.1"), "private", "172.16.0.1 is private");
	is_str(internal("172.31.255.255"), "private", "172.31.255.255 is private");
	is_str(internal("192.168.1.1"), "private", "192.168.1.1 is private");
	ok(strcmp(internal("100.64.0.1"), "public") != 0, "100.64.0.1 (CGNAT) is internal");
	ok(strcmp(internal("100.127.255.255"), "public") != 0, "100.127.255.255 (CGNAT) is internal");
	is_str(internal("169.254.169.254"), "link-local", "169.254.169.254 (metadata) is link-local");
	is_str(internal("169.254.0.1"), "link-local", "169.254.0.1 is link-local");
	ok(strcmp(internal("0.0.0.0"), "public") != 0, "0.0.0.0 is internal");
	ok(strcmp(internal("0.1.2.3"), "public") != 0, "0.1.2.3 (this network) is internal");
	ok(strcmp(internal("224.0.0.1"), "public") != 0, "224.0.0.1 (multicast) is internal");
	ok(strcmp(internal("239.255.255.250"), "public") != 0, "239.255.255.250 is internal");
	ok(strcmp(internal("255.255.255.255"), "public") != 0, "255.255.255.255 is internal");
	ok(strcmp(internal("240.0.0.1"), "public") != 0, "240.0.0.1 (reserved) is internal");
	/* Their neighbours are public. */
	is_str(internal("1.1.1.1"), "public", "1.1.1.1 is public");
	is_str(internal("8.8.8.8"), "public", "8.8.8.8 is public");
	is_str(internal("9.255.255.255"), "public", "9.255.255.255 is public");
	is_str(internal("11.0.0.1"), "public", "11.0.0.1 is public");
	is_str(internal("100.63.255.255"), "public", "100.63.255.255 is public");
	is_str(internal("100.128.0.1"), "public", "100.128.0.1 is public");
	is_str(internal("126.255.255.255"), "public", "126.255.255.255 is public");
	is_str(internal("128.0.0.1"), "public", "128.0.0.1 is public");
	is_str(internal("169.253.255.255"), "public", "169.253.255.255 is public");
	is_str(internal("172.15.255.255"), "public", "172.15.255.255 is public");
	is_str(internal("172.32.0.1"), "public", "172.32.0.1 is public");
	is_str(internal("192.167.255.255"), "public", "192.167.255.255 is public");
	is_str(internal("192.169.0.1"), "public", "192.169.0.1 is public");
	is_str(internal("223.255.255.255"), "public", "223.255.255.255 is public");

	/* IPv6. */
	ok(strcmp(internal("::"), "public") != 0, ":: (unspecified) is internal");
	is_str(internal("::1"), "loopback", "::1 is loopback");
	is_str(internal("::ffff:127.0.0.1"), "loopback", "::ffff:127.0.0.1 is loopback");
	is_str(internal("::ffff:10.0.0.1"), "private", "::ffff:10.0.0.1 is private");
	is_str(internal("::ffff:169.254.169.254"), "link-local", "::ffff:169.254.169.254 is link-local");
	ok(strcmp(internal("::ffff:0.0.0.0"), "public") != 0, "::ffff:0.0.0.0 is internal");
	is_str(internal("::127.0.0.1"), "loopback", "::127.0.0.1 (compatible) is loopback");
	is_str(internal("64:ff9b::a00:1"), "private", "64:ff9b::a00:1 (NAT64 of 10.0.0.1) is private");
	is_str(internal("64:ff9b::7f00:1"), "loopback", "64:ff9b::7f00:1 (NAT64 of 127.0.0.1) is loopback");
	is_str(internal("64:ff9b::a9fe:a9fe"), "link-local", "NAT64 of 169.254.169.254 is link-local");
	is_str(internal("fe80::1"), "link-local", "fe80::1 is link-local");
	is_str(internal("febf::1"), "link-local", "febf::1 is link-local");
	is_str(internal("fc00::1"), "unique local", "fc00::1 is unique local");
	is_str(internal("fd12:3456::1"), "unique local", "fd12:3456::1 is unique local");
	is_str(internal("ff02::1"), "multicast", "ff02::1 is multicast");
	is_str(internal("ff05::2"), "multicast", "ff05::2 is multicast");
	ok(strcmp(internal("fec0::1"), "public") != 0, "fec0::1 (site-local) is internal");
	is_str(internal("2606:4700:4700::1111"), "public", "2606:4700:4700::1111 is public");
	is_str(internal("2a00:1450::1"), "public", "2a00:1450::1 is public");
	is_str(internal("::ffff:1.1.1.1"), "public", "::ffff:1.1.1.1 is public");
	is_str(internal("64:ff9b::101:101"), "public", "64:ff9b::101:101 (NAT64 of 1.1.1.1) is public");
	is_str(internal("fb00::1"), "public", "fb00::1 is public (outside fc00::/7)");
	is_str(internal("fe00::1"), "public", "fe00::1 is public (outside fe80::/10)");

	struct sockaddr_storage un;
	memset(&un, 0, sizeof un);
	un.ss_family = AF_UNIX;
	ok(egress_addr_internal((struct sockaddr *)&un) != NULL, "a non-IP address is never public");
}

static void test_cidr(void)
{
	is_int(cidr_has("10.0.0.0/8", "10.1.2.3"), 1, "10/8 contains 10.1.2.3");
	is_int(cidr_has("10.0.0.0/8", "11.0.0.1"), 0, "10/8 does not contain 11.0.0.1");
	is_int(cidr_has("10.0.0.0/8", "::ffff:10.1.2.3"), 0,
	       "an IPv4 CIDR does not contain an IPv6 address");
	is_int(cidr_has("127.0.0.2/32", "127.0.0.2"), 1, "a /32 contains its address");
	is_int(cidr_has("127.0.0.2/32", "127.0.0.1"), 0, "a /32 contains no other");
	is_int(cidr_has("127.0.0.2", "127.0.0.2"), 1, "an address alone is a /32");
	is_int(cidr_has("127.0.0.2", "127.0.0.3"), 0, "... and contains no other");
	is_int(cidr_has("172.16.0.0/12", "172.31.255.255"), 1, "/12 contains its last address");
	is_int(cidr_has("172.16.0.0/12", "172.32.0.0"), 0, "/12 stops at its end");
	is_int(cidr_has("192.168.1.128/25", "192.168.1.200"), 1, "/25 contains .200");
	is_int(cidr_has("192.168.1.128/25", "192.168.1.127"), 0, "/25 does not contain .127");
	is_int(cidr_has("0.0.0.0/0", "203.0.113.5"), 1, "/0 contains everything");
	is_int(cidr_has("fd00::/8", "fd12::1"), 1, "fd00::/8 contains fd12::1");
	is_int(cidr_has("fd00::/8", "fe00::1"), 0, "fd00::/8 does not contain fe00::1");
	is_int(cidr_has("fd00::/8", "10.0.0.1"), 0, "an IPv6 CIDR does not contain an IPv4 address");
	is_int(cidr_has("::1", "::1"), 1, "::1 alone is a /128");
	is_int(cidr_has("::1", "::2"), 0, "... and contains no other");
	is_int(cidr_has("2001:db8::/33", "2001:db8:7fff::1"), 1, "/33 contains its lower half");
	is_int(cidr_has("2001:db8::/33", "2001:db8:8000::1"), 0, "/33 stops at its half");
	ok(cidr_ok("10.0.0.0/0"), "/0 is accepted");
	ok(!cidr_ok("10.0.0.0/33"), "/33 for IPv4 is refused");
	ok(!cidr_ok("fd00::/129"), "/129 for IPv6 is refused");
	ok(!cidr_ok("10.0.0.0/"), "an empty prefix length is refused");
	ok(!cidr_ok("10.0.0.0/-1"), "a negative prefix length is refused");
	ok(!cidr_ok("10.0.0.0/+8"), "a signed prefix length is refused");
	ok(!cidr_ok("10.0.0.0/8x"), "junk after the prefix length is refused");
	ok(!cidr_ok("10.0.0.0/ 8"), "a space in the prefix length is refused");
	ok(!cidr_ok("10.0.0/8"), "a short IPv4 address is refused");
	ok(!cidr_ok("0x0a.0.0.0/8"), "a hex IPv4 address is refused");
	ok(!cidr_ok("example.com/8"), "a name is refused");
	ok(!cidr_ok(""), "an empty text is refused");
	ok(!cidr_ok("/8"), "a prefix length alone is refused");
	char *longtext = repeat('1', 200);
	ok(!cidr_ok(longtext), "a long text is refused");
	free(longtext);
}

/* ---- hosts file ---- */

static void test_hosts(void)
{
	char *path = testlib_fmt("%s/hosts", testlib_tmpdir("egress"));
	testlib_write_file(path,
	                   "# test hosts\n"
	                   "10.9.9.9\tprivate.test  other.test # a comment with names.test\n"
	                   "  127.0.0.2 allowed.test\n"
	                   "\n"
	                   "::1 v6loop.test\n"
	                   "2001:db8::7   dual.test\n"
	                   "203.0.113.7   dual.test\r\n"
	                   "198.51.100.1 UPPER.Test. trail.test.\n"
	                   "# 1.2.3.4 commented.test\n"
	                   "not-an-address bogus.test\n"
	                   "127.1 shortform.test\n"
	                   "198.51.100.2 bad..name good.test\n"
	                   "198.51.100.3");

	struct egress_hosts *h = NULL;
	struct err e = { { 0 } };
	ok(egress_hosts_load(path, &h, &e) == 0 && h, "the hosts file loads");
	struct sockaddr_storage out[4];
	char ip[INET6_ADDRSTRLEN];
#define ADDR4(ss) inet_ntop(AF_INET, &((struct sockaddr_in *)&(ss))->sin_addr, ip, sizeof ip)
#define ADDR6(ss) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&(ss))->sin6_addr, ip, sizeof ip)
	size_t n = egress_hosts_lookup(h, "private.test", out, 4);
	is_int(n, 1, "private.test is listed once");
	ok(n == 1 && out[0].ss_family == AF_INET && strcmp(ADDR4(out[0]), "10.9.9.9") == 0,
	   "... as 10.9.9.9");
	ok(n == 1 && ((struct sockaddr_in *)&out[0])->sin_port == 0, "... with port 0");
	n = egress_hosts_lookup(h, "other.test", out, 4);
	ok(n == 1 && strcmp(ADDR4(out[0]), "10.9.9.9") == 0, "a second name on a line is listed");
	is_int(egress_hosts_lookup(h, "names.test", out, 4), 0, "a name in a comment is not");
	is_int(egress_hosts_lookup(h, "commented.test", out, 4), 0, "a commented-out line is not");
	n = egress_hosts_lookup(h, "allowed.test", out, 4);
	ok(n == 1 && strcmp(ADDR4(out[0]), "127.0.0.2") == 0, "leading blanks are fine");
	n = egress_hosts_lookup(h, "v6loop.test", out, 4);
	ok(n == 1 && out[0].ss_family == AF_INET6 && strcmp(ADDR6(out[0]), "::1") == 0,
	   "an IPv6 entry");
	n = egress_hosts_lookup(h, "dual.test", out, 4);
	is_int(n, 2, "a name on two lines has both addresses");
	ok(n == 2 && out[0].ss_family == AF_INET6 && out[1].ss_family == AF_INET &&
	   strcmp(ADDR4(out[1]), "203.0.113.7") == 0, "... in file order (CRLF line too)");
	is_int(egress_hosts_lookup(h, "dual.test", out, 1), 1, "the lookup stops at max");
	n = egress_hosts_lookup(h, "upper.test", out, 4);
	ok(n == 1 && strcmp(ADDR4(out[0]), "198.51.100.1") == 0,
	   "a name in upper case with a trailing dot is normalised");
	is_int(egress_hosts_lookup(h, "trail.test", out, 4), 1, "a name with a trailing dot");
	is_int(egress_hosts_lookup(h, "UPPER.Test", out, 4), 0,
	       "lookups take normalised names (the caller normalises)");
	is_int(egress_hosts_lookup(h, "bogus.test", out, 4), 0, "a line without an address is skipped");
	is_int(egress_hosts_lookup(h, "shortform.test", out, 4), 0,
	       "an inet_aton short form is no address in a hosts file");
	is_int(egress_hosts_lookup(h, "good.test", out, 4), 1,
	       "a bad name does not hide the good one after it");
	is_int(egress_hosts_lookup(h, "bad..name", out, 4), 0, "the bad name is not listed");
	is_int(egress_hosts_lookup(h, "missing.test", out, 4), 0, "an unlisted name gives 0");
	is_int(egress_hosts_lookup(h, "test", out, 4), 0, "a suffix of a listed name gives 0");
	is_int(egress_hosts_lookup(NULL, "allowed.test", out, 4), 0, "no hosts file gives 0");
	egress_hosts_free(h);
	egress_hosts_free(NULL);

	/* An empty file, and a missing one. */
	testlib_write(path, "", 0);
	h = NULL;
	ok(egress_hosts_load(path, &h, &e) == 0 && h, "an empty hosts file loads");
	is_int(egress_hosts_lookup(h, "allowed.test", out, 4), 0, "... and lists nothing");
	egress_hosts_free(h);
	unlink(path);
	h = NULL;
	memset(&e, 0, sizeof e);
	ok(egress_hosts_load(path, &h, &e) < 0 && !h && e.msg[0], "a missing hosts file is an error");
}

int main(void)
{
	test_normalize();
	test_authority();
	test_url();
	test_rules();
	test_internal();
	test_cidr();
	test_hosts();
	testlib_end();
	return tap_done();
}
