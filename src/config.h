/* config: the user's configuration, in git-config syntax, read with
 * libgit2's config API.
 *
 * The file is $PADDOCK_CONFIG, else $XDG_CONFIG_HOME/paddock/config (else
 * ~/.config/paddock/config; a relative $XDG_CONFIG_HOME is ignored).  A
 * missing file is an empty configuration.  config_load fills a struct
 * config that owns all its strings; free it with config_free.
 *
 * Sections: [paddock] workers; [limits] timeout memory pids disk output
 * bundle (units.h syntax) cpus; [sandbox] uid gid (not 0); [repo "NAME"] url
 * (required) branch test setup; [agent "NAME"] command (required, split
 * as agent.h does) files; [endpoint "NAME"], [price "MODEL"] and [gateway] for
 * the egress gateway (gateway.h); [recipe "NAME"] for kinds of task
 * (recipe.h); [webhook] for the JSON POSTs of
 * webhook.h; [api] and [token "NAME"] for api.h; [ui] and [bind] for the
 * dashboard.  One table in config_keys.c lists every key with its type, default
 * and help: the parser dispatches with it, unknown keys get suggestions
 * from it, and config_write_man writes paddock-config(5)'s list of keys.
 * The ready-made agents (claude, codex, pi, opencode), endpoints
 * (anthropic, openai) and prices are data/builtin.conf, in this syntax,
 * built into the program and parsed once per process; a section of the
 * file with one of their names changes only the keys it sets.  Unknown
 * sections and keys, [include] and keys outside a section are errors.  Errors read "file:line: message"; the line of a
 * bad value is found by scanning the file (names compared as git does),
 * that of a syntax error comes from libgit2. */
#ifndef PADDOCK_CONFIG_H
#define PADDOCK_CONFIG_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "err.h"
#include "access.h"
#include "quota.h"
#include "kube_conf.h"

/* What a policy rule does with a finding. */
enum policy_action { POLICY_OFF, POLICY_WARN, POLICY_BLOCK };

/* The policy rules on what comes back (policy.h).  Indexes into
 * repo_conf.policy[]. */
enum policy_rule {
	POLICY_PATHS,          /* a path on the deny list */
	POLICY_SECRETS,        /* an added line that looks like a secret */
	POLICY_SIZE,           /* a file over max_file_size */
	POLICY_SYMLINKS,       /* a symlink pointing outside the repository */
	POLICY_SUBMODULES,     /* a submodule (gitlink or .gitmodules) change */
	POLICY_CONTROLS,       /* an added line or a path with an escape
	                          sequence, a control or a bidi control */
	POLICY_INVISIBLE,      /* an added line or a path with an invisible
	                          character (zero-width, tag, ...) */
	POLICY_AUTHORS,        /* a commit author other than the agent identity */
	POLICY_NRULES
};

/* What happens at the gate without a person (repo.approval,
 * recipe.approval, a task's own; task_row.approval names it).  Ordered from
 * the narrowest: a task may ask for a mode no wider than its repo's or
 * recipe's. */
enum approval_mode {
	APPROVAL_NEVER = 0,    /* the branch stays in the mirror: nothing is
	                          pushed, approve or not */
	APPROVAL_REVIEW,       /* a person approves, then paddock pushes */
	APPROVAL_AUTO_PUSH,    /* pushed as the gate opens; a person approves
	                          the pull request (it waits at the gate) */
	APPROVAL_AUTO,         /* approved and pushed without a person when the
	                          verified tests pass, the contract holds and
	                          no finding is above warn */
};
#define APPROVAL_UNSET (-1)
/* "never", "review", "auto-push", "auto"; NULL for another value. */
const char *config_approval_name(int mode);
/* The mode named, or -1. */
int config_approval_parse(const char *name);

