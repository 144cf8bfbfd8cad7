#!/bin/sh
# bench/history.sh [BUILD_DIR]: a history of 100,000 tasks against one of
# 100, measured in the same run (issue 14: each within 2x): paddock list,
# GET-like paging (list --status review --limit 50), the dashboard's
# first frame, a dozen key presses, and the CPU an idle dashboard and an
# idle serve use over 5 s (in clock ticks: the anchor is the 100-task
# store's), and ten pages of GET /tasks through the API's cursor.  The
# stores are written straight with SQLite, as years of
# use would leave them.  Needs tmux for the idle dashboard.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/goal.sh"
export PADDOCK_UI_SIZE=80x24 PADDOCK_THEMES_DIR="$(cd "$(dirname "$0")/.." && pwd)/themes"
ROUNDS=${ROUNDS:-5}

store() { # store DIR N
	mkdir -p "$1"
	printf '[repo "r"]\n\turl = %s/r.git\n[agent "a"]\n\tcommand = /bin/true\n' "$T" >"$1/config"
	PADDOCK_HOME=$1/data PADDOCK_CONFIG=$1/config "$P" add --repo r "the first" >/dev/null
	PADDOCK_HOME=$1/data PADDOCK_CONFIG=$1/config "$P" cancel "$(PADDOCK_HOME=$1/data \
		PADDOCK_CONFIG=$1/config "$P" list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')" >/dev/null
	python3 - "$1/data/paddock.db" "$2" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1]); n = int(sys.argv[2]); now = time.time()
db.executemany("INSERT INTO tasks (id, text, repo, agent, branch, status, created, updated, "
               "attempts) VALUES (?, ?, 'r', 'a', ?, ?, ?, ?, 1)",
               (("h%09d" % i, "task %d fixes a bug in the parser" % i, "paddock/h%d" % i,
                 "review" if i % 5 == 0 else "failed" if i % 7 == 0 else "done",
                 now - (n - i) * 10, now - (n - i) * 10 + 5) for i in range(1, n)))
for k, st in enumerate(("queued", "preparing", "running")):
    db.execute("INSERT INTO steps (task_seq, n, at, status) SELECT seq, ?, ?, ? FROM tasks "
               "WHERE id LIKE 'h%'", (k, k, st))
db.commit()
PY
}
best() { # best CMD...: the least wall seconds of ROUNDS runs
	python3 - "$ROUNDS" "$@" <<'PY'
import subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
t = []
for _ in range(n):
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t.append(time.monotonic() - t0)
print("%.5f" % min(t))
PY
}
store "$T/small" 100
store "$T/big" 100000
printf ':save-display %s/s.screen\n:quit\n' "$T" >"$T/open.script"
printf 'g\nj\nj\n<PageDown>\nk\nG\nk\nf\nf\nf\nf\n?\nq\n:quit\n' >"$T/keys.script"
for d in small big; do
	export PADDOCK_HOME=$T/$d/data PADDOCK_CONFIG=$T/$d/config
	eval "${d}_list=\$(best \"\$P\" list)"
	eval "${d}_page=\$(best \"\$P\" list --status review --limit 50 --json)"
	eval "${d}_open=\$(best env PADDOCK_UI_SCRIPT=\$T/open.script \"\$P\")"
	eval "${d}_keys=\$(best env PADDOCK_UI_SCRIPT=\$T/keys.script \"\$P\")"
done
goal "paddock list, 100,000 tasks / 100" "$small_list" "$big_list" 2
goal "list --status review --limit 50 --json, 100,000 / 100" "$small_page" "$big_page" 2
goal "dashboard first frame, 100,000 / 100" "$small_open" "$big_open" 2
goal "dashboard, a dozen keys, 100,000 / 100" "$small_keys" "$big_keys" 2

# Idle: clock ticks of CPU over 5 s, once started.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
idle() { # idle PID -> ticks used in 5 s
	sleep 2; a=$(ticks "$1"); sleep 5; b=$(ticks "$1"); echo $((b - a))
}
if command -v tmux >/dev/null; then
	for d in small big; do
		tmux -L bench-$$-$d new-session -d -x 80 -y 24 "env PADDOCK_HOME=$T/$d/data PADDOCK_CONFIG=$T/$d/config PADDOCK_THEMES_DIR=$PADDOCK_THEMES_DIR $P"
		sleep 1
		pid=$(tmux -L bench-$$-$d list-panes -F '#{pane_pid}')
		eval "${d}_idle=\$(idle \$pid)"
		tmux -L bench-$$-$d kill-server
	done
	# A tick is 10 ms: 0 ticks would make any ratio undefined.
	goal "idle dashboard, CPU ticks in 5 s, 100,000 / 100" "$((small_idle + 1))" "$((big_idle + 1))" 2 "ticks+1"
else
	echo "idle dashboard: skipped (no tmux)"
fi
# An idle serve with its API, then pages of GET /tasks over one
# keep-alive connection (from loopback, no token needed).
for d in small big; do
	PADDOCK_HOME=$T/$d/data PADDOCK_CONFIG=$T/$d/config "$P" serve --listen 127.0.0.1:0 \
		>"$T/$d.serve" 2>&1 &
	pid=$!
	eval "${d}_serve=\$(idle \$pid)"
	port=$(grep -o 'port [0-9]*' "$T/$d.serve" | awk '{print $2}')
	eval "${d}_api=\$(python3 - \"\$port\" \"\$ROUNDS\")" <<'PY'
import http.client, json, sys, time
port, rounds = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
best = 1e9
for _ in range(rounds):
    t0, path = time.monotonic(), "/tasks?limit=10&status=review"
    for _ in range(10):  # ten pages through the cursor, 10 rows each in both stores (the
        # small one has 20 at review: its cursor starts again after two)
        c.request("GET", path)
        r = c.getresponse(); b = json.loads(r.read())
        assert r.status == 200, r.status
        path = b["next"] or "/tasks?limit=10&status=review"
    best = min(best, time.monotonic() - t0)
print("%.5f" % best)
PY
	kill $pid; wait $pid 2>/dev/null || true
done
goal "idle serve, CPU ticks in 5 s, 100,000 / 100" "$((small_serve + 1))" "$((big_serve + 1))" 2 "ticks+1"
goal "GET /tasks, ten pages of 10 at review through the cursor, 100,000 / 100" "$small_api" "$big_api" 2
