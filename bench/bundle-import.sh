#!/bin/sh
# bench/bundle-import.sh [BUILD_DIR]: what checking and importing a
# sandbox's bundle costs (bundle_import: the pack indexed and checked in
# a child, git's strict checks of its new objects, the move into the
# mirror), on the git-shaped repo of task-start.sh: a task's bundle (one
# commit, one file) and one of DEPTH commits (many objects), each the
# mean of N imports into a fresh copy of the mirror.  For scale, in the
# same run: `git fetch` of the same bundle into a copy (git's own
# index-pack, with its fsck under transfer.fsckObjects, and connectivity
# check).  SRC_DIR: the headers of the build's sources (default: this
# tree's src/).  No root needed.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${N:-5}
DEPTH=${DEPTH:-2000}
src=${SRC_DIR:-$here/../src}
bench_repo_shaped large "${LARGE_FILES:-4800}" "${LARGE_COMMITS:-20000}" "${LARGE_TAGS:-5300}"
main=$(bench_branch large)
libs=$(pkg-config --libs sqlite3 libgit2 libcurl libcrypto libmicrohttpd jansson libpcre2-8 libseccomp zlib)
cc -std=gnu11 -O2 -I"$build" -I"$src" "$here/bundle-import.c" "$build/src/libpaddock.a" $libs \
	-lhttp_parser -o "$T/bundle-import" || exit 1

git clone -q --bare --no-local "$T/large.git" "$T/mirror.git"
work="$T/work"
git clone -q "$T/large.git" "$work"
ref=refs/heads/paddock/bench
git -C "$work" checkout -q -b paddock/bench
echo "a change" >>"$(git -C "$work" ls-files | head -n 1 | sed "s|^|$work/|")"
git -C "$work" -c user.name=b -c user.email=b@example.invalid commit -qam "one file"
git -C "$work" bundle create -q "$T/task.bundle" "$ref" "^$main" 2>/dev/null
base_many=$(git -C "$T/large.git" rev-parse "$main~$DEPTH")
git --git-dir="$T/large.git" bundle create -q "$T/many.bundle" "$main" "^$base_many" 2>/dev/null
# The many-commit bundle's mirror: the repo as it was at the base.
git clone -q --bare --no-local "$T/large.git" "$T/mirror-old.git"
git -C "$T/mirror-old.git" update-ref "refs/heads/$main" "$base_many"
git -C "$T/mirror-old.git" for-each-ref --format='delete %(refname)' refs/tags |
	git -C "$T/mirror-old.git" update-ref --stdin
git -C "$T/mirror-old.git" gc -q --prune=now 2>/dev/null
many_objs=$(git --git-dir="$T/large.git" rev-list --objects "$main" "^$base_many" | wc -l)

fetch() { # MIRROR BUNDLE REF -> mean ms of N fetches into copies
	total=0
	for _ in $(seq "$N"); do
		rm -rf "$1.f" && cp -a "$1" "$1.f"
		t0=$(date +%s%N)
		git -C "$1.f" -c transfer.fsckObjects=true fetch -q "$2" "$3:refs/paddock/tasks/bench" || return 1
		total=$((total + $(date +%s%N) - t0))
	done
	awk -v t="$total" -v n="$N" 'BEGIN { printf "%.1f", t / n / 1e6 }'
}

base_task=$(git -C "$T/large.git" rev-parse "$main")
set -- $("$T/bundle-import" "$N" "$T/mirror.git" "$T/task.bundle" "$base_task" "$ref")
echo "a task's bundle (1 commit): bundle_import mean $1 ms (fastest $2 ms);" \
	"git fetch $(fetch "$T/mirror.git" "$T/task.bundle" "$ref") ms"
set -- $("$T/bundle-import" "$N" "$T/mirror-old.git" "$T/many.bundle" "$base_many" "refs/heads/$main")
echo "a bundle of $DEPTH commits, $many_objs objects: bundle_import mean $1 ms (fastest $2 ms);" \
	"git fetch $(fetch "$T/mirror-old.git" "$T/many.bundle" "refs/heads/$main") ms"