struct repo_conf {
	char *name;            /* validated: [A-Za-z0-9][A-Za-z0-9._-]{0,63} */
	char *url;             /* path, file:// or https:// URL */
	char *branch;          /* default "main" */
	char *test;            /* shell command run in the sandbox, or NULL */
	char *setup;           /* shell command run once per template, or NULL */
	/* Pushing (forge.h). */
	char *push_url;        /* push-url: where branches go; NULL: url */
	char *token_env;       /* token-env: variable with the HTTPS token
	                          (default PADDOCK_GIT_TOKEN) */
	char *token_file;      /* token-file: a file with it, absolute or a
	                          name in $CREDENTIALS_DIRECTORY; NULL: none */
	char *ssh_key;         /* ssh-key: private key file for ssh://, or NULL
	                          (then the SSH agent) */
	char *ssh_known_hosts; /* ssh-known-hosts: the known_hosts file SSH host
	                          keys are checked against, or NULL
	                          (~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts) */
	char *branch_prefix;   /* branch-prefix: default "paddock/" */
	char **protected_;     /* protected: glob patterns of branches never
	                          pushed (the default branch always is) */
	size_t nprotected;
	/* Pull requests. */
	char *pull_request;    /* pull-request: "github" or NULL (none) */
	char *github_repo;     /* github-repo: "owner/name" */
	char *github_api;      /* github-api: default https://api.github.com */
	char *github_token_env;/* github-token-env: default GITHUB_TOKEN */
	char *github_token_file;/* github-token-file: as token_file */
	int draft;             /* draft: open pull requests as drafts */
	/* Policy (policy.h). */
	char **deny;           /* deny: extra glob patterns of denied paths */
	size_t ndeny;
	uint64_t max_file_size;/* max-file-size: default 10m */
	enum policy_action policy[POLICY_NRULES]; /* policy-<rule> */
	/* Egress (gateway.h): allow-host / setup-allow-host entries,
	 * "host", "*.suffix", "host:port" or "*.suffix:port". */
	char **allow_hosts;
	size_t nallow_hosts;
	char **setup_allow_hosts;
	size_t nsetup_allow_hosts;
	/* Workflows (issue 17). */
	int approval;          /* approval: enum approval_mode (review) */
	double confirm_over;   /* confirm-over: USD of estimated cost above
	                          which a task waits for a confirmation; < 0:
	                          never */
	int fix_rounds;        /* fix-rounds: tries the agent gets with the
	                          failing tests before the task fails (0) */
	/* GitHub as a front door (ghsync.h). */
	char *github_issues;   /* github-issues: "label:A,B" or a search query;
	                          NULL: issues are not read */
	char *github_handle;   /* github-handle: the login a comment mentions
	                          (without '@') to ask for changes, or NULL */
	char **reviewers;      /* reviewers: the token names and Unix users who
	                          may decide its gates; none: anyone whose role
	                          lets them (access.h) */
	size_t nreviewers;
	int four_eyes;         /* four-eyes: an approve by whoever queued the
	                          task is refused */
	char **github_reviewers; /* github-reviewers: logins, or "@org/team" */
	size_t ngithub_reviewers;
	int github_delete_branch; /* github-delete-branch: delete paddock's
	                             branch when its pull request is merged */
	int github_follow;     /* github-follow: 1, 0, or -1 (unset: on when
	                          github-issues, -handle or -reviewers is set) */
	/* Gates nobody looks at (reminder.h); < 0: unset, [paddock]'s apply. */
	double gate_reminder;  /* gate-reminder: seconds; 0: none */
	int max_at_review;     /* max-at-review: 0: no limit */
};
/* 1 when the n bytes at s are a GitHub login: letters, digits and single
 * inner hyphens, up to 39. */
int config_github_login_ok(const char *s, size_t n);
/* 1 when paddock follows r's pull requests and issues on GitHub. */
int config_repo_github_follows(const struct repo_conf *r);

/* An input of a recipe: {name} in its prompt and contract. */
struct recipe_input {
	char *name;            /* [a-z][a-z0-9_-]{0,31} */
	char *help;            /* what to give, or NULL */
};

/* A recipe: a kind of task ([recipe "NAME"]; the ready-made ones are
 * data/recipes.conf, built in; a section with one of their names changes
 * only the keys it sets).  Unset fields are NULL, < 0 or APPROVAL_UNSET:
 * the repo's (or the command line's) then apply. */
struct recipe_conf {
	char *name;
	char *description;     /* one line for lists */
	char *prompt;          /* the task text, with {input} placeholders */
	struct recipe_input *inputs;
	size_t ninputs;
	char *repo, *agent;    /* defaults */
	char *base;            /* a ref: branch, tag, commit, refs/pull/N/head */
	char *test;            /* test command */
	double budget;         /* USD; < 0: unset */
	double timeout;        /* seconds; 0: unset */
	int approval;          /* enum approval_mode, or APPROVAL_UNSET */
	double confirm_over;   /* < 0: unset */
	int fix_rounds;        /* < 0: unset */
	char **contract;       /* output contract clauses (recipe.h), or none:
	                          the default contract */
	size_t ncontract;
	int builtin;           /* ready-made, not from the file */
};

