#!/usr/bin/env bash
# testbed-bin.sh makes sure the binaries of the end-to-end test bed exist:
# kube-apiserver v1.37.2, built from the Go module proxy through the tools
# module in hack/testbed, and etcd from Debian's etcd-server package.
#
# Binaries are cached in $KUBEGAP_TESTBIN (default ~/.cache/kubegap/testbin):
# a second run builds nothing. Prints the directory that holds both binaries
# as its last line of stdout; everything else goes to stderr.
set -euo pipefail

K8S_VERSION=v1.37.2
here=$(cd "$(dirname "$0")" && pwd)
bin=${KUBEGAP_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubegap/testbin}/$K8S_VERSION
mkdir -p "$bin"

log() { echo "testbed-bin: $*" >&2; }

# etcd: Debian's etcd-server (3.4.x) serves kube-apiserver v1.37 on loopback.
if [ ! -x "$bin/etcd" ]; then
  if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
    log "installing Debian's etcd-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends etcd-server >&2
    # The package starts a system etcd on the default ports; the test bed
    # runs its own on free ports and needs none of it.
    (systemctl stop etcd || service etcd stop || pkill -x etcd) >/dev/null 2>&1 || true
  fi
  ln -sf "$(command -v etcd || echo /usr/bin/etcd)" "$bin/etcd"
fi

# kube-apiserver: cached by version; the stamp guards against a half-written binary.
if [ ! -x "$bin/kube-apiserver" ] || [ ! -f "$bin/kube-apiserver.ok" ]; then
  log "building kube-apiserver $K8S_VERSION from the Go module proxy into $bin"
  log "this takes about 11 minutes on 2 cores the first time; later runs reuse it"
  start=$(date +%s)
  (
    cd "$here/testbed"
    CGO_ENABLED=0 go build -trimpath -o "$bin/kube-apiserver.tmp" \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
        -X k8s.io/component-base/version.gitMajor=1 \
        -X k8s.io/component-base/version.gitMinor=37" \
      k8s.io/kubernetes/cmd/kube-apiserver
  ) >&2
  mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
  touch "$bin/kube-apiserver.ok"
  log "built kube-apiserver in $(( $(date +%s) - start ))s"
fi

echo "$bin"
