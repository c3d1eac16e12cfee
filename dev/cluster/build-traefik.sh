#!/usr/bin/env bash
# Builds Traefik (github.com/traefik/traefik/v3 on the Go module proxy), the proxy that ships its own
# Knative networking provider (pkg/provider/kubernetes/knative, ingress class
# traefik.ingress.networking.knative.dev): the KIngress implementation Knative Serving will route
# through here (docs/design/serving.md). Into a cache outside the checkout beside the other binaries.
# Idempotent: a build already there is left alone. Prints the directory holding `traefik` on its last
# line.
#
# Run by npm test's services builds (prepare.ts --only services, beside the first lane: the runner's
# --prepare-services) and by npm run dev (its default Serving layout) when missing.
#
# The scratch module carries what Traefik's own go.mod says beyond its requirements, since a
# dependency's replace and exclude directives are not applied to the module that requires it: they
# are copied from the release's go.mod (in v3.7.13: the forks github.com/abbot/go-http-auth and
# github.com/gorilla/mux → github.com/containous/…, and the tencentcloud exclude, an ambiguous import
# otherwise), but for its local replace of github.com/traefik/traefik/dynamic/ext by
# ./pkg/config/dynamic/ext: a nested module, so not in the release's module zip, and not served by
# the proxy under its own name. It is Traefik's extension point for the dynamic configuration's
# HTTP and Router types and holds two empty structs (ext.HTTP, ext.Router) in the release
# (pkg/config/dynamic/ext/ext.go, checked at v3.7.9's tag); the same two are written here.
#
# Cold build, 2026-12-07 on this project's 2-core machine: 60 min 9 s at nice 19 beside the Serving
# and kn builds and other engineers' tests (load average 8-28), for 17 min 14 s of CPU (user 14m60s,
# sys 2m15s); its modules had been downloaded by two attempts stopped by the refusals below (3 min 45 s
# and 1 min 49 s). 174 MB (stripped): the largest of the builds. `traefik version`: v3.7.13, go1.26.8.
#
#   TRAEFIK_VERSION  release of github.com/traefik/traefik/v3 (default 3.7.13)
#   NEOSET_CACHE     cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
# (dev/cluster/binaries.ts skips this script when NEOSET_TRAEFIK names a traefik binary.)
set -euo pipefail

TRAEFIK_VERSION=${TRAEFIK_VERSION:-3.7.13}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/traefik-$TRAEFIK_VERSION"
# In place of what the proxy refuses (see below): a served go-http-auth fork, and the lego DNS
# providers left out.
GO_HTTP_AUTH_FORK=v0.4.1-0.20200324110947-a37a7636d23e
UNSERVED_DNS_PROVIDERS="edgedns huaweicloud oraclecloud sakuracloud ucloud yandexcloud"

LOG_TAG=build-traefik
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

complete() { [ -x "$OUT/traefik" ]; }
once_per_machine "Go is needed to build Traefik (or set NEOSET_TRAEFIK to a traefik binary)"
log "no build in $OUT: building Traefik v$TRAEFIK_VERSION from the Go module proxy, once per machine. To skip it: set NEOSET_TRAEFIK to a traefik binary"
scratch_module "traefik-$TRAEFIK_VERSION" 1.26 "github.com/traefik/traefik/v3 v$TRAEFIK_VERSION"
mkdir -p ext
printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.26\n' > ext/go.mod
printf '// Package ext: Traefik'"'"'s dynamic configuration extension point, empty in its release (build-traefik.sh).\npackage ext\n\n// HTTP is a dynamic.HTTP extension.\ntype HTTP struct{}\n\n// Router is a dynamic.Router extension.\ntype Router struct{}\n' > ext/ext.go
go mod edit -replace github.com/traefik/traefik/dynamic/ext=./ext
step "downloading github.com/traefik/traefik/v3 v$TRAEFIK_VERSION" nice -n 10 go mod download "github.com/traefik/traefik/v3@v$TRAEFIK_VERSION"
# The release's own replace and exclude directives, as its go.mod writes them (single lines and
# blocks), but for its local ones (the ext module, replaced above).
SRC_GOMOD=$(go mod download -json "github.com/traefik/traefik/v3@v$TRAEFIK_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
awk '/^(replace|exclude)[ \t]*\($/ { block = 1 } (block || /^(replace|exclude)[ \t]/) && !/=>[ \t]*\.\.?\// { print } block && /^\)/ { block = 0 }' "$SRC_GOMOD" >> go.mod
# Two of the release's dependencies cannot be had whole from the module proxy, which answers "403
# Forbidden: This module version is not available" for some zips (2026-12-07):
#   - the go-http-auth fork at v0.4.1-0.20260804094822-b975dcaa8c48: the fork Traefik up to v3.7.9
#     shipped is taken instead (GO_HTTP_AUTH_FORK; only the basicAuth and digestAuth middlewares use
#     it, which nothing here configures);
#   - the SDKs of six of go-acme/lego's DNS-01 providers (akamai edgegrid for edgedns, huaweicloud,
#     nrdcg/oci-go-sdk for oraclecloud, sacloud for sakuracloud, ucloud, yandex-cloud for
#     yandexcloud; lego v5.6.0's versions of them are refused too), which lego's generated provider
#     factory (providers/dns/zz_gen_dns_providers.go) imports all at once. lego is replaced by a copy
#     of the release's own version with those six dropped from that factory, mechanically (their
#     import and their case); they are Traefik's ACME DNS challenge for those six DNS services,
#     which no cluster here uses. Every other line of Traefik, lego and their modules is the release's.
LEGO_VERSION=$(awk '$1 == "github.com/go-acme/lego/v5" { print $2 }' "$SRC_GOMOD")
LEGO_DIR=$(go mod download -json "github.com/go-acme/lego/v5@$LEGO_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
rm -rf lego && cp -r "$LEGO_DIR" lego && chmod -R u+w lego
FACTORY=lego/providers/dns/zz_gen_dns_providers.go
awk -v drop="$UNSERVED_DNS_PROVIDERS" '
  BEGIN { n = split(drop, names, " "); for (i = 1; i <= n; i++) dropped[names[i]] = 1 }
  /^\t"github.com\/go-acme\/lego\/v5\/providers\/dns\/[a-z0-9]+"$/ {
    name = $0; sub(/.*\//, "", name); sub(/"$/, "", name); if (name in dropped) next
  }
  /^\tcase / {
    held = $0; getline next_line
    name = next_line; sub(/^\t\treturn /, "", name); sub(/\..*/, "", name)
    if (!(name in dropped)) { print held; print next_line }
    next
  }
  { print }' "$FACTORY" > "$FACTORY.new"
mv "$FACTORY.new" "$FACTORY"
for p in $UNSERVED_DNS_PROVIDERS; do
  if grep -q "providers/dns/$p\"" "$FACTORY"; then log "error: could not drop lego's $p provider from $FACTORY"; exit 1; fi
done
go mod edit \
  -replace "github.com/go-acme/lego/v5=./lego" \
  -replace "github.com/abbot/go-http-auth=github.com/containous/go-http-auth@$GO_HTTP_AUTH_FORK"
step "building traefik" nice -n 10 go build -trimpath -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=v$TRAEFIK_VERSION" -o "$OUT/traefik.tmp" github.com/traefik/traefik/v3/cmd/traefik
mv "$OUT/traefik.tmp" "$OUT/traefik"

log "done in $(since "$START"): $OUT"
echo "$OUT"
