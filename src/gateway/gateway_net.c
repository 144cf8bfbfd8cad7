/* Where the gateway lives: the sandbox's network namespace or the bridge's
 * socket folder, the janitor for stale folders, the gateway process
 * (gateway_start, gateway_stop) and the environment that points the
 * sandbox at it. */
#include "autoconfig.h"
#include "gateway.h"
#include "gateway_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "i18n.h"
#include "paths.h"
#include "sandbox.h"

/* ---- start and stop ---- */

struct gateway {
	struct child proc;     /* the gateway process; pid -1 before it runs */
	int netns_fd;
	char *bridge_dir;      /* bridge: the host dir of our unix sockets */
	char *bridge_ports;    /* bridge: "8081,8082,3128", for paddock-bridge */
	int ports[MAX_ADDRS + 1];  /* the listeners' configured ports */
	int real[MAX_ADDRS + 1];   /* where they listen (loopback: the kernel's choice) */
	size_t nports;
	char *note;            /* why the bridge stands in for the namespace */
	struct gateway_stats *stats;
	char **env;
};

/* Child: a new network namespace with lo up and our listeners in it; the
 * fds go back over sock.  Runs as root in the supervisor. */
struct netns_job {
	int sock;
	const int *ports;
	size_t nports;
};

static int netns_child(void *arg)
{
	const struct netns_job *job = arg;
	int sock = job->sock;
	const int *ports = job->ports;
	size_t nports = job->nports;
	int fds[MAX_ADDRS + 2];
	size_t nfd = 0;
	if (unshare(CLONE_NEWNET) < 0)
		return errno == EPERM ? 9 : 10;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return 11;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return 12;
	close(s);
	for (size_t i = 0; i < nports; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int one = 1;
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)ports[i]),
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0)
			return 13;
		fds[nfd++] = fd;
	}
	fds[nfd] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fds[nfd] < 0)
		return 14;
	nfd++;
	char cbuf[CMSG_SPACE(sizeof(int) * (MAX_ADDRS + 2))];
	memset(cbuf, 0, sizeof cbuf);
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                      .msg_controllen = CMSG_SPACE(sizeof(int) * nfd) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nfd);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfd);
	if (sendmsg(sock, &msg, 0) != 1)
		return 15;
	return 0;
}

int gateway_netns_make(const int *ports, size_t nports, int *listen_fds, int *netns_fd,
                       struct err *e)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err_set(e, _("cannot create the sandbox's network: %s"), strerror(errno));
	struct netns_job job = { .sock = sv[1], .ports = ports, .nports = nports };
	struct child ch = { .fn = netns_child, .arg = &job };
	if (child_start(&ch, NULL) < 0) {
		close(sv[0]);
		close(sv[1]);
		return err_set(e, _("cannot create the sandbox's network: %s"), strerror(errno));
	}
	close(sv[1]);
	size_t nfd = nports + 1;
	char cbuf[CMSG_SPACE(sizeof(int) * (MAX_ADDRS + 2))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                      .msg_controllen = sizeof cbuf };
	ssize_t r;
	do
		r = recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	close(sv[0]);
	int status = child_finish(&ch);
	struct cmsghdr *cm = r == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int) * nfd)) {
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
		if (code == 9 || code == 10)
			return err_set(e, _("cannot create a network namespace (%s)"),
			               code == 9 ? strerror(EPERM) : _("unshare failed"));
		return err_set(e, _("cannot create the sandbox's network (step %d): paddock must "
		                    "run as root, and the ports of the endpoints must be distinct"),
		               code);
	}
	int fds[MAX_ADDRS + 2];
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * nfd);
	for (size_t i = 0; i < nports; i++)
		listen_fds[i] = fds[i];
	*netns_fd = fds[nports];
	return 0;
}

static void bridge_remove(const char *dir, const int *ports, size_t nports)
{
	for (size_t i = 0; i < nports; i++) {
		char *path = xasprintf("%s/%d", dir, ports[i]);
		unlink(path);
		free(path);
	}
	rmdir(dir);
}

/* The fallback: our listeners are unix sockets in a new host dir that only
 * root and the sandbox's uid can enter; the sandbox sees the dir and
 * paddock-bridge relays its own 127.0.0.1 ports to them. */
/* Where the socket folders go: a user's runtime directory (theirs
 * alone, gone at logout), else /tmp.  Root's (which the sandbox uid must
 * enter) are in /tmp. */
static const char *bridge_parent(void)
{
	const char *rt = paths_runtime_dir();
	return rt ? rt : "/tmp";
}

