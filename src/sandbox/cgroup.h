/* cgroup: one task's control groups (v1 controllers memory, pids, freezer,
 * cpu; or one cgroup v2 directory), created below paddock's own cgroup.
 * memory and pids are required; freezer (v1) and cpu are used where the
 * host has them. */
#ifndef PADDOCK_CGROUP_H
#define PADDOCK_CGROUP_H

#include <stdint.h>
#include <sys/types.h>
#include "err.h"

struct cgroup;

/* Creates the task's cgroups named paddock-<name> with the given limits
 * (memory 0, pids 0: none).  cpus > 0 caps the CPU time of the whole group
 * at cpus CPUs (v2 cpu.max, v1 cpu.cfs_quota_us per 100 ms period); when
 * the host has no usable cpu controller, that is an error if cpus_required,
 * else the group has no CPU cap (see cgroup_cpu_limited). */
int cgroup_create(struct cgroup **out, const char *name, uint64_t memory, long pids,
                  double cpus, int cpus_required, struct err *e);
/* The functions below take NULL for no cgroup (user mode without
 * delegation): nothing to enter, count or kill. */
/* 1 when the group's CPU time is capped by the cgroup cpu controller. */
int cgroup_cpu_limited(struct cgroup *cg);
/* Moves pid into every controller's cgroup (call in the child before exec). */
int cgroup_enter(struct cgroup *cg, pid_t pid);
/* Number of processes still in the cgroup. */
int cgroup_count(struct cgroup *cg);
/* Freezes, SIGKILLs every member, thaws, waits until empty (bounded). */
void cgroup_kill_all(struct cgroup *cg);
/* OOM kills and pids-limit refusals counted so far. */
uint64_t cgroup_oom_kills(struct cgroup *cg);
uint64_t cgroup_pids_refused(struct cgroup *cg);
/* Kills everything and removes the cgroups; frees cg.  NULL is fine. */
void cgroup_destroy(struct cgroup *cg);
/* Removes every paddock-* cgroup left under paddock's cgroup (janitor). */
void cgroup_janitor(void);
/* User mode: 1 when the cgroup paddock runs in is delegated to it (a
 * systemd unit with Delegate=yes, systemd-run --scope -p Delegate=yes):
 * writable, with memory and
 * pids.  Task cgroups are then made below it as in root mode.  On cgroup
 * v2 this process (and any other in that cgroup) moves into a leaf of it
 * first, since a cgroup with processes gives no controller to children.
 * *where (malloc'd, may be NULL) says which cgroup and controllers;
 * 0 and e (may be NULL) says why not. */
int cgroup_delegated(char **where, struct err *e);
/* User mode without a delegated cgroup: asks the systemd user manager
 * (busctl --user, StartTransientUnit) for a transient scope
 * paddock-<pid>.scope with Delegate=yes holding this process, as
 * systemd-run --user --scope -p Delegate=yes would; 0 once moved there
 * (cgroup_delegated then divides it), else -1 and why. */
int cgroup_systemd_scope(struct err *e);
/* 0 when memory and pids cgroups can be made here, else -1 and why (a
 * missing cpu controller is not a failure here: cgroup_create decides). */
int cgroup_preflight(struct err *e);

#endif
