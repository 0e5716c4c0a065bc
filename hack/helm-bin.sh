#!/usr/bin/env bash
# helm-bin.sh makes sure the helm binary that renders the real-manifests
# test corpus (internal/checks/realmanifests) exists: helm v3.22.0, built
# from the Go module proxy through the tools module in hack/helm, the way
# testbed-bin.sh builds kube-apiserver.
#
# The binary is cached in $KUBEGAP_TESTBIN (default ~/.cache/kubegap/testbin):
# a second run builds nothing. Prints the binary's path as its last line of
# stdout; everything else goes to stderr. Safe to run concurrently: a lock
# lets one caller build while the others wait and then reuse the result.
set -euo pipefail

HELM_VERSION=v3.22.0
here=$(cd "$(dirname "$0")" && pwd)
bin=${KUBEGAP_TESTBIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kubegap/testbin}/helm-$HELM_VERSION
mkdir -p "$bin"

log() { echo "helm-bin: $*" >&2; }

if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin/.lock"
  if ! flock -n 9; then
    log "another run is building helm; waiting for it"
    flock 9
  fi
fi

# The stamp guards against a half-written binary.
if [ ! -x "$bin/helm" ] || [ ! -f "$bin/helm.ok" ]; then
  log "building helm $HELM_VERSION from the Go module proxy into $bin"
  start=$(date +%s)
  (
    cd "$here/helm"
    CGO_ENABLED=0 go build -trimpath -o "$bin/helm.tmp" \
      -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
      helm.sh/helm/v3/cmd/helm
  ) >&2
  mv "$bin/helm.tmp" "$bin/helm"
  touch "$bin/helm.ok"
  log "built helm in $(($(date +%s) - start))s"
fi

echo "$bin/helm"
