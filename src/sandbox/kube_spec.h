/* kube_spec: the Kubernetes objects paddock creates (a sandbox's Pod) or
 * prints for an admin to apply once (the namespace, its quota and limit
 * range, the sandboxes' service account, the two NetworkPolicies), built
 * as jansson objects (DESIGN.md, "Beyond one machine: Kubernetes").  No
 * request is sent here: kube.h sends them.  Every builder returns a new
 * reference the caller owns, or NULL with e set (ERR_INVALID: which
 * option is wrong and why), and never puts an option's text into a name
 * or a label unchecked: a task id must have a task id's shape
 * (task_id_valid), the namespace must be a DNS-1123 label, the instance a
 * label value, the images image references without space or control
 * characters.
 *
 * The sandbox Pod (kube_spec_pod), named pdk-<task>-<role>-<attempt> so
 * that a retried create is idempotent (the 409 is adopted only when the
 * labels are paddock's: kube_spec_pod_is_ours), meets the Pod Security
 * Standard "restricted" and more: runAsNonRoot as uid/gid (and fsGroup)
 * 1000, every capability dropped, no privilege escalation, seccomp
 * RuntimeDefault, a read-only root; no service-account token
 * automounted (the service account has no bindings either), no service
 * links, dnsPolicy None with the one nameserver 127.0.0.1, where nothing
 * answers (the API requires one; a pod's only peer is the front door, by
 * address), restartPolicy Never, a 2 s grace period, activeDeadlineSeconds
 * as a backstop, optional runtimeClassName and hostUsers false.  Volumes
 * are emptyDirs with a sizeLimit (/work, /out, /home/agent, /tmp,
 * /paddock for the prompt, the runner's) and one projected token.  An
 * init container (runner_image, which needs cp) copies runner_path into
 * the runner's emptyDir, which the main container (image) mounts
 * read-only at /paddock/runner and runs as PID 1, in /work.
 *
 * The runner's credential is a projected service-account token with
 * paddock's audience (KUBE_SPEC_TOKEN_PATH; PADDOCK_TOKEN_FILE names it,
 * PADDOCK_FRONT_DOOR the address to dial), not a random token in an env
 * var: the Pod object is readable by whoever may get pods, is kept in
 * etcd and shown by kubectl describe, so nothing secret goes in it; the
 * kubelet writes and rotates the token, it is bound to this pod (void
 * once the pod is deleted; a TokenReview names the pod and its uid), and
 * its audience makes it worthless to the API server.
 *
 * Resources: requests equal limits (the Guaranteed class, the last a node
 * evicts) for memory, cpu (limits->cpus; none when 0) and
 * ephemeral-storage (limits->disk, which also bounds every emptyDir).
 * limits->pids has no per-pod field in the API (the kubelet's
 * podPidsLimit is the node's): the runner's rlimits stay its guard. */
#ifndef PADDOCK_KUBE_SPEC_H
#define PADDOCK_KUBE_SPEC_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"
#include "quota.h"

#define KUBE_SPEC_MANAGED_BY "app.kubernetes.io/managed-by"
#define KUBE_SPEC_INSTANCE "paddock.dev/instance"
#define KUBE_SPEC_TASK "paddock.dev/task"
#define KUBE_SPEC_ROLE "paddock.dev/role"
/* The service account sandboxes run as (no bindings, no automount). */
#define KUBE_SPEC_SERVICE_ACCOUNT "paddock-sandbox"
#define KUBE_SPEC_POLICY_DENY "paddock-default-deny"
#define KUBE_SPEC_POLICY_FRONT_DOOR "paddock-front-door"
#define KUBE_SPEC_QUOTA "paddock-quota"
#define KUBE_SPEC_LIMIT_RANGE "paddock-limits"
/* Where the projected token lies inside the pod. */
#define KUBE_SPEC_TOKEN_DIR "/paddock/token"
#define KUBE_SPEC_TOKEN_PATH KUBE_SPEC_TOKEN_DIR "/token"
/* The token's audience unless the options name one. */
#define KUBE_SPEC_AUDIENCE "paddock"
/* activeDeadlineSeconds beyond limits->timeout when none is given. */
#define KUBE_SPEC_DEADLINE_SLACK 600
#define KUBE_SPEC_GRACE 2

enum kube_role { KUBE_ROLE_TASK, KUBE_ROLE_VERIFY, KUBE_ROLE_SETUP };

/* "task", "verify", "setup"; NULL for another value. */
const char *kube_role_name(enum kube_role r);