/* How an agent is driven and how its output is read (adapter.h). */
enum agent_kind { AGENT_SCRIPT, AGENT_CLAUDE, AGENT_CODEX, AGENT_PI, AGENT_OPENCODE };

struct agent_conf {
	char *name;            /* validated like repo names */
	char *command;         /* command line (split without a shell) */
	char *resume;          /* resume: command for later rounds (request
	                          changes), or NULL: command again */
	/* In command and resume, an argument {prompt} becomes the round's
	 * prompt, {session} the session id the agent reported, {model} model. */
	enum agent_kind kind;  /* kind: script (default), claude, codex, pi, opencode */
	char *endpoint;        /* endpoint: the model endpoint it uses, or NULL */
	char *package;         /* package: npm spec `paddock agent install` uses */
	char *model;           /* model, or NULL */
	char **files;          /* files: absolute paths of host files shown to
	                          its sandbox (read-only, same path) besides its
	                          script; the only other host files its command
	                          and resume may name (agent.h) */
	size_t nfiles;
	int builtin;           /* a ready-made definition, not from the file */
};

/* A model endpoint: a reverse proxy on the sandbox's loopback that adds the
 * key and forwards to the upstream ([endpoint "NAME"]; "anthropic" and
 * "openai" are built in). */
enum endpoint_kind { ENDPOINT_ANTHROPIC, ENDPOINT_OPENAI };
struct endpoint_conf {
	char *name;
	enum endpoint_kind kind;  /* kind: anthropic or openai (API format) */
	char *upstream;        /* upstream: base URL, e.g. https://api.anthropic.com */
	char *key_env;         /* key-env: variable holding the key, or NULL */
	char *key_file;        /* key-file: file holding the key, or NULL */
	int port;              /* port: on the sandbox's 127.0.0.1 */
};

/* Prices of a model in USD per million tokens ([price "MODEL"]; MODEL may
 * end in '*' to match a prefix). */
struct price_conf {
	char *model;
	double input, output, cache_read, cache_write;
};

/* A key binding of the dashboard: [bind] REQUEST = KEYS. */
struct bind_conf {
	char *name;
	char *keys;
};

/* An API token ([token "NAME"]): its name is the actor of the decisions
 * it makes. */
struct token_conf {
	char *name;
	char *value_env;       /* value-env: variable holding the token */
	char *value_file;      /* value-file: file holding it */
	int read_only;         /* read-only: the old spelling of role = read */
	enum access role;        /* role: ACCESS_NONE when not set (then read with
	                          read-only, else admin: config_token_role) */
};

/* gateway.network (gateway.h): auto tries the namespace, then the bridge. */
enum gw_network { GW_NETWORK_AUTO, GW_NETWORK_NAMESPACE, GW_NETWORK_BRIDGE };

