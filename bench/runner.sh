#!/bin/sh
# bench/runner.sh [BUILD_DIR]: what one step costs in a sandbox session
# (paddock-runner, src/sandbox/runner.h) against a bwrap launch per step,
# as the root helper's keepers still run each step.  Builds
# bench/runner-steps.c against the build's engine, runs N fresh steps of
# /bin/true in one session under bwrap (the runner as PID 1) and N bwrap
# launches of /bin/true with the same namespaces and mounts; prints both
# means and their ratio; then a file of FILE_KB KiB (16) copied out N
# times through the session (FILE_GET) and from the host's side, as
# copy_out does with and without a session.  Not in bench/run's list: it
# has no goal of its own.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build/check}" && pwd)
N=${N:-500}
T=$(mktemp -d /tmp/paddock-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
libs=$(pkg-config --libs sqlite3 libgit2 libcurl libcrypto libmicrohttpd jansson libpcre2-8 libseccomp zlib yaml-0.1)
# shellcheck disable=SC2086 # the libraries are words
cc -std=c11 -O2 -I"$build" -I"$here/../src" -I"$here/../src/sandbox" "$here/runner-steps.c" \
	"$build/src/libpaddock.a" $libs -lhttp_parser -o "$T/runner-steps"
ns="--unshare-pid --die-with-parent --ro-bind / / --dev /dev --proc /proc"
# shellcheck disable=SC2086,SC2046 # the options and the two figures are words
# A hand-off's bundle: a file of FILE_KB KiB copied out through the session
# and from the host's side.
head -c "$((${FILE_KB:-16} * 1024))" /dev/urandom >"$T/bundle"
set -- $(RS_FILE="$T/bundle" "$T/runner-steps" "$N" bwrap $ns --as-pid-1 "$build/paddock-runner")
start=$1 step=$2 get=$3 copy=$4
t0=$(date +%s%N)
i=0
while [ $i -lt "$N" ]; do
	# shellcheck disable=SC2086
	bwrap $ns /bin/true
	i=$((i + 1))
done
launch=$(echo "$t0 $(date +%s%N) $N" | awk '{ printf "%.3f", ($2 - $1) / 1e6 / $3 }')
echo "session start (bwrap, runner as PID 1): $start ms"
echo "fresh step in the session: $step ms; bwrap launch per step: $launch ms; ratio $(echo "$step $launch" | awk '{ printf "%.2f", $1 / $2 }')"
echo "a ${FILE_KB:-16} KiB file out: through the session (FILE_GET) $get ms, from the host's side $copy ms"
