/* gitfsck: git's object checks, as `git index-pack --strict` (git 2.39)
 * applies them, on one object's raw content.
 *
 * --strict makes git's warnings errors and ignores its infos, so these
 * refuse what git's fsck.c calls an error or a warning (fsck.h's
 * FOREACH_FSCK_MSG_ID) and accept what it only notes as an info (a bad
 * file mode, a .gitmodules that does not parse, a .gitignore symlink, a
 * tag's name or missing tagger).  Tree entries named .git in any
 * spelling a checkout on a case-insensitive, HFS+ or NTFS filesystem
 * would take for it (.GIT, git~1, ".git. ", ".git::$INDEX_ALLOCATION",
 * ".g\u200cit") are refused, and so are the names of the .gitmodules
 * checks (a submodule name with a ".." component, a URL or path that
 * git would take for an option, an update command, a relative URL that
 * climbs out of its host).  Every check returns 0, or -1 with msg set to
 * "<msgId>: <text>" in git's words (e.g. "hasDotgit: contains '.git'").
 * One refusal is stricter than git's: a .gitmodules that starts with a
 * UTF-8 byte-order mark is read past it, as git reads the file once it
 * is checked out, where git's check of the blob stops at the mark.
 * Tags are not checked: a bundle cannot bring one (its ref must name a
 * commit, and every object of its pack must be reached from it).
 * Nothing here reads objects or allocates beyond the call. */
#ifndef PADDOCK_GITFSCK_H
#define PADDOCK_GITFSCK_H

#include <stddef.h>

#define GITFSCK_MSG 256

/* What a tree names that fsck reads next: a .gitmodules or .gitattributes
 * blob (by any of the names a filesystem would take for it). */
enum gitfsck_special { GITFSCK_GITMODULES, GITFSCK_GITATTRIBUTES };

/* Called for each such entry of a tree (id: 20 bytes); returns 0, or -1
 * to stop the check (its result is then -1 with msg as the callback
 * left it). */
typedef int (*gitfsck_found_fn)(enum gitfsck_special kind, const unsigned char *id,
                                void *arg, char msg[GITFSCK_MSG]);

int gitfsck_commit(const char *buf, size_t len, char msg[GITFSCK_MSG]);
int gitfsck_tree(const char *buf, size_t len, gitfsck_found_fn found, void *arg,
                 char msg[GITFSCK_MSG]);
/* A .gitmodules blob (parsed as git's config parser does; what follows a
 * syntax error is not read, as git does not). */
int gitfsck_gitmodules(const char *buf, size_t len, char msg[GITFSCK_MSG]);
int gitfsck_gitattributes(const char *buf, size_t len, char msg[GITFSCK_MSG]);

#endif
