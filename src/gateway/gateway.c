/* The gateway process: its loop, its setup and teardown, and the lines it
 * reports.  The parts it drives: gateway_int.h. */
#include "autoconfig.h"
#include "gateway.h"
#include "gateway_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "sanitize.h"
#include "seccomp_filter.h"

#define MAX_CONNS 256
#define MAX_RECORDS 5000       /* egress lines per gateway */

/* ---- reports ---- */

/* One line to the scheduler (report.h); writes under PIPE_BUF are
 * atomic, so lines from several processes do not mix. */
void gw_report_line(struct gw *g, enum report_verb verb, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	if (!text)
		return;
	/* Only lines that go out in one write (escaping at most doubles
	 * them; PIPE_BUF is 4096): a longer one could mix with the
	 * supervisor's.  Fields are cut short enough for that. */
	if (strlen(text) <= 1990)
		report_send(g->report_fd, verb, text);
	free(text);
}

static json_t *jstr_or_null(const char *s, size_t max)
{
	if (!s)
		return json_null();
	size_t n = strlen(s);
	/* Cut inside a character, the string is repaired, not lost. */
	return sanitize_json_string(s, n > max ? max : n);
}

void gw_record(struct gw *g, struct conn *c, const char *verdict, const char *reason)
{
	if (strcmp(verdict, "allowed") == 0)
		g->stats->allowed++;
	else
		g->stats->refused++;
	/* A sandbox that floods requests must not flood the store: past the
	 * cap they are counted (gate summary), and the gateway's last record
	 * says how many were not listed (gw_record_unlisted). */
	if (++g->nrecords > MAX_RECORDS) {
		if (strcmp(verdict, "allowed") == 0)
			g->unlisted_allowed++;
		else
			g->unlisted_refused++;
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "time", json_real(clock_wall()));
	json_object_set_new(o, "step", json_string(g->p->step ? g->p->step : "agent"));
	json_object_set_new(o, "kind", json_string(c->kind ? c->kind : "http"));
	json_object_set_new(o, "endpoint", c->ep >= 0 ? json_string(g->eps[c->ep].conf->name)
	                                              : json_null());
	json_object_set_new(o, "host", jstr_or_null(c->thost, 253));
	json_object_set_new(o, "port", c->tport ? json_integer(c->tport) : json_null());
	json_object_set_new(o, "method", c->method[0] ? json_string(c->method) : json_null());
	json_object_set_new(o, "path", jstr_or_null(c->path, 512));
	json_object_set_new(o, "status", c->status ? json_integer(c->status) : json_null());
	json_object_set_new(o, "up", json_integer((json_int_t)c->bytes_up));
	json_object_set_new(o, "down", json_integer((json_int_t)c->bytes_down));
	json_object_set_new(o, "ms", json_integer((json_int_t)((clock_mono() - c->t0) * 1000)));
	json_object_set_new(o, "verdict", json_string(verdict));
	json_object_set_new(o, "reason", jstr_or_null(reason, 300));
	gw_report_line(g, REPORT_EGRESS, o);
	json_decref(o);
}

/* The record that ends a list cut at MAX_RECORDS: how many it left out. */
static void gw_record_unlisted(struct gw *g)
{
	uint64_t n = g->unlisted_allowed + g->unlisted_refused;
	if (!n)
		return;
	char why[200];
	snprintf(why, sizeof why, "%llu more requests and tunnels (%llu allowed, %llu refused) "
	         "were counted but not listed: the list stops at %d per gateway",
	         (unsigned long long)n, (unsigned long long)g->unlisted_allowed,
	         (unsigned long long)g->unlisted_refused, MAX_RECORDS);
	json_t *o = json_pack("{s:f, s:s, s:s, s:n, s:n, s:n, s:n, s:n, s:n, s:i, s:i, s:i, s:s, s:s}",
	                      "time", clock_wall(), "step", g->p->step ? g->p->step : "agent",
	                      "kind", "unlisted", "endpoint", "host", "port", "method", "path",
	                      "status", "up", 0, "down", 0, "ms", 0, "verdict", "unlisted",
	                      "reason", why);
	gw_report_line(g, REPORT_EGRESS, o);
	json_decref(o);
}

