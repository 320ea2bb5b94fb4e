#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/, its own workspace) on the stable toolchain, without a
# sanitizer (`-s none`), each for a bounded time, starting from the committed seeds in
# fuzz/corpus/<target>/ (read only: what a run finds goes to fuzz/target/corpus/<target>/).
#   scripts/fuzz.sh            every target for 300 s (PAY_FUZZ_SECONDS to change)
#   scripts/fuzz.sh --short    every target for 15 s: what CI runs
#   scripts/fuzz.sh [--short] form_decode csv_writer   only those targets
# A crash stops the script with libFuzzer's report; the input is saved under
# fuzz/artifacts/<target>/ (replay: cargo fuzz run -s none <target> <file>). Make it a unit
# test in the crate that owns the code, then fix. Prints executions and exec/s per target.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${PAY_FUZZ_SECONDS:-300}"
targets=()
for arg in "$@"; do
  case "$arg" in
    --short) seconds=15 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) targets+=("$arg") ;;
  esac
done

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: cargo install --locked cargo-fuzz --version 0.13.2" >&2
  exit 1
fi
export CARGO_INCREMENTAL=0
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

# The fuzz crate's own Cargo.lock must be up to date (as --locked), then one build of every
# target.
(cd fuzz && cargo fetch --locked && cargo fuzz build -s none)

# Where the build put the binaries, so the runs below do not run cargo again.
work="${CARGO_TARGET_DIR:-fuzz/target}"
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" fuzz/artifacts/"$t"
  found="$(realpath "$work/corpus/$t")"
  log="$work/fuzz-$t.log"
  echo "== $t: ${seconds} s"
  # -timeout: one input taking over 10 s is a hang, reported as a failure.
  if ! (cd fuzz && cargo fuzz run -s none "$t" \
        "$found" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1) >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz target $t failed (log: $log)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  if [ -z "$runs" ] || [ "$runs" -eq 0 ]; then
    tail -n 30 "$log"
    echo "fuzz target $t executed nothing (log: $log)" >&2
    exit 1
  fi
  summary+=("$(printf '%-18s %12s execs %9s exec/s  cov %s' "$t" "$runs" "$rate" "${cov:-?}")")
done
printf '%s\n' "fuzzing, ${seconds} s per target:" "${summary[@]}"
