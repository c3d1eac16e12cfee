#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-controller-manager (and kube-proxy when asked) from their Go
# modules into a cache outside the checkout, so every clone and every run reuses one build.
# Idempotent: only the binaries asked for that are missing are built. Prints the directory holding
# them on its last line.
#
#   build-binaries.sh [BINARY...]   what is wanted, of etcd kube-apiserver kube-controller-manager
#                                   kube-proxy (default: the first three, the control plane)
#   K8S_VERSION   Kubernetes release (default 1.37.2); staging modules are pinned to v0.<minor>.<patch>
#   ETCD_VERSION  etcd server release (default 3.7.0, the one k8s 1.37 itself requires)
#   NEOSET_CACHE  cache root (default ${XDG_CACHE_HOME:-~/.cache}/neoset)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.7.0}
CACHE=${NEOSET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/neoset}
OUT="$CACHE/k8s-$K8S_VERSION"
STAGING_VERSION="v0.${K8S_VERSION#*.}"

LOG_TAG=build-binaries
# shellcheck source=build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-lib.sh"

WANTED=("$@")
[ ${#WANTED[@]} -gt 0 ] || WANTED=(etcd kube-apiserver kube-controller-manager)
for bin in "${WANTED[@]}"; do
  case $bin in etcd | kube-apiserver | kube-controller-manager | kube-proxy) ;; *) log "error: unknown binary $bin"; exit 2 ;; esac
done
# What is wanted and not built yet: a cache holding the control plane builds only kube-proxy.
missing() { MISSING=(); for bin in "${WANTED[@]}"; do [ -x "$OUT/$bin" ] || MISSING+=("$bin"); done; [ ${#MISSING[@]} -gt 0 ]; }
if ! missing; then
  echo "$OUT"; exit 0
fi
find_go || { log "error: Go is needed to build the control plane (or set KUBEBUILDER_ASSETS to envtest binaries)"; exit 2; }

mkdir -p "$OUT"
# One builder runs at a time (parallel test workers, two clones): the others wait for it.
exec 9>"$OUT/.lock"
flock 9
if ! missing; then
  echo "$OUT"; exit 0
fi
K8S_MISSING=()
for bin in "${MISSING[@]}"; do [ "$bin" = etcd ] || K8S_MISSING+=("$bin"); done
TOTAL=${#MISSING[@]}

START=$SECONDS
log "not yet in $OUT: ${MISSING[*]}; building them (etcd v$ETCD_VERSION, Kubernetes v$K8S_VERSION) from the Go module proxy, once per machine (about 10 minutes on 2 cores for the control plane; kube-proxy after them, under a minute). To skip it: copy $OUT from another machine (or point NEOSET_CACHE at a shared one), or set KUBEBUILDER_ASSETS / TEST_ASSET_* to prebuilt binaries"
WORK="$CACHE/src-$K8S_VERSION"
mkdir -p "$WORK/k8s" "$WORK/etcd"
export GOFLAGS=-mod=mod CGO_ENABLED=0

n=0
# --- Kubernetes: require k8s.io/kubernetes and replace each staging module (./staging/src/...) by its
# published version, which is what k8s.io/kubernetes' own go.mod cannot express for a consumer.
build_kubernetes() {
  log "resolving k8s.io/kubernetes v$K8S_VERSION"
  cd "$WORK/k8s"
  local modfile
  modfile=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module neoset.local/controlplane"
    echo
    echo "go $(sed -n 's/^go \([0-9.]*\).*/\1/p' "$modfile")"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$STAGING_VERSION"'#p' "$modfile"
    echo ")"
  } > go.mod
  # Every command this script builds, whichever is missing, so that go.mod and go.sum stay one.
  printf '//go:build tools\n\npackage controlplane\n\nimport (\n' > tools.go
  for bin in kube-apiserver kube-controller-manager kube-proxy; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$bin" >> tools.go; done
  printf ')\n' >> tools.go
  step "resolving the Kubernetes modules (go mod tidy)" nice -n 10 go mod tidy
  local k8s_major k8s_minor ldflags
  IFS=. read -r k8s_major k8s_minor _ <<<"$K8S_VERSION"
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=$k8s_major -X k8s.io/component-base/version.gitMinor=$k8s_minor"
  ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
  for bin in "${K8S_MISSING[@]}"; do
    n=$((n + 1))
    step "building $bin ($n/$TOTAL, minutes on 2 cores)" nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$OUT/$bin.tmp" "k8s.io/kubernetes/cmd/$bin"
    mv "$OUT/$bin.tmp" "$OUT/$bin"
  done
}

# --- etcd: the module go.etcd.io/etcd/server/v3 is itself the etcd main package.
build_etcd() {
  cd "$WORK/etcd"
  printf 'module neoset.local/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > go.mod
  printf '//go:build tools\n\npackage etcd\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
  step "resolving the etcd modules (go mod tidy)" nice -n 10 go mod tidy
  n=$((n + 1))
  step "building etcd v$ETCD_VERSION ($n/$TOTAL)" nice -n 10 go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

[ ${#K8S_MISSING[@]} -eq 0 ] || build_kubernetes
[[ " ${MISSING[*]} " != *" etcd "* ]] || build_etcd

log "done in $(since "$START"): $OUT"
echo "$OUT"