struct config {
	char *path;            /* the file read (may not exist) */
	char *source;          /* its bytes as read (NUL-terminated), or NULL
	                          when there was no file: what an exec'd
	                          supervisor is given (supervisor.h) */
	size_t source_len;
	/* [remote]: this machine as a client of another's paddock serve
	 * (client.h; paddock --server) */
	char *remote_server;   /* server: its URL, or NULL */
	char *remote_token_file; /* token-file: the API token's file, or NULL */
	/* [mcp] (mcp.h) */
	enum access mcp_role;  /* role: ACCESS_NONE when unset (submit) */
	/* [api] (api.h) */
	char *api_listen;      /* listen: ADDR:PORT, or NULL (serve --listen) */
	char *api_metrics_listen; /* metrics-listen: ADDR:PORT of serve's listener
	                             for GET /metrics alone, or NULL */
	int api_max_queue;     /* max-queue: queued tasks before 429; 0: none */
	uint64_t api_max_body; /* max-body: request body cap (1m) */
	char **api_callback_allow; /* callback-allow: patterns (fnmatch) a task's
	                              callback_url must match; none: refused */
	size_t napi_callback_allow;
	int api_max_conns;     /* max-connections: open at once (1024) */
	int api_max_conns_addr; /* max-connections-per-address: from one
	                           non-loopback address (64) */
	double api_header_timeout; /* header-timeout: seconds a new connection has
	                              to send a whole request (10) */
	double api_body_timeout; /* body-timeout: seconds a request has to send
	                            its whole body once its headers came (30) */
	char **api_server_names; /* server-name: Host names the API answers
	                            besides loopback ones (api.h) */
	size_t napi_server_names;
	struct token_conf *tokens;
	size_t ntokens;
	/* [github] (ghsync.h) */
	double github_poll;    /* poll: seconds between serve's syncs (60); 0:
	                          none (webhook only) */
	char *github_secret_env; /* webhook-secret-env: the variable with the
	                            secret of POST /github/webhook, or NULL */
	char *github_secret_file; /* webhook-secret-file */
	char *ui_theme;        /* ui.theme: the dashboard's theme (NULL: dark) */
	char *notify_command;  /* ui.notify-command: run (sh -c) when a gate opens
	                          or a task fails; PADDOCK_EVENT, PADDOCK_TASK_ID */
	struct bind_conf *binds;
	size_t nbinds;
	int workers;           /* default 2 */
	char *run_as;          /* paddock.user: who serve becomes when started as
	                          root, or NULL */
	int max_attempts;      /* paddock.max-attempts: starts of a first round
	                          that paddock's death interrupted before the
	                          task fails with reason crashed (default 3) */
	double template_max_age; /* paddock.template-max-age: seconds after its
	                            last use that serve prunes a template no
	                            task holds; 0: never */
	double gate_timeout;   /* paddock.gate-timeout: seconds a task's sandbox
	                          is kept at review (default 24h; 0: never kept) */
	int log_json;          /* paddock.log-format: 1 json, 0 text (logger.h;
	                          serve --log-format wins) */
	double gate_reminder;  /* paddock.gate-reminder: seconds a person's gate
	                          waits between reminders (reminder.h); 0: none */
	int max_at_review;     /* paddock.max-at-review: tasks at a person's gate
	                          that hold new tasks queued; 0: no limit */
	struct limits limits;
	char *sandbox_backend; /* sandbox.backend: sandbox.h's backend name ("bwrap") */
	int sandbox_unsafe;    /* sandbox.unsafe-no-isolation: lets "process" run */
	uid_t sandbox_uid;     /* unprivileged host uid the sandbox runs as */
	gid_t sandbox_gid;
	struct kube_conf kube; /* [kubernetes] */
	struct repo_conf *repos;
	size_t nrepos;
	struct agent_conf *agents;
	size_t nagents;
	struct endpoint_conf *endpoints;
	size_t nendpoints;
	struct price_conf *prices;
	size_t nprices;
	struct recipe_conf *recipes;
	size_t nrecipes;
	/* [gateway] */
	char *gw_hosts_file;   /* hosts-file: names resolved before (or instead
	                          of) DNS, in /etc/hosts syntax */
	int gw_dns;            /* dns: resolve names not in hosts-file (default 1) */
	char *gw_ca_file;      /* ca-file: CA bundle for upstream TLS, or NULL */
	char **gw_allow_address; /* allow-address: CIDRs allowed although internal */
	size_t ngw_allow_address;
	int gw_proxy_port;     /* proxy-port: the allowlisting proxy (3128) */
	uint64_t gw_max_body;  /* max-body: request body cap (32m) */
	int gw_max_tunnels;    /* max-tunnels: concurrent tunnels per task (32) */
	int gw_network;        /* network: how the sandbox reaches the gateway */
	double gw_tunnel_idle; /* tunnel-idle: seconds a tunnel may move nothing
	                          (600); 0: no limit */
	uid_t gw_uid;          /* uid, gid: who a gateway started as root runs as, */
	gid_t gw_gid;          /* not sandbox.uid (64101) */
	/* [webhook] (webhook.h): off while wh_url is NULL. */
	char *wh_url;          /* url: where the POSTs go (http or https) */
	char *wh_secret_env;   /* secret-env: variable with the HMAC secret
	                          (NULL: PADDOCK_WEBHOOK_SECRET) */
	char *wh_secret_file;  /* secret-file: file with the secret, or NULL */
	unsigned wh_events;    /* events: CONFIG_WEBHOOK_* bits (default all) */
	double wh_timeout;     /* timeout: seconds per attempt (default 10) */
	int wh_attempts;       /* attempts: tries before giving up (default 8) */
};

