#include "autoconfig.h"
#include "seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "i18n.h"

/* Denied with EPERM outright.  Names, not numbers, so that a call unknown
 * to this architecture or to this libseccomp is simply skipped. */
static const char *const deny_eperm[] = {
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",
	"setns", "unshare",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",
	"acct", "swapon", "swapoff", "reboot", "syslog",
	"quotactl", "quotactl_fd",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
	"vhangup", "nfsservctl", "uselib",
};

/* Namespace flags refused in clone(); CLONE_NEWTIME (0x80) is left out on
 * purpose: in clone() that bit belongs to the exit signal, and unshare and
 * clone3 are blocked anyway. */
static const unsigned long clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

/* Socket families a coding agent needs; every other one is refused
 * (AF_PACKET, AF_VSOCK, AF_ALG, AF_TIPC, ... have a history of kernel
 * bugs).  AF_UNIX stays: the only host sockets in reach are the
 * gateway's own, under the bridge (gateway.h), and they apply its policy. */
static int family_allowed(int f)
{
	return f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK;
}

#define SOCKET_FAMILY_LIMIT 64  /* above today's AF_MAX (46) */

static int add_rules(scmp_filter_ctx ctx)
{
	int rc;

	for (size_t i = 0; i < sizeof deny_eperm / sizeof deny_eperm[0]; i++) {
		int nr = seccomp_syscall_resolve_name(deny_eperm[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0)
			return rc;
	}

	/* clone3 passes its flags in memory that BPF cannot read; ENOSYS
	 * makes libc fall back to clone(), whose flags we can check. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < sizeof clone_ns_flags / sizeof clone_ns_flags[0]; i++) {
		scmp_datum_t f = clone_ns_flags[i];
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		                      SCMP_A0(SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			return rc;
	}

	/* The kernel compares only the low 32 bits of the ioctl command
	 * (CVE-2019-10063), so must we. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	                      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
	if (rc < 0)
		return rc;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	                      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
	if (rc < 0)
		return rc;

	for (int f = 0; f < SOCKET_FAMILY_LIMIT; f++) {
		if (family_allowed(f))
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
		                      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f));
		if (rc < 0)
			return rc;
	}
	/* Also catches values with high bits set, which the kernel would
	 * truncate to an int. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
	                      SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)SOCKET_FAMILY_LIMIT));
	if (rc < 0)
		return rc;

	/* personality: only PER_LINUX (0) and the query 0xffffffff.  One rule
	 * may compare an argument only once, so "neither all-zero nor all-one"
	 * is written as "two adjacent bits of the low 32 differ". */
	for (int b = 0; b < 31; b++) {
		scmp_datum_t mask = (scmp_datum_t)3 << b;
		scmp_datum_t lo = (scmp_datum_t)1 << b, hi = (scmp_datum_t)2 << b;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
		                      SCMP_A0(SCMP_CMP_MASKED_EQ, mask, lo));
		if (rc < 0)
			return rc;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
		                      SCMP_A0(SCMP_CMP_MASKED_EQ, mask, hi));
		if (rc < 0)
			return rc;
	}
	return 0;
}

int seccomp_filter_fd(struct err *e)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc, fd = -1;

	if (!ctx)
		return err_set(e, _("cannot build the sandbox's seccomp filter (libseccomp "
		                    "failed to initialise)"));
	/* Only the native architecture: i386 and x32 calls are killed,
	 * which also closes the socketcall() side door. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = add_rules(ctx);
	if (rc < 0) {
		seccomp_release(ctx);
		errno = -rc;
		return err_errno(e, _("cannot build the sandbox's seccomp filter"));
	}

	fd = memfd_create("paddock-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		seccomp_release(ctx);
		return err_errno(e, _("cannot create a memory file for the seccomp filter"));
	}
	rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0) {
		close(fd);
		errno = -rc;
		return err_errno(e, _("cannot export the sandbox's seccomp filter"));
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return err_errno(e, _("cannot rewind the seccomp filter file"));
	}
	return fd;
}

/* Killed outright in the gateway: what turns a bug in its parsing into a
 * shell or a look at another process's memory. */
static const char *const gateway_kill[] = {
	"execve", "execveat",
#ifndef __SANITIZE_ADDRESS__
	"ptrace",
#endif
	"process_vm_readv", "process_vm_writev",
};

int seccomp_filter_gateway(struct err *e)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return err_set(e, _("cannot build the gateway's seccomp filter (libseccomp "
		                    "failed to initialise)"));
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = add_rules(ctx);
	for (size_t i = 0; rc == 0 && i < sizeof gateway_kill / sizeof gateway_kill[0]; i++) {
		int nr = seccomp_syscall_resolve_name(gateway_kill[i]);
		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0);
	}
	/* no_new_privs, which a process without CAP_SYS_ADMIN needs for a
	 * filter (libseccomp's default, said so). */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		errno = -rc;
		return err_errno(e, _("cannot load the gateway's seccomp filter"));
	}
	return 0;
}