void gw_report_usage(struct gw *g)
{
	struct gateway_stats *st = g->stats;
	json_t *o = json_object();
	json_object_set_new(o, "input", json_integer((json_int_t)st->total.input));
	json_object_set_new(o, "output", json_integer((json_int_t)st->total.output));
	json_object_set_new(o, "cache_read", json_integer((json_int_t)st->total.cache_read));
	json_object_set_new(o, "cache_write", json_integer((json_int_t)st->total.cache_write));
	json_object_set_new(o, "cost", json_real(st->cost));
	json_object_set_new(o, "requests", json_integer((json_int_t)st->requests));
	json_object_set_new(o, "priced", json_boolean(!st->unpriced));
	gw_report_line(g, REPORT_USAGE, o);
	json_decref(o);
}

static uint64_t growth(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

double gw_usage_add(struct gw *g, const struct usage *u, const char *model)
{
	struct gateway_stats *st = g->stats;
	const struct price_conf *price = config_find_price(g->cfg, model);
	double cost = usage_cost(u, price);
	usage_add(&st->total, u);
	st->cost += cost;
	if (!price && usage_tokens(u) > 0) {
		st->unpriced = 1;
		/* A budget in USD cannot be kept without a price: stop here
		 * rather than let the task spend without a limit. */
		if (g->p->budget > 0 && !st->unpriced_model[0]) {
			snprintf(st->unpriced_model, sizeof st->unpriced_model, "%s",
			         model && *model ? model : "(unnamed)");
			/* The upstream's words, bound for messages and JSON. */
			for (char *q = st->unpriced_model; *q; q++)
				if (*q < 0x21 || *q > 0x7e || *q == '"' || *q == '\\')
					*q = '?';
		}
	}
	return cost;
}

/* Totals = what earlier rounds spent + completed responses + the ones
 * streaming now; checked against the budget after every change. */
void gw_usage_changed(struct gw *g, struct conn *c)
{
	struct gateway_stats *st = g->stats;
	if (c && c->usage) {
		const struct usage *u = usage_parser_usage(c->usage);
		/* Only the growth since the last look is added. */
		struct usage d = {
			growth(u->input, c->counted.input), growth(u->output, c->counted.output),
			growth(u->cache_read, c->counted.cache_read),
			growth(u->cache_write, c->counted.cache_write),
		};
		c->counted_cost += gw_usage_add(g, &d, usage_parser_model(c->usage));
		c->counted = *u;
	}
	const struct gateway_policy *p = g->p;
	int over = (p->budget > 0 && st->cost >= p->budget) ||
	           (p->budget > 0 && st->unpriced_model[0]) ||
	           (p->budget_tokens > 0 && usage_tokens(&st->total) >= p->budget_tokens);
	if (over && !st->over_budget) {
		st->over_budget = 1;
		st->stop = 1;
		gw_report_usage(g);
	}
}

/* ---- the loop ---- */

void gw_dispatch(struct gw *g, struct conn *c)
{
	if (c->ep >= 0) {
		/* An Upgrade (websocket) is answered as a plain request, then closed. */
		if (c->parser.upgrade)
			c->keep_alive = 0;
		gw_model_request(g, c);
	} else {
		gw_proxy_request(g, c);
	}
}

static void conn_finish(struct gw *g, struct conn *c, const char *why)
{
	/* Tunnels are recorded when they end, with their byte counts. */
	if ((c->kind && strcmp(c->kind, "model") != 0) && c->tunnel_counted && c->ufd >= 0)
		gw_record(g, c, "allowed", c->end_reason);
	if (c->queued) {
		char *r = xasprintf("%s, while it waited its turn (limits.model-concurrency)", why);
		gw_record(g, c, "refused", r);
		free(r);
	}
	/* A model response cut short (the agent hung up once it had the last
	 * event, or the sandbox ended) still spent tokens: count it, so the
	 * task's usage matches what the upstream bills. */
	if (c->easy) {
		gw_model_cut(g, c);
		c->status = c->resp_status;
		gw_record(g, c, "allowed", why);
		gw_report_usage(g);
	}
}

static volatile sig_atomic_t gw_stop;

static void on_stop(int sig)
{
	(void)sig;
	gw_stop = 1;
}

static int gw_setup(struct gw *g, const struct gateway_policy *p, int report_fd,
                    struct gateway_stats *stats, struct err *e)
{
	memset(g, 0, sizeof *g);
	g->p = p;
	g->cfg = p->cfg;
	g->report_fd = report_fd;
	g->stats = stats;
	for (size_t i = 0; i < p->nallow_hosts; i++) {
		g->rules = xrealloc(g->rules, (g->nrules + 1) * sizeof *g->rules);
		if (egress_rule_parse(p->allow_hosts[i], &g->rules[g->nrules], e) < 0)
			return -1;
		g->nrules++;
	}
	for (size_t i = 0; i < g->cfg->ngw_allow_address; i++) {
		g->allow = xrealloc(g->allow, (g->nallow + 1) * sizeof *g->allow);
		if (egress_cidr_parse(g->cfg->gw_allow_address[i], &g->allow[g->nallow]) == 0)
			g->nallow++;
	}
	if (g->cfg->gw_hosts_file && egress_hosts_load(g->cfg->gw_hosts_file, &g->hosts, e) < 0)
		return -1;
	if (p->model_endpoints) {
		g->neps = g->cfg->nendpoints;
		g->eps = xcalloc(g->neps + 1, sizeof *g->eps);
		for (size_t i = 0; i < g->neps; i++) {
			struct endpoint_rt *ep = &g->eps[i];
			ep->conf = &g->cfg->endpoints[i];
			ep->key = config_endpoint_key(ep->conf);
			if (!ep->key)
				ep->missing = config_endpoint_key_missing(ep->conf);
			/* The upstream's name goes through the same resolver as the
			 * proxy's (but may be internal: a local model server is). */
			CURLU *cu = curl_url();
			char *host = NULL, *port = NULL;
			if (curl_url_set(cu, CURLUPART_URL, ep->conf->upstream, 0) == CURLUE_OK &&
			    curl_url_get(cu, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
			    curl_url_get(cu, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
				struct sockaddr_storage ss;
				char *norm = NULL;
				struct err ne;
				unsigned char bin[16];
				int literal = inet_pton(AF_INET, host, bin) == 1 || host[0] == '[';
				if (!literal && egress_host_normalize(host, strlen(host), &norm, &ne) == 0 &&
				    egress_hosts_lookup(g->hosts, norm, &ss, 1) == 1) {
					char ip[INET6_ADDRSTRLEN];
					gw_addr_text(&ss, ip, sizeof ip);
					ep->resolve = ss.ss_family == AF_INET6
					              ? xasprintf("%s:%s:[%s]", host, port, ip)
					              : xasprintf("%s:%s:%s", host, port, ip);
				} else if (!literal && !g->cfg->gw_dns) {
					ep->refuse = xasprintf("paddock gateway: cannot resolve %s: gateway.dns "
					                       "is off and gateway.hosts-file does not list it",
					                       host);
				}
				free(norm);
			}
			curl_free(host);
			curl_free(port);
			curl_url_cleanup(cu);
		}
	}
	return 0;
}

static void gw_free(struct gw *g)
{
	while (g->conns) {
		struct conn *c = g->conns;
		g->conns = c->next;
		gw_conn_free(g, c);
	}
	for (size_t i = 0; i < g->neps; i++) {
		if (g->eps[i].key)
			explicit_bzero(g->eps[i].key, strlen(g->eps[i].key));
		free(g->eps[i].key);
		free(g->eps[i].resolve);
		free(g->eps[i].refuse);
		free(g->eps[i].missing);
	}
	free(g->eps);
	for (size_t i = 0; i < g->nrules; i++)
		egress_rule_free(&g->rules[i]);
	free(g->rules);
	free(g->allow);
	egress_hosts_free(g->hosts);
	/* Lookups still running keep their memory: the process is ending. */
}

static int gateway_drop_root(const struct config *cfg)
{
	pid_t parent = getppid();
	int deathsig = 0;
	prctl(PR_GET_PDEATHSIG, &deathsig);
	if (setgroups(0, NULL) < 0 || setresgid(cfg->gw_gid, cfg->gw_gid, cfg->gw_gid) < 0 ||
	    setresuid(cfg->gw_uid, cfg->gw_uid, cfg->gw_uid) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	/* The uid change cleared the parent-death signal. */
	if (deathsig) {
		if (prctl(PR_SET_PDEATHSIG, deathsig) < 0)
			return -1;
		if (getppid() != parent)
			_exit(1);
	}
	return 0;
}

/* Zeroes and removes one variable: the string environ points at is, as
 * a rule, the block /proc/PID/environ shows. */
static void gw_scrub_var(const char *name)
{
	if (!name)
		return;
	size_t n = strlen(name);
	for (char **ev = environ; ev && *ev; ev++)
		if (strncmp(*ev, name, n) == 0 && (*ev)[n] == '=')
			explicit_bzero(*ev + n + 1, strlen(*ev + n + 1));
	unsetenv(name);
}

/* The secrets' variables, once the keys are read: nothing in the
 * gateway needs them again (paddock-config(5), EGRESS). */
static void gw_scrub_env(const struct config *cfg)
{
	for (size_t i = 0; i < cfg->nendpoints; i++)
		if (cfg->endpoints[i].key_env)
			gw_scrub_var(cfg->endpoints[i].key_env);
	for (size_t i = 0; i < cfg->ntokens; i++)
		if (cfg->tokens[i].value_env)
			gw_scrub_var(cfg->tokens[i].value_env);
	for (size_t i = 0; i < cfg->nrepos; i++) {
		const struct repo_conf *r = &cfg->repos[i];
		gw_scrub_var(r->token_env ? r->token_env : "PADDOCK_GIT_TOKEN");
		gw_scrub_var(r->github_token_env ? r->github_token_env : "GITHUB_TOKEN");
	}
	gw_scrub_var(cfg->wh_secret_env ? cfg->wh_secret_env : "PADDOCK_WEBHOOK_SECRET");
}

/* Setup after curl_global_init, up to dropping root and the seccomp
 * filter; on failure, says why on stderr and frees g. */
static int gw_start(struct gw *g, const struct gateway_policy *p, size_t nfds,
                    int report_fd, struct gateway_stats *stats)
{
	struct err e = {{0}};

	if (gw_setup(g, p, report_fd, stats, &e) < 0) {
		fprintf(stderr, "paddock gateway: %s\n", e.msg);
		gw_free(g);
		return -1;
	}
	if (nfds != g->neps + 1) {
		fprintf(stderr, "paddock gateway: %zu listeners for %zu endpoints\n", nfds, g->neps);
		gw_free(g);
		return -1;
	}
	gw_scrub_env(g->cfg);
	/* Everything root was needed for is open (keys, hosts file, our
	 * listeners): what parses the sandbox's requests runs as
	 * gateway.uid, which is not the sandbox's. */
	if (getuid() == 0 && gateway_drop_root(g->cfg) < 0) {
		fprintf(stderr, "paddock gateway: cannot drop root to gateway.uid %lu: %s\n",
		        (unsigned long)g->cfg->gw_uid, strerror(errno));
		gw_free(g);
		return -1;
	}
	/* A uid change makes the process dumpable again (fs.suid_dumpable). */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (!p->no_seccomp && seccomp_filter_gateway(&e) < 0) {
		fprintf(stderr, "paddock gateway: %s\n", e.msg);
		gw_free(g);
		return -1;
	}
	return 0;
}

/* The descriptors of one poll, with what each belongs to. */
struct gw_pollset {
	size_t cap, n;
	struct curl_waitfd *wf;
	struct conn **owner;
	int *which;        /* 0 client, 1 upstream, 2 + i listener i */
};

static void gw_pollset_add(struct gw_pollset *ps, int fd, short events, struct conn *c,
                           int which)
{
	ps->wf[ps->n] = (struct curl_waitfd){ .fd = fd, .events = events };
	ps->owner[ps->n] = c;
	ps->which[ps->n++] = which;
}

/* What to wait for: the listeners while there is room for a connection,
 * each client, and each upstream socket of ours (libcurl adds its own).
 * Returns whether to wake up soon (lookups, connects, paused transfers). */
static int gw_pollset_fill(struct gw *g, struct gw_pollset *ps, const int *listen_fds,
                           size_t nfds)
{
	size_t need = nfds + 2 * g->nconns + 1;
	if (need > ps->cap) {
		ps->cap = need * 2;
		ps->wf = xrealloc(ps->wf, ps->cap * sizeof *ps->wf);
		ps->owner = xrealloc(ps->owner, ps->cap * sizeof *ps->owner);
		ps->which = xrealloc(ps->which, ps->cap * sizeof *ps->which);
	}
	ps->n = 0;
	for (size_t i = 0; i < nfds; i++)
		gw_pollset_add(ps, listen_fds[i], g->nconns < MAX_CONNS ? CURL_WAIT_POLLIN : 0,
		               NULL, 2 + (int)i);
	int fast = g->lookups != NULL;
	for (struct conn *c = g->conns; c; c = c->next) {
		short ev = 0;
		int pending_out = c->out.len > c->out_off;
		if (pending_out)
			ev |= CURL_WAIT_POLLOUT;
		if (!c->client_eof &&
		    ((c->st == C_READ) || (c->st == C_TUNNEL && c->uout.len < OUT_HIGH) ||
		     c->st == C_UPSTREAM || c->st == C_QUEUED))
			ev |= CURL_WAIT_POLLIN;
		gw_pollset_add(ps, c->fd, ev, c, 0);
		if (c->ufd >= 0 && (c->st == C_CONNECTING || c->st == C_TUNNEL)) {
			short uev = 0;
			if (c->st == C_CONNECTING || c->uout.len > c->uout_off)
				uev |= CURL_WAIT_POLLOUT;
			if (c->st == C_TUNNEL && !c->upstream_eof && c->out.len < OUT_HIGH)
				uev |= CURL_WAIT_POLLIN;
			gw_pollset_add(ps, c->ufd, uev, c, 1);
		}
		if (c->st == C_CONNECTING || c->paused)
			fast = 1;
	}
	for (size_t i = 0; i < ps->n; i++)
		ps->wf[i].revents = 0;
	return fast;
}

/* Model requests libcurl has finished. */
static void gw_curl_done(struct gw *g)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(g->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct conn *c = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
		if (c)
			gw_model_done(g, c, m->data.result);
	}
}

/* A new connection on listener li: an endpoint's, or the proxy's (last). */
static void gw_accept(struct gw *g, int lfd, size_t li)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		gw_conn_new(g, fd, li < g->neps ? (int)li : -1);
	}
}

/* Acts on what the poll found ready. */
static void gw_pollset_dispatch(struct gw *g, const struct gw_pollset *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		short rev = ps->wf[i].revents;
		if (!rev)
			continue;
		if (ps->which[i] >= 2) {
			gw_accept(g, ps->wf[i].fd, (size_t)(ps->which[i] - 2));
			continue;
		}
		struct conn *c = ps->owner[i];
		if (c->st == C_DEAD)
			continue;
		if (ps->which[i] == 0) {
			if (rev & CURL_WAIT_POLLOUT &&
			    gw_flush_to(c->fd, &c->out, &c->out_off) < 0) {
				c->st = C_DEAD;
				continue;
			}
			if (rev & (CURL_WAIT_POLLIN | CURL_WAIT_POLLPRI))
				gw_conn_read(g, c);
		} else {
			if (c->st == C_CONNECTING && (rev & (CURL_WAIT_POLLOUT)))
				gw_connect_done(g, c);
			else if (c->st == C_TUNNEL && (rev & CURL_WAIT_POLLIN))
				gw_tunnel_upstream_read(g, c);
		}
	}
}

