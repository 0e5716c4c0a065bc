#!/usr/bin/env bash
# checks-table.sh prints the per-check table of docs/benchmarks.md ("Every
# check at 5,000 nodes and 100,000 pods, one table"): it runs every
# benchmark of internal/checks (each times checks on an in-memory cluster of
# 5,000 nodes and 100,000 pods holding their gaps) and keeps, for a check
# timed by two benchmarks, its slower one. Time is the process's CPU per
# run (cpu-ns/op: the check and its garbage collection), which a loaded
# machine inflates less than the wall time printed beside it. Sorted by
# check ID. It fails if a check takes over the 50 ms budget (issue 26).
#
#   bench/checks-table.sh [-benchtime 3x]    # or: bench/checks-table.sh < saved-output
set -euo pipefail
cd "$(dirname "$0")/.."
budget_ms=50
if [ -t 0 ] || [ $# -gt 0 ]; then
  out=$(go test -run NONE -bench . -benchmem -timeout 60m "${@:--benchtime=3x}" ./internal/checks/)
else
  out=$(cat)
fi
printf '%s\n' "$out" | awk -v budget="$budget_ms" '
  /^Benchmark[A-Za-z]+\/[a-z0-9-]+(-[0-9]+)?[ \t]/ {
    split($1, parts, "/"); bench = parts[1]; sub(/^Benchmark/, "", bench)
    id = parts[2]; sub(/-[0-9]+$/, "", id)
    ns = 0; cpu = -1; bytes = 0; allocs = 0
    for (i = 2; i < NF; i++) {
      if ($(i+1) == "ns/op") ns = $i
      if ($(i+1) == "cpu-ns/op") cpu = $i
      if ($(i+1) == "B/op") bytes = $i
      if ($(i+1) == "allocs/op") allocs = $i
    }
    t = cpu >= 0 ? cpu : ns
    if (!(id in best) || t > best[id]) { best[id] = t; wall[id] = ns; benchOf[id] = bench; b[id] = bytes; a[id] = allocs }
  }
  END {
    n = 0
    for (id in best) ids[++n] = id
    # No benchmark line is a failed or empty run (stdin not a terminal and
    # nothing piped in, as under nohup: pass -benchtime 3x there), never a table with none over.
    if (n == 0) { print "checks-table.sh: no benchmark results in the input" > "/dev/stderr"; exit 2 }
    # insertion sort: awk has no portable sort
    for (i = 2; i <= n; i++) { v = ids[i]; j = i - 1; while (j > 0 && ids[j] > v) { ids[j+1] = ids[j]; j-- } ids[j+1] = v }
    print "| check | benchmark | CPU per run | wall per run | allocated | allocations |"
    print "|---|---|---|---|---|---|"
    over = 0
    for (i = 1; i <= n; i++) {
      id = ids[i]; ms = best[id] / 1e6
      kb = b[id] / 1000
      size = kb >= 1000 ? sprintf("%.1f MB", kb / 1000) : sprintf("%.0f KB", kb)
      printf "| %s | %s | %.2f ms | %.2f ms | %s | %d |\n", id, benchOf[id], ms, wall[id] / 1e6, size, a[id]
      if (ms > budget) { over++; slow = slow " " id }
    }
    printf "\n%d checks; slowest under the %d ms budget unless listed:%s\n", n, budget, (over ? slow : " none over")
    if (over) exit 1
  }'
