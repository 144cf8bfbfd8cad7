#!/bin/sh
# bench/tarblob.sh [BUILD_DIR]: what making a template's blob costs
# (tarblob.h): a tree of FILES files (20,000) and MB megabytes (100) of
# random bytes in 200 folders, `tar -c` of it piped into tarblob_store
# (read, checked, spooled, sorted, written again with its sha256, linked
# into the store), against `tar -c | sha256sum` of the same tree in the
# same run (the least any content address of that tar costs); and
# tarblob_from_dir of the tree.  Each the mean of N runs (3), the page
# cache warm (one run of each first).  No root needed.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${N:-3}
FILES=${FILES:-20000}
MB=${MB:-100}
src=${SRC_DIR:-$here/../src}
libs=$(pkg-config --libs sqlite3 libgit2 libcurl libcrypto libmicrohttpd jansson libpcre2-8 libseccomp zlib)
cc -std=gnu11 -O2 -I"$build" -I"$src" "$here/tarblob.c" "$build/src/libpaddock.a" $libs \
	-lhttp_parser -o "$T/tarblob" || exit 1
python3 - "$T/tree" "$FILES" "$MB" <<'PY'
import os, random, sys
root, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
size = mb * 1000000 // n
rnd = random.Random(35)
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d" % i), "wb") as f:
        f.write(rnd.randbytes(size))
    if i % 7 == 0:
        os.chmod(os.path.join(d, "f%06d" % i), 0o755)
PY
mean() { # COMMAND... -> mean ms of N runs (after one unmeasured)
	sh -c "$*" >/dev/null
	total=0
	for _ in $(seq "$N"); do
		t0=$(date +%s%N)
		sh -c "$*" >/dev/null
		total=$((total + $(date +%s%N) - t0))
	done
	awk -v t="$total" -v n="$N" 'BEGIN { printf "%.1f", t / n / 1e6 }'
}
base=$(mean "tar -C '$T/tree' -cf - . | sha256sum")
store=$(mean "tar -C '$T/tree' -cf - . | '$T/tarblob' store '$T/data'")
fromdir=$(mean "'$T/tarblob' fromdir '$T/tree'")
h1=$(tar -C "$T/tree" -cf - . | "$T/tarblob" store "$T/data" | cut -d' ' -f1)
h2=$("$T/tarblob" fromdir "$T/tree" | cut -d' ' -f1)
[ "$h1" = "$h2" ] || { echo "from_dir and store disagree: $h1 $h2"; exit 1; }
blob=$(stat -c %s "$T/data/blobs/sha256/$h1")
echo "a tree of $FILES files, $MB MB (blob $blob bytes):"
echo "  tar -c | sha256sum: $base ms; tar -c | tarblob_store: $store ms;" \
	"tarblob_from_dir: $fromdir ms"
awk -v b="$base" -v s="$store" -v f="$fromdir" \
	'BEGIN { printf "  ratio store/anchor %.2f, from_dir/anchor %.2f\n", s / b, f / b }'
