# Shared by build-binaries.sh and build-cni.sh (sourced, not run): log lines, and a step runner that
# says every 30 s which step is running and for how long — a first build takes minutes on 2 cores,
# and silence that long looks like a hang. The sourcing script sets LOG_TAG and START (a $SECONDS reading).

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
