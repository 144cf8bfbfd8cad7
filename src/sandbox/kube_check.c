/* kube_check: the prepared namespace checked against the API (kube_check.h). */
#include "autoconfig.h"
#include "kube_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "buf.h"
#include "egress.h"
#include "i18n.h"
#include "paths.h"
#include "sanitize.h"

int kube_check_conf_init(struct kube_check_conf *c, const struct kube_conf *kc,
                         const struct limits *l, const char *instance, const char *ns,
                         struct err *e)
{
	memset(c, 0, sizeof *c);
	c->kube.kubeconfig = kc->kubeconfig;
	c->kube.context = kc->context;
	if (!kc->door)
		return err_kind_set(e, ERR_INVALID,
		                    _("kubernetes: front-door is not set; set [kubernetes] front-door to the "
		                      "IP:PORT pods dial to reach paddock (a Service's or the host's address)"));
	/* config.c checked its shape: IP:PORT or [IPv6]:PORT */
	const char *colon = strrchr(kc->door, ':');
	if (!colon)
		return err_kind_set(e, ERR_INVALID, _("kubernetes: front-door '%s' is not IP:PORT"),
		                    kc->door);
	if (kc->door[0] == '[')
		c->door_ip = xstrndup(kc->door + 1, (size_t)(colon - kc->door) - 2);
	else
		c->door_ip = xstrndup(kc->door, (size_t)(colon - kc->door));
	if (!ns)
		ns = kc->namespace;
	if (ns) {
		c->ns = xstrdup(ns);
	} else {
		struct kube *k = kube_open(&c->kube, e);
		if (!k) {
			err_prefix(e, _("kubernetes: no namespace: set [kubernetes] namespace, or name one "
			                "in the kubeconfig's context"));
			err_kind_mark(e, ERR_INVALID);
			kube_check_conf_free(c);
			return -1;
		}
		c->ns = xstrdup(kube_namespace(k));
		kube_free(k);
	}
	c->instance = xstrdup(instance);
	c->spec = (struct kube_spec_opts){
		.namespace = c->ns,
		.instance = c->instance,
		.limits = l,
		.front_door = c->door_ip,
		.front_door_port = atoi(colon + 1),
		.front_door_cidr = kc->door_cidr,
		.audience = kc->audience,
		.max_pods = kc->max_pods > 0 ? (unsigned)kc->max_pods : 0,
	};
	/* Every object of the manifest built once: a value that makes no
	 * valid object is the configuration's problem, named now. */
	/* (the checks compare no limits: without them, any will do) */
	static const struct limits any = { .memory = 1, .disk = 1 };
	struct kube_spec_opts v = c->spec;
	if (!v.limits)
		v.limits = &any;
	json_t *m = kube_spec_manifest(&v, e);
	if (!m) {
		err_kind_mark(e, ERR_INVALID);
		kube_check_conf_free(c);
		return -1;
	}
	json_decref(m);
	return 0;
}

void kube_check_conf_free(struct kube_check_conf *c)
{
	free(c->ns);
	free(c->instance);
	free(c->door_ip);
	memset(c, 0, sizeof *c);
}

const char *kube_check_item_name(enum kube_check_item it)
{
	switch (it) {
	case KUBE_CHECK_NAMESPACE: return "k8s-namespace";
	case KUBE_CHECK_POLICY_DENY: return "k8s-deny";
	case KUBE_CHECK_POLICY_DOOR: return "k8s-door-policy";
	case KUBE_CHECK_SERVICE_ACCOUNT: return "k8s-account";
	case KUBE_CHECK_QUOTA: return "k8s-quota";
	case KUBE_CHECK_N: break;
	}
	return "?";
}

/* GET of one object: 200 with *out (new reference), 404 (missing), or
 * -1 with e set (no answer, or an error answer other than 404). */
static long get(struct kube *k, const char *path, json_t **out, struct err *e)
{
	*out = NULL;
	long code = kube_request(k, "GET", path, NULL, out, e);
	if (code == 200 && json_is_object(*out))
		return 200;
	json_decref(*out);
	*out = NULL;
	if (code == 404)
		return 404;
	if (code == 200)
		return err_set(e, _("kubernetes: the API answered GET %s with something that is not an "
		                    "object"), path);
	err_prefix(e, "kubernetes");
	return -1;
}

