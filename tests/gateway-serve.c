/* gateway-serve: runs the gateway loop on the host's loopback for tests
 * that drive it directly with curl (the sandbox's own namespace is tested
 * by gateway.test through real sandboxes).
 *
 *   gateway-serve CONFIG REPO PORTFILE REPORTFILE [--setup] [--budget USD]
 *                 [--budget-tokens N] [--unix DIR] [--no-seccomp]
 * Writes "NAME PORT" per endpoint and "proxy PORT" to PORTFILE, the report
 * lines to REPORTFILE, and serves until SIGTERM.  With --unix, listens as
 * the bridge's gateway does: unix sockets DIR/PORT, for the configured
 * ports (bench/gateway.sh puts paddock-bridge in front).  --no-seccomp
 * leaves out the gateway's seccomp filter, which valgrind cannot load. */
#include "autoconfig.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "gateway.h"
#include "units.h"

static const char *unix_dir;

static int listen_unix(int port)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s/%d", unix_dir, port);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0)
		return -1;
	return fd;
}

static int listen_any(int *port)
{
	if (unix_dir)
		return listen_unix(*port);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct err e = {{0}};
	if (argc < 5) {
		fprintf(stderr, "usage: gateway-serve CONFIG REPO PORTFILE REPORTFILE [--setup] "
		                "[--budget USD] [--budget-tokens N]\n");
		return 2;
	}
	if (config_load(&cfg, argv[1], &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	const struct repo_conf *repo = config_find_repo(&cfg, argv[2]);
	struct gateway_policy p = { .cfg = &cfg, .step = "agent", .model_endpoints = 1,
	                            .endpoint = "anthropic" };
	if (repo) {
		p.allow_hosts = (const char *const *)repo->allow_hosts;
		p.nallow_hosts = repo->nallow_hosts;
	}
	p.budget = cfg.limits.budget;
	p.budget_tokens = cfg.limits.budget_tokens;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "--setup") == 0 && repo) {
			p.step = "setup";
			p.model_endpoints = 0;
			p.allow_hosts = (const char *const *)repo->setup_allow_hosts;
			p.nallow_hosts = repo->nsetup_allow_hosts;
		} else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
			units_parse_money(argv[++i], &p.budget);
		} else if (strcmp(argv[i], "--budget-tokens") == 0 && i + 1 < argc) {
			units_parse_count(argv[++i], &p.budget_tokens);
		} else if (strcmp(argv[i], "--no-seccomp") == 0) {
			p.no_seccomp = 1;
		} else if (strcmp(argv[i], "--unix") == 0 && i + 1 < argc) {
			unix_dir = argv[++i];
		}
	}
	int fds[64];
	size_t n = 0;
	FILE *pf = fopen(argv[3], "w");
	if (!pf)
		return 1;
	for (size_t i = 0; p.model_endpoints && i < cfg.nendpoints; i++) {
		int port = cfg.endpoints[i].port;
		fds[n++] = listen_any(&port);
		fprintf(pf, "%s %d\n", cfg.endpoints[i].name, port);
	}
	int port = cfg.gw_proxy_port;
	fds[n++] = listen_any(&port);
	fprintf(pf, "proxy %d\n", port);
	fclose(pf);
	int rfd = open(argv[4], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	struct gateway_stats stats;
	memset(&stats, 0, sizeof stats);
	int rc = gateway_serve(&p, fds, n, rfd, &stats);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	close(rfd);
	config_free(&cfg);
	return rc;
}
