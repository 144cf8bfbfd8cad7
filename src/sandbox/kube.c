#include "autoconfig.h"
#include "kube.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "buf.h"
#include "child.h"
#include "clock.h"
#include "curlx.h"
#include "fsx.h"
#include "i18n.h"
#include "sanitize.h"

extern char **environ;

/* Bounds on what is read: a kubeconfig, a token file, an answer, what an
 * exec plugin prints. */
#define KUBECONFIG_MAX (4 * 1024 * 1024)
#define TOKEN_MAX (64 * 1024)
#define ANSWER_MAX (64 * 1024 * 1024)
#define EXEC_OUT_MAX (1024 * 1024)
/* The YAML nodes one kubeconfig may expand to (aliases make a small file
 * a large tree). */
#define YAML_NODES_MAX 100000

struct kube {
	struct kube_opts o;
	char *server;
	char *ns;
	char *dir;                /* the kubeconfig's folder (relative names) */
	char *ca_file;
	struct buf ca_data;
	int insecure;
	char *cert_file, *key_file;
	struct buf cert_data, key_data;
	char *token;              /* the static token, or the file's */
	char *token_file;
	struct stat token_st;     /* the file as it was when read */
	int token_read;
	/* The exec plugin: argv (NULL-terminated, owned), env added. */
	char **exec_argv;
	char **exec_env;
	char *exec_api;
	char *exec_hint;          /* installHint, or NULL */
	int exec_have;
	double exec_expiry;       /* wall time; 0: never */
	char *exec_token;
	struct buf exec_cert, exec_key;
	CURL *c;
	CURLM *multi;             /* a watch that w->wake_fd may end */
	long last_code;
	char last_reason[64];
	char retry_after[64];
	const char *reviewed;     /* the token under review (borrowed, during
	                             kube_token_review): scrubbed too */
};

/* ---- small helpers ---- */

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* Every message of this module leaves no token in e. */
static void kube_scrub_one(struct err *e, const char *secret)
{
	if (!e || !secret || strlen(secret) < 4)
		return;
	char *p;
	while ((p = strstr(e->msg, secret))) {
		size_t sl = strlen(secret);
		const char *mark = "[token]";
		size_t ml = strlen(mark);
		memmove(p + ml, p + sl, strlen(p + sl) + 1);
		memcpy(p, mark, ml);
	}
}

static int kube_scrub(const struct kube *k, struct err *e)
{
	if (k) {
		kube_scrub_one(e, k->token);
		kube_scrub_one(e, k->exec_token);
		kube_scrub_one(e, k->reviewed);
	}
	return -1;
}

/* Base64 (as kubeconfig's -data fields hold), line breaks and blanks
 * ignored: OpenSSL's decoder (libcrypto is paddock's already). */
static int b64_decode(const char *in, struct buf *out)
{
	size_t n = strlen(in);
	if (n > INT_MAX / 2)
		return -1;
	EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
	if (!ctx)
		return -1;
	unsigned char *p = xmalloc(n / 4 * 3 + 3);
	int len = 0, fin = 0, rc = -1;
	EVP_DecodeInit(ctx);
	if (EVP_DecodeUpdate(ctx, p, &len, (const unsigned char *)in, (int)n) >= 0 &&
	    EVP_DecodeFinal(ctx, p + len, &fin) == 1) {
		buf_add(out, p, (size_t)(len + fin));
		rc = 0;
	}
	EVP_ENCODE_CTX_free(ctx);
	free(p);
	return rc;
}

/* A bearer token is visible ASCII: anything else (a line break above
 * all) would make a header of its own. */
static int token_ok(const char *t)
{
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			return 0;
	return *t != 0;
}

/* ---- YAML (a kubeconfig) as JSON ---- */

static json_t *yaml_node_json(yaml_document_t *d, yaml_node_t *n, int depth, size_t *budget)
{
	if (!n || depth > 64 || ++*budget > YAML_NODES_MAX)
		return NULL;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
	case YAML_SEQUENCE_NODE: {
		json_t *a = json_array();
		for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
			json_t *v = yaml_node_json(d, yaml_document_get_node(d, *i), depth + 1, budget);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		return a;
	}
	case YAML_MAPPING_NODE: {
		json_t *o = json_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *kn = yaml_document_get_node(d, p->key);
			if (!kn || kn->type != YAML_SCALAR_NODE) {
				json_decref(o);
				return NULL;
			}
			json_t *v = yaml_node_json(d, yaml_document_get_node(d, p->value), depth + 1, budget);
			if (!v) {
				json_decref(o);
				return NULL;
			}
			json_object_setn_new(o, (const char *)kn->data.scalar.value, kn->data.scalar.length, v);
		}
		return o;
	}
	default:
		return json_null();
	}
}

static json_t *yaml_parse(const char *text, size_t len, const char *path, struct err *e)
{
	yaml_parser_t p;
	yaml_document_t d;
	if (!yaml_parser_initialize(&p))
		return err_set(e, _("cannot read %s: out of memory"), path), NULL;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d)) {
		err_set(e, _("%s is not valid YAML (line %zu: %s); fix the kubeconfig or point paddock to another"),
		        path, p.problem_mark.line + 1, p.problem ? p.problem : "?");
		yaml_parser_delete(&p);
		return NULL;
	}
	size_t budget = 0;
	yaml_node_t *root = yaml_document_get_root_node(&d);
	json_t *j = root ? yaml_node_json(&d, root, 0, &budget) : NULL;
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return err_set(e, _("%s is not a kubeconfig (no mapping of clusters, contexts and users); fix it or point paddock to another"),
		               path), NULL;
	}
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

static int jtrue(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_true(v) || (json_is_string(v) && !strcmp(json_string_value(v), "true"));
}

/* The entry named name of a kubeconfig list (clusters, contexts,
 * users): its field (cluster, context, user). */
static json_t *named(json_t *root, const char *list, const char *name, const char *field)
{
	json_t *a = json_object_get(root, list), *it;
	size_t i;
	json_array_foreach(a, i, it) {
		const char *n = jstr(it, "name");
		if (n && !strcmp(n, name)) {
			json_t *f = json_object_get(it, field);
			return json_is_object(f) ? f : NULL;
		}
	}
	return NULL;
}

/* A file name of the kubeconfig, relative to its folder. */
static char *kube_path(const struct kube *k, const char *p)
{
	if (p[0] == '/' || !k->dir)
		return xstrdup(p);
	return xasprintf("%s/%s", k->dir, p);
}

