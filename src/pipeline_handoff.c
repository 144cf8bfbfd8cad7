/* pipeline_handoff.c: the hand-off (pipeline_int.h): the script that
 * commits the agent's work, bundles it and archives its home inside the
 * sandbox, the bundle copied out, and its check and import into the
 * mirror. */
#include "autoconfig.h"
#include "pipeline_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "bundle.h"
#include "clock.h"
#include "i18n.h"
#include "mirror.h"
#include "paths.h"
#include "sandbox.h"

/* The hand-off, inside the sandbox: commit what is left uncommitted, point
 * the task branch at the work, write the bundle and archive the agent's
 * home.  It runs git in the agent-writable tree, which is why it runs in
 * the sandbox and never on the host.  Each process it starts costs a few
 * ms, so the shell does what it can itself (reading HEAD, comparing
 * trees, testing for files before removing them).  base_tree is the
 * base's tree, from the mirror.
 * Long: one shell script, read top to bottom as it runs; split, its
 * steps would only move apart from their comments. */
static char *handoff_script(const char *id, const char *base, const char *base_tree,
                            int changes, const char *home, enum handoff_phase phase)
{
	/* HANDOFF_COMMIT is HANDOFF_ALL before the tests; HANDOFF_AFTER_TESTS
	 * makes no commit and no bundle (they were made before the tests)
	 * but puts the tree back as the agent left it: what the tests
	 * changed, created or removed among the files git sees, after the
	 * index saved then. */
	const char *stop = phase == HANDOFF_AFTER_TESTS ? "exit 0\n" : "";
	const char *restore = phase == HANDOFF_AFTER_TESTS ? "if true; then\n" : "if false; then\n";
	/* Runs with handoff_env(): nothing of the agent's home (a global
	 * gitconfig's filters, aliases, includes) reaches these commands, and
	 * hooks stay off and fsmonitor is paddock's whatever the repository
	 * says. */
	return xasprintf(
		"set -e\n"
		/* The backend's HOME is the agent's home, archived at the end;
		 * git gets none (see handoff_env). */
		"agent_home=$HOME\n"
		"export HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent\n"
		/* Without the host's list of changes (sandbox.h), a file the
		 * agent left under that name must not answer for it. */
		"%s"
		"cd \"$PADDOCK_WORK\"\n"
		/* One git for the questions: the folders and the head's tree. */
		"dirs=$(git rev-parse --git-dir --git-common-dir --verify -q 'HEAD^{tree}' 2>/dev/null) "
		"|| exit %d\n"
		"nl='\n'\n"
		"gd=${dirs%%%%\"$nl\"*}; rest=${dirs#*\"$nl\"}; cd_=${rest%%%%\"$nl\"*}; "
		"h=${rest#*\"$nl\"}\n"
		/* A folder name with a newline (a planted gitdir file) would
		 * split wrongly: then the last line is no tree id, and each is
		 * asked on its own. */
		"case \"$h\" in ''|*[!0-9a-f]*) gd=$(git rev-parse --git-dir); "
		"cd_=$(git rev-parse --git-common-dir); h=$(git rev-parse --verify -q 'HEAD^{tree}');; "
		"esac\n"
		/* The agent's processes are gone; its repository configuration
		 * (clean/smudge filters, includes, attributes files, ...) would run
		 * its code during the hand-off, outside its time limit: set it
		 * aside, in the common dir too (a planted commondir file).  The
		 * common dir is most often the git dir: once is enough. */
		"for d in \"$gd\" \"$cd_\"; do\n"
		"  if ! [ -f \"$d/config.agent\" ] && { [ -e \"$d/config\" ] || [ -L \"$d/config\" ]; }; "
		"then\n"
		"    mv -f \"$d/config\" \"$d/config.agent\" 2>/dev/null || true\n"
		"  fi\n"
		"  for f in \"$d/config\" \"$d/config.worktree\" \"$d/info/attributes\"; do\n"
		"    if [ -e \"$f\" ] || [ -L \"$f\" ]; then\n"
		"      rm -f \"$d/config\" \"$d/config.worktree\" \"$d/info/attributes\"; break\n"
		"    fi\n"
		"  done\n"
		"  printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n"
		"\\tbare = false\\n\\tcheckStat = minimal\\n\\ttrustCtime = false\\n' "
		"> \"$d/config\"\n"
		"  [ \"$cd_\" != \"$gd\" ] || break\n"
		"done\n"
		/* The index of the agent's tree as staged (SANDBOX_STAGED_INDEX),
		 * for the restore after the tests and the next hand-off's
		 * staging; one the agent planted restores only its own files.
		 * Beside it the paths the agent touched, from the upper layer
		 * when the commit ran (sandbox.h, SANDBOX_PATHS): with those
		 * the tests touched since, only they are put back. */
		"pd=\"$gd/" SANDBOX_STAGED_DIR "\"; ai=\"$pd/index\"; ap=\"$pd/" SANDBOX_PATHS_NAME "\"\n"
		"pl=\"$PADDOCK_OUT/" SANDBOX_PATHS_NAME "\"\n"
		/* git over named paths only, which reads no other file: the
		 * fsmonitor hook's answer (a shell and a cat) buys nothing. */
		"nofsm='git -c core.fsmonitor=false'\n"
		"%s"
		"  if [ -f \"$ai\" ] && [ -f \"$ap\" ] && [ -f \"$pl\" ]; then\n"
		"    export GIT_INDEX_FILE=\"$ai\"\n"
		"    cat \"$ap\" \"$pl\" | $nofsm checkout-index -f -q -z --stdin 2>/dev/null || true\n"
		"    cat \"$ap\" \"$pl\" | xargs -0 -r $nofsm --literal-pathspecs clean -fdq -- "
		"2>/dev/null || true\n"
		"    unset GIT_INDEX_FILE\n"
		"  elif [ -f \"$ai\" ]; then\n"
		"    GIT_INDEX_FILE=$ai git checkout-index -a -f -q 2>/dev/null || true\n"
		"    GIT_INDEX_FILE=$ai git clean -fdq 2>/dev/null || true\n"
		"  fi\n"
		"else\n"
		/* Only the paths the agent touched, where the host listed them
		 * (sandbox.h, SANDBOX_STAGE): git then reads those folders
		 * only.  Status 1 is a named path git ignores, which it leaves
		 * out as its scan would; anything else (a removed file git
		 * never had) and git scans every folder. */
		"st=\"$PADDOCK_OUT/" SANDBOX_STAGE_NAME "\"\n"
		"if [ -f \"$st\" ] && [ -s \"$st\" ]; then\n"
		"  s=0; $nofsm --literal-pathspecs add -A --pathspec-from-file=\"$st\" "
		"--pathspec-file-nul 2>/dev/null || s=$?\n"
		"  [ \"$s\" -le 1 ] || git add -A\n"
		"else\n"
		"  git add -A\n"
		"fi\n"
		/* The index saved as staged, with the list, in one process (cp
		 * keeps the names): after write-tree, which writes it again;
		 * before a baseline's resets, which the restore must not
		 * apply (the next hand-off then scans). */
		"save() {\n"
		"  if [ -L \"$pd\" ] || { [ -e \"$pd\" ] && ! [ -d \"$pd\" ]; }; then rm -rf \"$pd\"; fi\n"
		"  [ -d \"$pd\" ] || mkdir \"$pd\"\n"
		"  if [ -f \"$pl\" ]; then cp -f \"$gd/index\" \"$pl\" \"$pd/\"; "
		"else cp -f \"$gd/index\" \"$pd/\"; rm -f \"$ap\"; fi\n"
		"}\n"
		/* Tracked files the repo's set-up changed (template.h): where
		 * they still hold what set-up left, the commit keeps the base's
		 * version, so that only the agent's changes are committed. */
		"bl=\"$gd/info/paddock-baseline\"\n"
		"if [ -s \"$bl\" ]; then\n"
		"  save\n"
		"  while IFS= read -r l; do\n"
		"    s=${l%%%% *}; p=${l#* }\n"
		"    c=$(git rev-parse -q --verify \":0:$p\" 2>/dev/null) || c=%040d\n"
		"    if [ \"$c\" = \"$s\" ]; then git --literal-pathspecs reset -q %s -- \"$p\"; fi\n"
		"  done < \"$bl\"\n"
		"fi\n"
		/* Plumbing, not git commit: commit refreshes the index again.
		 * The index holds a change when its tree is not the head's.
		 * write-tree needs no fsmonitor answer (it looks at no file). */
		"t=$(git -c core.fsmonitor=false write-tree)\n"
		"[ -s \"$bl\" ] || save\n"
		"if [ \"$t\" != \"$h\" ]; then\n"
		/* The message comes in the environment (pipeline_handoff_run): the
		 * task's text is never part of this script. */
		"  c=$(git commit-tree \"$t\" -p HEAD -m \"$PADDOCK_HANDOFF_MESSAGE\")\n"
		"  git update-ref -m 'paddock: hand-off' HEAD \"$c\"\n"
		"  h=$t\n"
		"fi\n"
		"fi\n"
		"%s"
		/* HEAD names the task branch unless the agent moved it. */
		"IFS= read -r hd < \"$gd/HEAD\" || hd=\n"
		"[ \"$hd\" = 'ref: refs/heads/paddock/%s' ] || "
		"git update-ref refs/heads/paddock/%s HEAD\n"
		/* No commit, or commits that add up to nothing: the tree is the
		 * base's, and that is no change. */
		"for f in \"$PADDOCK_OUT/result.bundle\" \"$PADDOCK_OUT/home.tgz\" "
		"\"$PADDOCK_OUT/home.inc.tgz\"; do\n"
		"  if [ -e \"$f\" ] || [ -L \"$f\" ]; then rm -rf \"$f\"; fi\n"
		"done\n"
		/* The agent's home, for a later round to resume its session
		 * (pipeline_home_keep), also after no change (a contract may take that
		 * to the gate); a home that cannot be archived only loses that.
		 * Only an agent that resumes has a use for it. */
		"%s"
		"[ \"$h\" != %s ] || exit %d\n"
		"git bundle create -q \"$PADDOCK_OUT/result.bundle\" refs/heads/paddock/%s ^%s\n",
		changes ? "" : "rm -rf \"$PADDOCK_OUT/" SANDBOX_CHANGES_NAME "\" \"$PADDOCK_OUT/"
		               SANDBOX_STAGE_NAME "\" \"$PADDOCK_OUT/" SANDBOX_PATHS_NAME "\"\n",
		HANDOFF_NO_REPO, restore, 0, base, stop, id, id,
		home,
		base_tree, HANDOFF_NO_CHANGE, id, base);
}

