# bench/goal.sh: the one line each benchmark prints per goal (sourced).
# goal MEASURE ANCHOR PADDOCK MAX [UNIT]: the ratio PADDOCK / ANCHOR
# against MAX (a ratio of at most MAX holds).  bench/run collects these
# lines into its table.
goal() {
	python3 - "$@" <<'PY'
import sys
m, a, p, mx = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
u = sys.argv[5] if len(sys.argv) > 5 else "s"
r = p / a if a > 0 else float("inf")
print("%s: anchor %.4g %s, paddock %.4g %s, ratio %.2f, goal <= %g, holds %s"
      % (m, a, u, p, u, r, mx, "yes" if r <= mx else "no"))
PY
}
