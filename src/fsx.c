#include "autoconfig.h"
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/magic.h>
#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif
#include "i18n.h"

int fsx_mkdir_p(const char *path, mode_t mode, struct err *e)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				err_errno(e, _("cannot create directory %s"), p);
				free(p);
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return 0;
}

/* Walks with openat/unlinkat relative to directory fds so that a symlink
 * swapped in during the walk is removed, never followed. */
static int rm_at(int dfd, const char *name, dev_t dev, struct err *e)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_errno(e, _("cannot remove %s"), name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
			return err_errno(e, _("cannot remove %s"), name);
		return 0;
	}
	if (st.st_dev != dev)
		return err_set(e, _("cannot remove %s: it is a mount point"), name);
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_errno(e, _("cannot remove %s"), name);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_errno(e, _("cannot remove %s"), name);
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_at(dirfd(d), de->d_name, dev, e) < 0)
			rc = -1;
	}
	closedir(d);
	if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return err_errno(e, _("cannot remove %s"), name);
	return rc;
}

int fsx_rm_rf(const char *path, struct err *e)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_errno(e, _("cannot remove %s"), path);
	return rm_at(AT_FDCWD, path, st.st_dev, e);
}

#define CHOWN_DRY 1          /* only checked */
#define CHOWN_SKIP_LINKED 2  /* a non-folder with other links keeps its owner */

/* By descriptor: the entry opened without following a link is the one
 * checked and changed.  from == (uid_t)-1: any owner. */
static int chown_at(int dfd, const char *name, uid_t from, uid_t uid, gid_t gid,
                    unsigned flags, struct err *e)
{
	int dry = flags & CHOWN_DRY;
	struct stat st;
	int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_errno(e, _("cannot change owner of %s"), name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (from != (uid_t)-1 && st.st_uid != from && st.st_uid != uid) {
		close(fd);
		return err_set(e, _("cannot change owner of %s: it belongs to uid %lu, not to uid "
		                    "%lu; remove it"), name, (unsigned long)st.st_uid,
		               (unsigned long)from);
	}
	if ((flags & CHOWN_SKIP_LINKED) && !S_ISDIR(st.st_mode) && st.st_nlink > 1) {
		close(fd);
		return 0;
	}
	if (!dry && fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		close(fd);
		return err_errno(e, _("cannot change owner of %s"), name);
	}
	if (!S_ISDIR(st.st_mode)) {
		close(fd);
		return 0;
	}
	int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(fd);
	if (dir < 0)
		return err_errno(e, _("cannot change owner of %s"), name);
	DIR *d = fdopendir(dir);
	if (!d) {
		close(dir);
		return err_errno(e, _("cannot change owner of %s"), name);
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d)) && rc == 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = chown_at(dirfd(d), de->d_name, from, uid, gid, flags, e);
	}
	closedir(d);
	return rc;
}

int fsx_chown_r(const char *path, uid_t uid, gid_t gid, struct err *e)
{
	return chown_at(AT_FDCWD, path, (uid_t)-1, uid, gid, 0, e);
}

int fsx_chown_handover_r(const char *path, uid_t uid, gid_t gid, struct err *e)
{
	return chown_at(AT_FDCWD, path, (uid_t)-1, uid, gid, CHOWN_SKIP_LINKED, e);
}

int fsx_chown_owned_r(const char *path, uid_t from, uid_t uid, gid_t gid, struct err *e)
{
	/* Checked whole first, so that a refused tree keeps every owner. */
	return chown_at(AT_FDCWD, path, from, uid, gid, CHOWN_DRY, e) < 0 ? -1
	       : chown_at(AT_FDCWD, path, from, uid, gid, 0, e);
}

/* The walk where openat2 is missing: one component at a time. */
static int open_beneath_walk(int dirfd, const char *rel, int flags)
{
	if (rel[0] == '/') {
		errno = EXDEV;
		return -1;
	}
	char *copy = xstrdup(rel), *save = NULL;
	char *part = strtok_r(copy, "/", &save);
	int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0 && part) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(part, "..")) {
			close(fd);
			fd = -1;
			errno = EXDEV;
			break;
		}
		int d = openat(fd, part, next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
		                              : flags | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(fd);
		errno = saved;
		fd = d;
		part = next;
	}
	free(copy);
	return fd;
}

int fsx_open_beneath(int dirfd, const char *rel, int flags)
{
#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
	                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	                                   RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return (int)fd;
#endif
	return open_beneath_walk(dirfd, rel, flags);
}

int fsx_kernel_fs(int fd)
{
	static const unsigned long kernel[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC,
		SELINUX_MAGIC, SMACK_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,
		EFIVARFS_MAGIC, PSTOREFS_MAGIC, BINFMTFS_MAGIC, RDTGROUP_SUPER_MAGIC, NSFS_MAGIC,
		DEVPTS_SUPER_MAGIC, OPENPROM_SUPER_MAGIC,
		0x62656570UL,  /* configfs */
	};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return 1;
	for (size_t i = 0; i < sizeof kernel / sizeof kernel[0]; i++)
		if ((unsigned long)sf.f_type == kernel[i])
			return 1;
	return 0;
}