/* The hand-off's archive of the agent's home (pipeline_int.h): whole, as
 * /out/home.tgz, where the sandbox has no snapshot snap (0: none kept),
 * else the increment on it, /out/home.inc.tgz; either way the snapshot
 * after it is /out/home.snar.<snap + 1>, and every other snapshot but
 * snap's goes (a round the host did not keep leaves one).  The snapshot
 * is the sandbox's, the agent's to spoil: a link or no file makes the
 * archive whole. */
static char *handoff_home(int snap)
{
	return xasprintf(
		"s=\"$PADDOCK_OUT/home.snar\"\n"
		"for f in \"$s\".*; do [ \"$f\" = \"$s.%d\" ] || rm -rf \"$f\"; done\n"
		"o=home.tgz\n"
		"if [ %d -gt 0 ] && [ -f \"$s.%d\" ] && [ ! -L \"$s.%d\" ] && "
		"cp \"$s.%d\" \"$s.%d\"; then o=home.inc.tgz; fi\n"
		"tar -C \"$agent_home\" -g \"$s.%d\" --exclude=./.cache --exclude=./.npm "
		"-czf \"$PADDOCK_OUT/$o\" . 2>/dev/null || rm -f \"$PADDOCK_OUT/$o\" \"$s.%d\"\n",
		snap, snap, snap, snap, snap, snap + 1, snap + 1, snap + 1);
}

