# The dashboard's script-mode tests: tests/ui*.test source this after
# lib.sh.  run_ui runs a script, compare checks a saved screen against its
# golden in tests/ui/ after masking ids, commit ids and times.
# PADDOCK_UI_UPDATE=1 rewrites the goldens (review them before committing).
GOLD="$top_srcdir/tests/ui"
export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
export PADDOCK_UI_SIZE=${PADDOCK_UI_SIZE:-80x24}
export PADDOCK_THEMES_DIR="$top_srcdir/themes"
unset NO_COLOR LANGUAGE
OUT=$T/out
mkdir -p "$OUT"
# German goldens need the de_DE.UTF-8 locale and this tree's catalogue,
# compiled where the uninstalled paddock finds it (as tests/i18n.test).
UI_LANGS=en
if locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\{0,1\}8' && command -v msgfmt >/dev/null &&
	grep -q '^#define ENABLE_NLS 1' "$top_builddir/autoconfig.h" &&
	mkdir -p "$T/locale/de/LC_MESSAGES" &&
	msgfmt -o "$T/locale/de/LC_MESSAGES/paddock.mo" "$top_srcdir/po/de.po"; then
	export PADDOCK_LOCALEDIR="$T/locale"
	UI_LANGS="en de"
else
	skip_check "the German screens against their goldens" \
		"needs the de_DE.UTF-8 locale, msgfmt and a build with NLS (scripts/install-deps --tests)"
fi

# Remote mode (UI_REMOTE=1, the *-remote.test wrappers): run_ui runs the
# dashboard as a client of a `paddock serve --listen 127.0.0.1:0` on the
# test's data directory (PADDOCK_SERVER, PADDOCK_TOKEN of a token of role
# admin), with a data directory of its own that is empty, so that what it
# shows comes through the API only; compare checks the same goldens.  The
# serve runs the scheduler, as a team's server does: a test that starts
# its own scheduler does it with ui_serve, and run_ui starts one for the
# data directory in use (PADDOCK_HOME) where the test has none.
UI_REMOTE=${UI_REMOTE:-0}
UI_TOKEN=ui-golden-admin-token-0123456789
# What run_ui learns goes to files: it often runs in a pipeline's
# subshell.  ui-serve.home: the data directory the serve runs on,
# ui-serve.pid, ui-serve.api: its URL; ui-hosted: 1 where run_ui started
# it (the test runs no scheduler of its own).
_UI=$T/ui-serve
_ui_serve_n=0

# _ui_token_conf: the admin token in the configuration, once (a test
# writes its configuration after sourcing this file).
_ui_token_conf() {
	# Named after the user: a decision names its token on a server, and
	# the user locally, and the goldens show one name (ui-mask.py's).
	_tn=$(id -un)
	grep -qF "[token \"$_tn\"]" "$PADDOCK_CONFIG" 2>/dev/null && return 0
	printf '%s\n' "$UI_TOKEN" >"$T/ui-golden.token"
	printf '[token "%s"]\n\tvalue-file = %s\n\trole = admin\n' "$_tn" "$T/ui-golden.token" >>"$PADDOCK_CONFIG"
}

# _ui_serve_stop: the serve run_ui or ui_serve started, stopped and gone.
_ui_serve_stop() {
	_p=$(cat "$_UI.pid" 2>/dev/null)
	[ -n "$_p" ] || return 0
	kill -TERM "$_p" 2>/dev/null
	wait_for 30 sh -c "! kill -0 $_p 2>/dev/null"
	rm -f "$_UI.pid" "$_UI.home" "$_UI.api"
}

