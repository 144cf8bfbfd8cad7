#include "autoconfig.h"
#include "urlmatch.h"

#include <ctype.h>
#include <curl/curl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "i18n.h"

/* What a pattern's "*." becomes for libcurl, which refuses '*' in a host;
 * a label no real URL in a configuration has. */
#define WILD_LABEL "x--paddock-wildcard."

void urlmatch_url_free(struct urlmatch_url *u)
{
	if (!u)
		return;
	free(u->scheme);
	free(u->host);
	free(u->path);
	memset(u, 0, sizeof *u);
}

void urlmatch_pattern_free(struct urlmatch_pattern *p)
{
	if (p)
		urlmatch_url_free(&p->u);
}

static char *part(CURLU *h, CURLUPart what, unsigned flags)
{
	char *v = NULL;
	if (curl_url_get(h, what, &v, flags) != CURLUE_OK)
		return NULL;
	char *copy = xstrdup(v);
	curl_free(v);
	return copy;
}

/* The path holds %2e, %2f or %5c: a server may decode it into a "..", a
 * '/' or a '\' that the match did not see. */
static int encoded_separator(const char *path)
{
	for (const char *p = strchr(path, '%'); p; p = strchr(p + 1, '%'))
		if (!strncasecmp(p, "%2e", 3) || !strncasecmp(p, "%2f", 3) ||
		    !strncasecmp(p, "%5c", 3))
			return 1;
	return 0;
}

