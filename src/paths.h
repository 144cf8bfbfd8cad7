/* paths: where paddock keeps its state.
 *
 * Data directory: $PADDOCK_HOME, else $XDG_DATA_HOME/paddock, else
 * ~/.local/share/paddock.  Its layout is written down here once, and only the
 * functions named beside it build its paths (every name below the data dir
 * comes from paddock, never from user text):
 *   paddock.db               the store                        paths_db
 *   scheduler.lock           the scheduler owner's flock      paths_scheduler_lock
 *   mirrors/                                                  paths_mirrors_dir
 *     <repo>.git             a bare mirror                    paths_mirror
 *   templates/                                                paths_templates_dir
 *     <repo>/                checkouts of base commits        paths_template_repo_dir
 *       <sha>-<key> and its .tmp .lock .use .tests-<k> .tests-<k>.log (template.c names them)
 *   agents/                                                   paths_agents_dir
 *     <name>/                an installed agent package       paths_agent_dir
 *   demo/                    paddock demo's repo and agents   paths_demo_dir
 *   cgroups/                 a user's cgroup locks, without   paths_cgroup_locks
 *                            XDG_RUNTIME_DIR (cgroup.c)
 *   tasks/                                                    paths_tasks_dir
 *     <id>/                  one task                         paths_task_dir
 *       log                  what the task did                paths_task_log
 *       prompt               the round's prompt               paths_task_prompt
 *       summary              the agent's summary              paths_task_summary
 *       result.bundle        the latest round's work          paths_task_bundle
 *       round-<n>.bundle     a round that reached review      paths_task_round_bundle
 *       notes-<n>            the notes that asked for round n paths_task_notes
 *       home.tgz             the agent's home at review       paths_task_home
 *       home.<n>.tgz         what changed in it after n archives paths_task_home_inc
 *                            (a GNU tar increment; 1, 2, ... in order)
 *       home.session         its session id                   paths_task_home_session
 *       push.lock            held while a push runs           paths_task_push_lock
 *       shell.sock           the kept sandbox's shell (shell.h) paths_task_shell_socket
 *       shell-gate.json      a reviewer's round's gate summary  paths_task_shell_gate
 *       diffs/               the kept diffs of its ranges     paths_task_diffs
 *         <base>-<head>.<options> and its .tmp-* (diffcache.c names them)
 *   blobs/sha256/            content-addressed blobs           paths_blobs_dir
 *     <hex>                  a normalised tar (tarblob.h)     paths_blob
 *   instance                 this data directory's id, made   paths_instance
 *                            once (0644; paths_instance_id)
 *   door/                    the front door's hand-offs (0700) paths_door_dir
 *     <pod>.sock             a pod's receiving side (door.h)  paths_door_socket
 *   groups/                                                   paths_groups_dir
 *     <id>.lock              held while a pick of best-of-N   paths_group_lock
 *                            group id runs (group.c)
 *
 * Each of them returns a malloc'd path and creates nothing. */
#ifndef PADDOCK_PATHS_H
#define PADDOCK_PATHS_H

#include "err.h"

/* The data directory (malloc'd).  Does not create it. */
char *paths_data_dir(void);
/* Creates the data directory and its fixed subdirectories (mode 0700 for
 * the top).  Returns the path (malloc'd) or NULL. */
char *paths_data_dir_ensure(struct err *e);
/* -1 with "the data directory DATA is not a directory" (or names the file
 * on its way that is not one) when DATA, or the nearest of its parents
 * that exists, is no directory; else 0 (also when nothing is there). */
int paths_data_dir_check(const char *data, struct err *e);
/* The user's runtime directory ($XDG_RUNTIME_DIR: absolute, a directory
 * of this euid's, shorter than 64 bytes so that socket paths in it fit),
 * or NULL: for root, or when there is none. */
const char *paths_runtime_dir(void);
/* Joins path components: paths_join(a, b, ..., NULL), malloc'd. */
char *paths_join(const char *first, ...);

/* Below the data directory `data` (the layout above). */
char *paths_db(const char *data);
char *paths_scheduler_lock(const char *data);
char *paths_mirrors_dir(const char *data);
char *paths_mirror(const char *data, const char *repo);
char *paths_templates_dir(const char *data);
char *paths_template_repo_dir(const char *data, const char *repo);
char *paths_agents_dir(const char *data);
char *paths_agent_dir(const char *data, const char *agent);
char *paths_demo_dir(const char *data);
char *paths_cgroup_locks(const char *data);
char *paths_tasks_dir(const char *data);
char *paths_groups_dir(const char *data);
char *paths_blobs_dir(const char *data);
/* hex: a sha256 in hex (tarblob_store's). */
char *paths_blob(const char *data, const char *hex);
char *paths_door_dir(const char *data);
/* pod: a DNS-1123 label, checked by the caller (door_pod_ok). */
char *paths_door_socket(const char *data, const char *pod);
char *paths_group_lock(const char *data, const char *id);
char *paths_instance(const char *data);

/* The data directory's instance id (malloc'd): what tells this paddock's
 * Kubernetes objects from another's (their label paddock.dev/instance,
 * kube_spec.h), the same for every process and every run.  Read from
 * <data>/instance; made there the first time (PADDOCK_INSTANCE_LEN random
 * lowercase letters and digits, starting with a letter; 0644, created
 * atomically, so that two processes that race agree on the first one's).
 * The data directory must exist.  NULL with e set when the file cannot be
 * read or made, or holds no label value (at most 63 of [A-Za-z0-9._-],
 * a letter or digit at each end). */
#define PADDOCK_INSTANCE_LEN 12
char *paths_instance_id(const char *data, struct err *e);

/* Below the directory of task id. */
char *paths_task_dir(const char *data, const char *id);
char *paths_task_log(const char *data, const char *id);
char *paths_task_prompt(const char *data, const char *id);
char *paths_task_summary(const char *data, const char *id);
char *paths_task_bundle(const char *data, const char *id);
char *paths_task_round_bundle(const char *data, const char *id, int round);
char *paths_task_notes(const char *data, const char *id, int round);
char *paths_task_home(const char *data, const char *id);
/* The n-th increment (1, 2, ...) after paths_task_home. */
char *paths_task_home_inc(const char *data, const char *id, int n);
char *paths_task_home_session(const char *data, const char *id);
char *paths_task_push_lock(const char *data, const char *id);
char *paths_task_shell_socket(const char *data, const char *id);
char *paths_task_shell_gate(const char *data, const char *id);
char *paths_task_diffs(const char *data, const char *id);

#endif
