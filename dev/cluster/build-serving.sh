#!/usr/bin/env bash
# Builds Knative Serving's components (knative.dev/serving on the Go module proxy) — the programs its
# release manifests name as ko://knative.dev/serving/cmd/… images — into a cache outside the checkout
# beside Knative Eventing's. Idempotent: a complete build is left alone. Prints the directory on its
# last line: the binaries, and beside them in config/core the release manifests an install applies
# (CRDs, roles, config maps, deployments, webhooks; as the release has them, ko:// references
# included: the queue-proxy's image is config-deployment's queue-sidecar-image).
#
# Run by npm test's services builds (prepare.ts --only services, beside the first lane: the runner's
# --prepare-services) and by npm run dev (its default Serving layout) when missing.
#
# All components are built by one `go build -o DIR pkg...` from a scratch module that requires the
# release, as build-knative.sh builds Eventing's: one invocation shares the compile of Knative's
# common packages.
#
# Cold build, 2026-12-07 on this project's 2-core machine: 24 min 15 s, at nice 19 while Eventing's
# build (npm test's prepare), the Traefik and kn builds and other engineers' tests ran (load average
# 11-28); Eventing's modules were already downloaded. 263 MB: controller 69 MB, autoscaler 60,
# activator 59, webhook 59, queue 28 (stripped).
#
#   KNATIVE_SERVING_VERSION  release of knative.dev/serving (default 0.50.0, Eventing v0.50.0's release)
#   NEOSET_CACHE             cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_KNATIVE_SERVING names a directory laid out
# as this one: the components and config/core.)
set -euo pipefail

KNATIVE_SERVING_VERSION=${KNATIVE_SERVING_VERSION:-0.50.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/knative-serving-$KNATIVE_SERVING_VERSION"
# Every ko:// reference of config/core: the four deployments and the queue-proxy sidecar that
# Serving injects beside each revision's user container. A binary is named after its package.
COMMANDS=(controller activator autoscaler webhook queue)

LOG_TAG=build-serving
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

binaries() { for c in "${COMMANDS[@]}"; do [ -x "$OUT/$c" ] || return 1; done; }
# The release's config/core files that are symlinks into vendor/ in Serving's repository (git
# ls-tree v0.50.0 config/core, mode 120000), and so absent from its module zip (module zips hold no
# symlinks): the networking CRDs (KIngress among them) and config-network from knative.dev/networking,
# the Image CRD 999-cache.yaml needs from knative.dev/caching. Copied back from those modules at the
# versions Serving's go.mod requires. "file in config/core <- module file".
LINKED=(
  "300-resources/certificate.yaml <- knative.dev/networking config/certificate.yaml"
  "300-resources/domain-claim.yaml <- knative.dev/networking config/domain-claim.yaml"
  "300-resources/ingress.yaml <- knative.dev/networking config/ingress.yaml"
  "300-resources/serverlessservice.yaml <- knative.dev/networking config/serverlessservice.yaml"
  "configmaps/network.yaml <- knative.dev/networking config/config-network.yaml"
  "300-imagecache.yaml <- knative.dev/caching config/image.yaml"
)
complete() {
  binaries && [ -d "$OUT/config/core" ] || return 1
  for l in "${LINKED[@]}"; do [ -f "$OUT/config/core/${l%% <- *}" ] || return 1; done
}
once_per_machine "Go is needed to build Knative Serving (or set NEOSET_KNATIVE_SERVING to a directory holding its components, ${COMMANDS[*]}, and their config/core)"
log "no complete build in $OUT: building Knative Serving v$KNATIVE_SERVING_VERSION (${#COMMANDS[@]} components) from the Go module proxy, once per machine. To skip it: set NEOSET_KNATIVE_SERVING to a directory holding them"
scratch_module "knative-serving-$KNATIVE_SERVING_VERSION" 1.25 "knative.dev/serving v$KNATIVE_SERVING_VERSION"
# No `go mod tidy` (it would drop a requirement that only main packages use): see build-knative.sh.
step "downloading knative.dev/serving v$KNATIVE_SERVING_VERSION and its modules" nice -n 10 go mod download knative.dev/serving
binaries || build_commands knative.dev/serving "${COMMANDS[@]}"
# The release manifests of the same version, out of the (read-only) module cache.
SRC=$(go list -m -f '{{.Dir}}' "knative.dev/serving")
rm -rf "$OUT/config.tmp" && mkdir -p "$OUT/config.tmp"
cp -r "$SRC/config/core" "$OUT/config.tmp/core"
chmod -R u+w "$OUT/config.tmp"
for l in "${LINKED[@]}"; do
  read -r module file <<< "${l#* <- }"
  step "config/core/${l%% <- *} from $module" go mod download "$module"
  cp "$(go list -m -f '{{.Dir}}' "$module")/$file" "$OUT/config.tmp/core/${l%% <- *}"
done
rm -rf "$OUT/config" && mv "$OUT/config.tmp" "$OUT/config"

log "done in $(since "$START"): $OUT"
echo "$OUT"
