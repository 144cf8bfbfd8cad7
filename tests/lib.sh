# lib.sh: shared helpers for the shell tests (TAP output).
# Each test gets its own data dir, config and scratch dir under $T, removed
# at exit.  Sourced by tests/*.test, which run from the build directory.
set -u
: "${PADDOCK:=$top_builddir/paddock}"
T=$(mktemp -d /tmp/paddock-test.XXXXXX)
chmod 755 "$T"
# Every process this test starts carries the marker, for _lib_leftovers.
export PADDOCK_TEST_RUN="$T"
export PADDOCK_HOME="$T/data"
export PADDOCK_CONFIG="$T/config"
export XDG_CONFIG_HOME="$T/xdg-config"
export LC_ALL=C.UTF-8 LANGUAGE=
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.invalid
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.invalid
# Each test file's sandboxes run as their own uid, so that checks like
# "no process of the sandbox uid is left" hold while other tests run.
SBX_UID=$((64200 + $$ % 1000))
export SBX_UID
# The backend sandbox_conf configures: bwrap (as root), user (bwrap in
# user mode, not root), or process, as require_sandbox chose.
SANDBOX_BACKEND=bwrap
sandbox_conf() {
	case $SANDBOX_BACKEND in
	process) printf '[sandbox]\n\tbackend = process\n\tunsafe-no-isolation = true\n' ;;
	user) printf '[sandbox]\n\tbackend = bwrap\n' ;;
	*) printf '[sandbox]\n\tuid = %s\n\tgid = %s\n' "$SBX_UID" "$SBX_UID" ;;
	esac
}
_tap_n=0
_tap_failed=0
_cleanup_hooks=""

at_exit() { _cleanup_hooks="$_cleanup_hooks
$1"; }
# _lib_leftovers: after the cleanup hooks, each process of this test still
# alive 3 s later (killed ones take a moment to go) is killed and fails
# the test, named by its command line: a helper left behind holds the
# test driver's pipe (the suite waits for it) or writes into the next
# test's time.  A process is this test's when it carries PADDOCK_TEST_RUN=$T
# in its environment, or its cwd, an open file or its command line is $T or
# under it (what a sandbox runs has neither environment nor paths of ours;
# its bwrap has both).  The test's own shell and its subshells, the
# ancestors of the scan, are not leftovers.
_lib_leftovers() {
	command -v python3 >/dev/null || return 0
	python3 - "$T" >"$T/leftovers" 2>&1 <<'PY'
import os, re, signal, sys, time
t = os.fsencode(sys.argv[1])
mark = b"PADDOCK_TEST_RUN=" + t
under = re.compile(re.escape(t) + rb"(?:/|\0|$| \(deleted\)$)")
mine = set()
p = os.getpid()
while p > 1 and p not in mine:
    mine.add(p)
    try:
        p = int([l for l in open("/proc/%d/status" % p) if l.startswith("PPid:")][0].split()[1])
    except (OSError, IndexError, ValueError):
        break
def link(path):
    try:
        return os.fsencode(os.readlink(path))
    except OSError:
        return b""
def ours(p):
    base = "/proc/%d/" % p
    try:
        if open(base + "stat", "rb").read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
            return None
        cmd = open(base + "cmdline", "rb").read()
    except (OSError, IndexError):
        return None
    hit = under.search(cmd) or under.match(link(base + "cwd"))
    if not hit:
        try:
            hit = mark in open(base + "environ", "rb").read().split(b"\0")
        except OSError:
            pass
    if not hit:
        try:
            hit = any(under.match(link(base + "fd/" + fd)) for fd in os.listdir(base + "fd"))
        except OSError:
            pass
    return cmd if hit else None
def scan():
    found = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in mine:
            cmd = ours(int(d))
            if cmd is not None:
                found[int(d)] = cmd
    return found
t0 = time.monotonic()
left = first = scan()
while left and time.monotonic() < t0 + 3:
    time.sleep(0.1)
    left = scan()
if first and not left:
    # How near the grace period came to its end, for the log.
    print("# %d process(es) of this test went %.1f s after its cleanup" %
          (len(first), time.monotonic() - t0))
for p, cmd in sorted(left.items()):
    try:
        os.kill(p, signal.SIGKILL)
    except OSError:
        pass
    # Printable ASCII only: an agent's process names itself.
    words = cmd.rstrip(b"\0").replace(b"\0", b" ")[:200]
    print("".join(chr(c) if 32 <= c < 127 else "\\x%02x" % c for c in words) or "[pid %d]" % p)
PY
	_left_n=0
	while IFS= read -r _left; do
		case $_left in
		"# "*) echo "$_left" ;;
		*) ok 1 "no process of this test outlives it: $_left"; _left_n=1 ;;
		esac
	done <"$T/leftovers"
	[ $_left_n -eq 1 ] || ok 0 "no process of this test outlives it"
}
_lib_exit() {
	rc=$?
	eval "$_cleanup_hooks" >/dev/null 2>&1 || true
	# A serve left running by a failed test must not outlive it.
	[ -f "$T/serve.pid" ] && kill -9 "$(cat "$T/serve.pid")" 2>/dev/null
	_lib_leftovers
	rm -rf "$T" 2>/dev/null
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ] || exit 1
	exit "$rc"
}
trap _lib_exit EXIT

