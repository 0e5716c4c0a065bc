#!/usr/bin/env bash
# exporter.sh measures kubegap exporter at scale: it starts the real test
# bed (kube-apiserver v1.37.2 + etcd on loopback), fills it with the
# generated cluster of bench/run.sh, runs `kubegap exporter` against it as
# the read-only user, and prints a table: the time of each scheduled audit
# (kubegap_audit_duration_seconds) and the exporter's RSS halfway between
# audits, beside the RSS of the same binary holding only the report
# (exporter --bench-hold-report); the last line is "ratio: X" = exporter
# RSS between audits / RSS of the report alone.
#
#   bench/exporter.sh [--nodes 500] [--pods 10000] [--runs 3] [--interval 30]
set -euo pipefail

nodes=500 pods=10000 runs=3 interval=30
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:?}; shift 2 ;;
    --pods) pods=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --interval) interval=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "exporter.sh: unknown argument $1" >&2; usage ;;
  esac
done
for v in "$nodes" "$pods" "$runs" "$interval"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "exporter.sh: $v is not a number" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/kubegap-bench-exporter-XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

echo "exporter.sh: building kubegap and the harness into $work" >&2
go build -o "$work/kubegap" ./cmd/kubegap
go test -c -o "$work/harness.test" ./bench/harness

KUBEGAP_TESTBIN_DIR=${KUBEGAP_TESTBIN_DIR:-$(bash hack/testbed-bin.sh | tail -n 1)}
export KUBEGAP_TESTBIN_DIR

KUBEGAP_BENCH_EXPORTER=1 KUBEGAP_BENCH_NODES=$nodes KUBEGAP_BENCH_PODS=$pods KUBEGAP_BENCH_RUNS=$runs \
  KUBEGAP_BENCH_INTERVAL=$interval KUBEGAP_BENCH_BIN=$work KUBEGAP_BENCH_OUT=$work/result.txt \
  "$work/harness.test" -test.run '^TestBenchExporter$' -test.timeout 0 -test.v >&2

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr); uptime:$(uptime | sed 's/.*up/ up/')"
cat "$work/result.txt"
