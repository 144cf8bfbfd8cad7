/* curlx: the options every HTTP request paddock itself sends takes
 * (github.c's GitHub calls, webhook.c's deliveries, the gateway's model
 * requests): no signals (threads, and the scheduler's own handlers), no
 * redirects (a secret header or a signed body goes to no other host),
 * http and https only. */
#ifndef PADDOCK_CURLX_H
#define PADDOCK_CURLX_H

#include <curl/curl.h>

void curlx_safe(CURL *c);

#endif
