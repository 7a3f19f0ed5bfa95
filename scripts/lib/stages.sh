# shellcheck shell=bash
# Time every stage of a script and print a table of them when it ends, passed
# or failed, so a log shows which stage grew.
#
#   source scripts/lib/stages.sh
#   stage "cargo fmt --check" cargo fmt --all -- --check
#
# `stage NAME COMMAND...` runs COMMAND, records its wall time and exit status,
# and returns that status (the caller's `set -e` then stops the script as it
# would have without `stage`). A script run by another that sourced this file
# too (`.ci/run` runs `scripts/test`) adds its stages to its parent's table,
# one level in, and leaves the printing to the parent: one table per log.
# A stage still running when the script stops (a failure inside a stage
# whose own status was never returned, a signal) is listed as "stopped".

if [[ -z "${TOOLGATE_STAGES_FILE:-}" ]]; then
  TOOLGATE_STAGES_FILE="$(mktemp "${TMPDIR:-/tmp}/toolgate-stages.XXXXXX")"
  export TOOLGATE_STAGES_FILE
  export TOOLGATE_STAGES_DEPTH=0
  stages_owner=1
else
  export TOOLGATE_STAGES_DEPTH=$((${TOOLGATE_STAGES_DEPTH:-0} + 1))
  stages_owner=0
fi
stages_count=0
stages_started=$(date +%s)

# The clock in whole seconds: stages take seconds to minutes, and `date +%s`
# is everywhere.
stages_now() { date +%s; }

stage() {
  local name=$1
  shift
  stages_count=$((stages_count + 1))
  local id="$$.$stages_count" begin rc
  begin=$(stages_now)
  # Names are one line; a tab would break the table's columns.
  name=${name//$'\t'/ }
  printf 'B\t%s\t%s\t%s\t%s\n' "$id" "$TOOLGATE_STAGES_DEPTH" "$begin" "$name" >>"$TOOLGATE_STAGES_FILE"
  echo "== $name"
  if "$@"; then rc=0; else rc=$?; fi
  printf 'E\t%s\t%s\t%s\n' "$id" "$(($(stages_now) - begin))" "$rc" >>"$TOOLGATE_STAGES_FILE"
  return "$rc"
}

# The table: every stage in the order it started, nested ones indented under
# the stage that ran them, with its time and result.
stages_table() {
  local now
  now=$(stages_now)
  echo
  echo "== time per stage (wall clock)"
  awk -F '\t' -v now="$now" '
    $1 == "B" { n++; id[n] = $2; depth[n] = $3; begin[n] = $4; name[n] = $5 }
    $1 == "E" { secs[$2] = $3; rc[$2] = $4 }
    function clock(s) { return sprintf("%d:%02d", int(s / 60), s % 60) }
    END {
      printf "  %-66s %8s  %s\n", "stage", "m:ss", "result"
      for (i = 1; i <= n; i++) {
        k = id[i]
        if (k in secs) { t = secs[k]; r = (rc[k] == 0 ? "ok" : "FAILED (exit " rc[k] ")") }
        else { t = now - begin[i]; r = "stopped" }
        label = sprintf("%*s%s", 2 * depth[i], "", name[i])
        if (length(label) > 66) label = substr(label, 1, 63) "..."
        printf "  %-66s %8s  %s\n", label, clock(t), r
      }
    }' "$TOOLGATE_STAGES_FILE"
  local total=$((now - stages_started))
  printf '  %-66s %8s\n' "total" "$(printf '%d:%02d' $((total / 60)) $((total % 60)))"
}

stages_finish() {
  local rc=$?
  if [[ "$stages_owner" == 1 ]]; then
    stages_table
    rm -f "$TOOLGATE_STAGES_FILE"
  fi
  return "$rc"
}
trap stages_finish EXIT