static int read_fd(int fd, const char *path, size_t cap, struct buf *out, struct err *e)
{
	char tmp[65536];
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_errno(e, _("cannot read %s"), path);
		}
		if (n == 0)
			return 0;
		total += (size_t)n;
		if (total > cap)
			return err_set(e, _("%s is larger than %zu bytes"), path, cap);
		buf_add(out, tmp, (size_t)n);
	}
}

int fsx_lock_try(const char *dir, const char *path, struct err *e)
{
	if (fsx_mkdir_p(dir, 0700, e) < 0)
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_errno(e, _("cannot open %s"), path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -2;
	}
	return fd;
}

int fsx_read_file(const char *path, size_t cap, struct buf *out, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return err_errno(e, _("cannot open %s"), path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(e, _("%s is not a regular file"), path);
	}
	int rc = read_fd(fd, path, cap, out, e);
	close(fd);
	return rc;
}

int fsx_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fsx_write_file(const char *path, const void *data, size_t len, mode_t mode, struct err *e)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		err_errno(e, _("cannot write %s"), path);
		free(tmp);
		return -1;
	}
	if (fsx_write_all(fd, data, len) < 0 || fchmod(fd, mode) < 0 || close(fd) < 0) {
		err_errno(e, _("cannot write %s"), path);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		err_errno(e, _("cannot write %s"), path);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int fsx_copy_regular(const char *src, const char *dst, size_t cap, mode_t mode, struct err *e)
{
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (in < 0) {
		if (errno == ELOOP)
			return err_set(e, _("%s is a symbolic link; refusing to read it"), src);
		return err_errno(e, _("cannot open %s"), src);
	}
	int rc = fsx_copy_regular_fd(in, src, dst, cap, mode, e);
	close(in);
	return rc;
}

int fsx_copy_regular_fd(int in, const char *src, const char *dst, size_t cap, mode_t mode,
                        struct err *e)
{
	struct stat st;
	if (fstat(in, &st) < 0)
		return err_errno(e, _("cannot stat %s"), src);
	if (!S_ISREG(st.st_mode))
		return err_set(e, _("%s is not a regular file; refusing to read it"), src);
	if ((uint64_t)st.st_size > cap)
		return err_set(e, _("%s is %lld bytes, over the cap of %zu bytes"), src,
		               (long long)st.st_size, cap);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0)
		return err_errno(e, _("cannot create %s"), dst);
	char tmp[65536];
	size_t total = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = read(in, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_errno(e, _("cannot read %s"), src);
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		/* The file may grow after fstat: the cap holds on what is read. */
		if (total > cap) {
			rc = err_set(e, _("%s is over the cap of %zu bytes"), src, cap);
			break;
		}
		if (fsx_write_all(out, tmp, (size_t)n) < 0) {
			rc = err_errno(e, _("cannot write %s"), dst);
			break;
		}
	}
	if (close(out) < 0 && rc == 0)
		rc = err_errno(e, _("cannot write %s"), dst);
	if (rc < 0)
		unlink(dst);
	return rc;
}

void fsx_close_from(int lowfd, const int *keep, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		for (int fd = lowfd; fd < 65536; fd++) {
			int k = 0;
			for (size_t i = 0; i < n; i++)
				k |= keep[i] == fd;
			if (!k)
				close(fd);
		}
		return;
	}
	int self = dirfd(d);
	int fds[4096];
	size_t nfds = 0;
	struct dirent *de;
	while ((de = readdir(d)) && nfds < sizeof fds / sizeof fds[0]) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd < lowfd || fd == self)
			continue;
		int k = 0;
		for (size_t i = 0; i < n; i++)
			k |= keep[i] == fd;
		if (!k)
			fds[nfds++] = fd;
	}
	closedir(d);
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
}

int fsx_unix_addr(const char *path, struct sockaddr_un *sa, int *dirfd, struct err *e)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof sa->sun_path) {
		memcpy(sa->sun_path, path, strlen(path) + 1);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
	*dirfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (*dirfd < 0)
		return err_errno(e, _("cannot open the folder of %s"), path);
	int n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd,
	                 slash ? slash + 1 : path);
	if (n < 0 || (size_t)n >= sizeof sa->sun_path) {
		close(*dirfd);
		*dirfd = -1;
		return err_set(e, _("the socket name %s is too long"), path);
	}
	return 0;
}

void fsx_nofile_raise(unsigned long want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (want == 0 || rl.rlim_cur < want)) {
		rl.rlim_cur = want == 0 || rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
