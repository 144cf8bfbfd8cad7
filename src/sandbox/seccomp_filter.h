/* seccomp_filter: the syscall filter every sandbox runs under (libseccomp):
 * default allow; EPERM for mount-family, namespace creation, keyctl, bpf,
 * perf_event_open, userfaultfd, io_uring, module and kexec calls,
 * TIOCSTI/TIOCLINUX ioctls and exotic socket families; clone3 gets
 * ENOSYS; foreign architectures are killed.  The gateway's filter adds to
 * it (seccomp_filter_gateway). */
#ifndef PADDOCK_SECCOMP_FILTER_H
#define PADDOCK_SECCOMP_FILTER_H

#include "err.h"

/* Returns an fd (memfd, offset 0) holding the compiled cBPF program, for
 * bwrap's --add-seccomp-fd, or -1. */
int seccomp_filter_fd(struct err *e);

/* Puts the calling process (the gateway, gateway.h) under its filter, for
 * good: the sandbox's refusals, and the process killed for execve,
 * execveat, ptrace and process_vm_readv/writev, which a gateway never
 * needs (ptrace stays allowed in sanitizer builds: LeakSanitizer's check
 * at exit attaches to the process).  Sets no_new_privs.  -1 with e. */
int seccomp_filter_gateway(struct err *e);

#endif