/* The events a webhook can be sent for (config.wh_events bits). */
enum {
	CONFIG_WEBHOOK_REVIEW = 1,  /* a gate opens: the task is at review */
	CONFIG_WEBHOOK_FAILED = 2,  /* the task failed */
	CONFIG_WEBHOOK_DONE = 4,    /* the task is done */
	CONFIG_WEBHOOK_CANCELLED = 8,
	CONFIG_WEBHOOK_REJECTED = 16,
	CONFIG_WEBHOOK_LOST = 32,   /* its process died and it cannot go on */
	CONFIG_WEBHOOK_AGENT_FINISHED = 64, /* a round's agent ended; tests next */
	CONFIG_WEBHOOK_PR_FAILED = 128, /* a done task's pull request failed to open */
	CONFIG_WEBHOOK_GATE_REMINDER = 256, /* a task still waits at a person's gate */
	CONFIG_WEBHOOK_ALL = 511
};

/* Default config file path (malloc'd). */
char *config_default_path(void);
/* Built-in defaults (no repos; the ready-made agents, endpoints and
 * prices); c need not be initialised. */
void config_init_defaults(struct config *c);
/* Loads path (NULL: default path); c need not be initialised.  On error,
 * e holds "file:line: message" for the first problem (in line order) and c
 * holds the defaults (free it all the same); use config_check to list all
 * of them. */
int config_load(struct config *c, const char *path, struct err *e);
/* Like config_load, from text (len bytes, NULL for a missing file) that
 * was read from path: the configuration another process loaded, as it
 * loaded it, even when the file changed since. */
int config_load_text(struct config *c, const char *path, const char *text, size_t len,
                     struct err *e);
/* For a program of this binary started to work for this process
 * (supervisor.h, a dashboard's job): a memfd (close-on-exec, at its
 * start) holding c's bytes as read; -1 when c was no file (nothing to
 * pass: config_load_fd then gives the defaults), or -1 with e set. */
int config_pass_fd(const struct config *c, struct err *e);
/* In that program: the configuration from fd (closed here; -1: none,
 * the defaults), which was read from path.  The demo's repo and agents
 * are the caller's to add (demo_config_add), as the CLI's verbs do. */
int config_load_fd(struct config *c, const char *path, int fd, struct err *e);
/* A problem found outside the engine, in the value of key of section
 * (its n-th occurrence, from 1): config_check puts it at that line. */
typedef void config_report_fn(void *rctx, const char *section, const char *key, int n,
                              const char *msg);
/* What the engine cannot check itself (the dashboard's [bind] request
 * names and keys, its theme: ui/, which the engine does not include):
 * called with the parsed configuration, it reports each problem. */
typedef void config_check_fn(const struct config *c, config_report_fn *report, void *rctx);

/* Checks path and prints every problem as "file:line: message" to out, in
 * line order (one per unknown or misnamed section).  Beyond what
 * config_load refuses, it checks the host: each agent's files exist as
 * regular files, and its command and resume name no host file it does not
 * list (agent_sandbox_files, which the task's preparing step applies
 * again); and what more (NULL: nothing) finds.  Returns the number of
 * problems (0 when the file is good).  A missing file is a problem when
 * path names it, not when path is NULL (the default file is optional). */
int config_check(const char *path, FILE *out, config_check_fn *more);
void config_free(struct config *c);

const struct repo_conf *config_find_repo(const struct config *c, const char *name);
const struct agent_conf *config_find_agent(const struct config *c, const char *name);
/* The agent used when a task names none: "default" if defined, else the
 * first one, else NULL. */
const struct agent_conf *config_default_agent(const struct config *c);
/* Adds (or replaces) a repo / agent definition, copying every string
 * (r->branch NULL means "main"); used by the demo. */
void config_add_repo(struct config *c, const struct repo_conf *r);
void config_add_agent(struct config *c, const char *name, const char *command);
const struct recipe_conf *config_find_recipe(const struct config *c, const char *name);
/* The name of c's repos, agents or recipes (section "repo", "agent" or
 * "recipe") that a misspelt name is nearly, for "did you mean"; NULL when
 * none is close.  It points into c. */
