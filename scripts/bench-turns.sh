#!/usr/bin/env bash
# bench-turns.sh compares rein builds end to end: `rein bench turns` for each, alternating, N
# times, then each build's median p50 per tool turn. This machine's speed drifts over minutes, so
# builds compared in separate runs are not comparable; alternating them in the same minutes is.
#
#   bash scripts/bench-turns.sh 5 /tmp/rein-old /tmp/rein-new            # rein's defaults
#   bash scripts/bench-turns.sh 5 /tmp/rein-old /tmp/rein-new -- --sandbox off --no-checkpoints
#
# Each build's own bench command runs its own simulator; pass builds whose simulator you trust to
# be the same, or time both against one simulator with `rein bench turns --rein OTHER`.
set -euo pipefail
n=${1:?usage: bench-turns.sh N REIN... [-- BENCH-FLAGS...]}
shift
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#bins[@]} -gt 0 ] || { echo "bench-turns.sh: name at least one rein binary" >&2; exit 2; }
declare -A runs
for _ in $(seq "$n"); do
  for b in "${bins[@]}"; do
    p50=$("$b" bench turns "$@" 2>&1 | awk '/^turn  /{print $2}')
    [ -n "$p50" ] || { echo "bench-turns.sh: $b bench turns printed no turn line" >&2; exit 1; }
    runs[$b]="${runs[$b]:-} $p50"
  done
done
for b in "${bins[@]}"; do
  median=$(tr ' ' '\n' <<<"${runs[$b]}" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$b: median p50 $median ms per tool turn (runs:${runs[$b]})"
done
