#!/usr/bin/env bash
# testbed-bin.sh makes sure the binaries of the end-to-end test bed exist:
# kube-apiserver and kubectl v1.37.2, built from the Go module proxy through
# the tools module in hack/testbed, and etcd from Debian's etcd-server package.
#
# Binaries are cached in $KUBEGAP_TESTBIN (default ~/.cache/kubegap/testbin):
# a second run builds nothing. Prints the directory that holds both binaries
# as its last line of stdout; everything else goes to stderr. Safe to run
# concurrently (test packages do): a lock lets one caller install and build
# while the others wait and then reuse the result.
set -euo pipefail

K8S_VERSION=v1.37.2
here=$(cd "$(dirname "$0")" && pwd)
bin=${KUBEGAP_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubegap/testbin}/$K8S_VERSION
mkdir -p "$bin"

log() { echo "testbed-bin: $*" >&2; }

if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin/.lock"
  if ! flock -n 9; then
    log "another run is installing or building; waiting for it"
    flock 9
  fi
fi

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "need root (or sudo) to run: $*"; return 1
  fi
}

# etcd: Debian's etcd-server (3.4.x) serves kube-apiserver v1.37 on loopback.
if [ ! -x "$bin/etcd" ]; then
  if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
    aptlog="$bin/apt.log"
    log "installing Debian's etcd-server (apt output in $aptlog)"
    if ! {
      as_root apt-get update -qq &&
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server
    } >"$aptlog" 2>&1; then
      log "apt-get failed; the end of $aptlog:"
      tail -n 20 "$aptlog" >&2
      exit 1
    fi
    # Under systemd the package starts a system etcd on the default ports.
    # The test bed runs its own on free ports; stop the service through
    # systemd, which stops only the service's own cgroup. Never use
    # "service etcd stop" or pkill: the SysV script stops every process
    # running /usr/bin/etcd, test-bed etcds included.
    if [ -d /run/systemd/system ]; then
      as_root systemctl stop etcd >>"$aptlog" 2>&1 || true
    fi
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
  log "built kube-apiserver in $(($(date +%s) - start))s"
fi

# kubectl: the recipe test dumps the test bed with the real client. Built
# from the same module; most of its packages are already in the build cache.
if [ ! -x "$bin/kubectl" ] || [ ! -f "$bin/kubectl.ok" ]; then
  log "building kubectl $K8S_VERSION from the Go module proxy into $bin"
  start=$(date +%s)
  (
    cd "$here/testbed"
    CGO_ENABLED=0 go build -trimpath -o "$bin/kubectl.tmp" \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
        -X k8s.io/component-base/version.gitMajor=1 \
        -X k8s.io/component-base/version.gitMinor=37" \
      k8s.io/kubernetes/cmd/kubectl
  ) >&2
  mv "$bin/kubectl.tmp" "$bin/kubectl"
  touch "$bin/kubectl.ok"
  log "built kubectl in $(($(date +%s) - start))s"
fi

echo "$bin"