static int read_data(struct kube *k, json_t *o, const char *file_key, const char *data_key,
                     char **file, struct buf *data, const char *where, struct err *e)
{
	const char *f = jstr(o, file_key), *d = jstr(o, data_key);
	if (d) {
		if (b64_decode(d, data) < 0 || !data->len)
			return err_set(e, _("%s of %s is not base64; paste the PEM file's base64 there or name the file in %s"),
			               data_key, where, file_key);
		return 0;
	}
	if (f) {
		*file = kube_path(k, f);
		if (access(*file, R_OK) < 0)
			return err_errno(e, _("%s of %s names %s, which cannot be read"), file_key, where, *file);
	}
	return 0;
}

/* ---- opening ---- */

static int kube_user_exec(struct kube *k, json_t *ex, const char *where, struct err *e)
{
	const char *cmd = jstr(ex, "command"), *api = jstr(ex, "apiVersion");
	if (!cmd)
		return err_set(e, _("the exec plugin of %s has no command; name the program that prints the credential"), where);
	if (!api || (strcmp(api, "client.authentication.k8s.io/v1") &&
	             strcmp(api, "client.authentication.k8s.io/v1beta1")))
		return err_set(e, _("the exec plugin of %s has apiVersion '%s'; paddock speaks client.authentication.k8s.io/v1 and v1beta1"),
		               where, api ? api : "");
	json_t *args = json_object_get(ex, "args"), *env = json_object_get(ex, "env"), *it;
	size_t n = json_array_size(args), i;
	k->exec_argv = xcalloc(n + 2, sizeof *k->exec_argv);
	/* kubectl's rule: a command with a slash is relative to the file. */
	k->exec_argv[0] = strchr(cmd, '/') ? kube_path(k, cmd) : xstrdup(cmd);
	json_array_foreach(args, i, it) {
		if (!json_is_string(it))
			return err_set(e, _("the exec plugin of %s has an argument that is not a string; quote it"), where);
		k->exec_argv[i + 1] = xstrdup(json_string_value(it));
	}
	k->exec_env = xcalloc(json_array_size(env) + 1, sizeof *k->exec_env);
	json_array_foreach(env, i, it) {
		const char *name = jstr(it, "name"), *value = json_is_string(json_object_get(it, "value")) ?
			json_string_value(json_object_get(it, "value")) : NULL;
		if (!name || !value || strchr(name, '='))
			return err_set(e, _("the exec plugin of %s has an env entry without a name and a value; write each as {name: N, value: V}"),
			               where);
		k->exec_env[i] = xasprintf("%s=%s", name, value);
	}
	k->exec_api = xstrdup(api);
	if (jstr(ex, "installHint"))
		k->exec_hint = xstrdup(jstr(ex, "installHint"));
	return 0;
}

static int kube_user(struct kube *k, json_t *u, const char *where, struct err *e)
{
	if (json_object_get(u, "auth-provider"))
		return err_set(e, _("%s uses an auth-provider, which paddock does not support; use an exec plugin (client.authentication.k8s.io) instead"),
		               where);
	if (jstr(u, "username") || jstr(u, "password"))
		return err_set(e, _("%s uses a username and password, which paddock does not support; use a token, a client certificate or an exec plugin"),
		               where);
	if (read_data(k, u, "client-certificate", "client-certificate-data", &k->cert_file, &k->cert_data, where, e) < 0 ||
	    read_data(k, u, "client-key", "client-key-data", &k->key_file, &k->key_data, where, e) < 0)
		return -1;
	int has_cert = k->cert_file || k->cert_data.len, has_key = k->key_file || k->key_data.len;
	if (has_cert != has_key)
		return err_set(e, _("%s has a client certificate without its key, or a key without its certificate; give both"), where);
	const char *tok = jstr(u, "token"), *tf = jstr(u, "tokenFile");
	if (tok && !token_ok(tok))
		return err_set(e, _("the token of %s has characters a token cannot have (spaces, line breaks, controls); paste it again"),
		               where);
	if (tok)
		k->token = xstrdup(tok);
	else if (tf)
		k->token_file = kube_path(k, tf);
	json_t *ex = json_object_get(u, "exec");
	if (json_is_object(ex))
		return kube_user_exec(k, ex, where, e);
	return 0;
}

/* The files of a kubeconfig list, parsed, in order. */
struct kc_files {
	char **paths;
	json_t **roots;
	size_t n;
};

static void kc_files_free(struct kc_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->paths[i]);
		json_decref(f->roots[i]);
	}
	free(f->paths);
	free(f->roots);
}

/* The entry named name in list of the first file that has it, as
 * kubectl merges a list (the first to set a name wins); *from its file. */
static json_t *kc_named(const struct kc_files *f, const char *list, const char *name,
                        const char *field, size_t *from)
{
	for (size_t i = 0; i < f->n; i++) {
		json_t *v = named(f->roots[i], list, name, field);
		if (v) {
			*from = i;
			return v;
		}
	}
	return NULL;
}

static void kc_dir(struct kube *k, const char *path)
{
	const char *slash = strrchr(path, '/');
	free(k->dir);
	k->dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
}

/* A kubeconfig, or a list of them ($KUBECONFIG, ':' between): merged as
 * kubectl merges them (the first file to set current-context, or a
 * context, cluster or user of a name, wins; a file of the list that is
 * not there is passed over, as kubectl does), relative file names from
 * the folder of the file that set them. */