/* A tunnel that moves nothing holds one of max-tunnels for good: closed
 * after gateway.tunnel-idle. */
static void gw_tunnel_idle(struct gw *g, struct conn *c, double t)
{
	uint64_t moved = c->bytes_up + c->bytes_down;
	if (moved != c->idle_bytes || c->idle_since == 0) {
		c->idle_bytes = moved;
		c->idle_since = t;
	} else if (g->cfg->gw_tunnel_idle > 0 && t - c->idle_since >= g->cfg->gw_tunnel_idle) {
		c->end_reason = "closed after gateway.tunnel-idle without traffic";
		c->st = C_DEAD;
	}
}

/* What a connection needs besides ready sockets: connect timeouts, output
 * still queued, tunnel progress and idling, resuming a paused transfer
 * once the client has drained, and a request already buffered. */
static void gw_conn_tick(struct gw *g, struct conn *c, double t)
{
	if (c->st == C_CONNECTING && t > c->deadline) {
		close(c->ufd);
		c->ufd = -1;
		gw_start_connect(g, c);
	}
	if (c->out.len > c->out_off && c->st != C_DEAD &&
	    gw_flush_to(c->fd, &c->out, &c->out_off) < 0)
		c->st = C_DEAD;
	if (c->st == C_TUNNEL)
		gw_tunnel_progress(g, c);
	if (c->st == C_TUNNEL)
		gw_tunnel_idle(g, c, t);
	if (c->paused && c->easy && c->out.len - c->out_off < OUT_HIGH / 2) {
		c->paused = 0;
		curl_easy_pause(c->easy, CURLPAUSE_CONT);
	}
	if (c->st == C_FLUSH_CLOSE && c->out.len <= c->out_off)
		c->st = C_DEAD;
	if (c->st == C_READ && c->in.len && !c->msg_done)
		gw_conn_parse(g, c);
}

