#!/usr/bin/env bash
# Builds `kn`, Knative's CLI (knative.dev/client/cmd/kn on the Go module proxy), the command users
# deploy NeoSet's functions with (`kn service create/update/list`), into a cache outside the checkout
# beside the other binaries. Idempotent: a build already there is left alone. Prints the directory
# holding `kn` on its last line.
#
# Run by npm test's services builds (prepare.ts --only services, beside the first lane: the runner's
# --prepare-services) and by npm run dev (its default Serving layout) when missing.
#
# Which release. knative.dev/client v0.50.0 (Serving v0.50.0's) is served, but its cmd/kn cannot be
# built from the proxy: since v0.43.0 kn's code lives in a nested module, knative.dev/client/pkg,
# which the release's go.mod requires at v0.0.0-00010101000000-000000000000 and replaces by ./pkg
# (not in the module zip), and which the proxy does not serve: 2026-12-07, `go build` of
# knative.dev/client/cmd/kn@v0.50.0 stopped at "cmd/kn/main.go:25:2: knative.dev/client/pkg@v0.0.0-
# 00010101000000-000000000000: reading …/knative.dev/client/pkg/@v/v0.0.0-00010101000000-
# 000000000000.zip: 403 Forbidden / This module version is not available" (v0.50.0 refused too). The
# newest release whose kn is one module on the proxy is v0.42.0 (2024-07, Knative 1.15), the
# default here: kn speaks serving.knative.dev/v1, the API Serving v0.50.0 serves. With a checkout
# of knative/client's pkg/ at the same tag (not from the proxy), KN_CLIENT_PKG builds a newer one
# (2026-12-07, pkg/ of tag v0.50.0: every requirement of pkg's served, `kn version` v0.50.0 with
# serving.knative.dev/v1 of knative-serving v0.50.0, 58 MB, 1 min 13 s of CPU on a warm Go cache):
#   KN_VERSION=0.50.0 KN_CLIENT_PKG=/path/to/client/pkg bash dev/cluster/build-kn.sh
#
# Cold build, 2026-12-07 on this project's 2-core machine: 45 min 44 s at nice 19 beside the Serving
# and Traefik builds and other engineers' tests (load average 15-28), for 5 min 29 s of CPU (user
# 4m33s, sys 57s; its dependencies are v0.42.0's, k8s.io v0.29 and Knative's of 2024, older than
# anything else built here, so little came from the Go build cache). 53 MB (stripped). `kn version`:
# v0.42.0, serving.knative.dev/v1.
#
#   KN_VERSION     release of knative.dev/client (default 0.42.0)
#   KN_CLIENT_PKG  knative/client's pkg/ directory at that tag, for releases from v0.43.0 on
#   NEOSET_CACHE   cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_KN names a kn binary.)
set -euo pipefail

KN_VERSION=${KN_VERSION:-0.42.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/kn-$KN_VERSION"

LOG_TAG=build-kn
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

complete() { [ -x "$OUT/kn" ]; }
once_per_machine "Go is needed to build kn (or set NEOSET_KN to a kn binary)"
log "no build in $OUT: building kn (knative.dev/client v$KN_VERSION) from the Go module proxy, once per machine. To skip it: set NEOSET_KN to a kn binary"
scratch_module "kn-$KN_VERSION" 1.25 "knative.dev/client v$KN_VERSION"
if [ -n "${KN_CLIENT_PKG:-}" ]; then
  go mod edit -replace "knative.dev/client/pkg=$(cd "$KN_CLIENT_PKG" && pwd)"
fi
step "downloading knative.dev/client v$KN_VERSION" nice -n 10 go mod download "knative.dev/client@v$KN_VERSION"
# kn's version command reads these (knative.dev/client/pkg/kn/commands/version up to v0.42.0,
# knative.dev/client/pkg/commands/version after); -X of a variable that does not exist is ignored.
VERSION_FLAGS=""
for p in knative.dev/client/pkg/kn/commands/version knative.dev/client/pkg/commands/version; do
  VERSION_FLAGS+=" -X $p.Version=v$KN_VERSION"
done
step "building kn" nice -n 10 go build -trimpath -ldflags "-s -w$VERSION_FLAGS" -o "$OUT/kn.tmp" knative.dev/client/cmd/kn
mv "$OUT/kn.tmp" "$OUT/kn"

log "done in $(since "$START"): $OUT"
echo "$OUT"