static int kube_open_config(struct kube *k, const char *list, int is_list, struct err *e)
{
	struct kc_files f = { 0 };
	int rc = -1;
	const char *p = list;
	while (*p) {
		size_t len = is_list ? strcspn(p, ":") : strlen(p);
		char *path = xstrndup(p, len);
		p += len + (is_list && p[len] == ':');
		if (!*path || (is_list && access(path, F_OK) < 0 && errno == ENOENT)) {
			free(path);
			continue;
		}
		struct buf text = {0};
		if (fsx_read_file(path, KUBECONFIG_MAX, &text, e) < 0) {
			buf_free(&text);
			err_prefix(e, _("cannot read the kubeconfig %s"), path);
			free(path);
			goto out;
		}
		json_t *root = yaml_parse(text.data ? text.data : "", text.len, path, e);
		buf_free(&text);
		if (!root) {
			free(path);
			goto out;
		}
		f.paths = xrealloc(f.paths, (f.n + 1) * sizeof *f.paths);
		f.roots = xrealloc(f.roots, (f.n + 1) * sizeof *f.roots);
		f.paths[f.n] = path;
		f.roots[f.n++] = root;
	}
	if (!f.n) {
		err_set(e, _("none of the kubeconfig files in %s is there; set KUBECONFIG or "
		             "kubernetes.kubeconfig to one"), list);
		goto out;
	}
	const char *cname = k->o.context;
	size_t cfrom = 0, clfrom = 0, ufrom = 0;
	for (size_t i = 0; !cname && i < f.n; i++)
		if (jstr(f.roots[i], "current-context") && *jstr(f.roots[i], "current-context"))
			cname = jstr(f.roots[i], "current-context");
	const char *path = f.paths[0];
	json_t *ctx, *cl, *u = NULL;
	if (!cname) {
		err_set(e, _("%s has no current-context; set one (kubectl config use-context) or name a context"), list);
		goto out;
	}
	if (!(ctx = kc_named(&f, "contexts", cname, "context", &cfrom))) {
		err_set(e, _("%s has no context named '%s'; name one of its contexts"), list, cname);
		goto out;
	}
	path = f.paths[cfrom];
	const char *clname = jstr(ctx, "cluster"), *uname = jstr(ctx, "user");
	if (!clname || !(cl = kc_named(&f, "clusters", clname, "cluster", &clfrom))) {
		err_set(e, _("the context '%s' of %s names no cluster the file has ('%s'); add it to clusters"),
		        cname, path, clname ? clname : "");
		goto out;
	}
	if (uname && !(u = kc_named(&f, "users", uname, "user", &ufrom))) {
		err_set(e, _("the context '%s' of %s names the user '%s', which the file does not have; add it to users"),
		        cname, path, uname);
		goto out;
	}
	path = f.paths[clfrom];
	const char *server = jstr(cl, "server");
	if (!server || strncmp(server, "https://", 8) || !server[8]) {
		err_set(e, _("the cluster '%s' of %s has the server '%s'; paddock speaks to Kubernetes over https only (https://HOST:PORT)"),
		        clname, path, server ? server : "");
		goto out;
	}
	k->server = xstrndup(server, strlen(server) - (server[strlen(server) - 1] == '/'));
	k->ns = xstrdup(jstr(ctx, "namespace") ? jstr(ctx, "namespace") : "default");
	kc_dir(k, path);
	char *where = xasprintf(_("the cluster '%s' of %s"), clname, path);
	int bad = read_data(k, cl, "certificate-authority", "certificate-authority-data", &k->ca_file, &k->ca_data, where, e);
	free(where);
	if (bad < 0)
		goto out;
	if (jtrue(cl, "insecure-skip-tls-verify")) {
		if (!k->o.allow_insecure) {
			err_set(e, _("the cluster '%s' of %s sets insecure-skip-tls-verify, which paddock refuses: anyone on the path could read its credentials; give its certificate-authority instead"),
			        clname, path);
			goto out;
		}
		k->insecure = 1;
	}
	if (u) {
		/* The user's files (and exec command) from its own file's folder. */
		path = f.paths[ufrom];
		kc_dir(k, path);
		where = xasprintf(_("the user '%s' of %s"), uname, path);
		bad = kube_user(k, u, where, e);
		free(where);
		if (bad < 0)
			goto out;
	}
	rc = 0;
out:
	kc_files_free(&f);
	return rc;
}

static int kube_open_incluster(struct kube *k, struct err *e)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return err_set(e, _("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: paddock is not in a pod; name a kubeconfig instead"));
	for (const char *p = port; *p; p++)
		if (!isdigit((unsigned char)*p))
			return err_set(e, _("KUBERNETES_SERVICE_PORT is '%s', not a port number"), port);
	const char *dir = k->o.incluster_dir ? k->o.incluster_dir : KUBE_INCLUSTER_DIR;
	k->server = strchr(host, ':') ? xasprintf("https://[%s]:%s", host, port) : xasprintf("https://%s:%s", host, port);
	k->ca_file = xasprintf("%s/ca.crt", dir);
	if (access(k->ca_file, R_OK) < 0)
		return err_errno(e, _("cannot read the service account's CA %s; mount the service account's token volume"), k->ca_file);
	k->token_file = xasprintf("%s/token", dir);
	char *nsf = xasprintf("%s/namespace", dir);
	struct buf ns = {0};
	struct err ignored = {{0}};
	if (fsx_read_file(nsf, 256, &ns, &ignored) == 0) {
		while (ns.len && isspace((unsigned char)ns.data[ns.len - 1]))
			ns.data[--ns.len] = 0;
	}
	k->ns = ns.len ? buf_detach(&ns) : xstrdup("default");
	buf_free(&ns);
	free(nsf);
	return 0;
}

struct kube *kube_open(const struct kube_opts *o, struct err *e)
{
	struct kube *k = xcalloc(1, sizeof *k);
	if (o)
		k->o = *o;
	if (k->o.timeout <= 0)
		k->o.timeout = 30;
	if (k->o.retries == 0)
		k->o.retries = 5;
	if (k->o.retries < 0)
		k->o.retries = 0;
	if (k->o.retry_after_max <= 0)
		k->o.retry_after_max = 30;
	if (k->o.exec_timeout <= 0)
		k->o.exec_timeout = 30;
	char *path = NULL;
	int rc;
	if (k->o.incluster) {
		rc = kube_open_incluster(k, e);
	} else {
		const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
		int is_list = 0;
		if (k->o.kubeconfig)
			path = xstrdup(k->o.kubeconfig);
		else if (env && *env)
			path = xstrdup(env), is_list = 1;
		else if (!getenv("KUBERNETES_SERVICE_HOST") && home)
			path = xasprintf("%s/.kube/config", home);
		rc = path ? kube_open_config(k, path, is_list, e) : kube_open_incluster(k, e);
	}
	free(path);
	if (rc == 0 && o->namespace) {
		free(k->ns);
		k->ns = xstrdup(o->namespace);
	}
	k->o.kubeconfig = k->o.context = k->o.incluster_dir = k->o.namespace = NULL; /* borrowed: not kept */
	if (rc == 0 && !(k->c = curl_easy_init()))
		rc = err_set(e, _("cannot start libcurl"));
	if (rc < 0) {
		kube_scrub(k, e);
		kube_free(k);
		return NULL;
	}
	return k;
}

static void secret_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static void secret_buf_free(struct buf *b)
{
	if (b->data)
		explicit_bzero(b->data, b->len);
	buf_free(b);
}

void kube_free(struct kube *k)
{
	if (!k)
		return;
	if (k->c)
		curl_easy_cleanup(k->c);
	if (k->multi)
		curl_multi_cleanup(k->multi);
	free(k->server);
	free(k->ns);
	free(k->dir);
	free(k->ca_file);
	buf_free(&k->ca_data);
	free(k->cert_file);
	free(k->key_file);
	buf_free(&k->cert_data);
	secret_buf_free(&k->key_data);
	secret_free(k->token);
	free(k->token_file);
	strv_free(k->exec_argv);
	strv_free(k->exec_env);
	free(k->exec_api);
	free(k->exec_hint);
	secret_free(k->exec_token);
	buf_free(&k->exec_cert);
	secret_buf_free(&k->exec_key);
	free(k);
}

const char *kube_namespace(const struct kube *k) { return k->ns; }
const char *kube_server(const struct kube *k) { return k->server; }
long kube_last_code(const struct kube *k) { return k->last_code; }
const char *kube_last_reason(const struct kube *k) { return k->last_reason; }