ok() { # ok CONDITION-STATUS DESCRIPTION ; use as: cmd; ok $? "desc" || diagnostics
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"
	else echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); return 1; fi
}
check() { # check "desc" command... : passes when the command succeeds
	_d=$1; shift
	if "$@" >"$T/check.out" 2>&1; then ok 0 "$_d"
	else ok 1 "$_d"; sed 's/^/#   /' "$T/check.out" | head -n 40; fi
}
check_not() { # check_not "desc" command... : passes when the command fails
	_d=$1; shift
	if "$@" >"$T/check.out" 2>&1; then ok 1 "$_d"; sed 's/^/#   /' "$T/check.out" | head -n 40
	else ok 0 "$_d"; fi
}
skip_all() { echo "1..0 # SKIP $1"; trap - EXIT; rm -rf "$T"; exit 0; }
diag() { echo "# $*"; }
bail() { echo "Bail out! $*"; exit 1; }

# wait_for SECONDS command... : polls until the command succeeds.
wait_for() {
	_limit=$1; shift
	_end=$(( $(date +%s) + _limit ))
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.1
	done
	return 0
}

tmux_stop() { # tmux_stop SOCKET: its server killed, and gone.  A new-session
	# right after kill-server can reach the dying server ("server exited
	# unexpectedly") and start nothing.
	_tp=$(tmux -L "$1" display -p '#{pid}' 2>/dev/null)
	tmux -L "$1" kill-server 2>/dev/null
	[ -z "$_tp" ] || wait_for 10 sh -c "! kill -0 $_tp 2>/dev/null"
}

require_root_sandbox() {
	[ "$(id -u)" -eq 0 ] || skip_all "sandbox tests need root (CI runs as root)"
	command -v bwrap >/dev/null || skip_all "bwrap not installed"
}

# require_sandbox: for tests that need tasks to run and hold in both
# modes (the demo, the dashboard): bwrap as root; as another user, bwrap in
# user mode where paddock doctor says tasks can run, else the process
# backend (paddock-config(5), [sandbox] unsafe-no-isolation), which
# PADDOCK_TEST_BACKEND=process also chooses.  "require_sandbox isolated":
# never the process backend (the test attacks the isolation).
require_sandbox() {
	if [ "${PADDOCK_TEST_BACKEND:-}" = process ]; then
		SANDBOX_BACKEND=process
	elif [ "$(id -u)" -eq 0 ]; then
		require_root_sandbox
	elif command -v bwrap >/dev/null && : >"$T/doctor.conf" &&
	     PADDOCK_CONFIG="$T/doctor.conf" "$PADDOCK" doctor >/dev/null 2>&1; then
		SANDBOX_BACKEND=user
	elif [ "${1:-}" = isolated ]; then
		skip_all "not root, and no user-mode sandbox here (paddock doctor)"
	else
		SANDBOX_BACKEND=process
	fi
}

# make_repo NAME: a bare repo at $T/remotes/NAME.git from the files in
# $T/src-NAME (created by the caller), one commit on main.
make_repo() {
	_src="$T/src-$1"
	git -C "$_src" init -q -b main
	git -C "$_src" add -A
	git -C "$_src" commit -q -m "initial"
	mkdir -p "$T/remotes"
	git clone -q --bare "$_src" "$T/remotes/$1.git"
}

# make_py_repo NAME: a small python project whose tests pass.
make_py_repo() {
	mkdir -p "$T/src-$1"
	cat >"$T/src-$1/calc.py" <<'PY'
def add(a, b):
    return a + b
PY
	cat >"$T/src-$1/test_calc.py" <<'PY'
import unittest
import calc

class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

if __name__ == "__main__":
    unittest.main()
PY
	printf '__pycache__/\n' >"$T/src-$1/.gitignore"
	make_repo "$1"
}