int kube_check_api(struct kube *k, const struct kube_spec_opts *o, struct err *e)
{
	char *path = xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s", o->namespace,
	                       KUBE_SPEC_SERVICE_ACCOUNT);
	json_t *j = NULL;
	long code = kube_request(k, "GET", path, NULL, &j, e);
	json_decref(j);
	free(path);
	if (code < 0 || code == 401) {
		err_prefix(e, "kubernetes");
		return -1;
	}
	return 0;
}

/* "the NetworkPolicy NAME is missing from namespace NS; ..." */
static int missing(struct err *e, const char *what, const char *name, const char *ns)
{
	return err_kind_set(e, ERR_NOT_FOUND,
	                    _("kubernetes: the %s %s is missing from namespace %s; create it: %s"), what,
	                    name, ns, KUBE_CHECK_FIX);
}

/* "the NetworkPolicy NAME in namespace NS WHY; ..."; why is paddock's text
 * with the API's values quoted in it. */
static int wrong(struct err *e, const char *what, const char *name, const char *ns, const char *why)
{
	return err_kind_set(e, ERR_INVALID,
	                    _("kubernetes: the %s %s in namespace %s %s; put the manifest's in its "
	                      "place: %s"), what, name, ns, why, KUBE_CHECK_FIX);
}

/* 1 when the array is absent or empty. */
static int none(const json_t *a)
{
	return !a || json_is_null(a) || (json_is_array(a) && json_array_size(a) == 0);
}

static int has_type(const json_t *types, const char *t)
{
	size_t i;
	json_t *v;
	json_array_foreach(types, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), t))
			return 1;
	return 0;
}

/* 1 when a label selector is empty (selects every pod). */
static int selects_all(const json_t *sel)
{
	return json_is_object(sel) && (none(json_object_get(sel, "matchExpressions"))) &&
	       (!json_object_get(sel, "matchLabels") ||
	        json_object_size(json_object_get(sel, "matchLabels")) == 0);
}

/* Why the default-deny policy p is not one, or NULL (static text). */
static const char *deny_wrong(const json_t *p)
{
	const json_t *spec = json_object_get(p, "spec");
	if (!selects_all(json_object_get(spec, "podSelector")))
		return N_("selects only some pods (its podSelector must be {})");
	const json_t *types = json_object_get(spec, "policyTypes");
	if (!has_type(types, "Ingress") || !has_type(types, "Egress"))
		return N_("does not deny both directions (its policyTypes must be Ingress and Egress)");
	if (!none(json_object_get(spec, "ingress")))
		return N_("has ingress rules, which allow traffic in");
	if (!none(json_object_get(spec, "egress")))
		return N_("has egress rules, which allow traffic out");
	return NULL;
}

/* 1 when cidr text lies inside want. */
static int cidr_within(const char *text, const struct egress_cidr *want)
{
	struct egress_cidr c;
	if (strlen(text) > 64 || egress_cidr_parse(text, &c) < 0 || c.family != want->family ||
	    c.bits < want->bits)
		return 0;
	for (int b = 0; b < want->bits; b++) {
		int m = 0x80 >> (b % 8);
		if ((c.addr[b / 8] & m) != (want->addr[b / 8] & m))
			return 0;
	}
	return 1;
}

/* Why one egress rule r of the front door's policy allows more than the
 * front door (want, port), into why (a message); 0 when it does not. */
