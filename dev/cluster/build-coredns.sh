#!/usr/bin/env bash
# Builds CoreDNS (github.com/coredns/coredns on the Go module proxy), the cluster DNS the services
# stack runs as a pod (dev/cluster/services.ts), into a cache outside the checkout beside the other
# binaries. Idempotent: a build already there is left alone. Prints the directory holding `coredns`
# on its last line.
#
# The main package is CoreDNS's own coremain with the plugins a cluster DNS's Corefile uses (the set
# of kubeadm's default Corefile, and log, rewrite, template, hosts), registered as CoreDNS's
# documented way to compile a custom plugin set does: the full plugin list would pull in the AWS,
# Azure and Google cloud SDKs for route53/azure/clouddns and take several times as long to build.
#
#   COREDNS_VERSION  release of github.com/coredns/coredns (default 1.15.0)
#   NEOSET_CACHE     cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_COREDNS names a coredns binary.)
set -euo pipefail

COREDNS_VERSION=${COREDNS_VERSION:-1.15.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/coredns-$COREDNS_VERSION"
PLUGINS=(errors log health ready kubernetes metrics cache loop reload loadbalance forward rewrite template hosts)

LOG_TAG=build-coredns
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

complete() { [ -x "$OUT/coredns" ]; }
once_per_machine "Go is needed to build CoreDNS (or set NEOSET_COREDNS to a coredns binary)"
log "no build in $OUT: building CoreDNS v$COREDNS_VERSION (plugins ${PLUGINS[*]}) from the Go module proxy, once per machine. To skip it: set NEOSET_COREDNS to a coredns binary"
scratch_module "coredns-$COREDNS_VERSION" 1.26 "github.com/coredns/coredns v$COREDNS_VERSION"
{
  printf '// CoreDNS with the plugins a cluster DNS uses (build-coredns.sh).\npackage main\n\nimport (\n'
  printf '\t"github.com/coredns/coredns/coremain"\n'
  for p in "${PLUGINS[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
  printf ')\n\nfunc main() { coremain.Run() }\n'
} > main.go
step "resolving CoreDNS's modules (go mod tidy)" nice -n 10 go mod tidy
step "building coredns" nice -n 10 go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=v$COREDNS_VERSION" -o "$OUT/coredns.tmp" .
mv "$OUT/coredns.tmp" "$OUT/coredns"

log "done in $(since "$START"): $OUT"
echo "$OUT"