/* sandbox_git_env_fsmonitor() but HOME and XDG_CONFIG_HOME, which the
 * hand-off script sets itself once it has read the agent's home from
 * HOME. */
static const char *const *handoff_env(void)
{
	static const char *env[64];
	if (!env[0]) {
		size_t n = 0;
		for (const char *const *v = sandbox_git_env_fsmonitor(); *v && n + 1 < 64; v++)
			if (strncmp(*v, "HOME=", 5) && strncmp(*v, "XDG_CONFIG_HOME=", 16))
				env[n++] = *v;
	}
	return env;
}

#define COMMIT_SUBJECT_MAX 71      /* characters of the first line */
#define COMMIT_BODY_MAX 4000       /* bytes of the task's text in the body */

/* Appends s[0..n) to b, each control character (a newline too, where
 * lines is 0) as a space. */
static void add_plain(struct buf *b, const char *s, size_t n, int lines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf_addc(b, (c < 0x20 && !(lines && (c == '\n' || c == '\t'))) || c == 0x7f ? ' '
		                                                                        : (char)c);
	}
}

/* The hand-off commit's message, from the task's text: a first line of
 * at most COMMIT_SUBJECT_MAX characters (the text's first line, cut on a
 * word), the whole text below it when that says more, and the task's id
 * as a trailer.  Control characters become spaces; malloc'd. */