const char *config_suggest_name(const struct config *c, const char *section, const char *name);
/* A recipe's description or input hint as a person reads it: the
 * ready-made recipes' own words in the language of messages, any other
 * text (a user's) as it is; NULL for NULL.  JSON keeps the stored text. */
const char *config_recipe_text(const char *text);
const struct endpoint_conf *config_find_endpoint(const struct config *c, const char *name);
/* The price of model (exact name first, then the longest '*' prefix), or
 * NULL. */
const struct price_conf *config_find_price(const struct config *c, const char *model);
/* A secret from the file (its first line) if file is set, else from the
 * variable env (malloc'd); NULL when there is none, with e saying why when
 * the file cannot be read or is empty (e->msg empty otherwise). */
char *config_secret(const char *env, const char *file, struct err *e);
/* The endpoint's key from paddock's environment or key file (malloc'd),
 * or NULL when none is configured or set. */
char *config_endpoint_key(const struct endpoint_conf *ep);
/* Why an endpoint that names where its key comes from (key-env or
 * key-file) has none: the variable is not set, the file cannot be read or
 * is empty, with what to set (malloc'd, one line); NULL when it has its
 * key, or needs none. */
char *config_endpoint_key_missing(const struct endpoint_conf *ep);
/* For paddock serve and the dashboard as they start: a line (ending in
 * '\n') per endpoint whose key is missing that an agent of the file or
 * the default agent uses, naming the variable or file to set and the
 * agents whose tasks will fail with reason model-auth (malloc'd), or NULL
 * when every such endpoint has its key. */
char *config_missing_keys(const struct config *c);
const char *config_agent_kind_name(enum agent_kind k);
/* The token's value from its variable or file (malloc'd), or NULL. */
char *config_token_value(const struct token_conf *t);
/* t's role: role, else read for read-only = true, else admin. */
enum access config_token_role(const struct token_conf *t);
/* "paths", "secrets", "size", "symlinks", "submodules", "authors". */
const char *config_policy_rule_name(enum policy_rule r);
/* The token for HTTPS pushes of r, from paddock's environment, else from
 * its token-file (read at each call, so that a rotated token is taken; a
 * relative name is looked up in systemd's $CREDENTIALS_DIRECTORY); NULL
 * when neither has one.  Never stored, logged or passed to a sandbox.
 * The string lives as long as the process (each distinct value read is
 * kept once), so callers may hold it, from any thread. */
const char *config_repo_token(const struct repo_conf *r);
const char *config_repo_github_token(const struct repo_conf *r);
/* The file a token-file (or github-token-file) value names: itself when
 * absolute, else in $CREDENTIALS_DIRECTORY (NULL when that is not set);
 * malloc'd. */
char *config_credential_path(const char *file);
/* 1 if name is a valid repo/agent name. */
int config_name_valid(const char *name);

/* One key of the key table, as paddock-config(5) documents it. */
struct config_key_info {
	const char *section;   /* "paddock", "repo", ... */
	const char *key;
	const char *type;      /* the form of its value: "integer, 1 to 64" */
	const char *def;       /* its default in words, or NULL: required */
	const char *help;      /* man(7) markup, in English */
	char type_buf[64];
};
/* Fills info with the i-th key (from 0), in the manual's order; -1 past
 * the last one. */
int config_key_info(size_t i, struct config_key_info *info);
/* Writes the key table as man(7) markup: a .SS per section, a .TP per key
 * with its type, default and help.  doc/paddock-config.5 holds it between
 * the lines BEGIN GENERATED KEYS and END GENERATED KEYS (make
 * update-config-man). */
void config_write_man(FILE *out);
/* Parses the built-in definitions (data/builtin.conf) as a file is parsed,
 * prints each problem as "builtin.conf:LINE: message" to out and returns
 * their number (0: they are good). */
int config_builtin_check(FILE *out);

/* The path a url names when it is a local path (absolute, relative or
 * file://), else NULL (a URL with a scheme, or host:path for ssh). */
const char *config_url_local_path(const char *url);
/* -1 with "repo NAME: no repository at PATH; fix KEY ..." when url (the
 * repo's key "url" or "push-url") is a local path, absolute, relative or
 * file://, that does not exist (libgit2 would call it an unsupported URL
 * protocol); 0 for any other url. */
int config_local_url_check(const char *repo, const char *key, const char *url,
                           struct err *e);

#endif