static int door_rule_wrong(const json_t *r, const struct egress_cidr *want, const char *want_text,
                           int port, struct buf *why)
{
	const json_t *to = json_object_get(r, "to");
	if (none(to)) {
		buf_printf(why, _("allows egress to every address (a rule without 'to')"));
		return 1;
	}
	size_t i;
	json_t *peer;
	json_array_foreach(to, i, peer) {
		const json_t *ib = json_object_get(peer, "ipBlock");
		if (json_object_get(peer, "podSelector") || json_object_get(peer, "namespaceSelector") ||
		    !json_is_object(ib)) {
			buf_printf(why, _("allows egress to pods (a podSelector or namespaceSelector peer)"));
			return 1;
		}
		const char *c = json_string_value(json_object_get(ib, "cidr"));
		if (!c || !cidr_within(c, want)) {
			char *q = sanitize_quote_str(c ? c : "");
			buf_printf(why, _("allows egress to %s, more than the front door's %s"), q,
			           want_text);
			free(q);
			return 1;
		}
	}
	const json_t *ports = json_object_get(r, "ports");
	if (none(ports)) {
		buf_printf(why, _("allows egress to every port (a rule without 'ports')"));
		return 1;
	}
	json_t *pp;
	json_array_foreach(ports, i, pp) {
		const json_t *proto = json_object_get(pp, "protocol");
		const json_t *pn = json_object_get(pp, "port");
		const json_t *end = json_object_get(pp, "endPort");
		if (proto && (!json_is_string(proto) || strcmp(json_string_value(proto), "TCP"))) {
			char *q = sanitize_quote_str(json_is_string(proto) ? json_string_value(proto) : "");
			buf_printf(why, _("allows protocol %s; only TCP to the front door is needed"), q);
			free(q);
			return 1;
		}
		if (!pn) {
			buf_printf(why, _("allows egress to every port (a port rule without 'port')"));
			return 1;
		}
		if (end && (!json_is_integer(end) || json_integer_value(end) != port)) {
			buf_printf(why, _("allows a range of ports; only the front door's %d is needed"),
			           port);
			return 1;
		}
		if (!json_is_integer(pn) || json_integer_value(pn) != port) {
			char *q = json_dumps(pn, JSON_ENCODE_ANY | JSON_COMPACT);
			char *s = sanitize_quote_str(q ? q : "");
			buf_printf(why, _("allows port %s; only the front door's %d is needed"), s, port);
			free(s);
			free(q);
			return 1;
		}
	}
	return 0;
}

/* Why the front door's policy p allows more than the manifest's (or does
 * not apply to paddock's pods), into why; 0 when it is the manifest's. */
static int door_wrong(const json_t *p, const struct kube_spec_opts *o, struct buf *why)
{
	const json_t *spec = json_object_get(p, "spec");
	const json_t *sel = json_object_get(spec, "podSelector");
	const json_t *ml = json_object_get(sel, "matchLabels");
	const char *key;
	json_t *v;
	int foreign = !json_is_object(sel) || !none(json_object_get(sel, "matchExpressions"));
	json_object_foreach((json_t *)ml, key, v) {
		const char *want = !strcmp(key, KUBE_SPEC_MANAGED_BY) ? "paddock"
		                   : !strcmp(key, KUBE_SPEC_INSTANCE) ? o->instance : NULL;
		if (!want || !json_is_string(v) || strcmp(json_string_value(v), want))
			foreign = 1;
	}
	if (foreign) {
		buf_printf(why, _("does not select this paddock's pods (instance %s)"), o->instance);
		return 1;
	}
	const json_t *types = json_object_get(spec, "policyTypes");
	if (!has_type(types, "Egress")) {
		buf_printf(why, _("is not an egress policy (its policyTypes must be Egress)"));
		return 1;
	}
	if (!none(json_object_get(spec, "ingress"))) {
		buf_printf(why, _("has ingress rules, which allow traffic in"));
		return 1;
	}
	const json_t *egress = json_object_get(spec, "egress");
	if (none(egress)) {
		buf_printf(why, _("allows no egress, so pods cannot reach the front door"));
		return 1;
	}
	char *want_text = o->front_door_cidr ? xstrdup(o->front_door_cidr)
	                  : xasprintf("%s/%d", o->front_door, strchr(o->front_door, ':') ? 128 : 32);
	struct egress_cidr want;
	int rc = 0;
	if (egress_cidr_parse(want_text, &want) < 0) {
		buf_printf(why, _("cannot be compared: the front door's range %s is not one"), want_text);
		rc = 1;
	}
	size_t i;
	json_array_foreach(egress, i, v) {
		if (rc)
			break;
		rc = door_rule_wrong(v, &want, want_text, o->front_door_port, why);
	}
	free(want_text);
	return rc;
}

