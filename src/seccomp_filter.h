/* seccomp_filter: the syscall filter every sandbox runs under (libseccomp):
 * default allow; EPERM for mount-family, namespace creation, keyctl, bpf,
 * perf_event_open, userfaultfd, io_uring, module and kexec calls,
 * TIOCSTI/TIOCLINUX ioctls and exotic socket families; clone3 gets
 * ENOSYS; foreign architectures are killed. */
#ifndef PADDOCK_SECCOMP_FILTER_H
#define PADDOCK_SECCOMP_FILTER_H

#include "err.h"

/* Returns an fd (memfd, offset 0) holding the compiled cBPF program, for
 * bwrap's --add-seccomp-fd, or -1. */
int seccomp_filter_fd(struct err *e);

#endif