static int make_bridge(const struct sandbox_backend *be, const int *ports, size_t nports,
                       int *listen_fds, char **dir_out, struct err *e)
{
	const char *parent = bridge_parent();
	char tmpl[128];  /* paths_runtime_dir is shorter than 64 */
	snprintf(tmpl, sizeof tmpl, "%s/paddock-gateway-XXXXXX", parent);
	char *dir = mkdtemp(tmpl);
	uid_t uid;
	gid_t gid;
	be->owner(&uid, &gid);
	size_t made = 0;
	if (!dir)
		return err_errno(e, _("cannot create the gateway's socket folder in %s"), parent);
	for (; made < nports; made++) {
		/* Bound and listening under a dot name first, then renamed: a
		 * socket named after its port always listens while its gateway
		 * lives, so the janitor can tell a dead one at any moment. */
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		char final[sizeof a.sun_path];
		snprintf(a.sun_path, sizeof a.sun_path, "%s/.%d", dir, ports[made]);
		snprintf(final, sizeof final, "%s/%d", dir, ports[made]);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
		    chown(a.sun_path, uid, gid) < 0 ||
		    chmod(a.sun_path, 0600) < 0 || rename(a.sun_path, final) < 0) {
			err_errno(e, _("cannot create the gateway's socket %s"), final);
			if (fd >= 0)
				close(fd);
			unlink(a.sun_path);
			goto fail;
		}
		listen_fds[made] = fd;
	}
	if (chown(dir, uid, gid) < 0) {
		err_errno(e, _("cannot hand %s to the sandbox's user"), dir);
		goto fail;
	}
	*dir_out = xstrdup(dir);
	return 0;
fail:
	for (size_t i = 0; i < made; i++)
		close(listen_fds[i]);
	bridge_remove(dir, ports, nports);
	return -1;
}

/* 1 if the unix socket `name` in dirfd refuses connections (nobody
 * listens: its gateway is dead). */
static int socket_dead(int dirfd, const char *name)
{
	char path[64];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* /proc/self/fd/N/NAME reaches the entry without following the
	 * folder's path again. */
	if ((size_t)snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name) >= sizeof path ||
	    strlen(path) >= sizeof a.sun_path)
		return 0;
	memcpy(a.sun_path, path, strlen(path) + 1);
	/* Non-blocking: a listener with a full backlog would hold a blocking
	 * connect (and serve's start) indefinitely; EAGAIN means alive. */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	int dead = connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno == ECONNREFUSED;
	close(fd);
	return dead;
}

