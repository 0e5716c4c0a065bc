#!/usr/bin/env bash
# yaml-list.sh measures an offline audit of a kubectl YAML dump: the
# generated cluster of bench/loadgen written by bench/cmd/synth as one
# List, as "kubectl get nodes,pods,... -A -o yaml > dump.yaml" prints it,
# then "kubegap audit --from dump.yaml -q -o json" timed K times. It prints
# a table: YAML size, median wall time, median CPU time (user + system:
# steadier than wall time on a shared machine) and median peak RSS
# (ru_maxrss), all from /usr/bin/time, and each run.
#
#   bench/yaml-list.sh --pods 100000 [--nodes 5000] [--runs 3] [--seed 1]
#                      [--kubegap BIN] [--dump FILE]
#
# --kubegap measures another build (an older commit, say) on the same dump.
# --dump keeps the generated List at FILE, and reuses it if it exists
# (give the --pods and --nodes it was made with: the table prints them).
# The synthetic objects lack managedFields, which real dumps carry (a
# third to half of their size), so the file is smaller than a real dump of
# as many pods; the loader drops managedFields either way.
set -euo pipefail

nodes=5000 pods=100000 runs=3 seed=1 bin="" dump=""
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:?}; shift 2 ;;
    --pods) pods=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --kubegap) bin=${2:?}; shift 2 ;;
    --dump) dump=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "yaml-list.sh: unknown argument $1" >&2; usage ;;
  esac
done
for v in "$nodes" "$pods" "$runs" "$seed"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "yaml-list.sh: $v is not a number" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "yaml-list.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$bin" ]; then
  go build -o "$work/kubegap" ./cmd/kubegap
  bin="$work/kubegap"
fi
[ -n "$dump" ] || dump="$work/dump.yaml"
if [ ! -s "$dump" ]; then
  go build -o "$work/synth" ./bench/cmd/synth
  echo "generating $pods pods on $nodes nodes into $dump" >&2
  "$work/synth" --nodes "$nodes" --pods "$pods" --seed "$seed" --yaml-list "$dump"
fi
size=$(stat -c %s "$dump")

walls=() cpus=() rsss=()
for i in $(seq "$runs"); do
  code=0
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" audit --from "$dump" -q -o json >/dev/null 2>"$work/err" || code=$?
  if [ "$code" -gt 1 ]; then
    echo "yaml-list.sh: kubegap exited $code: $(tail -c 600 "$work/err")" >&2
    exit 1
  fi
  # GNU time puts "Command exited with non-zero status 1" first.
  read -r wall user sys rss < <(tail -n 1 "$work/time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
  walls+=("$wall") cpus+=("$cpu") rsss+=("$rss")
  printf 'run %d: %s s wall, %s s CPU, %d MB (load average %s)\n' "$i" "$wall" "$cpu" $((rss / 1024)) \
    "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '| pods | nodes | YAML | runs | median wall | median CPU | median peak RSS |\n|---|---|---|---|---|---|---|\n'
printf '| %d | %d | %d MB | %d | %s s | %s s | %d MB |\n' "$pods" "$nodes" $((size / 1000000)) "$runs" \
  "$(median "${walls[@]}")" "$(median "${cpus[@]}")" $(( $(median "${rsss[@]}") / 1024 ))
