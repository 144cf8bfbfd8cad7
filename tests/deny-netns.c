/* deny-netns COMMAND [ARG...]: runs COMMAND where unshare(CLONE_NEWNET)
 * fails with EPERM, as in a container whose seccomp profile forbids new
 * network namespaces.  clone() is left alone, so bubblewrap still makes
 * the sandbox's own namespaces: what paddock's gateway.network = auto
 * falls back to (the bridge).
 *
 * Built with DENY_USERNS, as deny-userns: no user namespace can be made,
 * as on a machine whose container runtime or security module forbids
 * them: unshare(2) and clone(2) with CLONE_NEWUSER fail with EPERM, and
 * clone3(2), whose flags a filter cannot read, says ENOSYS so that the C
 * library falls back to clone. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef DENY_USERNS
#define NAME "deny-userns"
#define FLAG CLONE_NEWUSER
#else
#define NAME "deny-netns"
#define FLAG CLONE_NEWNET
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: " NAME " COMMAND [ARG...]\n");
		return 2;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
	                                SCMP_A0(SCMP_CMP_MASKED_EQ, FLAG, FLAG)) : -1;
#ifdef DENY_USERNS
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		                      SCMP_A0(SCMP_CMP_MASKED_EQ, FLAG, FLAG));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
#endif
	if (rc < 0 || seccomp_load(ctx) < 0) {
		fprintf(stderr, NAME ": cannot load the filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[1], argv + 1);
	fprintf(stderr, NAME ": cannot run %s: %s\n", argv[1], strerror(errno));
	return 127;
}