/* The stale socket folders in parent. */
static void janitor_in(const char *parent)
{
	DIR *tmp = opendir(parent);
	if (!tmp)
		return;
	struct dirent *de;
	while ((de = readdir(tmp))) {
		if (strncmp(de->d_name, "paddock-gateway-", 16) != 0)
			continue;
		int dfd = openat(dirfd(tmp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		/* Ours hold only sockets named after ports, which listen as
		 * long as their gateway lives (make_bridge renames them into
		 * place once they listen); a folder with anything else, or a
		 * live socket, is left alone.  A ".PORT" socket is one being
		 * made: stale only in a folder untouched for a minute. */
		struct stat dst;
		if (fstat(dfd, &dst) < 0) {
			close(dfd);
			continue;
		}
		int old = time(NULL) - dst.st_mtime >= 60;
		DIR *d = fdopendir(dup(dfd));
		int stale = d != NULL, n = 0;
		struct dirent *e;
		while (stale && (e = readdir(d))) {
			struct stat st;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			n++;
			const char *num = e->d_name + (e->d_name[0] == '.');
			stale = *num && strspn(num, "0123456789") == strlen(num) &&
			        fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			        S_ISSOCK(st.st_mode) &&
			        (num == e->d_name ? socket_dead(dfd, e->d_name) : old);
		}
		if (stale && n > 0) {
			rewinddir(d);
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					unlinkat(dfd, e->d_name, 0);
			unlinkat(dirfd(tmp), de->d_name, AT_REMOVEDIR);
		}
		if (d)
			closedir(d);
		close(dfd);
	}
	closedir(tmp);
}

void gateway_janitor(void)
{
	janitor_in("/tmp");
	if (strcmp(bridge_parent(), "/tmp") != 0)
		janitor_in(bridge_parent());
}

/* The loopback form: our listeners on the host's 127.0.0.1, at ports the
 * kernel chooses, so that tasks never collide; the environment and the
 * agents' settings name the real ports. */
static int make_loopback(size_t nports, int *listen_fds, int *real, struct err *e)
{
	for (size_t i = 0; i < nports; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0,
		                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof a;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
		    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
			err_errno(e, _("cannot listen on the host's loopback for the gateway"));
			if (fd >= 0)
				close(fd);
			while (i > 0)
				close(listen_fds[--i]);
			return -1;
		}
		listen_fds[i] = fd;
		real[i] = ntohs(a.sin_port);
	}
	return 0;
}

int gateway_port(const struct gateway *g, int port)
{
	for (size_t i = 0; g && i < g->nports; i++)
		if (g->ports[i] == port)
			return g->real[i];
	return port;
}

static char *ports_list(const int *ports, size_t nports)
{
	struct buf b = { 0 };
	for (size_t i = 0; i < nports; i++)
		buf_printf(&b, "%s%d", i ? "," : "", ports[i]);
	return buf_detach(&b);
}

static void env_add(char ***env, size_t *n, char *kv)
{
	*env = xrealloc(*env, (*n + 2) * sizeof **env);
	(*env)[(*n)++] = kv;
	(*env)[*n] = NULL;
}

static char **make_env(const struct gateway_policy *p, const struct gateway *g)
{
	const struct config *cfg = p->cfg;
	char **env = NULL;
	size_t n = 0;
	const char *names[] = { "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy" };
	for (size_t i = 0; i < 4; i++)
		env_add(&env, &n, xasprintf("%s=http://127.0.0.1:%d", names[i],
		                              gateway_port(g, cfg->gw_proxy_port)));
	env_add(&env, &n, xstrdup("NO_PROXY=127.0.0.1,localhost"));
	env_add(&env, &n, xstrdup("no_proxy=127.0.0.1,localhost"));
	if (!p->model_endpoints)
		return env;
	const struct endpoint_conf *agent_ep = config_find_endpoint(cfg, p->endpoint);
	int have_a = 0, have_o = 0;
	/* The agent's own endpoint first, so that it wins for its kind. */
	for (size_t k = 0; k <= cfg->nendpoints; k++) {
		const struct endpoint_conf *ep = k == 0 ? agent_ep : &cfg->endpoints[k - 1];
		if (!ep || (k > 0 && ep == agent_ep))
			continue;
		char *up = xstrdup(ep->name);
		for (char *q = up; *q; q++)
			*q = (*q >= 'a' && *q <= 'z') ? (char)(*q - 32) : (*q == '-' || *q == '.') ? '_' : *q;
		int port = gateway_port(g, ep->port);
		env_add(&env, &n, xasprintf("PADDOCK_ENDPOINT_%s=http://127.0.0.1:%d", up, port));
		free(up);
		if (ep->kind == ENDPOINT_ANTHROPIC && !have_a) {
			have_a = 1;
			env_add(&env, &n, xasprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port));
			env_add(&env, &n, xstrdup("ANTHROPIC_API_KEY=" GATEWAY_PLACEHOLDER_KEY));
		} else if (ep->kind == ENDPOINT_OPENAI && !have_o) {
			have_o = 1;
			env_add(&env, &n, xasprintf("OPENAI_BASE_URL=http://127.0.0.1:%d/v1", port));
			env_add(&env, &n, xstrdup("OPENAI_API_KEY=" GATEWAY_PLACEHOLDER_KEY));
		}
	}
	return env;
}

struct gateway_run {
	const struct gateway_policy *p;
	const int *lfds;
	size_t nports;
	int report_fd;
	struct gateway_stats *stats;
};

/* The gateway process. */
static int gateway_run(void *arg)
{
	const struct gateway_run *run = arg;
	for (size_t i = 0; i < run->nports; i++)
		fcntl(run->lfds[i], F_SETFL, O_NONBLOCK);
	return gateway_serve(run->p, run->lfds, run->nports, run->report_fd, run->stats);
}