# _ui_serve_start [serve args]: a serve on the data directory in use, in
# remote mode answering the API on loopback; its pid in $T/serve.pid, its
# output in $T/serve.out.
_ui_serve_start() {
	_ui_serve_stop
	_ui_serve_n=$((_ui_serve_n + 1))
	_so="$T/ui-serve-$(basename "$PADDOCK_HOME")-$_ui_serve_n.out"
	if [ "$UI_REMOTE" = 1 ]; then
		_ui_token_conf
		"$PADDOCK" serve --listen 127.0.0.1:0 "$@" >"$_so" 2>&1 &
	else
		"$PADDOCK" serve "$@" >"$_so" 2>&1 &
	fi
	echo $! >"$_UI.pid"
	cp "$_UI.pid" "$T/serve.pid"
	printf '%s\n' "$PADDOCK_HOME" >"$_UI.home"
	ln -sf "$_so" "$T/serve.out"
	[ "$UI_REMOTE" = 1 ] || return 0
	# (In English or German: the test's language is the serve's.)
	wait_for 30 grep -q ' 127\.0\.0\.1:0 ([Pp]ort [0-9]*)' "$_so" ||
		bail "serve --listen did not start: $(cat "$_so")"
	echo "http://127.0.0.1:$(sed -n 's/.* 127\.0\.0\.1:0 ([Pp]ort \([0-9]*\)).*/\1/p' "$_so" | head -n 1)" >"$_UI.api"
}
at_exit '_ui_serve_stop'

# ui_serve: the test's own scheduler (paddock serve, its output in
# $T/serve.out); in remote mode it answers the API too, and the remote
# dashboard reads it.  The local dashboard then hosts no scheduler either.
ui_serve() { echo 0 >"$T/ui-hosted"; _ui_serve_start "$@"; }

# run_ui SCRIPT [paddock args]: runs the dashboard on the script from
# standard input ("OUT/" in it is the output folder).
run_ui() {
	s=$1; shift
	sed "s|OUT/|$OUT/|g" >"$T/$s.script"
	if [ "$UI_REMOTE" = 1 ]; then
		# Where the test runs no scheduler, the local dashboard hosts
		# it: here the serve does (named exception in compare).
		if [ "$(cat "$_UI.home" 2>/dev/null)" != "$PADDOCK_HOME" ] ||
			! kill -0 "$(cat "$_UI.pid")" 2>/dev/null; then
			_ui_serve_start
			echo 1 >"$T/ui-hosted"
		fi
		mkdir -p "$T/ui-client"
		PADDOCK_HOME="$T/ui-client" PADDOCK_SERVER=$(cat "$_UI.api") PADDOCK_TOKEN=$UI_TOKEN \
			PADDOCK_UI_SCRIPT="$T/$s.script" PADDOCK_UI_LAST="$T/$s.last" timeout 600 "$PADDOCK" "$@" \
			>"$T/$s.stdout" 2>"$T/$s.stderr"
	else
		PADDOCK_UI_SCRIPT="$T/$s.script" PADDOCK_UI_LAST="$T/$s.last" timeout 600 "$PADDOCK" "$@" \
			>"$T/$s.stdout" 2>"$T/$s.stderr"
	fi
	rc=$?
	# Where a failed or stopped script was, for the log.
	[ $rc -eq 0 ] || sed 's/^/#   last: /' "$T/$s.last" 2>/dev/null
	return $rc
}

# run_ui_in LANG SIZE SCRIPT [paddock args]: run_ui in a language of
# messages (en, de) at a size (80x24).
run_ui_in() {
	_l=$1 _z=$2; shift 2
	if [ "$_l" = de ]; then
		LANGUAGE=de LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 PADDOCK_UI_SIZE=$_z run_ui "$@"
	else
		PADDOCK_UI_SIZE=$_z run_ui "$@"
	fi
}