/* ---- credentials ---- */

/* The token file again when it changed since it was read (it rotates). */
static int kube_token_file(struct kube *k, int force, struct err *e)
{
	struct stat st;
	if (stat(k->token_file, &st) < 0)
		return err_errno(e, _("cannot read the token file %s"), k->token_file);
	if (!force && k->token_read && st.st_ino == k->token_st.st_ino && st.st_size == k->token_st.st_size &&
	    st.st_mtim.tv_sec == k->token_st.st_mtim.tv_sec && st.st_mtim.tv_nsec == k->token_st.st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == k->token_st.st_ctim.tv_sec && st.st_ctim.tv_nsec == k->token_st.st_ctim.tv_nsec)
		return 0;
	struct buf b = {0};
	if (fsx_read_file(k->token_file, TOKEN_MAX, &b, e) < 0) {
		secret_buf_free(&b);
		return err_prefix(e, _("cannot read the token file %s"), k->token_file);
	}
	while (b.len && isspace((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = 0;
	if (!b.len) {
		secret_buf_free(&b);
		return err_set(e, _("the token file %s is empty"), k->token_file);
	}
	if (!token_ok(b.data)) {
		secret_buf_free(&b);
		return err_set(e, _("the token file %s has characters a token cannot have (spaces, line breaks, controls)"),
		               k->token_file);
	}
	secret_free(k->token);
	k->token = buf_detach(&b);
	k->token_st = st;
	k->token_read = 1;
	return 0;
}

/* RFC 3339 (Kubernetes' time): wall seconds, or -1. */
static double rfc3339(const char *s)
{
	struct tm tm = {0};
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return -1;
	if (*rest == '.')
		while (isdigit((unsigned char)*++rest))
			;
	double off = 0;
	if ((*rest == '+' || *rest == '-') && strlen(rest) == 6) {
		off = (atoi(rest + 1) * 3600 + atoi(rest + 4) * 60) * (*rest == '+' ? 1 : -1);
	} else if (strcmp(rest, "Z")) {
		return -1;
	}
	return (double)timegm(&tm) - off;
}

static int exec_read(int fd, struct buf *b)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size > EXEC_OUT_MAX)
		return -1;
	buf_grow(b, (size_t)st.st_size + 1);
	ssize_t n = pread(fd, b->data, (size_t)st.st_size, 0);
	if (n < 0)
		return -1;
	b->len = (size_t)n;
	b->data[n] = 0;
	return 0;
}

static int exec_credential(struct kube *k, const char *out, struct err *e)
{
	json_error_t je;
	json_t *j = json_loads(out, 0, &je), *st = json_object_get(j, "status");
	const char *kind = jstr(j, "kind"), *api = jstr(j, "apiVersion");
	const char *tok = jstr(st, "token"), *cert = jstr(st, "clientCertificateData"),
		*key = jstr(st, "clientKeyData"), *exp = jstr(st, "expirationTimestamp");
	int rc = -1;
	if (!j || !kind || strcmp(kind, "ExecCredential") || !api || strcmp(api, k->exec_api) || !json_is_object(st)) {
		err_set(e, _("the kubeconfig's exec plugin %s printed no ExecCredential of %s; run it by hand to see what it prints"),
		        k->exec_argv[0], k->exec_api);
		goto out;
	}
	if (!tok && !(cert && key)) {
		err_set(e, _("the ExecCredential of the kubeconfig's exec plugin %s has neither a token nor a client certificate and key"),
		        k->exec_argv[0]);
		goto out;
	}
	if (tok && !token_ok(tok)) {
		err_set(e, _("the ExecCredential of the kubeconfig's exec plugin %s has a token with characters a token cannot have (spaces, line breaks, controls)"),
		        k->exec_argv[0]);
		goto out;
	}
	double expiry = 0;
	if (exp && (expiry = rfc3339(exp)) < 0) {
		err_set(e, _("the ExecCredential of the kubeconfig's exec plugin %s has an expirationTimestamp that is not RFC 3339"),
		        k->exec_argv[0]);
		goto out;
	}
	secret_free(k->exec_token);
	k->exec_token = tok ? xstrdup(tok) : NULL;
	buf_reset(&k->exec_cert);
	secret_buf_free(&k->exec_key);
	if (cert && key) {
		buf_adds(&k->exec_cert, cert);
		buf_adds(&k->exec_key, key);
	}
	k->exec_expiry = expiry;
	k->exec_have = 1;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* Long: runs the plugin (its own environment, a deadline, its output
 * bounded) and checks each way it can fail before believing its answer. */
static int kube_exec(struct kube *k, struct err *e)
{
	size_t n = 0;
	while (environ[n])
		n++;
	size_t ne = 0;
	while (k->exec_env[ne])
		ne++;
	char **env = xcalloc(n + ne + 2, sizeof *env);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21))
			env[m++] = environ[i];
	for (size_t i = 0; i < ne; i++)
		env[m++] = k->exec_env[i];
	char *info = xasprintf("KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}",
	                       k->exec_api);
	env[m++] = info;
	int ofd = memfd_create("kube-exec-out", MFD_CLOEXEC), efd = memfd_create("kube-exec-err", MFD_CLOEXEC);
	int rc = -1;
	struct buf out = {0}, errb = {0};
	if (ofd < 0 || efd < 0) {
		err_errno(e, _("cannot run the kubeconfig's exec plugin"));
		goto out;
	}
	struct child c = {
		.argv = (const char *const *)k->exec_argv,
		.env = (const char *const *)env,
		.stdio = { CHILD_NULL, ofd, efd },
		.flags = CHILD_DIE_WITH_PARENT | CHILD_CLOSE_FDS | CHILD_NEW_SESSION,
	};
	if (child_start(&c, e) < 0) {
		if (c.exec_errno == ENOENT && k->exec_hint) {
			/* The kubeconfig's own words on how to install it. */
			char *q = sanitize_quote_str(k->exec_hint);
			err_set(e, _("the kubeconfig's exec plugin %s is not installed: %s"), k->exec_argv[0], q);
			free(q);
		} else {
			err_prefix(e, _("cannot run the kubeconfig's exec plugin %s"), k->exec_argv[0]);
		}
		goto out;
	}
	double until = clock_mono() + k->o.exec_timeout;
	int ended = 0;
	while (!(ended = child_wait_ms(&c, (int)((until - clock_mono()) * 1000) + 1)) && clock_mono() < until)
		;
	if (!ended) {
		/* Its whole group (a session of its own): what it started too. */
		kill(-c.pid, SIGKILL);
		child_kill(&c, SIGKILL);
		child_finish(&c);
		err_set(e, _("the kubeconfig's exec plugin %s did not finish within %.0f s"), k->exec_argv[0],
		        k->o.exec_timeout);
		goto out;
	}
	if (exec_read(ofd, &out) < 0 || exec_read(efd, &errb) < 0) {
		err_set(e, _("the kubeconfig's exec plugin %s printed more than 1 MiB"), k->exec_argv[0]);
		goto out;
	}
	if (c.status != 0) {
		size_t l = strcspn(errb.data ? errb.data : "", "\n");
		char *q = sanitize_quote(errb.data ? errb.data : "", l > 300 ? 300 : l);
		err_set(e, _("the kubeconfig's exec plugin %s failed (exit status %d): %s"), k->exec_argv[0],
		        child_exit_code(c.status), *q ? q : _("(it printed no error)"));
		free(q);
		goto out;
	}
	rc = exec_credential(k, out.data ? out.data : "", e);
out:
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	secret_buf_free(&out);
	buf_free(&errb);
	free(info);
	free(env);
	return rc;
}