int gateway_start(const struct gateway_policy *p, int report_fd, struct gateway **out,
                  struct err *e)
{
	const struct config *cfg = p->cfg;
	int ports[MAX_ADDRS + 1], lfds[MAX_ADDRS + 1];
	size_t nports = 0;
	*out = NULL;
	if (p->model_endpoints) {
		if (cfg->nendpoints > MAX_ADDRS)
			return err_set(e, _("too many model endpoints (at most %d)"), MAX_ADDRS);
		for (size_t i = 0; i < cfg->nendpoints; i++)
			ports[nports++] = cfg->endpoints[i].port;
	}
	ports[nports++] = cfg->gw_proxy_port;
	struct gateway *g = xcalloc(1, sizeof *g);
	g->netns_fd = -1;
	memcpy(g->ports, ports, nports * sizeof *ports);
	memcpy(g->real, ports, nports * sizeof *ports);
	g->nports = nports;
	unsigned nets = p->be->nets;
	g->stats = mmap(NULL, sizeof *g->stats, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                -1, 0);
	if (g->stats == MAP_FAILED) {
		free(g);
		return err_set(e, _("cannot start the gateway: %s"), strerror(errno));
	}
	memset(g->stats, 0, sizeof *g->stats);
	int made = -1;
	if (!(nets & (SANDBOX_NET_NETNS | SANDBOX_NET_BRIDGE))) {
		/* A sandbox on the host's network (the process backend). */
		made = make_loopback(nports, lfds, g->real, e);
	} else if (cfg->gw_network != GW_NETWORK_BRIDGE && (nets & SANDBOX_NET_NETNS)) {
		/* The backend's, where root makes it for us (privsep.h). */
		made = p->be->netns ? p->be->netns(ports, nports, lfds, &g->netns_fd, e)
		                    : gateway_netns_make(ports, nports, lfds, &g->netns_fd, e);
		/* Where no namespace can be made for the sandbox to join (a
		 * container that forbids it), bwrap can still make one of its own. */
		if (made < 0 && cfg->gw_network == GW_NETWORK_AUTO) {
			g->note = xasprintf(_("the sandbox reaches the gateway through paddock-bridge: %s"),
			                    e->msg);
			memset(e, 0, sizeof *e);
		}
	}
	if (made < 0 && cfg->gw_network != GW_NETWORK_NAMESPACE && (nets & SANDBOX_NET_BRIDGE)) {
		made = make_bridge(p->be, ports, nports, lfds, &g->bridge_dir, e);
		if (made == 0)
			g->bridge_ports = ports_list(ports, nports);
	}
	if (made < 0 && !e->msg[0])
		err_set(e, _("this sandbox cannot join the network namespace gateway.network = "
		             "namespace asks for (paddock runs as a user, not root); set "
		             "gateway.network to auto or bridge"));
	if (made < 0) {
		munmap(g->stats, sizeof *g->stats);
		free(g->note);
		free(g);
		return -1;
	}
	/* Only the listeners, the report pipe and stdio stay open; it dies
	 * with its supervisor. */
	int keep[MAX_ADDRS + 2];
	for (size_t i = 0; i < nports; i++)
		keep[i] = lfds[i];
	keep[nports] = report_fd;
	struct gateway_run run = { .p = p, .lfds = lfds, .nports = nports, .report_fd = report_fd,
	                           .stats = g->stats };
	g->proc = (struct child){ .fn = gateway_run, .arg = &run, .keep = keep,
	                          .nkeep = nports + 1,
	                          .flags = CHILD_CLOSE_FDS | CHILD_DIE_WITH_PARENT };
	int started = child_start(&g->proc, e);
	for (size_t i = 0; i < nports; i++)
		close(lfds[i]);
	if (started < 0) {
		gateway_stop(g);
		return err_prefix(e, _("cannot start the gateway"));
	}
	g->env = make_env(p, g);
	*out = g;
	return 0;
}

void gateway_attach(const struct gateway *g, struct sandbox_net *net)
{
	net->netns_fd = g->netns_fd;
	net->bridge_dir = g->bridge_dir;
	net->bridge_ports = g->bridge_ports;
}

const char *gateway_note(const struct gateway *g)
{
	return g ? g->note : NULL;
}

const char *const *gateway_env(const struct gateway *g)
{
	return (const char *const *)g->env;
}

const struct gateway_stats *gateway_stats(const struct gateway *g)
{
	return g->stats;
}

void gateway_stop(struct gateway *g)
{
	if (!g)
		return;
	if (g->proc.pid > 0) {
		child_kill(&g->proc, SIGTERM);
		/* Woken as it ends (a pidfd), at most 2 s. */
		child_wait_ms(&g->proc, 2000);
		if (g->proc.pid > 0) {
			child_kill(&g->proc, SIGKILL);
			child_finish(&g->proc);
		}
	}
	if (g->netns_fd >= 0)
		close(g->netns_fd);
	if (g->bridge_dir)
		bridge_remove(g->bridge_dir, g->ports, g->nports);
	free(g->bridge_dir);
	free(g->bridge_ports);
	free(g->note);
	for (size_t i = 0; g->env && g->env[i]; i++)
		free(g->env[i]);
	free(g->env);
	munmap(g->stats, sizeof *g->stats);
	free(g);
}
