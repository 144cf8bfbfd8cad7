#include "autoconfig.h"
#include "curlx.h"

#include <string.h>

void curlx_safe(CURL *c)
{
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

int curlx_loopback_http(const char *url)
{
	static const char *const hosts[] = { "127.0.0.1", "localhost", "[::1]" };
	if (strncmp(url, "http://", 7) != 0)
		return 0;
	const char *h = url + 7;
	const char *at = memchr(h, '@', strcspn(h, "/"));
	if (at)
		h = at + 1;
	for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
		size_t n = strlen(hosts[i]);
		if (strncmp(h, hosts[i], n) == 0 && (h[n] == ':' || h[n] == '/' || !h[n]))
			return 1;
	}
	return 0;
}
