/* fsx: filesystem helpers that never follow symlinks where it matters. */
#ifndef PADDOCK_FSX_H
#define PADDOCK_FSX_H

#include <stddef.h>
#include <sys/types.h>
#include "err.h"
#include "buf.h"

/* mkdir -p with the given mode for created components. */
int fsx_mkdir_p(const char *path, mode_t mode, struct err *e);
/* Removes a tree without following symlinks and without crossing into
 * other filesystems (mount points are left, and reported as an error).
 * A missing path is not an error. */
int fsx_rm_rf(const char *path, struct err *e);
/* Recursively chowns a tree (lchown; never follows symlinks).  Each entry
 * is opened (O_PATH, O_NOFOLLOW) below its folder's descriptor and changed
 * through that descriptor, so an entry swapped for another during the
 * walk is never the one changed unchecked. */
int fsx_chown_r(const char *path, uid_t uid, gid_t gid, struct err *e);
/* The same for a tree another user may have written into (the data
 * directory handed to [paddock] user): a file with more than one link
 * keeps its owner, since its other name may be anywhere (a hard link to
 * root's file must not make it the user's). */
int fsx_chown_handover_r(const char *path, uid_t uid, gid_t gid, struct err *e);
/* The same, but only for a tree whose every entry is owned by `from` (or
 * already by uid): anything else (a hard link to a file of another
 * user's, such as root's) fails it, the tree checked whole first so that
 * nothing of it changes owner (but for a race the tree's owner runs). */
int fsx_chown_owned_r(const char *path, uid_t from, uid_t uid, gid_t gid, struct err *e);
/* Opens rel below the folder dirfd without following any symbolic link
 * (nor a /proc magic link) and without leaving it ("..", an absolute rel):
 * openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
 * where the kernel has it, else one component at a time with O_NOFOLLOW
 * (".." refused).  flags as openat's (O_CLOEXEC is added).  The new fd, or
 * -1 with errno (ELOOP for a link, EXDEV or EINVAL for a way out). */
int fsx_open_beneath(int dirfd, const char *rel, int flags);
/* 1 when fd is on one of the kernel's interface filesystems (/proc,
 * /sys, debugfs, tracefs, securityfs, cgroup, bpf, efivarfs, pstore,
 * binfmt_misc, configfs, an LSM's), whose files decide at each read what
 * the reader may see (a root reader sees more through a descriptor
 * another user opened), or when fstatfs fails; 0 for a filesystem that
 * stores files. */
int fsx_kernel_fs(int fd);
/* Takes an exclusive flock on path (created 0600, never through a link)
 * without waiting, dir (path's folder) made first: an fd to close when
 * done; -1 with a message when it cannot be opened; -2, no message, when
 * another holds it (the caller says what holds it). */
int fsx_lock_try(const char *dir, const char *path, struct err *e);
/* Reads a whole regular file (at most cap bytes, else error). */
int fsx_read_file(const char *path, size_t cap, struct buf *out, struct err *e);
/* Writes data to path atomically (temp file + rename) with mode. */
int fsx_write_file(const char *path, const void *data, size_t len, mode_t mode, struct err *e);
/* Copies a regular file from src to dst, refusing symlinks, FIFOs, devices
 * and directories at src (O_NOFOLLOW|O_NONBLOCK, S_ISREG), and files larger
 * than cap bytes.  dst is created with mode. */
int fsx_copy_regular(const char *src, const char *dst, size_t cap, mode_t mode, struct err *e);
/* The same from the open descriptor in (not closed; read from where it
 * is), which must be a regular file; `name` names it in messages. */
int fsx_copy_regular_fd(int in, const char *name, const char *dst, size_t cap, mode_t mode,
                        struct err *e);
/* Writes all n bytes (retrying on EINTR and short writes); 0 or -1. */
int fsx_write_all(int fd, const void *data, size_t n);
/* Closes every fd >= lowfd except those listed in keep (n entries). */
void fsx_close_from(int lowfd, const int *keep, size_t n);

/* sa for the unix socket path, through /proc/self/fd/<dirfd> when the
 * path is longer than sun_path holds (a deep data directory; *dirfd then
 * open: the caller closes it after connect or bind; else -1).  0, or -1
 * with e set. */
/* Raises this process's soft limit of open files to want (0: to its
 * hard limit) where it is lower, as far as the hard limit lets it. */
void fsx_nofile_raise(unsigned long want);

struct sockaddr_un;
int fsx_unix_addr(const char *path, struct sockaddr_un *sa, int *dirfd, struct err *e);

#endif