/* The credentials fresh for the next request: the token file as it is
 * now, the exec plugin's credential unless it is still valid. */
static int kube_auth(struct kube *k, int force, struct err *e)
{
	if (k->token_file && kube_token_file(k, force, e) < 0)
		return -1;
	if (k->exec_argv && (force || !k->exec_have || (k->exec_expiry > 0 && clock_wall() >= k->exec_expiry - 10)))
		return kube_exec(k, e);
	return 0;
}

/* ---- requests ---- */

static size_t kube_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct kube *k = arg;
	size_t len = size * n;
	if (len > 12 && !strncasecmp(p, "retry-after:", 12)) {
		const char *v = p + 12;
		size_t vl = len - 12;
		while (vl && isspace((unsigned char)*v))
			v++, vl--;
		while (vl && isspace((unsigned char)v[vl - 1]))
			vl--;
		snprintf(k->retry_after, sizeof k->retry_after, "%.*s", (int)vl, v);
	}
	return len;
}

/* Retry-After's wait in seconds (seconds or an HTTP date), or -1. */
static double retry_after_secs(const char *v)
{
	if (!*v)
		return -1;
	char *end;
	errno = 0;
	double s = strtod(v, &end);
	if (!*end && !errno && s >= 0)
		return s;
	time_t t = curl_getdate(v, NULL);
	return t < 0 ? -1 : dmax(0, (double)t - clock_wall());
}

