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

# run_ui SCRIPT [paddock args]: runs the dashboard on the script from
# standard input ("OUT/" in it is the output folder).
run_ui() {
	s=$1; shift
	sed "s|OUT/|$OUT/|g" >"$T/$s.script"
	PADDOCK_UI_SCRIPT="$T/$s.script" PADDOCK_UI_LAST="$T/$s.last" timeout 600 "$PADDOCK" "$@" \
		>"$T/$s.stdout" 2>"$T/$s.stderr"
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
	UI_MASK_USER=$(id -un) python3 "$top_srcdir/tests/ui-mask.py" <"$OUT/$1.screen" >"$OUT/$1.masked"
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
	diff -u "$GOLD/$1.screen" "$OUT/$1.masked" >"$T/$1.diff" 2>&1
	ok $? "screen $1 matches tests/ui/$1.screen"
	sed 's/^/#   /' "$T/$1.diff" | head -n 60
}
