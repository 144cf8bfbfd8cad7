/* gateway: a sandbox's only way out (paddock(1), THE SANDBOX;
 * paddock-config(5), EGRESS).
 *
 * gateway_start() makes a new network namespace holding nothing but `lo`
 * and, on its 127.0.0.1, listening sockets owned by a gateway process that
 * paddock forks on the host side (it stays in the host's network):
 *   - one per model endpoint (config.h endpoint_conf, e.g. 8081 Anthropic,
 *     8082 OpenAI): plain-HTTP reverse proxies with a method and path
 *     allowlist and a body cap; the auth headers the agent sent are
 *     dropped and the real key from paddock's environment or key file is
 *     added on the way out; forwarded with libcurl (TLS to https
 *     upstreams); responses stream back as they arrive;
 *   - the allowlisting proxy (gateway.proxy-port, 3128): CONNECT and
 *     absolute-form http:// requests to hosts on the allowlist only
 *     (egress.h), resolved here (gateway.hosts-file, then DNS unless
 *     gateway.dns is off) and refused when an address is internal;
 *     the connection goes to the address that was checked.
 * The sandbox runs in that namespace (sandbox_spec.netns_fd): no other
 * interface, no route, no resolver.  The listening socket a connection
 * arrives on tells the gateway which task it serves.
 *
 * The bridge (gateway.network = bridge, or auto where no namespace can be
 * made): the listeners are unix sockets named after their ports in a new
 * /tmp dir owned by the sandbox's uid, mode 0700; bwrap gives the sandbox
 * a namespace of its own (only `lo`), and paddock-bridge, started before
 * each command inside it, relays its 127.0.0.1 ports to those sockets.
 * The policy is the gateway's either way. 
 *
 * Every request and tunnel, allowed or refused, is reported to the
 * scheduler as an `egress` line on report_fd; token usage read from model
 * responses (usage.h) as `usage` lines with the task's running totals;
 * a 429 or 529 from an upstream as a `pause` line (report.h).  Model
 * requests go upstream limits.model-concurrency at a time, each with its
 * maximum cost reserved against the budget (paddock-config(5), BUDGETS
 * AND PRICES).  When the task's spending reaches its budget the gateway
 * refuses further model requests and sets stats->over_budget; a request to
 * an endpoint whose key is missing is answered 401 and sets
 * stats->no_key; either sets stats->stop, which the supervisor watches
 * (sandbox_cancel_watch): the gateway runs as another uid and cannot
 * signal it. */
#ifndef PADDOCK_GATEWAY_H
#define PADDOCK_GATEWAY_H

#include <stdint.h>
#include <sys/types.h>
#include "config.h"
#include "err.h"
#include "sandbox.h"
#include "usage.h"

struct gateway_policy {
	const struct config *cfg;
	const char *step;              /* recorded with each request: "agent", "setup" */
	const char *const *allow_hosts;/* egress.h rules for the proxy */
	size_t nallow_hosts;
	int model_endpoints;           /* 1: serve every configured endpoint; 0: the
	                                  proxy only (setup) */
	const char *endpoint;          /* the agent's endpoint (its variables point
	                                  there), or NULL */
	double budget;                 /* USD; 0: none */
	uint64_t budget_tokens;        /* 0: none */
	struct usage base;             /* spent by earlier rounds */
	double base_cost;
	uint64_t base_requests;
	int base_unpriced;
	const struct sandbox_backend *be; /* the sandbox's: the network forms it
	                                  can attach to (nets), who it runs as
	                                  on the host (owner) */
	int no_seccomp;                /* tests/gateway-serve --no-seccomp only:
	                                  valgrind cannot load a filter */
};

/* What the gateway process saw, in memory shared with the caller. */
struct gateway_stats {
	struct usage total;            /* all rounds, base included */
	double cost;
	uint64_t requests;             /* model requests forwarded (all rounds) */
	uint64_t allowed, refused;     /* requests and tunnels of this gateway */
	int unpriced;                  /* a model without a price was used */
	char unpriced_model[64];       /* the first one, when it stopped a budget in
	                                  USD (over_budget is set), or "" */
	volatile int over_budget;      /* the budget is spent */
	char no_key[64];               /* an endpoint asked that has no key
	                                  (config_endpoint_key_missing), or "" */
	volatile int stop;             /* over_budget or no_key: watched by the
	                                  supervisor's sandbox loop */
	int last_status;               /* HTTP status of the last model response */
	char last_error[64];           /* its error type or code, or "" */
	char last_message[160];        /* its error message, or "" */
};

struct gateway;

/* Starts the gateway for one sandbox.  report_fd receives the lines. */
int gateway_start(const struct gateway_policy *p, int report_fd, struct gateway **out,
                  struct err *e);
/* Attaches a sandbox to the gateway: the network namespace to run in, or,
 * for the bridge, the socket dir and ports (owned by g, valid until
 * gateway_stop); nothing for the loopback form. */
void gateway_attach(const struct gateway *g, struct sandbox_net *net);
/* The port the gateway really listens on for the configured `port` (an
 * endpoint's or the proxy's): the same one, except in the loopback form,
 * where the kernel chose it.  Adapters write it in agents' settings. */
int gateway_port(const struct gateway *g, int port);
/* Why the bridge stands in for the namespace gateway.network asked for
 * ("auto" and no namespace could be made), or NULL; for the task log. */
const char *gateway_note(const struct gateway *g);
/* NAME=VALUE strings for the sandboxed command (NULL-terminated, owned by
 * g): the endpoint's base URL and a placeholder key in the variables its
 * agents read (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, ...), and the proxy in
 * HTTPS_PROXY, HTTP_PROXY and their lowercase forms. */
const char *const *gateway_env(const struct gateway *g);
/* The shared statistics (valid until gateway_stop). */
const struct gateway_stats *gateway_stats(const struct gateway *g);
/* Stops the gateway process and frees g.  NULL is fine. */
void gateway_stop(struct gateway *g);
/* The namespace form's making, root only (gateway_start calls it, or the
 * root helper's keeper for it: privsep.h, the backend's netns): a new network namespace with
 * lo up, nports listeners on its 127.0.0.1 at ports[], and the
 * namespace's fd in *netns_fd; the descriptors are the caller's. */
int gateway_netns_make(const int *ports, size_t nports, int *listen_fds, int *netns_fd,
                       struct err *e);

/* Removes the bridge socket folders (in /tmp, or a user's
 * XDG_RUNTIME_DIR) that a killed supervisor left
 * (every socket in them refuses connections); live ones stay. */
void gateway_janitor(void);

/* The placeholder key the sandbox sees instead of a real one. */
#define GATEWAY_PLACEHOLDER_KEY "paddock-placeholder-not-a-key"

/* Runs the gateway loop in the calling process (what gateway_start's child
 * does); exported for tests that drive the gateway without a sandbox:
 * listen_fds are listening sockets, one per configured endpoint in config
 * order (when model_endpoints is set) followed by the proxy's. */
int gateway_serve(const struct gateway_policy *p, const int *listen_fds, size_t nfds,
                  int report_fd, struct gateway_stats *stats);

#endif
