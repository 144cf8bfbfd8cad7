#!/bin/sh
# bench/kubelet.sh [BUILD] [N]: the fake kubelet of tests/kube-api-server.py
# under N pods (50) at once, each paddock's task pod whose runner is a
# shell that sleeps: the time from the first create to all Running, the
# contract server's memory (RSS) per running pod, a GET's latency with the
# N pods running against idle (median of 20 each, curl, one connection
# each), and the time from a DELETE (grace 0) of all to no pod process.
# Not a paddock figure: it says what the test server costs a test or a
# bench that runs pods on it.
. "$(dirname "$0")/lib.sh"
N=${2:-50}
top=$(cd "$(dirname "$0")/.." && pwd)
KT=$build/tests/kube-tool
[ -x "$KT" ] && [ -x "$build/tests/test-kube-spec" ] ||
	make -C "$build" -s tests/kube-tool tests/test-kube-spec >&2
mkdir -p "$T/o" "$T/kubelet"
KUBE_SPEC_OUT=$T/o "$build/tests/test-kube-spec" >/dev/null
(cd "$T" && ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' &&
	printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
	openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=ca &&
	openssl req $ec -keyout srv.key -out srv.csr -subj /CN=api &&
	openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt \
		-days 2 -extfile srv.ext) >/dev/null 2>&1
echo tok-0123456789 >"$T/tok"
printf '#!/bin/sh\nexec sleep 600\n' >"$T/runner"
chmod 755 "$T/runner"
python3 "$top/tests/kube-api-server.py" --port-file "$T/port" --log /dev/null --cert "$T/srv.crt" \
	--key "$T/srv.key" --token-file "$T/tok" --kubelet --kubelet-state "$T/kubelet" \
	--bridge "$build/paddock-bridge" --start-delay 0 >"$T/server.out" 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null; rm -rf "$T"' EXIT
while [ ! -s "$T/port" ]; do sleep 0.05; done
PORT=$(cat "$T/port")
printf 'apiVersion: v1\nkind: Config\ncurrent-context: m\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:%s\n    certificate-authority: %s/ca.crt\ncontexts:\n- name: m\n  context:\n    cluster: c\n    user: u\n    namespace: paddock-sandboxes\nusers:\n- name: u\n  user:\n    token: tok-0123456789\n' "$PORT" "$T" >"$T/kc"
now() { date +%s.%N; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$SPID/status"; }
latency() { # the median of 20 GETs of a pod list, in ms
	for _ in $(seq 20); do
		curl -s -o /dev/null -w '%{time_total}\n' --cacert "$T/ca.crt" \
			-H "Authorization: Bearer tok-0123456789" \
			"https://127.0.0.1:$PORT/api/v1/namespaces/paddock-sandboxes/pods?labelSelector=none%3Dnone"
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] * 1000 }'
}
idle=$(latency)
rss0=$(rss)
python3 - "$T/o/pod-task.json" "$T" "$N" <<'PY'
import json, sys
src, t, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = json.load(open(src))
p["spec"]["initContainers"][0]["command"][2] = t + "/runner"
for i in range(n):
    p["metadata"]["name"] = "bench-%03d" % i
    json.dump(p, open("%s/pod-%03d.json" % (t, i), "w"))
PY
t0=$(now)
i=0
while [ $i -lt "$N" ]; do
	"$KT" "$T/kc" create "$T/pod-$(printf %03d $i).json" >/dev/null
	i=$((i + 1))
done
running() {
	curl -s --cacert "$T/ca.crt" -H "Authorization: Bearer tok-0123456789" \
		"https://127.0.0.1:$PORT/api/v1/namespaces/paddock-sandboxes/pods" |
		python3 -c 'import json, sys; print(sum(p["status"].get("phase") == "Running" for p in json.load(sys.stdin)["items"]))'
}
while [ "$(running)" -lt "$N" ]; do sleep 0.1; done
t1=$(now)
busy=$(latency)
rss1=$(rss)
i=0
while [ $i -lt "$N" ]; do
	"$KT" "$T/kc" delete "bench-$(printf %03d $i)" - 0 >/dev/null
	i=$((i + 1))
done
while pgrep -f "$T/kubelet/" >/dev/null; do sleep 0.05; done
t2=$(now)
echo "kubelet pods: $N"
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
echo "create to all Running: $(calc "$t1 - $t0") s ($(calc "($t1 - $t0) * 1000 / $N") ms a pod)"
echo "server RSS: idle $rss0 KiB, with $N pods $rss1 KiB ($(( (rss1 - rss0) / N )) KiB a pod)"
echo "GET pods (median of 20): idle $idle ms, with $N pods $busy ms"
echo "delete (grace 0) of all to no pod process: $(calc "$t2 - $t1") s"
