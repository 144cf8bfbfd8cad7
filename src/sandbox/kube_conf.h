/* kube_conf: the [kubernetes] section of the configuration
 * (paddock-config(5)), what the kubernetes sandbox backend, its front
 * door and `paddock kubernetes manifest` are set up with.  Plain data:
 * config.c fills it and frees it; everyone else borrows it. */
#ifndef PADDOCK_KUBE_CONF_H
#define PADDOCK_KUBE_CONF_H

#include <stddef.h>

/* The front door's port unless front-door names one. */
#define KUBE_CONF_DOOR_PORT 7433
/* Where paddock-runner is in the runner image unless runner-path says. */
#define KUBE_CONF_RUNNER_PATH "/usr/libexec/paddock/paddock-runner"

struct kube_conf {
	char *kubeconfig;      /* kubeconfig: a file, or NULL ($KUBECONFIG, in
	                          the cluster, ~/.kube/config) */
	char *context;         /* context: NULL, the current context */
	char *namespace;       /* namespace: NULL, the context's */
	char *image;           /* image: the sandbox image (required) */
	char *runner_image;    /* runner-image: NULL, image */
	char *runner_path;     /* runner-path: paddock-runner in runner_image
	                          (NULL: KUBE_CONF_RUNNER_PATH) */
	char *door_listen;     /* front-door-listen: ADDRESS:PORT serve listens
	                          on (NULL: 0.0.0.0 and front-door's port) */
	char *door;            /* front-door: IP:PORT the pods dial (required) */
	char *door_cidr;       /* front-door-cidr: the policy's ipBlock (NULL:
	                          the address alone) */
	char *runtime_class;   /* runtime-class: NULL, the cluster's default */
	int host_users;        /* host-users (1); 0: hostUsers false */
	char *audience;        /* audience: the token's (NULL: "paddock") */
	char **probe;          /* probe: HOST:PORT the pods must not reach */
	size_t nprobe;
	double start_timeout;  /* start-timeout: seconds a pod has to start
	                          and dial the front door (300) */
	double resume_timeout; /* resume-timeout: seconds a session may be
	                          without its connection (60) */
	int max_pods;          /* max-pods: the manifest's quota (100) */
};

#endif
