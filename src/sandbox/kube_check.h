/* kube_check: whether the namespace paddock's pods run in is prepared as
 * `paddock kubernetes manifest` prints it (DESIGN.md, "Beyond one
 * machine: Kubernetes"): the namespace, the default-deny NetworkPolicy,
 * the front door's NetworkPolicy and nothing wider, the service account
 * without a token mounted, the quota.  The policies must exist before any
 * pod does, so the kubernetes backend's preflight refuses to run without
 * them (kube_check_preflight), and `paddock doctor` shows each check on a
 * line of its own (kube_check_one).
 *
 * What the API answers is believed only as the cluster's state: a policy
 * is compared with what the manifest gives, field by field, and one that
 * allows more (another address, every port, pods as peers) fails, naming
 * what it allows.  Every failure says what is missing or wrong and the
 * command that fixes it (KUBE_CHECK_FIX). */
#ifndef PADDOCK_KUBE_CHECK_H
#define PADDOCK_KUBE_CHECK_H

#include "err.h"
#include "kube.h"
#include "kube_conf.h"
#include "kube_spec.h"
#include "quota.h"

/* What an admin runs to put every object in place. */
#define KUBE_CHECK_FIX "paddock kubernetes manifest | kubectl apply -f -"

/* The options of the manifest and of the checks, from the configuration.
 * spec's strings point into this struct or into what kube_check_conf_init
 * borrowed (kc, limits); free with kube_check_conf_free. */
struct kube_check_conf {
	struct kube_spec_opts spec; /* namespace, instance, limits, front door,
	                               its CIDR, max_pods */
	struct kube_opts kube;      /* kubeconfig and context, as kube_open takes */
	char *ns;                   /* owned: spec.namespace */
	char *instance;             /* owned: spec.instance */
	char *door_ip;              /* owned: spec.front_door */
};

/* Fills c from [kubernetes] (kc), [limits] (l) and the data directory's
 * instance id (paths_instance_id), all borrowed while c is used.  l may
 * be NULL where only the checks are wanted (they compare no limits);
 * spec.limits is then NULL and the manifest cannot be built from c.  The
 * namespace is ns when given, else kc->namespace, else the kubeconfig
 * context's (read from the file, no request sent; "default" when the
 * context names none).  -1 with e set (ERR_INVALID: what to configure)
 * when front-door is not set or a value makes no valid object. */
int kube_check_conf_init(struct kube_check_conf *c, const struct kube_conf *kc,
                         const struct limits *l, const char *instance, const char *ns,
                         struct err *e);
void kube_check_conf_free(struct kube_check_conf *c);

enum kube_check_item {
	KUBE_CHECK_NAMESPACE,
	KUBE_CHECK_POLICY_DENY,
	KUBE_CHECK_POLICY_DOOR,
	KUBE_CHECK_SERVICE_ACCOUNT,
	KUBE_CHECK_QUOTA,
	KUBE_CHECK_N
};

/* A stable name for each item (doctor's names): "k8s-namespace",
 * "k8s-deny", "k8s-door-policy", "k8s-account", "k8s-quota". */
const char *kube_check_item_name(enum kube_check_item it);

/* Whether the API answers and takes paddock's credentials: one GET in the
 * namespace.  0, or -1 with e set (unreachable, TLS, 401). */
int kube_check_api(struct kube *k, const struct kube_spec_opts *o, struct err *e);

/* One item.  0 when it is in place; 1 when the API does not let paddock
 * read it but the others show it (the namespace, which needs a cluster
 * role to get: the namespaced objects are in it), with e saying so; -1
 * with e set: missing, wrong (what is wrong), or the API's refusal. */
int kube_check_one(struct kube *k, const struct kube_spec_opts *o, enum kube_check_item it,
                   struct err *e);

/* Every item in order; 0 when all are in place, else -1 with the first
 * failure in e. */
int kube_check_all(struct kube *k, const struct kube_spec_opts *o, struct err *e);

/* The kubernetes backend's preflight, all of it: the options from kc, l
 * (may be NULL: sandbox_options() has no limits) and data_dir's instance
 * id, the connection (kube_open), every item.  0, or -1 with e set. */
int kube_check_preflight(const struct kube_conf *kc, const struct limits *l,
                         const char *data_dir, struct err *e);

#endif