# compare NAME: the masked screen OUT/NAME.screen against its golden.
compare() {
	if [ "$UI_REMOTE" = 1 ]; then
		# The named exception of remote mode: the remote dashboard's
		# title ends with the server it shows ("[on 127.0.0.1:PORT]",
		# German "[auf ...]"), where the local one says whether it
		# hosts the scheduler: nothing where the test runs no scheduler
		# (the local dashboard hosts one), else "[no scheduler here]".
		# The server's marker is put back as the local one would be,
		# right-aligned in the same columns.
		_hosted=$(cat "$T/ui-hosted" 2>/dev/null)
		awk -v hosted="$_hosted" 'NR == 1 {
			w = length($0)
			de = index($0, "[auf ") > 0
			if (sub(/ *\[(on|auf) [^]]*\]$/, "")) {
				rep = hosted == 1 ? "" : de ? "[kein Scheduler hier]" : "[no scheduler here]"
				if (rep != "")
					$0 = $0 sprintf("%" (w - length($0)) "s", rep)
			}
		} { print }' "$OUT/$1.screen" >"$OUT/$1.screen.tmp" && mv "$OUT/$1.screen.tmp" "$OUT/$1.screen"
	fi
	UI_MASK_USER=$(id -un) UI_MASK_DATA=$PADDOCK_HOME python3 "$top_srcdir/tests/ui-mask.py" \
		<"$OUT/$1.screen" >"$OUT/$1.masked"
	if [ "${PADDOCK_UI_UPDATE:-}" = 1 ]; then
		cp "$OUT/$1.masked" "$GOLD/$1.screen"
	fi
	# The goldens show the sandbox's paths as bwrap shows them (/work);
	# the process backend's are its private directory's.  In user mode a
	# log starts with a note of which limits hold instead of cgroups.
	if [ "$SANDBOX_BACKEND" = process ] && grep -q 'paddock-process-' "$OUT/$1.masked"; then
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n - screen $1 # SKIP it shows the process backend's sandbox paths"
		return
	fi
	if [ "$SANDBOX_BACKEND" = user ] && grep -Eq 'no cgroup for this sandbox|in a delegated cgroup' "$OUT/$1.masked"; then
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n - screen $1 # SKIP it shows user mode's note on limits"
		return
	fi
	_gold=$GOLD/$1.screen
	if [ "$UI_REMOTE" = 1 ]; then
		# The second named exception of remote mode: a row that shows a
		# path under the data directory (a log's, or the part of it
		# scrolled into view) is not compared, nor its roles.  The API
		# shows the path as <data directory>/..., shorter than the
		# test's data directory: cut at the edge or scrolled sideways,
		# another part of it is in view, and its colours end elsewhere.
		# Both sides' rows become a placeholder where the golden shows
		# such a path; every other row is compared as it is.
		python3 - "$GOLD/$1.screen" "$OUT/$1.masked" "$T/$1.gold" "$T/$1.remote" <<'PY'
import re, sys
def split(path):
    text, sep, roles = open(path).read().partition("\n--\n")
    return text.split("\n"), sep, roles.split("\n") if sep else []
gold, gsep, groles = split(sys.argv[1])
mine, msep, mroles = split(sys.argv[2])
path = re.compile(r"<data directory>|\btemplates/[a-z]+/|/tasks/ID\d+ */log|\.tests-SHA *\.log")
rows = {i for i, l in enumerate(gold) if path.search(l)}
for out, (text, sep, roles) in zip(sys.argv[3:], ((gold, gsep, groles), (mine, msep, mroles))):
    text = ["(a path under the data directory)" if i in rows else l for i, l in enumerate(text)]
    roles = [r for r in roles if not (re.match(r"\d+:", r) and int(r.split(":")[0]) in rows)]
    open(out, "w").write("\n".join(text) + sep + "\n".join(roles))
PY
		_gold=$T/$1.gold
		cp "$T/$1.remote" "$OUT/$1.masked"
	fi
	diff -u "$_gold" "$OUT/$1.masked" >"$T/$1.diff" 2>&1
	ok $? "screen $1 matches tests/ui/$1.screen"
	sed 's/^/#   /' "$T/$1.diff" | head -n 60
}