/* Ticks every connection and frees the dead ones. */
static void gw_sweep(struct gw *g)
{
	double t = clock_mono();
	struct conn **pp = &g->conns;

	while (*pp) {
		struct conn *c = *pp;
		gw_conn_tick(g, c, t);
		if (c->st == C_DEAD) {
			conn_finish(g, c, "the agent closed the connection first");
			*pp = c->next;
			g->nconns--;
			gw_conn_free(g, c);
			continue;
		}
		pp = &c->next;
	}
}

int gateway_serve(const struct gateway_policy *p, const int *listen_fds, size_t nfds,
                  int report_fd, struct gateway_stats *stats)
{
	struct gw g;
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* No core dump and no ptrace by the same uid: this process holds the
	 * keys. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	stats->total = p->base;
	stats->cost = p->base_cost;
	stats->requests = p->base_requests;
	stats->unpriced = p->base_unpriced;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	if (gw_start(&g, p, nfds, report_fd, stats) < 0)
		return 1;
	g.multi = curl_multi_init();
	/* Budget already spent by earlier rounds: refuse from the start. */
	gw_usage_changed(&g, NULL);

	struct gw_pollset ps = { .cap = 16 };
	ps.wf = xcalloc(ps.cap, sizeof *ps.wf);
	ps.owner = xcalloc(ps.cap, sizeof *ps.owner);
	ps.which = xcalloc(ps.cap, sizeof *ps.which);
	while (!gw_stop) {
		int fast = gw_pollset_fill(&g, &ps, listen_fds, nfds);
		curl_multi_poll(g.multi, ps.wf, (unsigned)ps.n, fast ? 50 : 1000, NULL);
		int running;
		curl_multi_perform(g.multi, &running);
		gw_curl_done(&g);
		gw_pollset_dispatch(&g, &ps);
		gw_lookups_poll(&g);
		gw_sweep(&g);
		gw_model_admit(&g);
	}
	/* Stopped with the sandbox: what was still open is recorded too. */
	for (struct conn *c = g.conns; c; c = c->next)
		conn_finish(&g, c, "the sandbox ended first");
	gw_record_unlisted(&g);
	free(ps.wf);
	free(ps.owner);
	free(ps.which);
	gw_free(&g);
	curl_multi_cleanup(g.multi);
	curl_global_cleanup();
	return 0;
}