/* Everything borrowed; only the builders' results are the caller's. */
struct kube_spec_opts {
	const char *namespace;   /* a DNS-1123 label */
	const char *instance;    /* the data directory's instance id: a label
	                            value (at most 63 of [A-Za-z0-9._-],
	                            alphanumeric at both ends) */
	const char *task;        /* a task id (task.h), or a sandbox id of
	                            paddock's own (KUBE_SPEC_ID_MAX lowercase
	                            letters, digits and '-': "vfy-4242-1") */
	enum kube_role role;
	unsigned attempt;        /* n of the name, from 0 */
	const char *image;       /* the sandbox image (agent CLIs, toolchain) */
	const char *runner_image; /* the init container's image, with cp */
	const char *runner_path; /* the runner's absolute path in runner_image */
	const struct limits *limits; /* memory and disk required (> 0) */
	/* emptyDir sizeLimits in bytes; 0: limits->disk */
	uint64_t size_work, size_out, size_home, size_tmp;
	long deadline;           /* activeDeadlineSeconds; 0: limits->timeout
	                            + KUBE_SPEC_DEADLINE_SLACK (86400 when
	                            there is no timeout) */
	const char *runtime_class; /* runtimeClassName (gVisor, Kata); NULL: none */
	int host_users_false;    /* 1: hostUsers false (a user namespace) */
	const char *front_door;  /* the front door's IP address (v4 or v6) */
	int front_door_port;     /* 1..65535 */
	const char *front_door_cidr; /* the policy's ipBlock; NULL: the
	                                address as a /32 or /128 */
	const char *audience;    /* the token's audience; NULL: KUBE_SPEC_AUDIENCE */
	long token_seconds;      /* the token's expirationSeconds; 0: 3600
	                            (the API's least is 600) */
	unsigned max_pods;       /* the quota's pods; 0: 100 */
	/* The runner's (contract: PADDOCK_GATEWAY_PORTS, PADDOCK_PROBE):
	 * "8081,3128" and "HOST:PORT,..."; NULL: none. */
	const char *gateway_ports;
	const char *probe;
	double resume_seconds;   /* PADDOCK_RUNNER_RESUME_SECONDS: how long the
	                            runner dials to resume its session (0: not
	                            set, the runner's 60) */
	int agent;               /* 1: an emptyDir at SANDBOX_AGENT_DIR (its
	                            sizeLimit limits->disk) for the agent's
	                            install, which the backend puts there */
	const char *owner;       /* the paddock.dev/owner annotation: which
	                            process made the pod (the janitor's); NULL:
	                            none */
};

#define KUBE_SPEC_OWNER "paddock.dev/owner"
#define KUBE_SPEC_ID_MAX 40

/* The Pod's name, pdk-<task>-<role>-<attempt>, malloc'd; NULL with e set
 * when the task id or role is not one. */
char *kube_spec_pod_name(const struct kube_spec_opts *o, struct err *e);
/* The sandbox Pod. */
json_t *kube_spec_pod(const struct kube_spec_opts *o, struct err *e);
/* 1 when pod (borrowed; one the API answered, e.g. with a 409) carries
 * exactly the labels kube_spec_pod gives for o: paddock manages it, same
 * instance, task and role. */
int kube_spec_pod_is_ours(const json_t *pod, const struct kube_spec_opts *o);

/* The admin's objects: the Namespace (Pod Security "restricted"
 * enforced, warned and audited), the ResourceQuota (max_pods pods and
 * that many pods' limits), the LimitRange (a container's default and
 * most: the limits), the ServiceAccount (no automount) and the two
 * NetworkPolicies: every ingress and egress of every pod in the namespace
 * denied, and egress allowed from paddock's pods only to the front door's
 * CIDR and TCP port. */
json_t *kube_spec_namespace(const struct kube_spec_opts *o, struct err *e);
json_t *kube_spec_quota(const struct kube_spec_opts *o, struct err *e);
json_t *kube_spec_limit_range(const struct kube_spec_opts *o, struct err *e);
json_t *kube_spec_service_account(const struct kube_spec_opts *o, struct err *e);
json_t *kube_spec_policy_deny(const struct kube_spec_opts *o, struct err *e);
json_t *kube_spec_policy_front_door(const struct kube_spec_opts *o, struct err *e);
/* All six, in the order an admin applies them, as a v1 List. */
json_t *kube_spec_manifest(const struct kube_spec_opts *o, struct err *e);

#endif
