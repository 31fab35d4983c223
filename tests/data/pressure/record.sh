#!/bin/bash
# Records pressure-probe snapshots quiet and under bounded stress-ng hogs.
set -u
cd "$(dirname "$0")"  # it ran in /tmp/prec; its outputs were then copied here
log() { echo "$(date -u +%FT%TZ) $*" >> meta.log; }
avg10() { sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/cpu; }
wait_quiet() {  # up to $1 seconds for cpu some avg10 < 25
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do
    a=$(avg10); if awk "BEGIN{exit !($a < 25)}"; then log "quiet enough: avg10=$a"; return 0; fi
    sleep 15
  done
  log "never quiet: avg10=$(avg10)"; return 1
}
snap() { sh probe.sh > "$1"; }
window() {  # name, seconds, hog command...
  local name=$1 secs=$2; shift 2
  local pid=""
  if [ $# -gt 0 ]; then "$@" >/dev/null 2>&1 & pid=$!; sleep 1; fi
  log "$name: start ${secs}s window; hog: ${*:-none}"
  snap "$name-before.txt"; sleep "$secs"; snap "$name-after.txt"
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  log "$name: done"
}
stress-ng --version >> meta.log 2>&1
round=$1
wait_quiet ${2:-1800}
window "r$round-quiet1" 8
sleep 5
window "r$round-hog-cpu1-load50-nice" 8 timeout 10 nice stress-ng --cpu 1 --cpu-load 50
sleep 5
window "r$round-hog-cpu2-load100-nice" 8 timeout 10 nice stress-ng --cpu 2 --cpu-load 100
sleep 5
window "r$round-hog-cpu2-load100" 8 timeout 10 stress-ng --cpu 2 --cpu-load 100
sleep 5
window "r$round-quiet2" 8