static char *handoff_message(const char *text, const char *id)
{
	const char *p = text + strspn(text, " \t\r\n");
	size_t line = strcspn(p, "\r\n");
	while (line && (p[line - 1] == ' ' || p[line - 1] == '\t'))
		line--;
	/* Where the first line is cut: after at most COMMIT_SUBJECT_MAX
	 * characters (UTF-8 lead bytes), before a space where there is one. */
	size_t cut = 0, chars = 0, space = 0;
	while (cut < line) {
		size_t next = cut + 1;
		while (next < line && ((unsigned char)p[next] & 0xc0) == 0x80)
			next++;
		if (++chars > COMMIT_SUBJECT_MAX)
			break;
		if (p[cut] == ' ')
			space = cut;
		cut = next;
	}
	if (cut < line && p[cut] != ' ' && space > 0)
		cut = space;
	while (cut && p[cut - 1] == ' ')
		cut--;
	struct buf b = {0};
	if (cut)
		add_plain(&b, p, cut, 0);
	else
		buf_printf(&b, "paddock task %s", id);
	size_t rest = strlen(p);
	while (rest && strchr(" \t\r\n", p[rest - 1]))
		rest--;
	/* The whole text when the first line does not say it all. */
	if (rest > cut) {
		buf_adds(&b, "\n\n");
		size_t n = rest > COMMIT_BODY_MAX ? COMMIT_BODY_MAX : rest;
		while (n < rest && n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
		add_plain(&b, p, n, 1);
		if (n < rest)
			buf_adds(&b, " [...]");
	}
	buf_printf(&b, "\n\nPaddock-Task: %s\n", id);
	return buf_detach(&b);
}

/* The hand-off's run in the sandbox and the bundle copied out: 0,
 * HANDOFF_NO_CHANGE, or -1 with a message.  extra (NULL: none) adds to
 * its environment: a reviewer's round's commit message
 * (PADDOCK_HANDOFF_MESSAGE) and author. */
int pipeline_handoff_run(struct run *r, struct sandbox *sb, const char *const *extra,
                         enum handoff_phase phase, struct err *e)
{
	const struct task_row *t = r->job->task;
	const struct config *cfg = r->job->cfg;
	/* What the agent changed, from the overlay: git then looks at those
	 * files only, whatever the repo's size.  Without it, at every file. */
	struct err ce = {{0}};
	int changes = r->job->be->changes && r->job->be->changes(sb, &ce) == 0;
	char base_tree[41];
	if (mirror_tree_of(r->mirror, r->base, base_tree, e) < 0)
		return -1;
	char *home = pipeline_home_wanted(r) ? handoff_home(r->home_snap) : xstrdup("");
	char *script = handoff_script(t->id, r->base, base_tree, changes, home, phase);
	free(home);
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct sandbox_result res;
	/* The hand-off gets its own few minutes: a task that used all its time
	 * still hands back what it did. */
	double deadline = clock_mono() + 300;
	if (phase == HANDOFF_COMMIT)
		pipeline_log(r, "hand-off: committing and bundling the work as the agent left it, "
		             "before the tests");
	else if (phase == HANDOFF_AFTER_TESTS)
		pipeline_log(r, "hand-off: putting the tree back as the agent left it");
	else
		pipeline_log(r, "hand-off: committing and bundling the work");
	const char *env[80];
	size_t n = 0;
	int own = 0;
	for (const char *const *v = handoff_env(); *v && n < 64; v++)
		env[n++] = *v;
	for (size_t i = 0; extra && extra[i] && n + 2 < 80; i++) {
		own |= !strncmp(extra[i], "PADDOCK_HANDOFF_MESSAGE=", 24);
		env[n++] = extra[i];
	}
	/* The commit's message, unless the caller has its own: the task's
	 * text (handoff_message). */
	char *text = own ? NULL : handoff_message(t->text, t->id);
	char *msg = own ? NULL : xasprintf("PADDOCK_HANDOFF_MESSAGE=%s", text);
	if (msg)
		env[n++] = msg;
	env[n] = NULL;
	int rc = pipeline_sb_run(r, sb, argv, env, deadline, &res, e);
	free(script);
	free(text);
	free(msg);
	if (rc < 0)
		return -1;
	if (res.end == SANDBOX_EXITED && res.code == HANDOFF_NO_CHANGE)
		return HANDOFF_NO_CHANGE;
	if (res.end == SANDBOX_EXITED && res.code == HANDOFF_NO_REPO)
		return err_set(e, _("the agent removed or broke the git repository in %s; there "
		                    "is no work to hand back"), SANDBOX_WORKDIR);
	char *p = pipeline_result_problem(r, _("the hand-off"), &res);
	if (p) {
		err_set(e, "%s", p);
		free(p);
		return -1;
	}
	if (phase == HANDOFF_AFTER_TESTS)
		return 0;
	char *bundle = paths_task_bundle(r->job->data_dir, t->id);
	/* A new file, never the last round's rewritten: that one may be
	 * linked as round-N.bundle (pipeline_keep_round_bundle). */
	unlink(bundle);
	rc = pipeline_sb_copy_out(r, sb, SANDBOX_OUTDIR "/result.bundle", bundle,
	                          cfg->limits.bundle, e);
	free(bundle);
	return rc;
}

struct bundle_limits pipeline_handoff_limits(const struct run *r)
{
	const struct config *cfg = r->job->cfg;
	return (struct bundle_limits){
		.max_bytes = cfg->limits.bundle,
		.max_objects = 1000000,
		.max_blob = cfg->limits.bundle,
	};
}

/* The bundle checked and imported into the mirror: 0 with r->head set, or
 * -1 with a message. */
int pipeline_handoff_import(struct run *r, struct err *e)
{
	const struct task_row *t = r->job->task;
	char *bundle = paths_task_bundle(r->job->data_dir, t->id);
	char *round_ref = xasprintf("refs/paddock/rounds/%s/%d", t->id, r->round);
	char *task_ref = mirror_task_ref(t->id);
	char *expected = xasprintf("refs/heads/paddock/%s", t->id);
	char head[41];
	struct bundle_limits lim = pipeline_handoff_limits(r);
	/* An earlier attempt of this round (interrupted, or failed after its
	 * import) left its ref: it moves aside. */
	char *aside = xasprintf("refs/paddock/failed/%s/%d", t->id, r->round);
	int rc = mirror_retire_ref(r->mirror, round_ref, aside, e);
	free(aside);
	if (rc == 0)
		rc = bundle_import(r->mirror, bundle, expected, r->base, round_ref, &lim, head, e);
	/* refs/paddock/tasks/<id> follows the latest round. */
	if (rc == 0 && (rc = mirror_set_ref(r->mirror, task_ref, head, e)) == 0)
		memcpy(r->head, head, sizeof head);
	free(bundle);
	free(round_ref);
	free(task_ref);
	free(expected);
	return rc;
}
