#!/bin/sh
# bench/gateway.sh [BUILD_DIR]: what the gateway costs a model call.  The
# scripted model API serves the same requests twice in one run: straight
# from a client on loopback (the baseline), then through the gateway's
# Anthropic endpoint (key injection, header filtering, usage parsing,
# libcurl to the upstream).  Prints requests per second over a keep-alive
# connection, and the time to the last byte of a long streamed answer (about
# 4 MB in server-sent events), each with its ratio gateway / direct; then
# the same through paddock-bridge against the gateway (as root).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/check}
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'kill $(cat "$T"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
# The gateway alone is a test program, built by `make check`: without it
# the wait for its ports below would last until bench/run's timeout.
[ -x "$build/tests/gateway-serve" ] || make -C "$build" -s tests/gateway-serve

# start NAME SCRIPT-TEXT: an upstream with that answer and a gateway to it;
# sets NAME_up and NAME_gw to their ports.
start() {
	printf '%s\n' "$2" >"$T/$1.json"
	python3 "$root/tests/model-api-server.py" --port 0 --port-file "$T/$1.up" \
		--script "$T/$1.json" >/dev/null 2>&1 &
	echo $! >"$T/$1-up.pid"
	while [ ! -s "$T/$1.up" ]; do sleep 0.1; done
	printf '[endpoint "anthropic"]\n\tupstream = http://127.0.0.1:%s\n[gateway]\n\tdns = false\n' \
		"$(cat "$T/$1.up")" >"$T/$1.config"
	ANTHROPIC_API_KEY=bench-key "$build/tests/gateway-serve" "$T/$1.config" none \
		"$T/$1.ports" "$T/$1.report" >/dev/null 2>&1 &
	echo $! >"$T/$1-gw.pid"
	while ! grep -q '^proxy ' "$T/$1.ports" 2>/dev/null; do sleep 0.1; done
	eval "$1_up=$(cat "$T/$1.up")"
	eval "$1_gw=$(awk '$1 == "anthropic" {print $2}' "$T/$1.ports")"
}
start short '{"turns": [], "after": {"text": "ok", "usage": {"input_tokens": 10, "output_tokens": 2}}}'
start long "$(python3 -c 'import json; print(json.dumps({"turns": [], "after": {"text": "word " * 800000}}))')"

# One client for every path: "calls PORT" prints the best keep-alive
# calls per second of three runs, "stream PORT" the best time to the last
# byte of a streamed answer and its size.
cat >"$T/client.py" <<'PY'
import http.client, json, socket, sys, time
what, port = sys.argv[1], int(sys.argv[2])
def conn():
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.connect()
    # Head and body go out in separate writes: with Nagle on, the body
    # waits for the server's ack of the head.  "nagle" leaves it on, as
    # some clients do, to show what a server's delayed ack costs them.
    if what != "nagle":
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c
def body(stream):
    return json.dumps({"model": "claude-bench", "max_tokens": 1024, "stream": stream,
                       "messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]})
H = {"content-type": "application/json", "x-api-key": "placeholder"}
def calls(n):
    c = conn()
    t0 = time.monotonic()
    for _ in range(n):
        c.request("POST", "/v1/messages", body(False), H)
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
    return n / (time.monotonic() - t0)
def stream():
    c = conn()
    t0 = time.monotonic()
    c.request("POST", "/v1/messages", body(True), H)
    r = c.getresponse(); n = len(r.read())
    return time.monotonic() - t0, n
if what == "calls":
    calls(30)
    print(max(calls(300) for _ in range(3)))
elif what == "nagle":
    print(max(calls(20) for _ in range(3)))
else:
    print("%f %d" % min(stream() for _ in range(3)))
PY
client() { python3 "$T/client.py" "$@"; }
python3 - "$(client calls "$short_up")" "$(client calls "$short_gw")" \
	"$(client stream "$long_up")" "$(client stream "$long_gw")" \
	"$(client nagle "$short_up")" "$(client nagle "$short_gw")" <<'PY'
import sys
d, g = float(sys.argv[1]), float(sys.argv[2])
sd, n = float(sys.argv[3].split()[0]), int(sys.argv[3].split()[1])
sg = float(sys.argv[4].split()[0])
nd, ng = float(sys.argv[5]), float(sys.argv[6])
print("keep-alive calls: direct %.0f/s, through the gateway %.0f/s" % (d, g))
print("ratio gateway/direct (calls per second): %.2f" % (g / d))
print("a client with Nagle on: direct %.0f/s, through the gateway %.0f/s (the gateway acks at once)" % (nd, ng))
print("ratio gateway/direct (calls per second, Nagle on): %.2f" % (ng / nd))
# The goals (issue 14): at most 1 ms added per call, the streamed answer
# at most 1.1x direct.
a, p = 1 / d, 1 / g
mx = (a + 0.001) / a
print("a model call through the gateway (ms per keep-alive call, goal: 1 ms added): anchor %.4f s, "
      "paddock %.4f s, ratio %.2f, goal <= %.2f, holds %s"
      % (a, p, p / a, mx, "yes" if p / a <= mx else "no"))
print("a %.0f MB streamed answer through the gateway (time to last byte): anchor %.3f s, paddock "
      "%.3f s, ratio %.2f, goal <= 1.1, holds %s"
      % (n / 1e6, sd, sg, sg / sd, "yes" if sg / sd <= 1.1 else "no"))
print("streamed answer (%.1f MB): direct %.3fs, through the gateway %.3fs" % (n / 1e6, sd, sg))
print("ratio gateway/direct (time to last byte): %.2f" % (sg / sd))
PY

# The bridge (gateway.network = bridge): paddock-bridge in a network
# namespace of its own, relaying to a gateway on unix sockets, against the
# TCP gateway above, in the same run.  Needs root (unshare -n).
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
	echo "bridge: skipped (needs root, unshare and ip)"
	exit 0
fi
mkdir -p "$T/sock/short" "$T/sock/long"
for name in short long; do
	ANTHROPIC_API_KEY=bench-key "$build/tests/gateway-serve" "$T/$name.config" none \
		"$T/$name-unix.ports" "$T/$name-unix.report" --unix "$T/sock/$name" >/dev/null 2>&1 &
	echo $! >"$T/$name-unix.pid"
done
while ! grep -q '^proxy ' "$T/short-unix.ports" 2>/dev/null ||
      ! grep -q '^proxy ' "$T/long-unix.ports" 2>/dev/null; do sleep 0.1; done
# The unix-socket gateways listen at the configured ports' names (8081).
tcp_calls=$(client calls "$short_gw")
bridge_calls=$(unshare -n sh -c "ip link set lo up && '$build/paddock-bridge' '$T/sock/short' 8081,3128 -- python3 '$T/client.py' calls 8081")
tcp_stream=$(client stream "$long_gw" | cut -d' ' -f1)
bridge_stream=$(unshare -n sh -c "ip link set lo up && '$build/paddock-bridge' '$T/sock/long' 8081,3128 -- python3 '$T/client.py' stream 8081" | cut -d' ' -f1)
python3 - "$tcp_calls" "$bridge_calls" "$tcp_stream" "$bridge_stream" <<'PY'
import sys
tc, bc, ts, bs = (float(a) for a in sys.argv[1:5])
print("keep-alive calls: gateway %.0f/s, through paddock-bridge %.0f/s" % (tc, bc))
print("ratio bridge/gateway (calls per second): %.2f" % (bc / tc))
print("streamed answer: gateway %.3fs, through paddock-bridge %.3fs" % (ts, bs))
print("ratio bridge/gateway (time to last byte): %.2f" % (bs / ts))
PY
