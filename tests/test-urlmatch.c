/* test-urlmatch: allow-lists of URLs and hosts match parsed URLs, field by
 * field: the bypasses that fnmatch on the whole text let through (a '?',
 * '#' or user name carrying the allowed host, a '*' across '.' or '/'),
 * encoded separators, the host rule allow-host shares, the loopback test
 * that guards the GitHub token, and [api] callback-allow and
 * [repo] github-api refused at load when they do not parse. */
#include "autoconfig.h"
#include "urlmatch.h"

#include <stdio.h>
#include <string.h>
#include "config.h"
#include "egress.h"
#include "err.h"
#include "tap.h"
#include "testlib.h"
#include "webhook.h"

static const char *dir;
static int nfiles;

static int allowed(const char *pattern, const char *url)
{
	const char *p[1] = { pattern };
	return urlmatch_allowed(p, 1, url);
}

static void test_bypasses(void)
{
	const char *pat = "http://*.hooks.localtest/*";
	ok(allowed(pat, "http://a.hooks.localtest/x"), "a name below the suffix, one segment");
	ok(allowed(pat, "http://A.B.Hooks.LocalTest./x"),
	   "several labels below, any case, a trailing dot");
	ok(!allowed(pat, "http://127.0.0.1:8080/?.hooks.localtest/x"),
	   "the suffix in the query does not make the host");
	ok(!allowed(pat, "http://127.0.0.1/?.hooks.localtest/x"),
	   "... nor on the default port");
	ok(!allowed(pat, "http://127.0.0.1/#.hooks.localtest/x"), "... nor in a fragment");
	ok(!allowed(pat, "http://a.hooks.localtest/x#frag"), "a URL with a fragment is refused");
	ok(!allowed(pat, "http://a.hooks.localtest@127.0.0.1/b.hooks.localtest/x"),
	   "the suffix as a user name before '@' is refused");
	ok(!allowed(pat, "http://u:p@a.hooks.localtest/x"), "any user name or password is refused");
	ok(!allowed(pat, "http://hooks.localtest/x"), "'*.' needs a label: not the suffix itself");
	ok(!allowed(pat, "http://evilhooks.localtest/x"), "the suffix on a label boundary only");
	ok(!allowed(pat, "http://a.hooks.localtest.evil.example/x"), "the suffix must end the host");
	ok(!allowed(pat, "http://a.hooks.localtest:8080/x"), "another port than the pattern's (80)");
	ok(!allowed(pat, "https://a.hooks.localtest/x"), "another scheme");
	ok(!allowed(pat, "http://a.hooks.localtest/x/y"), "'*' stays within one path segment");
	ok(!allowed("http://a.hooks.localtest/cb/*", "http://a.hooks.localtest/cb/../admin"),
	   "dot segments are resolved before the path is compared");
	ok(!allowed(pat, "http://a.hooks.localtest/%2e%2e/y"), "an encoded '..' is refused");
	ok(!allowed(pat, "http://a.hooks.localtest/x%2fy"), "an encoded '/' is refused");
	ok(!allowed(pat, "http://a.hooks.localtest\\@127.0.0.1/x"), "a backslash is refused");
	ok(!allowed(pat, "http://a.hooks.localtest /x"), "a space is refused");
	ok(!allowed(pat, "file:///etc/passwd"), "a file: URL");
	ok(!allowed(pat, "not a url"), "text that is no URL");
	ok(allowed(pat, "http://a.hooks.localtest/x?token=1"), "a query is not compared");

	const char *ip = "http://127.0.0.1:8123/cb/*";
	ok(allowed(ip, "http://127.0.0.1:8123/cb/chat-1"), "an address pattern and its URL");
	ok(allowed(ip, "http://2130706433:8123/cb/chat-1"),
	   "the address in another form libcurl reads the same way");
	ok(!allowed(ip, "http://127.0.0.1:8124/cb/chat-1"), "another port");
	ok(!allowed(ip, "http://127.0.0.1:8123/cb"), "the path must match");
	ok(!allowed(ip, "http://127.0.0.1:8123/elsewhere"), "another path");
	ok(allowed("http://127.0.0.1:8123/cb/**", "http://127.0.0.1:8123/cb/a/b/c"),
	   "a last segment ** matches any path below");
	ok(!allowed("http://127.0.0.1:8123/cb/**", "http://127.0.0.1:8123/cbx/a"),
	   "... and only below");
	ok(allowed("https://[::1]:9/h", "https://[::1]:9/h"), "an IPv6 address");
	ok(!allowed("https://x.example/h", "https://x.example/h/"), "a path without a wildcard is exact");
}