int kube_check_one(struct kube *k, const struct kube_spec_opts *o, enum kube_check_item it,
                   struct err *e)
{
	const char *ns = o->namespace;
	char *path = NULL;
	json_t *j = NULL;
	long code;
	int rc = 0;
	struct buf why = {0};
	switch (it) {
	case KUBE_CHECK_NAMESPACE:
		path = xasprintf("/api/v1/namespaces/%s", ns);
		code = get(k, path, &j, e);
		if (code == 404)
			rc = err_kind_set(e, ERR_NOT_FOUND,
			                  _("kubernetes: the namespace %s does not exist; create it and the "
			                    "rest: %s"), ns, KUBE_CHECK_FIX);
		else if (code < 0 && kube_last_code(k) == 403) {
			/* Getting a namespace takes a cluster role; a Role in the
			 * namespace suffices for the rest, whose checks show it. */
			err_set(e, _("kubernetes: paddock's user may not read the namespace %s itself "
			             "(the objects in it are checked below)"), ns);
			rc = 1;
		} else if (code < 0)
			rc = -1;
		break;
	case KUBE_CHECK_POLICY_DENY:
	case KUBE_CHECK_POLICY_DOOR: {
		const char *name = it == KUBE_CHECK_POLICY_DENY ? KUBE_SPEC_POLICY_DENY
		                                                : KUBE_SPEC_POLICY_FRONT_DOOR;
		path = xasprintf("/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies/%s", ns, name);
		code = get(k, path, &j, e);
		if (code == 404)
			rc = missing(e, "NetworkPolicy", name, ns);
		else if (code < 0)
			rc = -1;
		else if (it == KUBE_CHECK_POLICY_DENY && deny_wrong(j))
			rc = wrong(e, "NetworkPolicy", name, ns, _(deny_wrong(j)));
		else if (it == KUBE_CHECK_POLICY_DOOR && door_wrong(j, o, &why))
			rc = wrong(e, "NetworkPolicy", name, ns, why.data);
		break;
	}
	case KUBE_CHECK_SERVICE_ACCOUNT:
		path = xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s", ns, KUBE_SPEC_SERVICE_ACCOUNT);
		code = get(k, path, &j, e);
		if (code == 404)
			rc = missing(e, "ServiceAccount", KUBE_SPEC_SERVICE_ACCOUNT, ns);
		else if (code < 0)
			rc = -1;
		else if (!json_is_false(json_object_get(j, "automountServiceAccountToken")))
			rc = wrong(e, "ServiceAccount", KUBE_SPEC_SERVICE_ACCOUNT, ns,
			           _("mounts its token into pods (automountServiceAccountToken must be "
			             "false)"));
		break;
	case KUBE_CHECK_QUOTA:
		path = xasprintf("/api/v1/namespaces/%s/resourcequotas/%s", ns, KUBE_SPEC_QUOTA);
		code = get(k, path, &j, e);
		if (code == 404)
			rc = missing(e, "ResourceQuota", KUBE_SPEC_QUOTA, ns);
		else if (code < 0)
			rc = -1;
		break;
	case KUBE_CHECK_N:
		rc = err_set(e, _("kubernetes: no such check"));
		break;
	}
	buf_free(&why);
	json_decref(j);
	free(path);
	return rc;
}

int kube_check_all(struct kube *k, const struct kube_spec_opts *o, struct err *e)
{
	for (int it = 0; it < KUBE_CHECK_N; it++)
		if (kube_check_one(k, o, (enum kube_check_item)it, e) < 0)
			return -1;
	return 0;
}

int kube_check_preflight(const struct kube_conf *kc, const struct limits *l,
                         const char *data_dir, struct err *e)
{
	char *instance = paths_instance_id(data_dir, e);
	if (!instance)
		return -1;
	struct kube_check_conf c;
	int rc = kube_check_conf_init(&c, kc, l, instance, NULL, e);
	free(instance);
	if (rc < 0)
		return -1;
	struct kube *k = kube_open(&c.kube, e);
	if (!k)
		rc = -1;
	else
		rc = kube_check_all(k, &c.spec, e);
	kube_free(k);
	kube_check_conf_free(&c);
	return rc;
}
