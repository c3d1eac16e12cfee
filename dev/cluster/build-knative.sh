#!/usr/bin/env bash
# Builds Knative Eventing's components (knative.dev/eventing on the Go module proxy) — the programs
# its release manifests name as ko://knative.dev/eventing/cmd/… images — into a cache outside the
# checkout beside the control-plane binaries. dev/cluster/knative.ts maps those references to these
# binaries through the process-mode kubelet's image table. Idempotent: a complete build is left
# alone. Prints the directory on its last line: the binaries, and beside them in config/ the release
# manifests the install applies (config/core, config/channels/in-memory-channel,
# config/brokers/mt-channel-broker, as the module holds them, ko:// references included).
#
# All components are built by one `go build -o DIR pkg...` from a scratch module that requires the
# release, as ko would build them: one invocation shares the compile of Knative's common packages.
#
#   KNATIVE_EVENTING_VERSION  release of knative.dev/eventing (default 0.50.0)
#   NEOSET_CACHE              cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_KNATIVE_EVENTING names a directory laid out
# as this one: the components and config/.)
set -euo pipefail

KNATIVE_EVENTING_VERSION=${KNATIVE_EVENTING_VERSION:-0.50.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/knative-eventing-$KNATIVE_EVENTING_VERSION"
# The components the core (controller, webhook, job sink, request-reply, the OIDC auth proxy, the
# PingSource and ApiServerSource adapters), the MT channel-based broker and the in-memory channel run
# (every ko:// reference of their manifests); a binary is
# named after its package's last element (the name dev/cluster/knative.ts looks for).
COMMANDS=(controller webhook jobsink requestreply auth_proxy mtping apiserver_receive_adapter mtchannel_broker broker/ingress broker/filter in_memory/channel_controller in_memory/channel_dispatcher)

LOG_TAG=build-knative
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

binaries() { for c in "${COMMANDS[@]}"; do [ -x "$OUT/${c##*/}" ] || return 1; done; }
MANIFESTS=(core channels/in-memory-channel brokers/mt-channel-broker)
complete() {
  binaries || return 1
  for m in "${MANIFESTS[@]}"; do [ -d "$OUT/config/$m" ] || return 1; done
}
once_per_machine "Go is needed to build Knative Eventing (or set NEOSET_KNATIVE_EVENTING to a directory holding its components, ${COMMANDS[*]##*/}, and their config/)"
log "no complete build in $OUT: building Knative Eventing v$KNATIVE_EVENTING_VERSION (${#COMMANDS[@]} components) from the Go module proxy, once per machine (about 2 minutes on 2 cores). To skip it: set NEOSET_KNATIVE_EVENTING to a directory holding them"
scratch_module "knative-eventing-$KNATIVE_EVENTING_VERSION" 1.25 "knative.dev/eventing v$KNATIVE_EVENTING_VERSION"
# Main packages cannot be imported, so nothing here would keep the requirement through `go mod
# tidy`: download the release and let `go build -mod=mod` record the sums of what it compiles.
step "downloading knative.dev/eventing v$KNATIVE_EVENTING_VERSION and its modules" nice -n 10 go mod download knative.dev/eventing
binaries || build_commands knative.dev/eventing "${COMMANDS[@]}"
# The release manifests of the same version, out of the (read-only) module cache.
SRC=$(go list -m -f '{{.Dir}}' "knative.dev/eventing")
rm -rf "$OUT/config.tmp"
for m in "${MANIFESTS[@]}"; do mkdir -p "$OUT/config.tmp/$(dirname "$m")" && cp -r "$SRC/config/$m" "$OUT/config.tmp/$m"; done
chmod -R u+w "$OUT/config.tmp"
rm -rf "$OUT/config" && mv "$OUT/config.tmp" "$OUT/config"

log "done in $(since "$START"): $OUT"
echo "$OUT"
