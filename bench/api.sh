#!/bin/sh
# bench/api.sh [BUILD_DIR]: what a question costs over the HTTP API against
# the same question asked of the CLI in the same run.  With 200 tasks in
# the store: `GET /tasks/ID` over one keep-alive connection against
# `paddock show --json ID` (a process per question), and `GET /tasks`
# against `paddock list --json`.  Prints each per second and the ratios
# (API / CLI); the API answers from a running `paddock serve`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/check}
P="$build/paddock"
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'kill $(cat "$T/serve.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
export PADDOCK_HOME="$T/data" PADDOCK_CONFIG="$T/config"
printf '[repo "r"]\n\turl = %s/none.git\n[agent "a"]\n\tcommand = /bin/true\n' "$T" >"$PADDOCK_CONFIG"
i=0
while [ $i -lt 200 ]; do
	id=$("$P" add --repo r "bench task $i")
	"$P" cancel "$id" >/dev/null
	i=$((i + 1))
done
"$P" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>&1 &
echo $! >"$T/serve.pid"
while ! grep -q 'port [0-9]' "$T/serve.out" 2>/dev/null; do sleep 0.1; done
PORT=$(grep -o 'port [0-9]*' "$T/serve.out" | awk '{print $2}')

python3 - "$P" "$PORT" "$id" <<'PY'
import http.client, socket, subprocess, sys, time
paddock, port, tid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def api(path, n):
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.connect()
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.monotonic()
    for _ in range(n):
        c.request("GET", path)
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
    return n / (time.monotonic() - t0)
def cli(args, n):
    t0 = time.monotonic()
    for _ in range(n):
        subprocess.run([paddock] + args, stdout=subprocess.DEVNULL, check=True)
    return n / (time.monotonic() - t0)
a1, c1 = api("/tasks/" + tid, 300), cli(["show", "--json", tid], 30)
print("one task: API %.0f/s, paddock show --json %.0f/s; ratio API/CLI %.1f" % (a1, c1, a1 / c1))
a2, c2 = api("/tasks?limit=200", 50), cli(["list", "--json", "--limit", "200"], 20)
print("200 tasks: API %.0f/s, paddock list --json --limit 200 %.0f/s; ratio API/CLI %.1f" % (a2, c2, a2 / c2))
PY