static struct curl_slist *kube_setup(struct kube *k, const char *method, const char *url,
                                     const char *body, double timeout)
{
	CURL *c = k->c;
	curl_easy_reset(c);
	curlx_safe(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "paddock/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000) + 1);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(dmin(timeout, 10) * 1000) + 1);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, kube_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, k);
	/* Only the configured CA, never the system's besides it. */
	if (k->ca_data.len) {
		struct curl_blob b = { k->ca_data.data, k->ca_data.len, CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &b);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	} else if (k->ca_file) {
		curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	}
	if (k->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	const struct buf *cert = k->exec_cert.len ? &k->exec_cert : &k->cert_data;
	const struct buf *key = k->exec_cert.len ? &k->exec_key : &k->key_data;
	if (cert->len) {
		struct curl_blob cb = { cert->data, cert->len, CURL_BLOB_COPY };
		struct curl_blob kb = { key->data, key->len, CURL_BLOB_COPY };
		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (k->cert_file) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, k->cert_file);
		curl_easy_setopt(c, CURLOPT_SSLKEY, k->key_file);
	}
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
	const char *tok = k->exec_token ? k->exec_token : k->token;
	if (tok) {
		char *a = xasprintf("Authorization: Bearer %s", tok);
		h = curl_slist_append(h, a);
		explicit_bzero(a, strlen(a));
		free(a);
	}
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	k->retry_after[0] = 0;
	return h;
}

struct sink {
	struct buf b;
	int over;
};

static size_t sink_cb(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	if (s->b.len + size * n > ANSWER_MAX) {
		s->over = 1;
		return 0;
	}
	buf_add(&s->b, p, size * n);
	return size * n;
}

/* An error answer as a message: the Status body's message and reason
 * (quoted: the server's text), the status line otherwise. */
static int kube_status_err(struct kube *k, const char *method, const char *path, long code, json_t *j,
                           struct err *e)
{
	const char *reason = NULL, *msg = NULL;
	if (j && jstr(j, "kind") && !strcmp(jstr(j, "kind"), "Status")) {
		reason = jstr(j, "reason");
		msg = jstr(j, "message");
	}
	snprintf(k->last_reason, sizeof k->last_reason, "%s", reason ? reason : "");
	char *q = sanitize_quote_str(msg ? msg : "");
	char *rq = sanitize_quote_str(reason ? reason : "");
	char *pq = xstrndup(path, strcspn(path, "?"));
	enum err_kind kind = code == 404 ? ERR_NOT_FOUND : code == 409 ? ERR_CONFLICT :
		(code == 400 || code == 422) ? ERR_INVALID : (code == 429 || code >= 500) ? ERR_UNAVAILABLE : ERR_REMOTE;
	if (code == 401)
		err_kind_set(e, kind, _("the Kubernetes API at %s did not accept paddock's credentials (401 %s); check the user of the kubeconfig's context or the service account's token"),
		             k->server, *q ? q : "Unauthorized");
	else if (code == 403)
		err_kind_set(e, kind, _("the Kubernetes API refused %s %s (403 Forbidden: %s); give paddock's user the permission it names"),
		             method, pq, q);
	else
		err_kind_set(e, kind, _("the Kubernetes API answered %s %s with %ld %s: %s"), method, pq, code, rq,
		             *q ? q : _("(no message)"));
	free(q);
	free(rq);
	free(pq);
	return kube_scrub(k, e);
}

static double backoff(int attempt)
{
	return dmin(4.0, 0.2 * (double)(1 << (attempt > 5 ? 5 : attempt)));
}

/* Long: one request with its retries (429, 5xx, failed connections, a
 * 401 that fresh credentials may answer), each step bounded. */
/* kube_request, or with text the answer's body as it came (a 2xx one;
 * an error's Status is still the message). */
static long kube_do(struct kube *k, const char *method, const char *path, const char *body,
                    json_t **out, struct buf *text, struct err *e)
{
	if (out)
		*out = NULL;
	char *url = xasprintf("%s%s", k->server, path);
	long code = -1;
	int renewed = 0;
	k->last_code = 0;
	k->last_reason[0] = 0;
	for (int attempt = 0;; attempt++) {
		if (kube_auth(k, 0, e) < 0) {
			kube_scrub(k, e);
			break;
		}
		struct sink s = {0};
		char errbuf[CURL_ERROR_SIZE] = "";
		struct curl_slist *h = kube_setup(k, method, url, body, k->o.timeout);
		curl_easy_setopt(k->c, CURLOPT_WRITEFUNCTION, sink_cb);
		curl_easy_setopt(k->c, CURLOPT_WRITEDATA, &s);
		curl_easy_setopt(k->c, CURLOPT_ERRORBUFFER, errbuf);
		CURLcode rc = curl_easy_perform(k->c);
		curl_slist_free_all(h);
		if (rc != CURLE_OK) {
			buf_free(&s.b);
			/* A certificate refused or a timeout is not made better by
			 * asking again. */
			int again = rc != CURLE_PEER_FAILED_VERIFICATION && rc != CURLE_SSL_CACERT_BADFILE &&
			            rc != CURLE_SSL_CERTPROBLEM && rc != CURLE_OPERATION_TIMEDOUT && !s.over;
			if (again && attempt < k->o.retries) {
				clock_sleep(backoff(attempt));
				continue;
			}
			if (s.over)
				err_set(e, _("the Kubernetes API's answer to %s %s is larger than 64 MiB"), method, path);
			else if (rc == CURLE_PEER_FAILED_VERIFICATION)
				err_kind_set(e, ERR_REMOTE, _("the Kubernetes API at %s is not who the configured CA says it is (%s); check the cluster's certificate-authority"),
				             k->server, *errbuf ? errbuf : curl_easy_strerror(rc));
			else if (rc == CURLE_OPERATION_TIMEDOUT)
				err_kind_set(e, ERR_UNAVAILABLE, _("the Kubernetes API at %s did not answer %s %s within %.0f s"),
				             k->server, method, path, k->o.timeout);
			else
				err_kind_set(e, ERR_UNAVAILABLE, _("cannot reach the Kubernetes API at %s: %s"), k->server,
				             *errbuf ? errbuf : curl_easy_strerror(rc));
			kube_scrub(k, e);
			break;
		}
		curl_easy_getinfo(k->c, CURLINFO_RESPONSE_CODE, &code);
		k->last_code = code;
		if (code == 401 && !renewed && (k->token_file || k->exec_argv)) {
			/* A token that rotated or expired: read or asked again, once. */
			buf_free(&s.b);
			renewed = 1;
			if (kube_auth(k, 1, e) < 0) {
				kube_scrub(k, e);
				code = -1;
				break;
			}
			attempt--;
			continue;
		}
		if ((code == 429 || code >= 500) && attempt < k->o.retries) {
			double wait = retry_after_secs(k->retry_after);
			if (wait < 0)
				wait = backoff(attempt);
			buf_free(&s.b);
			clock_sleep(dmin(wait, k->o.retry_after_max));
			continue;
		}
		if (text && code < 400 && s.b.len) {
			buf_add(text, s.b.data, s.b.len);
			buf_free(&s.b);
			break;
		}
		json_t *j = s.b.len ? json_loadb(s.b.data, s.b.len, 0, NULL) : NULL;
		buf_free(&s.b);
		if (code >= 400)
			kube_status_err(k, method, path, code, j, e);
		if (out)
			*out = j;
		else
			json_decref(j);
		break;
	}
	free(url);
	return code;
}

long kube_request(struct kube *k, const char *method, const char *path, const char *body,
                  json_t **out, struct err *e)
{
	return kube_do(k, method, path, body, out, NULL, e);
}

/* ---- pods ---- */

static char *esc(struct kube *k, const char *s)
{
	char *x = curl_easy_escape(k->c, s, 0);
	char *r = xstrdup(x ? x : "");
	curl_free(x);
	return r;
}

int kube_pod_log(struct kube *k, const char *name, size_t max, struct buf *out, struct err *e)
{
	char *ns = esc(k, k->ns), *n = esc(k, name);
	char *path = xasprintf("/api/v1/namespaces/%s/pods/%s/log?tailLines=40&limitBytes=%zu", ns, n,
	                       max);
	long code = kube_do(k, "GET", path, NULL, NULL, out, e);
	free(path);
	free(ns);
	free(n);
	if (code >= 200 && code < 300) {
		if (out->len > max) {
			out->len = max;
			out->data[max] = '\0';
		}
		return 0;
	}
	if (code >= 0 && code < 400)
		err_set(e, _("the Kubernetes API answered the pod's log with %ld"), code);
	return -1;
}

static json_t *kube_want(struct kube *k, long code, long want, json_t *j, const char *what, struct err *e)
{
	if (code == want && json_is_object(j))
		return j;
	json_decref(j);
	if (code >= 0 && code < 400)
		err_set(e, _("the Kubernetes API answered %s with %ld and no %s"), what, code, "JSON");
	return NULL;
}

json_t *kube_pod_create(struct kube *k, json_t *pod, struct err *e)
{
	char *body = json_dumps(pod, JSON_COMPACT);
	char *ns = esc(k, k->ns);
	char *path = xasprintf("/api/v1/namespaces/%s/pods", ns);
	json_t *j = NULL;
	long code = kube_request(k, "POST", path, body, &j, e);
	free(body);
	free(ns);
	free(path);
	return kube_want(k, code, 201, j, "POST pods", e);
}

json_t *kube_pod_get(struct kube *k, const char *name, struct err *e)
{
	char *ns = esc(k, k->ns), *n = esc(k, name);
	char *path = xasprintf("/api/v1/namespaces/%s/pods/%s", ns, n);
	json_t *j = NULL;
	long code = kube_request(k, "GET", path, NULL, &j, e);
	free(ns);
	free(n);
	free(path);
	return kube_want(k, code, 200, j, "GET pod", e);
}

/* The first string of extra[key] (the API gives each extra as a list). */
static const char *review_extra(json_t *user, const char *key)
{
	json_t *v = json_object_get(json_object_get(user, "extra"), key);
	if (json_is_array(v))
		v = json_array_get(v, 0);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

int kube_token_review(struct kube *k, const char *token, const char *audience, struct kube_review *r,
                      struct err *e)
{
	memset(r, 0, sizeof *r);
	json_t *tr = json_pack("{s:s, s:s, s:{s:s, s:[s]}}", "apiVersion", "authentication.k8s.io/v1", "kind",
	                       "TokenReview", "spec", "token", token, "audiences", audience);
	if (!tr)
		return err_set(e, _("the token to review is not text"));
	char *body = json_dumps(tr, JSON_COMPACT);
	json_decref(tr);
	json_t *j = NULL;
	k->reviewed = token;
	long code = kube_request(k, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body, &j, e);
	explicit_bzero(body, strlen(body));
	free(body);
	int rc = -1;
	json_t *st = json_object_get(j, "status");
	if (code >= 0 && code < 400 && !json_is_object(st)) {
		err_set(e, _("the Kubernetes API answered %s with %ld and no %s"), "POST tokenreviews", code,
		        "status");
	} else if (code >= 0 && code < 400) {
		json_t *user = json_object_get(st, "user");
		r->authenticated = jtrue(st, "authenticated");
		const char *v;
		if ((v = jstr(user, "username")))
			r->username = sanitize_quote_str(v);
		if ((v = review_extra(user, "authentication.kubernetes.io/pod-name")))
			r->pod_name = xstrdup(v);
		if ((v = review_extra(user, "authentication.kubernetes.io/pod-uid")))
			r->pod_uid = xstrdup(v);
		if ((v = jstr(st, "error"))) {
			/* The API's words, scrubbed like every message here. */
			struct err m = {{0}};
			char *q = sanitize_quote_str(v);
			err_set(&m, "%s", q);
			free(q);
			kube_scrub(k, &m);
			r->error = xstrdup(m.msg);
		}
		rc = 0;
	}
	if (rc < 0)
		kube_scrub(k, e);
	k->reviewed = NULL;
	json_decref(j);
	return rc;
}

void kube_review_free(struct kube_review *r)
{
	free(r->username);
	free(r->pod_name);
	free(r->pod_uid);
	free(r->error);
	memset(r, 0, sizeof *r);
}

int kube_pod_delete(struct kube *k, const char *name, const char *uid, int grace_seconds, struct err *e)
{
	json_t *opts = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
	                         "propagationPolicy", "Background");
	if (grace_seconds >= 0)
		json_object_set_new(opts, "gracePeriodSeconds", json_integer(grace_seconds));
	if (uid)
		json_object_set_new(opts, "preconditions", json_pack("{s:s}", "uid", uid));
	char *body = json_dumps(opts, JSON_COMPACT);
	json_decref(opts);
	char *ns = esc(k, k->ns), *n = esc(k, name);
	char *path = xasprintf("/api/v1/namespaces/%s/pods/%s", ns, n);
	long code = kube_request(k, "DELETE", path, body, NULL, e);
	free(body);
	free(ns);
	free(n);
	free(path);
	if (code == 200 || code == 202)
		return 0;
	if (code >= 0 && code < 400)
		err_set(e, _("the Kubernetes API answered DELETE pod with %ld"), code);
	return -1;
}

static json_t *kube_list(struct kube *k, const char *label_selector, const char *field_selector, struct err *e)
{
	char *ns = esc(k, k->ns);
	struct buf p = {0};
	buf_printf(&p, "/api/v1/namespaces/%s/pods", ns);
	free(ns);
	char sep = '?';
	if (label_selector) {
		char *x = esc(k, label_selector);
		buf_printf(&p, "%clabelSelector=%s", sep, x);
		free(x);
		sep = '&';
	}
	if (field_selector) {
		char *x = esc(k, field_selector);
		buf_printf(&p, "%cfieldSelector=%s", sep, x);
		free(x);
	}
	json_t *j = NULL;
	long code = kube_request(k, "GET", p.data, NULL, &j, e);
	buf_free(&p);
	j = kube_want(k, code, 200, j, "GET pods", e);
	if (j && (!json_is_array(json_object_get(j, "items")) ||
	          !jstr(json_object_get(j, "metadata"), "resourceVersion"))) {
		json_decref(j);
		err_set(e, _("the Kubernetes API answered GET pods with no PodList"));
		return NULL;
	}
	return j;
}

json_t *kube_pod_list(struct kube *k, const char *label_selector, struct err *e)
{
	return kube_list(k, label_selector, NULL, e);
}

/* ---- the watch ---- */

struct watch_state {
	struct kube *k;
	struct kube_watch *w;
	kube_event_fn fn;
	void *arg;
	struct buf line;
	struct buf body;      /* an error answer's body */
	int result;           /* fn's non-zero return */
	int failed;           /* e is set */
	int gone;             /* a 410 */
	unsigned lines;
	struct err *e;
};

static void watch_rv(struct kube_watch *w, json_t *obj)
{
	const char *rv = jstr(json_object_get(obj, "metadata"), "resourceVersion");
	if (rv) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
}

/* One line of the stream, a watch event; 0 to go on. */
static int watch_line(struct watch_state *s, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return 0;
	s->lines++;
	json_t *j = json_loadb(line, len, 0, NULL), *obj = json_object_get(j, "object");
	const char *type = jstr(j, "type");
	if (!j || !type || !json_is_object(obj)) {
		json_decref(j);
		s->failed = 1;
		return err_set(s->e, _("the watch of pod %s got a line that is not a watch event"), s->w->name);
	}
	int rc = 0;
	if (!strcmp(type, "BOOKMARK")) {
		watch_rv(s->w, obj);
		s->w->bookmarks++;
	} else if (!strcmp(type, "ERROR")) {
		json_t *code = json_object_get(obj, "code");
		if (json_integer_value(code) == 410) {
			s->gone = 1;
			rc = -1;
		} else {
			kube_status_err(s->k, "WATCH", "pods", json_is_integer(code) ? (long)json_integer_value(code) : 500,
			                obj, s->e);
			s->failed = 1;
			rc = -1;
		}
	} else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED")) {
		watch_rv(s->w, obj);
		enum kube_event_type t = type[0] == 'A' ? KUBE_EV_ADDED : type[0] == 'M' ? KUBE_EV_MODIFIED : KUBE_EV_DELETED;
		int r = s->fn(t, obj, s->arg);
		if (r) {
			s->result = r;
			rc = -1;
		}
	} else {
		s->failed = 1;
		err_set(s->e, _("the watch of pod %s got an event of an unknown type"), s->w->name);
		rc = -1;
	}
	json_decref(j);
	return rc;
}

