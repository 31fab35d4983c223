for hp_f in /proc/uptime /proc/loadavg /proc/stat /proc/vmstat /proc/pressure/cpu /proc/pressure/io /proc/pressure/memory; do
  [ -r "$hp_f" ] || continue
  hp_head=1
  while IFS= read -r hp_l; do
    case "$hp_l" in
      cpu*|procs_*|pswp*|some\ *|full\ *|[0-9]*)
        [ -n "$hp_head" ] && printf '==> %s <==\n' "$hp_f" && hp_head=
        printf '%s\n' "$hp_l";;
    esac
  done 2>/dev/null < "$hp_f"
done
