/* child: the one owner of paddock's child processes (as git's run-command
 * and tmux's job.c).
 *
 * Every process paddock starts goes through child_start: a program
 * (argv, execve'd) or a function (fn, run in a forked copy of the caller).
 * Each started child is listed here until it is waited for, and only this
 * module waits: child_finish for one child, child_reap for all of them.
 * child_reap hands each ended child to its owner (on_exit) and keeps the
 * status of the others for their child_finish, so that no loop can steal a
 * child that belongs to someone else (a scheduler hosted by the dashboard
 * once reaped the dashboard's background jobs, whose failures then read
 * as successes).  Processes that are not ours but became our children
 * (orphans of a sandbox, with this process as their subreaper) are reaped
 * and forgotten.
 *
 * The list is guarded by a mutex: any thread may start programs and
 * finish its children (a function child needs a process of one thread:
 * see fn below).  Callbacks run in the thread that calls child_reap,
 * without the lock. */
#ifndef PADDOCK_CHILD_H
#define PADDOCK_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* child.path for a program of this very binary: the one this process
 * runs, even when a newer one was installed in its place since. */
#define CHILD_SELF "/proc/self/exe"

/* Values of child.stdio[i] besides a descriptor to dup2 there. */
#define CHILD_INHERIT 0    /* the caller's own descriptor i */
#define CHILD_NULL (-1)    /* /dev/null */

/* A resource limit lowered (never raised) in the child: soft and hard. */
struct child_limit {
	int resource;                    /* RLIMIT_* */
	unsigned long long soft, hard;
};

enum child_flag {
	CHILD_DIE_WITH_PARENT = 1 << 0,  /* SIGKILL when the thread that started it ends */
	CHILD_CLOSE_FDS = 1 << 1,        /* close every descriptor above 2 but keep[] */
	CHILD_NEW_SESSION = 1 << 2,      /* setsid(): no terminal, its own group */
	/* A program: child_start returns once it has forked, before setup
	 * and execve; child_exec_wait says later whether it runs. */
	CHILD_EXEC_LATER = 1 << 3,
	/* After child_leave_terminal: stays in the caller's process group
	 * and so on its terminal (an editor, a pager, a shell), and so do
	 * the children it starts. */
	CHILD_TERMINAL = 1 << 4,
};

struct child {
	/* What runs: the program argv[0] (a path, or a name looked up in
	 * PATH) with argv, or, when fn is set, fn(arg) in a forked copy of
	 * the caller, its return value the exit status.  A copy is made only
	 * of a process with one thread: child_start refuses fn otherwise
	 * (a lock another thread held at the fork would stay held in the
	 * copy forever); a threaded process starts programs (supervisor.h).  A fn child keeps
	 * the caller's signal handlers (its code may rely on them); a
	 * program gets every signal at its default. */
	const char *const *argv;
	const char *path;                /* the program's file when it is not
	                                    argv[0] (NULL: argv[0]) */
	int (*fn)(void *arg);
	void *arg;
	const char *const *env;          /* NULL: the caller's environment */
	const char *cwd;                 /* NULL: the caller's */
	int stdio[3];                    /* CHILD_INHERIT, CHILD_NULL or a descriptor */
	const int *keep;                 /* with CHILD_CLOSE_FDS: descriptors kept */
	size_t nkeep;
	const struct child_limit *limits;
	size_t nlimits;
	unsigned alarm;                  /* seconds until SIGALRM; 0: none */
	unsigned flags;                  /* enum child_flag */
	/* For a program: runs in the child last, just before execve, with
	 * arg (async-signal-safe calls only: the caller may have threads).
	 * It returns 0, or a step number of its own (> 0) with errno set,
	 * which fails the start with c->exec_step and c->exec_errno. */
	int (*setup)(void *arg);
	/* With on_exit set the child is the owner's to be told about:
	 * child_reap calls on_exit(pid, status, owner) once it ended and
	 * forgets it; child_finish must not be called for it. */
	void (*on_exit)(pid_t pid, int status, void *owner);
	void *owner;

	/* Set by child_start and child_finish. */
	pid_t pid;
	int status;                      /* wait status, once finished */
	int exec_errno;                  /* why the program could not run, or 0 */
	int exec_step;                   /* setup's step that failed, or 0 */
	int exec_fd;                     /* CHILD_EXEC_LATER: its report, until waited */
};

/* Starts c.  For a program, returns only once it runs: when it cannot
 * (not found, not executable, a limit or cwd that cannot be set), the
 * child is reaped, c->exec_errno says why, and -1 is returned with e
 * set.  stdio, keep and the other descriptors are the caller's; they may
 * be closed once this returns. */
int child_start(struct child *c, struct err *e);

/* For a child started with CHILD_EXEC_LATER: waits until it runs its
 * program (0) or could not (-1, reaped, exec_errno and e set), as
 * child_start would have.  Call it once, before any other wait. */
int child_exec_wait(struct child *c, struct err *e);

/* Waits for c (started without on_exit) to end; returns its wait status,
 * also left in c->status.  Never fails: an interrupted wait is retried. */
int child_finish(struct child *c);

/* Like child_finish without waiting: 1 and c->status set when c ended,
 * 0 while it runs. */
int child_poll(struct child *c);

/* Like child_poll, waiting up to ms milliseconds for c to end (woken at
 * once when it does, through a pidfd): 1 when it ended, 0 while it runs. */
int child_wait_ms(struct child *c, int ms);

/* Sends sig to c while it is ours (not yet finished). */
void child_kill(const struct child *c, int sig);

/* Reaps every child that ended: on_exit for owned ones, status kept for
 * child_finish for the others, strays forgotten.  Never blocks; call it
 * when SIGCHLD arrives or on each turn of a loop. */
void child_reap(void);

/* For a subreaper: reaps until every child left is one started by
 * child_start (or timeout seconds passed).  Returns 1 when none of the
 * others is left. */
int child_reap_strays(double timeout);

/* For a process that keeps a terminal while its children work (the
 * dashboard, serve): from this call on, every child but those started
 * with CHILD_TERMINAL starts in a session of its own (setsid), and so
 * does every child a forked copy of this process starts (a supervisor's
 * bwrap, a gateway, a keeper).  The keys that signal the terminal's
 * foreground process group (^C, ^\ and ^Z) then reach this process only,
 * never a task: what they mean is this process's to decide.  Such a
 * child never reads the terminal: an inherited standard input that is
 * one becomes /dev/null.  Without it (a command of the CLI) children
 * stay in the caller's group, and a ^C stops the command and what it
 * runs.  Call it before starting threads that start children. */
void child_leave_terminal(void);

/* The threads this process has (0 when /proc cannot tell). */
int child_threads(void);

/* 1 after child_leave_terminal (a process that starts children in the
 * same way passes it on: supervisor.h). */
int child_left_terminal(void);

/* The exit code a shell would give: the exit status, or 128 + signal. */
int child_exit_code(int status);

#endif