static size_t watch_cb(char *p, size_t size, size_t n, void *arg)
{
	struct watch_state *s = arg;
	size_t len = size * n;
	long code = 0;
	curl_easy_getinfo(s->k->c, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		if (s->body.len + len > 1024 * 1024)
			return 0;
		buf_add(&s->body, p, len);
		return len;
	}
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(p + i, '\n', len - i);
		size_t take = nl ? (size_t)(nl - (p + i)) : len - i;
		if (s->line.len + take > KUBE_EVENT_MAX) {
			s->failed = 1;
			err_set(s->e, _("the watch of pod %s got a line longer than %d bytes; the stream is not believed"),
			        s->w->name, KUBE_EVENT_MAX);
			return 0;
		}
		buf_add(&s->line, p + i, take);
		i += take;
		if (nl) {
			i++;
			int rc = watch_line(s, s->line.data ? s->line.data : "", s->line.len);
			buf_reset(&s->line);
			if (rc)
				return 0;
		}
	}
	return len;
}

/* After a 410: the pod as it is now, and where to watch from. */
static int watch_relist(struct kube *k, struct kube_watch *w, struct watch_state *s, int first,
                        struct err *e)
{
	char *fs = xasprintf("metadata.name=%s", w->name);
	json_t *l = kube_list(k, NULL, fs, e);
	free(fs);
	if (!l)
		return -1;
	watch_rv(w, l);
	json_t *pod = json_array_get(json_object_get(l, "items"), 0);
	int r = 0;
	if (!first) {
		w->relists++;
		r = s->fn(KUBE_EV_RELIST, pod, s->arg);
	} else if (pod) {
		r = s->fn(KUBE_EV_ADDED, pod, s->arg);
	}
	json_decref(l);
	return r;
}

