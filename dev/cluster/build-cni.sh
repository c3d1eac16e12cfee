#!/usr/bin/env bash
# Builds the CNI plugins the process-mode kubelet wires pod network namespaces with (bridge,
# host-local, loopback) from github.com/containernetworking/plugins on the Go module proxy, into a
# cache outside the checkout beside the control-plane binaries. Idempotent: a complete build is left
# alone. Prints the directory holding the plugins on its last line.
#
#   CNI_PLUGINS_VERSION  release of github.com/containernetworking/plugins (default 1.10.0)
#   NEOSET_CACHE         cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_CNI_PATH names a directory with the plugins.)
set -euo pipefail

CNI_PLUGINS_VERSION=${CNI_PLUGINS_VERSION:-1.10.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/cni-plugins-$CNI_PLUGINS_VERSION"
PLUGINS=(main/bridge ipam/host-local main/loopback)

LOG_TAG=build-cni
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

complete() { for p in "${PLUGINS[@]}"; do [ -x "$OUT/${p#*/}" ] || return 1; done; }
once_per_machine "Go is needed to build the CNI plugins (or set NEOSET_CNI_PATH to a directory holding bridge, host-local and loopback)"
log "no complete build in $OUT: building the CNI plugins ${PLUGINS[*]} v$CNI_PLUGINS_VERSION from the Go module proxy, once per machine. To skip it: set NEOSET_CNI_PATH to a directory holding them (e.g. /opt/cni/bin)"
scratch_module "cni-$CNI_PLUGINS_VERSION" 1.24 "github.com/containernetworking/plugins v$CNI_PLUGINS_VERSION"
{
  printf '//go:build tools\n\npackage cni\n\nimport (\n'
  for p in "${PLUGINS[@]}"; do printf '\t_ "github.com/containernetworking/plugins/plugins/%s"\n' "$p"; done
  printf ')\n'
} > tools.go
step "resolving the CNI plugins' modules (go mod tidy)" nice -n 10 go mod tidy
n=0
for p in "${PLUGINS[@]}"; do
  n=$((n + 1))
  bin=${p#*/}
  step "building $bin ($n/${#PLUGINS[@]})" nice -n 10 go build -trimpath -ldflags "-s -w" -o "$OUT/$bin.tmp" "github.com/containernetworking/plugins/plugins/$p"
  mv "$OUT/$bin.tmp" "$OUT/$bin"
done

log "done in $(since "$START"): $OUT"
echo "$OUT"