static void test_patterns(void)
{
	struct urlmatch_pattern p;
	struct err e = { { 0 } };
	static const char *const bad[] = {
		"http://a*.example/x",           /* '*' inside a label */
		"http://*.*.example/x",
		"http://x.*/",
		"http://*.0.0.1/x",              /* a wildcard over an address */
		"http://user@x.example/",
		"http://x.example/#f",
		"http://x.example/?q=*",
		"http://x.example/a**",
		"ftp://x.example/",
		"x.example/*",
		"http://x.example:99999/",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = urlmatch_pattern_parse(bad[i], &p, &e);
		ok(rc < 0 && e.msg[0], "pattern '%s' refused: %s", bad[i], e.msg);
		if (rc == 0)
			urlmatch_pattern_free(&p);
	}
	ok(urlmatch_pattern_parse("https://*.hooks.example.com:8443/paddock/*", &p, &e) == 0 &&
	   !strcmp(p.u.host, "hooks.example.com") && p.wildcard && p.u.port == 8443 &&
	   !strcmp(p.u.path, "/paddock/*"), "a pattern's fields");
	urlmatch_pattern_free(&p);
}

static void test_hosts(void)
{
	/* The rule allow-host uses (egress.h). */
	struct egress_rule r;
	struct err e = { { 0 } };
	ok(egress_rule_parse("*.pythonhosted.org", &r, &e) == 0, "an allow-host wildcard rule");
	ok(egress_rules_allow(&r, 1, "files.pythonhosted.org", 443, 0), "a name below it");
	ok(!egress_rules_allow(&r, 1, "pythonhosted.org", 443, 0), "not the name itself");
	ok(!egress_rules_allow(&r, 1, "evilpythonhosted.org", 443, 0), "not across a label");
	egress_rule_free(&r);
	ok(urlmatch_host("example.com", 0, "example.com") && !urlmatch_host("example.com", 0,
	   "a.example.com"), "a rule without '*.' is the name alone");

	ok(urlmatch_is_loopback_http("http://127.0.0.1:9/api/v3"), "loopback http");
	ok(urlmatch_is_loopback_http("http://x-access-token@localhost:9/r.git"),
	   "loopback http with a user name");
	ok(!urlmatch_is_loopback_http("http://127.0.0.1@evil.example/api"),
	   "the address as a user name is not loopback");
	ok(!urlmatch_is_loopback_http("http://127.0.0.1.evil.example/api"),
	   "the address as the start of a name is not loopback");
	ok(!urlmatch_is_loopback_http("http://localhost#@evil.example/api"),
	   "a fragment before the real host is refused");
	ok(!urlmatch_is_loopback_http("https://127.0.0.1/"), "https is not plain http");
	ok(!urlmatch_is_loopback_http("http://127.1:9/") &&
	   !urlmatch_is_loopback_http("http://2130706433:9/"),
	   "only the names the list has, as written");
}

static const char *load(struct config *c, const char *text)
{
	static char msg[ERR_MAX + 16];
	char path[512];
	struct err e = { { 0 } };
	snprintf(path, sizeof path, "%s/config-%d", dir, ++nfiles);
	testlib_write(path, text, strlen(text));
	if (config_load(c, path, &e) == 0)
		return "";
	size_t plen = strlen(path);
	snprintf(msg, sizeof msg, "%s", strncmp(e.msg, path, plen) ? e.msg : e.msg + plen);
	return msg;
}

static void test_config(void)
{
	struct config c;
	is_str(load(&c, "[api]\n\tcallback-allow = http://*.hooks.localtest/*\n"), "",
	       "a callback-allow pattern loads");
	ok(webhook_callback_allowed(&c, "http://a.hooks.localtest/x"),
	   "a callback_url below it is allowed");
	ok(!webhook_callback_allowed(&c, "http://127.0.0.1:9/?.hooks.localtest/x") &&
	   !webhook_callback_allowed(&c, "http://127.0.0.1:9/#.hooks.localtest/x") &&
	   !webhook_callback_allowed(&c, "http://a.hooks.localtest@127.0.0.1:9/b.hooks.localtest/x"),
	   "the query, fragment and user-name forms are not");
	config_free(&c);
	ok(strstr(load(&c, "[api]\n\tcallback-allow = http://a*b.example/*\n"),
	          "api.callback-allow: 'http://a*b.example/*': a host pattern is a name") != NULL,
	   "a host pattern with '*' inside a label is refused at load");
	config_free(&c);
	ok(strstr(load(&c, "[api]\n\tcallback-allow = http://u@x.example/*\n"),
	          "has a user name or password") != NULL,
	   "a pattern with a user name is refused at load");
	config_free(&c);
	ok(strstr(load(&c, "[repo \"r\"]\n\turl = /tmp/r.git\n\tgithub-api = "
	                   "http://127.0.0.1@evil.example/api/v3\n"),
	          "repo.r.github-api: 'http://127.0.0.1@evil.example/api/v3' has a user name") != NULL,
	   "a github-api with a user name is refused at load");
	config_free(&c);
	ok(strstr(load(&c, "[repo \"r\"]\n\turl = /tmp/r.git\n\tgithub-api = https://x y/\n"),
	          "repo.r.github-api:") != NULL, "a github-api that does not parse is refused");
	config_free(&c);
}

int main(void)
{
	dir = testlib_tmpdir("urlmatch");
	test_bypasses();
	test_patterns();
	test_hosts();
	test_config();
	testlib_end();
	return tap_done();
}
