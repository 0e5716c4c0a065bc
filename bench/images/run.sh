#!/usr/bin/env bash
# run.sh measures image inspection against plain decompression: it builds
# kubegap, then bench/images builds (once, and keeps) a docker-save tarball
# with one gzipped layer of at least LAYER_MB MB of real ELF files copied
# from this machine, and times, interleaved for ROUNDS rounds: gunzip -c,
# Go's compress/gzip, and kubegap image inspect --tarball. The table's last
# line is "ratio: X" = kubegap's throughput / gunzip's.
#
#   bench/images/run.sh [--layer-mb 200] [--rounds 3] [--dir DIR]
#
# It takes about a minute to build the layer the first time and about
# 10 s per round at 200 MB; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/kubegap" ./cmd/kubegap
go build -o "$bin/bench-images" ./bench/images
"$bin/bench-images" -kubegap "$bin/kubegap" "$@"