int urlmatch_parse(const char *text, unsigned flags, struct urlmatch_url *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!text || (strncasecmp(text, "http://", 7) && strncasecmp(text, "https://", 8)))
		return err_set(e, _("'%s' is not an http:// or https:// URL"), text ? text : "");
	for (const char *c = text; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '\\')
			return err_set(e, _("'%s' has a space, a backslash or a control character; "
			                    "write the URL without them"), text);
	CURLU *h = curl_url();
	if (!h)
		return err_set(e, _("out of memory parsing a URL"));
	CURLUcode rc = curl_url_set(h, CURLUPART_URL, text, 0);
	if (rc != CURLUE_OK) {
		err_set(e, _("'%s' is not a URL: %s"), text, curl_url_strerror(rc));
		curl_url_cleanup(h);
		return -1;
	}
	char *user = part(h, CURLUPART_USER, 0), *pass = part(h, CURLUPART_PASSWORD, 0);
	char *frag = part(h, CURLUPART_FRAGMENT, 0), *port = part(h, CURLUPART_PORT,
	                                                               CURLU_DEFAULT_PORT);
	int bad = 0;
	if ((user || pass) && !(flags & URLMATCH_USERINFO))
		bad = err_set(e, _("'%s' has a user name or password before '@'; write the URL "
		                   "without them"), text);
	else if (frag)
		bad = err_set(e, _("'%s' has a fragment ('#...'); write the URL without it"), text);
	out->scheme = part(h, CURLUPART_SCHEME, 0);
	out->host = part(h, CURLUPART_HOST, 0);
	out->path = part(h, CURLUPART_PATH, 0);
	char *end = NULL;
	long pn = port ? strtol(port, &end, 10) : 0;
	if (!bad && (!out->scheme || !out->host || !out->path || !port || *end || pn < 1 ||
	             pn > 65535))
		bad = err_set(e, _("'%s' is not a URL with a host and a port from 1 to 65535"), text);
	if (!bad && encoded_separator(out->path))
		bad = err_set(e, _("'%s' has an encoded '.', '/' or '\\' (%%2e, %%2f, %%5c) in its "
		                   "path; write them plainly"), text);
	out->port = (int)pn;
	free(user);
	free(pass);
	free(frag);
	free(port);
	curl_url_cleanup(h);
	if (bad) {
		urlmatch_url_free(out);
		return -1;
	}
	for (char *c = out->scheme; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	for (char *c = out->host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	size_t n = strlen(out->host);
	if (n > 1 && out->host[n - 1] == '.')
		out->host[n - 1] = '\0';
	return 0;
}

/* The host's last label is all digits: an address, not a name. */
static int numeric_tail(const char *host)
{
	const char *dot = strrchr(host, '.');
	const char *last = dot ? dot + 1 : host;
	return host[0] == '[' || (*last && strspn(last, "0123456789") == strlen(last));
}

int urlmatch_pattern_parse(const char *text, struct urlmatch_pattern *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	const char *sep = text ? strstr(text, "://") : NULL;
	if (!sep)
		return err_set(e, _("'%s' is not a URL pattern such as "
		                    "https://hooks.example.com/paddock/*"), text ? text : "");
	const char *auth = sep + 3;
	char *copy;
	if (!strncmp(auth, "*.", 2)) {
		out->wildcard = 1;
		copy = xasprintf("%.*s" WILD_LABEL "%s", (int)(auth - text), text, auth + 2);
	} else {
		copy = xstrdup(text);
	}
	size_t alen = strcspn(copy + (auth - text), "/?#");
	const char *a = copy + (auth - text);
	if (memchr(a, '*', alen) || memchr(a, '?', alen) || (a[0] != '[' && memchr(a, '[', alen))) {
		free(copy);
		return err_set(e, _("'%s': a host pattern is a name, or '*.' and a name (such as "
		                    "*.example.com); '*' stands nowhere else in it"), text);
	}
	if (strchr(copy, '?')) {
		free(copy);
		return err_set(e, _("'%s': a URL pattern has no query ('?...'); a URL's query is "
		                    "not compared"), text);
	}
	/* A last segment "**": anything below. */
	size_t n = strlen(copy);
	if (n >= 3 && !strcmp(copy + n - 3, "/**")) {
		out->below = 1;
		copy[n - 2] = '\0';
	}
	int rc = urlmatch_parse(copy, 0, &out->u, e);
	free(copy);
	if (rc < 0)
		return -1;
	if (strstr(out->u.path, "**") || (out->below && out->u.path[strlen(out->u.path) - 1] != '/')) {
		urlmatch_pattern_free(out);
		return err_set(e, _("'%s': \"**\" stands only at the end of a pattern's path, "
		                    "after a '/'"), text);
	}
	if (out->wildcard) {
		size_t wl = strlen(WILD_LABEL);
		if (strncmp(out->u.host, WILD_LABEL, wl) || numeric_tail(out->u.host + wl)) {
			urlmatch_pattern_free(out);
			return err_set(e, _("'%s': '*.' needs a domain name after it, not an "
			                    "address"), text);
		}
		memmove(out->u.host, out->u.host + wl, strlen(out->u.host + wl) + 1);
	}
	return 0;
}

int urlmatch_host(const char *rule, int wildcard, const char *host)
{
	if (!wildcard)
		return strcmp(rule, host) == 0;
	/* "*.x" matches "a.x" and "a.b.x", on a label boundary; not "x" nor
	 * "evilx". */
	size_t hl = strlen(host), sl = strlen(rule);
	return hl > sl + 1 && host[hl - sl - 1] == '.' && host[0] != '.' &&
	       strcmp(host + hl - sl, rule) == 0;
}

int urlmatch_match(const struct urlmatch_pattern *p, const struct urlmatch_url *u)
{
	if (strcmp(p->u.scheme, u->scheme) || p->u.port != u->port ||
	    !urlmatch_host(p->u.host, p->wildcard, u->host))
		return 0;
	if (!p->below)
		return fnmatch(p->u.path, u->path, FNM_PATHNAME) == 0;
	/* The URL's path up to as many '/' as the pattern's part has. */
	size_t slashes = 0, i = 0;
	for (const char *c = p->u.path; *c; c++)
		slashes += *c == '/';
	for (; u->path[i] && slashes; i++)
		slashes -= u->path[i] == '/';
	if (slashes)
		return 0;
	char *head = xstrndup(u->path, i);
	int hit = fnmatch(p->u.path, head, FNM_PATHNAME) == 0;
	free(head);
	return hit;
}

int urlmatch_allowed(const char *const *patterns, size_t n, const char *url)
{
	struct urlmatch_url u;
	if (urlmatch_parse(url, 0, &u, NULL) < 0)
		return 0;
	int hit = 0;
	for (size_t i = 0; i < n && !hit; i++) {
		struct urlmatch_pattern p;
		if (urlmatch_pattern_parse(patterns[i], &p, NULL) < 0)
			continue;
		hit = urlmatch_match(&p, &u);
		urlmatch_pattern_free(&p);
	}
	urlmatch_url_free(&u);
	return hit;
}

int urlmatch_is_loopback_http(const char *url)
{
	static const char *const hosts[] = { "127.0.0.1", "localhost", "[::1]" };
	struct urlmatch_url u;
	if (urlmatch_parse(url, URLMATCH_USERINFO, &u, NULL) < 0)
		return 0;
	/* The host as written must be the name too: libcurl reads 127.1 as
	 * 127.0.0.1, which the list does not name. */
	const char *auth = url + strlen("http://");
	size_t alen = strcspn(auth, "/?#");
	const char *at = NULL;
	for (const char *c = auth; c < auth + alen; c++)
		if (*c == '@')
			at = c;
	const char *h = at ? at + 1 : auth;
	size_t hlen = (size_t)(auth + alen - h);
	int hit = 0;
	for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
		size_t n = strlen(hosts[i]);
		hit |= !strcmp(u.scheme, "http") && !strcmp(u.host, hosts[i]) && hlen >= n &&
		       !strncasecmp(h, hosts[i], n) && (hlen == n || h[n] == ':');
	}
	urlmatch_url_free(&u);
	return hit;
}