/* Long: the watch's loop: each stream, and what ends it (the caller's
 * answer, the deadline, a 410, a drop, an error) decides the next. */
/* curl_easy_perform of k->c, given up (*woken set, CURLE_OK) once
 * *wake_fd polls readable: through a multi handle, whose poll takes the
 * caller's descriptor beside curl's own. */
static CURLcode perform_wakeable(struct kube *k, const int *wake_fd, int *woken)
{
	*woken = 0;
	if (!wake_fd)
		return curl_easy_perform(k->c);
	if (!k->multi && !(k->multi = curl_multi_init()))
		return CURLE_OUT_OF_MEMORY;
	if (curl_multi_add_handle(k->multi, k->c) != CURLM_OK)
		return CURLE_FAILED_INIT;
	CURLcode cr = CURLE_OK;
	for (;;) {
		int running = 0, left;
		if (curl_multi_perform(k->multi, &running) != CURLM_OK) {
			cr = CURLE_FAILED_INIT;
			break;
		}
		if (!running) {
			CURLMsg *m;
			while ((m = curl_multi_info_read(k->multi, &left)))
				if (m->msg == CURLMSG_DONE)
					cr = m->data.result;
			break;
		}
		struct curl_waitfd wf = { .fd = *wake_fd, .events = CURL_WAIT_POLLIN };
		if (curl_multi_poll(k->multi, &wf, 1, 1000, NULL) != CURLM_OK) {
			cr = CURLE_FAILED_INIT;
			break;
		}
		if (wf.revents) {
			*woken = 1;
			break;
		}
	}
	curl_multi_remove_handle(k->multi, k->c);
	return cr;
}

int kube_watch_pod(struct kube *k, struct kube_watch *w, double seconds, kube_event_fn fn,
                   void *arg, struct err *e)
{
	double deadline = clock_mono() + seconds;
	struct watch_state s = { .k = k, .w = w, .fn = fn, .arg = arg, .e = e };
	w->woken = 0;
	int rc = 0, drops = 0, relists = 0, renewed = 0;
	char *fs = xasprintf("metadata.name=%s", w->name);
	char *fse = esc(k, fs), *ns = esc(k, k->ns);
	free(fs);
	if (!w->rv) {
		/* List, then watch from the list: the pod as it is now first. */
		rc = watch_relist(k, w, &s, 1, e);
		if (rc)
			goto out;
	}
	while (clock_mono() < deadline) {
		double left = deadline - clock_mono();
		char *rve = esc(k, w->rv);
		char *url = xasprintf("%s/api/v1/namespaces/%s/pods?watch=1&fieldSelector=%s&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%ld",
		                      k->server, ns, fse, rve, (long)left + 1);
		free(rve);
		if (kube_auth(k, 0, e) < 0) {
			free(url);
			rc = -1;
			break;
		}
		struct curl_slist *h = kube_setup(k, "GET", url, NULL, left);
		free(url);
		char errbuf[CURL_ERROR_SIZE] = "";
		curl_easy_setopt(k->c, CURLOPT_WRITEFUNCTION, watch_cb);
		curl_easy_setopt(k->c, CURLOPT_WRITEDATA, &s);
		curl_easy_setopt(k->c, CURLOPT_ERRORBUFFER, errbuf);
		double began = clock_mono();
		s.lines = 0;
		s.gone = 0;
		buf_reset(&s.line);
		buf_reset(&s.body);
		CURLcode cr = perform_wakeable(k, w->wake_fd, &w->woken);
		curl_slist_free_all(h);
		long code = 0;
		curl_easy_getinfo(k->c, CURLINFO_RESPONSE_CODE, &code);
		k->last_code = code;
		if (s.result) {
			rc = s.result;
			break;
		}
		if (w->woken)
			break;
		if (s.failed) {
			rc = -1;
			break;
		}
		if (s.gone || code == 410) {
			if (++relists > k->o.retries + 1) {
				rc = err_set(e, _("the watch of pod %s keeps answering 410 Gone after a re-list"), w->name);
				break;
			}
			if ((rc = watch_relist(k, w, &s, 0, e)))
				break;
			continue;
		}
		if (cr == CURLE_OK && code == 401 && !renewed && (k->token_file || k->exec_argv)) {
			/* A token that rotated or expired: read or asked again, once. */
			renewed = 1;
			if (kube_auth(k, 1, e) < 0) {
				rc = -1;
				break;
			}
			continue;
		}
		if (cr == CURLE_OK && code != 200) {
			json_t *j = s.body.len ? json_loadb(s.body.data, s.body.len, 0, NULL) : NULL;
			if ((code == 429 || code >= 500) && drops++ < k->o.retries) {
				double wait = retry_after_secs(k->retry_after);
				json_decref(j);
				clock_sleep(dmin(dmin(wait < 0 ? backoff(drops) : wait, k->o.retry_after_max),
				                 dmax(0, deadline - clock_mono())));
				continue;
			}
			kube_status_err(k, "GET", "/api/v1/namespaces/.../pods?watch=1", code, j, e);
			json_decref(j);
			rc = -1;
			break;
		}
		if (cr == CURLE_OPERATION_TIMEDOUT && clock_mono() >= deadline - 0.05)
			break;
		if (s.lines) {
			drops = 0;
			relists = 0;
		}
		if (cr == CURLE_OK && !s.lines && clock_mono() - began >= 1)
			continue; /* a quiet stream the server ended: not a drop */
		if (cr != CURLE_OK || !s.lines) {
			/* Dropped, or ended at once: again from w->rv, a bounded
			 * number of times in a row. */
			w->reconnects++;
			if (drops++ >= k->o.retries) {
				rc = err_kind_set(e, ERR_UNAVAILABLE, _("the watch of pod %s keeps dropping: %s"), w->name,
				                  *errbuf ? errbuf : cr == CURLE_OK ? _("the stream ended at once") : curl_easy_strerror(cr));
				break;
			}
			clock_sleep(dmin(backoff(drops - 1), dmax(0, deadline - clock_mono())));
		}
	}
out:
	free(fse);
	free(ns);
	buf_free(&s.line);
	buf_free(&s.body);
	if (rc < 0)
		kube_scrub(k, e);
	return rc;
}

void kube_watch_end(struct kube_watch *w)
{
	free(w->rv);
	w->rv = NULL;
}
