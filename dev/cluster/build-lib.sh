# Shared by the build-*.sh scripts (sourced, not run): log lines, a step runner that says every 30 s
# which step is running and for how long — a first build takes minutes on 2 cores, and silence that
# long looks like a hang —, the once-per-machine guard and the scratch Go module the builds share.
# The sourcing script sets LOG_TAG (and, for once_per_machine, CACHE, OUT and a function `complete`).

log() { echo "[$LOG_TAG] $*" >&2; }
# Minutes and seconds since $1 (a $SECONDS reading).
since() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
# Runs "$@" as step "$1", with progress lines every 30 s; exits the script when it fails.
step() {
  local what=$1 began=$SECONDS status=0 ticker
  shift
  log "$what"
  ( while sleep 30; do log "$what: $(since "$began") so far ($(since "$START") in all)"; done ) &
  ticker=$!
  "$@" >&2 || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then log "$what failed after $(since "$began")"; exit "$status"; fi
  log "$what: done in $(since "$began")"
}
# Go is where the machine image keeps it even when a login shell did not put it on PATH.
find_go() {
  command -v go >/dev/null || { [ -x /usr/local/go/bin/go ] && export PATH="/usr/local/go/bin:$PATH"; }
  command -v go >/dev/null
}
# Ends the script, printing $OUT, when `complete` (the sourcing script's) says the build is there;
# else takes the build lock (two clones never build at once), looks again, and starts the clock
# (START). $1: what to say when there is no Go.
once_per_machine() {
  if complete; then echo "$OUT"; exit 0; fi
  find_go || { log "error: $1"; exit 2; }
  mkdir -p "$OUT"
  exec 9>"$OUT/.lock"
  flock 9
  if complete; then echo "$OUT"; exit 0; fi
  START=$SECONDS
}
# A scratch module in $CACHE/src-$1 requiring $3 ("module/path vX.Y.Z") at go directive $2, and cd
# there: the builds resolve releases from the Go module proxy, never from a checkout.
scratch_module() {
  mkdir -p "$CACHE/src-$1"
  cd "$CACHE/src-$1"
  export GOFLAGS=-mod=mod CGO_ENABLED=0
  printf 'module neoset.local/%s\n\ngo %s\n\nrequire %s\n' "${1%%-[0-9]*}" "$2" "$3" > go.mod
}
# Builds the main packages $1/cmd/<c> for each further argument c into $OUT, each binary named after
# its package's last element, in one `go build` (one compile of what they share), through $OUT/.tmp:
# a binary is in $OUT only once it is whole.
build_commands() {
  local module=$1 c pkgs=()
  shift
  for c in "$@"; do pkgs+=("$module/cmd/$c"); done
  rm -rf "$OUT/.tmp" && mkdir -p "$OUT/.tmp"
  step "building ${*##*/}" nice -n 10 go build -trimpath -ldflags "-s -w" -o "$OUT/.tmp/" "${pkgs[@]}"
  for c in "$@"; do mv "$OUT/.tmp/${c##*/}" "$OUT/${c##*/}"; done
  rmdir "$OUT/.tmp"
}
