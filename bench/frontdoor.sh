#!/bin/sh
# bench/frontdoor.sh [BUILD_DIR]: what the kubernetes backend's front door
# costs paddock's host (bench/frontdoor.c), against the contract server
# tests/kube-api-server.py over TLS: N (200) pods whose runners dial at
# once, each handed to its pod's door; one hand-off with its TokenReview
# and one from the cached review; the resident memory of the front door
# and of each pod's door with its session.  No root needed.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${N:-200}
src=${SRC_DIR:-$here/../src}
libs=$(pkg-config --libs sqlite3 libgit2 libcurl libcrypto libmicrohttpd jansson libpcre2-8 libseccomp zlib yaml-0.1)
cc -std=gnu11 -O2 -pthread -I"$build" -I"$src" -I"$src/sandbox" "$here/frontdoor.c" "$build/src/libpaddock.a" $libs \
	-lhttp_parser -o "$T/frontdoor" || exit 1
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(cd "$T" && printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
	openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=ca 2>/dev/null &&
	openssl req $ec -keyout srv.key -out srv.csr -subj /CN=api 2>/dev/null &&
	openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 \
		-extfile srv.ext 2>/dev/null)
echo tok-bench-0123456789 >"$T/token"
python3 "$here/../tests/kube-api-server.py" --port-file "$T/port" --log /dev/null --cert "$T/srv.crt" \
	--key "$T/srv.key" --token-file "$T/token" >/dev/null 2>&1 &
srv=$!
trap 'kill $srv; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
cat >"$T/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: b
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:$(cat "$T/port")", certificate-authority: "$T/ca.crt"}
contexts:
- name: b
  context: {cluster: c, user: u, namespace: bench}
users:
- name: u
  user: {token: tok-bench-0123456789}
KC
mkdir -m 700 "$T/data"
set -- $("$T/frontdoor" "$T/kubeconfig" "$T/data" "$N")
echo "$N runners dialing at once: all handed on in $1 ms"
echo "one runner alone: $2 ms with its TokenReview, $3 ms from the cached review"
echo "host memory: the front door $5 KiB (its threads and API connections), each pod's door with its session $4 KiB"
