#!/bin/sh
# bench/clients.sh [BUILD_DIR]: what other clients cost a normal one, each
# against the same measure taken alone in the same run (the latency and
# CPU thresholds tests/api-clients.test and tests/api.test used to hold).
# One task runs (the process backend, an agent that sleeps) so that its
# followers stay connected.  Goal lines (bench/goal.sh):
# - the median time of GET /tasks?limit=1 with 300 idle connections (past
#   max-connections 64) and 20 SSE followers, against it alone;
# - the same while one client dribbles its request a byte at a time;
# - the CPU serve spends in 3 s with the 20 followers, against the CPU
#   it spends in 3 s without them (a floor of 10 ms: the clock's tick).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/goal.sh"
trap 'kill $(cat "$T/serve.pid" 2>/dev/null) 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
export PADDOCK_HOME="$T/data"
mkdir -p "$T/src"
echo x >"$T/src/x"
g -C "$T/src" init -q -b main
g -C "$T/src" add -A
g -C "$T/src" commit -qm init
git clone -q --bare "$T/src" "$T/r.git"
cat >"$PADDOCK_CONFIG" <<CONF
[sandbox]
	backend = process
	unsafe-no-isolation = true
[paddock]
	workers = 1
[api]
	max-connections = 64
	header-timeout = 2s
[repo "r"]
	url = $T/r.git
[agent "sleeper"]
	command = /bin/sleep 600
CONF
id=$("$P" add --repo r --agent sleeper "sleep while the clients come")
"$P" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>&1 &
echo $! >"$T/serve.pid"
while ! grep -q 'port [0-9]' "$T/serve.out" 2>/dev/null; do sleep 0.1; done
PORT=$(grep -o 'port [0-9]*' "$T/serve.out" | head -n 1 | awk '{print $2}')
while [ "$("$P" show --json "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" != running ]; do
	sleep 0.2
done

python3 - "$PORT" "$id" "$(cat "$T/serve.pid")" "$T/r.json" <<'PY'
import http.client, json, socket, sys, threading, time
port, task, pid, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / 100.0
def get():
    t = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/tasks?limit=1")
    st = c.getresponse().status
    c.close()
    assert st == 200, st
    return time.monotonic() - t
def median(n):
    l = sorted(get() for _ in range(n))
    return l[len(l) // 2]
r = {}
get()
r["alone"] = median(21)
c0 = cpu(); time.sleep(3); r["cpu_base"] = cpu() - c0
idle = [socket.create_connection(("127.0.0.1", port)) for i in range(300)]
followers = []
for i in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("GET /tasks/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % task).encode())
    followers.append(s)
time.sleep(0.5)
r["crowd"] = median(21)
time.sleep(3)  # the header deadline closes the idle ones
c0 = cpu(); time.sleep(3); r["cpu_followers"] = cpu() - c0
for s in idle + followers:
    s.close()
# One client sends its request a byte every 20 ms (about 1 s in all,
# within header-timeout).
def dribble():
    s = socket.create_connection(("127.0.0.1", port))
    head = b"GET /tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    for i in range(len(head)):
        s.send(head[i:i + 1])
        time.sleep(0.02)
    s.recv(65536)
    s.close()
th = threading.Thread(target=dribble)
th.start()
time.sleep(0.3)
r["dribbled"] = median(11)
th.join()
json.dump(r, open(out, "w"))
PY
"$P" cancel "$id" >/dev/null 2>&1 || true
jf() { python3 -c "import json; r = json.load(open('$T/r.json')); print($1)"; }
goal "GET /tasks?limit=1 among 300 idle connections and 20 followers (vs alone, median)" \
	"$(jf 'r["alone"]')" "$(jf 'r["crowd"]')" 10
goal "GET /tasks?limit=1 while a client dribbles its request (vs alone, median)" \
	"$(jf 'r["alone"]')" "$(jf 'r["dribbled"]')" 10
goal "serve's CPU in 3 s with 20 idle followers (vs without)" \
	"$(jf 'max(r["cpu_base"], 0.01)')" "$(jf 'max(r["cpu_followers"], 0.01)')" 4
