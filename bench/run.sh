#!/usr/bin/env bash
# run.sh measures how close a live kubegap audit comes to the floor: the
# time it takes just to LIST what the audit needs. It builds kubegap, the
# floor lister and the benchmark harness, starts the real test bed
# (kube-apiserver v1.37.2 + etcd on loopback), fills it with a generated
# cluster once, then times, several times each: the floor, a live audit as
# the read-only user, kubectl get pods -A -o json, and an offline audit of a
# snapshot taken once (with the test bed frozen: it needs no cluster). It
# prints a table (median wall time, peak RSS) whose last line is
# "ratio: X" = median live audit / median floor.
#
#   bench/run.sh --nodes 500 --pods 10000 [--runs 3] [--seed 1] [--no-kubectl]
#
# --no-kubectl leaves kubectl out: it needs about 150 MB per 1,000 pods.
#
# The test bed's processes die with the harness, whatever ends it. With
# KUBEGAP_BENCH_HOLD=FILE the harness writes the read-only user's kubeconfig
# path to FILE after loading and waits until FILE is removed (for profiling
# by hand against the loaded cluster). KUBEGAP_BENCH_SNAPSHOT=FILE keeps the
# snapshot the offline audit reads.
set -euo pipefail

nodes=500 pods=10000 runs=3 seed=1 kubectl=1
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:?}; shift 2 ;;
    --pods) pods=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --no-kubectl) kubectl=0; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
for v in "$nodes" "$pods" "$runs" "$seed"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "run.sh: $v is not a number" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/kubegap-bench-XXXXXX")
harness_pid=
cleanup() {
  if [ -n "$harness_pid" ] && kill -0 "$harness_pid" 2>/dev/null; then
    kill "$harness_pid" 2>/dev/null || true
    wait "$harness_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "run.sh: building kubegap, floor and the harness into $work" >&2
go build -o "$work/kubegap" ./cmd/kubegap
go build -o "$work/floor" ./bench/cmd/floor
go test -c -o "$work/harness.test" ./bench/harness

# The test-bed binaries: built or found once, cached afterwards.
KUBEGAP_TESTBIN_DIR=${KUBEGAP_TESTBIN_DIR:-$(bash hack/testbed-bin.sh | tail -n 1)}
export KUBEGAP_TESTBIN_DIR

KUBEGAP_BENCH=1 KUBEGAP_BENCH_NODES=$nodes KUBEGAP_BENCH_PODS=$pods KUBEGAP_BENCH_RUNS=$runs \
  KUBEGAP_BENCH_SEED=$seed KUBEGAP_BENCH_KUBECTL=$kubectl KUBEGAP_BENCH_BIN=$work KUBEGAP_BENCH_OUT=$work/result.txt \
  "$work/harness.test" -test.run '^TestBench$' -test.timeout 0 -test.v >&2 &
harness_pid=$!
wait "$harness_pid"
harness_pid=

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr); uptime:$(uptime | sed 's/.*up/ up/')"
cat "$work/result.txt"
