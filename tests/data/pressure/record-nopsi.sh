#!/bin/bash
# The same probe with /proc/pressure hidden (an empty tmpfs over it in a private mount
# namespace): the files are absent, as on a kernel built without CONFIG_PSI.
set -u
cd "$(dirname "$0")"  # it ran in /tmp/prec; its outputs were then copied here
log() { echo "$(date -u +%FT%TZ) $*" >> meta.log; }
snap() { unshare -m sh -c 'mount -t tmpfs -o ro,size=4k none /proc/pressure && sh probe.sh' > "$1"; }
window() {
  local name=$1 secs=$2; shift 2
  local pid=""
  if [ $# -gt 0 ]; then "$@" >/dev/null 2>&1 & pid=$!; sleep 1; fi
  log "$name: start ${secs}s window (PSI hidden); hog: ${*:-none}"
  snap "$name-before.txt"; sleep "$secs"; snap "$name-after.txt"
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  log "$name: done"
}
window nopsi-quiet 8
sleep 5
window nopsi-hog-cpu1-load50-nice 8 timeout 10 nice stress-ng --cpu 1 --cpu-load 50
sleep 5
window nopsi-hog-cpu2-load100-nice 8 timeout 10 nice stress-ng --cpu 2 --cpu-load 100
