/* deny-netns COMMAND [ARG...]: runs COMMAND where unshare(CLONE_NEWNET)
 * fails with EPERM, as in a container whose seccomp profile forbids new
 * network namespaces.  clone() is left alone, so bubblewrap still makes
 * the sandbox's own namespaces: what paddock's gateway.network = auto
 * falls back to (the bridge). */
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
		fprintf(stderr, "usage: deny-netns COMMAND [ARG...]\n");
		return 2;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
	                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET)) < 0 ||
	    seccomp_load(ctx) < 0) {
		fprintf(stderr, "deny-netns: cannot load the filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "deny-netns: cannot run %s: %s\n", argv[1], strerror(errno));
	return 127;
}
