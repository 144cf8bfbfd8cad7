/* deny-userns COMMAND [ARG...]: runs COMMAND where no user namespace can
 * be made, as on a machine whose container runtime or security module
 * forbids them: unshare(2) and clone(2) with CLONE_NEWUSER fail with
 * EPERM, and clone3(2), whose flags a filter cannot read, says ENOSYS so
 * that the C library falls back to clone. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: deny-userns COMMAND [ARG...]\n");
		return 2;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
	                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0 ||
	    seccomp_load(ctx) < 0) {
		fprintf(stderr, "deny-userns: cannot load the filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "deny-userns: cannot run %s: %s\n", argv[1], strerror(errno));
	return 127;
}