# write_agent NAME <<'SH' ... SH : an agent script at $T/agents/NAME.sh
write_agent() {
	mkdir -p "$T/agents"
	cat >"$T/agents/$1.sh"
	chmod 755 "$T/agents/$1.sh"
}

# task_status ID: prints the task's status
task_status() { "$PADDOCK" show --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
task_field() { "$PADDOCK" show --json "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$2"; }

# listed_ids IDS-FILE: prints each id in IDS-FILE (one a line, as `add`
# printed them) that `list --json` does not have, and fails when there is
# one or IDS-FILE has a line that is not an id: "no task is lost" means
# every task added is still there, whatever its status.
listed_ids() {
	"$PADDOCK" list --json | python3 -c '
import json, re, sys
have = {t["id"] for t in json.load(sys.stdin)}
added = [l.strip() for l in open(sys.argv[1])]
bad = [i or "(an empty line)" for i in added if not re.fullmatch(r"[0-9a-z-]+", i)]
gone = [i for i in added if i and i not in have]
print(" ".join(bad + gone))
sys.exit(1 if bad + gone or not added else 0)' "$1"
}

# skip_check DESCRIPTION REASON: a check that does not apply in this mode,
# as a TAP line that names it ("ok N - DESCRIPTION # SKIP REASON").
skip_check() { ok 0 "$1 # SKIP $2"; }

# sandbox_pids: in user mode, where a sandbox's processes run as the user
# like everything else of the test, the pids of this test's: each bwrap
# names its task in its argv (--setenv PADDOCK_TASK_ID ID), and what runs
# inside has PADDOCK_TASK_ID=ID in its environment; the tasks are this data
# dir's.  One pid a line.  (As root: the sandbox uid's, pgrep -u.)
sandbox_pids() {
	python3 - "$PADDOCK_HOME/tasks" <<'PY'
import os, sys
try:
    ids = {i.encode() for i in os.listdir(sys.argv[1])}
except OSError:
    ids = set()
me = str(os.getuid())
for p in os.listdir("/proc"):
    if not p.isdigit() or p == str(os.getpid()):
        continue
    try:
        uid = [l.split()[1] for l in open("/proc/%s/status" % p) if l.startswith("Uid:")]
        if uid != [me]:
            continue
        argv = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
        env = open("/proc/%s/environ" % p, "rb").read().split(b"\0")
    except OSError:
        continue
    named = {argv[i + 1] for i in range(len(argv) - 1) if argv[i] == b"PADDOCK_TASK_ID"}
    named |= {e[len(b"PADDOCK_TASK_ID="):] for e in env if e.startswith(b"PADDOCK_TASK_ID=")}
    if named & ids:
        print(p)
PY
}

# api_keep METHOD PATH STATUS: keeps the answer in $T/body and $T/hdr in
# $T/rec, for tests/openapi-check.cjs.
api_keep() {
	[ -d "$T/rec" ] || mkdir "$T/rec"
	_k="$T/rec/$(date +%s%N)"
	printf '%s %s %s\n' "$1" "$2" "$3" >"$_k.req"
	cp "$T/body" "$_k.body" 2>/dev/null; cp "$T/hdr" "$_k.hdr" 2>/dev/null
	return 0
}

# openapi_validators: installs the OpenAPI validators from the npm registry
# (once per build folder) into $OAV, for tests/openapi-check.cjs; what npm
# said is in $T/npm.out.
openapi_validators() {
	OAV=$top_builddir/tests/openapi-node
	command -v npm >/dev/null || return 1
	mkdir -p "$OAV"
	# Tests run side by side: one installs, the others wait for it.
	(
		flock 9
		[ -d "$OAV/node_modules/openapi-response-validator" ] ||
			(cd "$OAV" && npm install --no-audit --no-fund --silent \
				openapi-response-validator@12.1.3 \
				@seriousme/openapi-schema-validator@2.11.0 >"$T/npm.out" 2>&1)
	) 9>"$OAV.lock"
}

# kube_validators: installs npm kubernetes-models (the Kubernetes schemas,
# 1.27) with @kubernetes-models/validate (once per build folder) into
# $KMV, for tests/kube-spec-check.mjs; what npm said is in $T/npm.out.
kube_validators() {
	KMV=$top_builddir/tests/kube-models-node
	command -v npm >/dev/null || { echo "npm is not installed" >"$T/npm.out"; return 1; }
	mkdir -p "$KMV"
	(
		flock 9
		[ -d "$KMV/node_modules/kubernetes-models" ] ||
			(cd "$KMV" && npm install --no-audit --no-fund --silent \
				kubernetes-models@5.1.0 @kubernetes-models/validate@5.0.2 >"$T/npm.out" 2>&1)
	) 9>"$KMV.lock"
}

# start_sshd: a real sshd on a free loopback port, for the SSH tests
# (ssh.test, fetch.test): its own host key $T/host_key, the client key
# $T/client_key (root may log in with it, $T/authorized_keys), LogLevel
# VERBOSE into $T/sshd.log (accepted and offered client keys), killed at
# exit.  Sets SSHD_PORT and SSHD_PID, and LSAN_OPTIONS for libgit2 1.5.1
# and libssh2, which leak a few bytes and the known_hosts handle on every
# SSH connection (not ours to fix; in the sanitizer build LeakSanitizer's
# stacks stop in those libraries, so the rules name them).  Skips the whole
# test when sshd or ssh-keygen is missing or this is not root.
start_sshd() {
	[ -x /usr/sbin/sshd ] || skip_all "sshd is not installed (Debian: apt-get install openssh-server)"
	for _p in ssh-keygen ssh-keyscan; do
		command -v "$_p" >/dev/null || skip_all "$_p is not installed (Debian: apt-get install openssh-client)"
	done
	command -v python3 >/dev/null || skip_all "python3 is not installed"
	[ "$(id -u)" -eq 0 ] || skip_all "the test sshd runs as root (CI runs as root)"
	{ cat "$top_srcdir/tests/lsan.supp"; printf 'leak:libssh2.so\nleak:libgit2.so\n'; } >"$T/lsan.supp"
	LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0"
	export LSAN_OPTIONS
	ssh-keygen -q -t ed25519 -N '' -C 'test host key' -f "$T/host_key" || bail "ssh-keygen failed"
	ssh-keygen -q -t ed25519 -N '' -C 'paddock' -f "$T/client_key" || bail "ssh-keygen failed"
	cp "$T/client_key.pub" "$T/authorized_keys"
	mkdir -p /run/sshd
	SSHD_PID=
	for _try in 1 2 3; do
		SSHD_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		cat >"$T/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $SSHD_PORT
HostKey $T/host_key
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel VERBOSE
CONF
		/usr/sbin/sshd -D -e -f "$T/sshd_config" >"$T/sshd.out" 2>"$T/sshd.log" &
		SSHD_PID=$!
		if wait_for 20 _sshd_up; then break; fi
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
		SSHD_PID=
	done
	[ -n "$SSHD_PID" ] || bail "sshd did not start: $(cat "$T/sshd.log")"
	at_exit "kill $SSHD_PID"
	diag "sshd on 127.0.0.1:$SSHD_PORT (pid $SSHD_PID)"
}
_sshd_up() { ssh-keyscan -T 2 -p "$SSHD_PORT" 127.0.0.1 2>/dev/null | grep -q ssh-ed25519; }

# kube_server [ARGS...]: the Kubernetes contract server
# (tests/kube-api-server.py, ARGS added) on loopback over TLS, its CA
# ($T/kube/ca.crt) and certificate made here, the API's token
# api-token-0123456789; its requests in $T/kube/requests.log, its
# faults file $T/kube/faults.  Sets KPORT and writes $T/kube/kubeconfig
# (context main, namespace paddock-sandboxes).
kube_server() {
	mkdir -p "$T/kube"
	(cd "$T/kube" && ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' &&
		printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
		openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca &&
		openssl req $ec -keyout srv.key -out srv.csr -subj /CN=kube-api &&
		openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt \
			-days 2 -extfile srv.ext) >"$T/kube/openssl.out" 2>&1 ||
		bail "openssl: $(tail -n 3 "$T/kube/openssl.out")"
	echo "api-token-0123456789" >"$T/kube/api-token"
	: >"$T/kube/faults"
	python3 "$top_srcdir/tests/kube-api-server.py" --port-file "$T/kube/port" \
		--log "$T/kube/requests.log" --cert "$T/kube/srv.crt" --key "$T/kube/srv.key" \
		--token-file "$T/kube/api-token" --faults "$T/kube/faults" "$@" \
		>"$T/kube/server.out" 2>&1 &
	KUBE_SERVER_PID=$!
	at_exit "kill $!"
	wait_for 10 test -s "$T/kube/port" ||
		bail "the contract server did not start: $(tail -n 3 "$T/kube/server.out")"
	KPORT=$(cat "$T/kube/port")
	cat >"$T/kube/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: main
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:$KPORT
    certificate-authority: $T/kube/ca.crt
contexts:
- name: main
  context:
    cluster: c1
    user: u1
    namespace: paddock-sandboxes
users:
- name: u1
  user:
    token: api-token-0123456789
KC
}

# kube_backend: paddock's kubernetes backend on the contract server with
# its fake kubelet (real pods under bwrap): appends [sandbox] and
# [kubernetes] to $PADDOCK_CONFIG (the front door on DOOR, which the pods
# dial at DOOR_DIAL when that is set: a proxy's; the probe on the closed
# port CLOSED, start-timeout 8s; each connection a pod makes to it a line
# of $T/kube/door-connections), applies the manifest's
# objects as an admin would, starts the server (kube_server).  Skips the
# whole test where bwrap cannot make the pods' user namespaces.
kube_backend() {
	command -v bwrap >/dev/null || skip_all "bwrap is not installed"
	bwrap --unshare-user --uid 1000 --unshare-net --ro-bind /usr /usr --symlink usr/bin /bin \
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 -- /bin/true 2>/dev/null ||
		skip_all "bwrap cannot make a user namespace here (the fake kubelet needs one)"
	DOOR=$(free_port)
	CLOSED=$(free_port)
	cat >>"$PADDOCK_CONFIG" <<KCONF
[sandbox]
	backend = kubernetes
[kubernetes]
	kubeconfig = $T/kube/kubeconfig
	namespace = paddock-sandboxes
	image = registry.example.com/paddock-sandbox:1
	runner-path = $top_builddir/paddock-runner
	front-door = 127.0.0.1:${DOOR_DIAL:-$DOOR}
	front-door-listen = 127.0.0.1:$DOOR
	probe = 127.0.0.1:$CLOSED
	start-timeout = 8s
KCONF
	"$PADDOCK" kubernetes manifest --json >"$T/objects.json" ||
		bail "paddock kubernetes manifest failed"
	mkdir -p "$T/kubelet"
	kube_server --objects "$T/objects.json" --grace-scale 0.2 --start-delay 0.05 --kubelet \
		--kubelet-state "$T/kubelet" --bridge "$top_builddir/paddock-bridge" \
		--kubelet-log "$T/kube/kubelet.log" --door-connections "$T/kube/door-connections"
}

# kube_cgroup_parent PID CONTROLLER: the folder of process PID's own
# cgroup in the v1 hierarchy of CONTROLLER (memory, cpu), below which the
# fake kubelet of a server of that pid makes each pod's (pod<uid>); empty
# when there is none.  Worked out here from /proc, not asked of the server.
kube_cgroup_parent() {
	python3 - "$1" "$2" <<'PY'
import os, sys
pid, ctrl = sys.argv[1:]
own = {}
for line in open("/proc/%s/cgroup" % pid):
    _, cs, path = line.rstrip("\n").split(":", 2)
    for c in cs.split(","):
        own[c] = path
for line in open("/proc/self/mountinfo"):
    left, _, right = line.partition(" - ")
    a, b = left.split(), right.split()
    if len(b) > 2 and b[0] == "cgroup" and ctrl in b[2].split(",") and ctrl in own:
        rel = own[ctrl]
        if a[3] != "/" and (rel + "/").startswith(a[3] + "/"):
            rel = rel[len(a[3]):]
        print(os.path.normpath(a[4] + "/" + rel))
        break
PY
}

# kube_no_cgroups FILE: why the fake kubelet whose stderr is FILE makes no
# cgroups for its pods (its one line saying so); empty when it does.
kube_no_cgroups() {
	sed -n 's/^kube-api-server: kubelet: no cgroups for pods (\(.*\)): .*/\1/p' "$1"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
# own_netns CMD...: CMD in a network namespace of its own, with no
# interface up: a test that names an address off this machine (to see it
# refused before any connection) sends nothing out even if paddock did
# try.  As root a plain new namespace; otherwise a user namespace too.
own_netns() {
	if [ "$(id -u)" -eq 0 ]; then unshare -n -- "$@"; else unshare -rn -- "$@"; fi
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
