#!/usr/bin/env bash
# Runs every cargo-fuzz target for FUZZ_SECONDS each (default 300) and prints, per target,
# the runs, execs/s, coverage and crashes. A crash (or hang, or out-of-memory) fails the
# command and prints the artifact that reproduces it. Installs cargo-fuzz and the nightly
# toolchain it needs when missing. FUZZ_TARGETS narrows the list.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_EACH="${FUZZ_SECONDS:-300}"
read -r -a TARGETS <<<"${FUZZ_TARGETS:-classify eval_manifest sse}"
# Own directory: a nightly, instrumented build must not invalidate the stable one.
FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-$(target_dir)/fuzz}"

command -v cargo >/dev/null || die "cargo not found: install the Rust toolchain (rustup) first"
command -v python3 >/dev/null || die "python3 not found (it writes the seed corpora)"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  say "installing the nightly toolchain (cargo-fuzz needs it)"
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi

cd "$ROOT/fuzz"
python3 "$ROOT/scripts/fuzz_seeds.py"

say "building the fuzz targets (nightly, sanitizers on)"
for target in "${TARGETS[@]}"; do
  cargo +nightly fuzz build -O --target-dir "$FUZZ_TARGET_DIR" "$target" 2>&1 | tail -n 3 >&2 \
    || die "the fuzz target $target does not build"
done

# One line per target: name, runs, execs/s, coverage, features, crashes, artifact.
results=()
failed=0
for target in "${TARGETS[@]}"; do
  say "fuzzing $target for ${SECONDS_EACH}s"
  log="$(mktemp)"
  status=0
  cargo +nightly fuzz run -O --target-dir "$FUZZ_TARGET_DIR" "$target" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)"
  ft="$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)"
  artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
  crashes=0
  if [ "$status" -ne 0 ]; then
    crashes=1
    failed=1
    # The finding itself: the panic or sanitizer report and the reproducer.
    grep -E -A1 -m 20 "panicked|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY|Test unit written|Base64" "$log" >&2 || tail -n 40 "$log" >&2
    [ -n "$artifact" ] || artifact="(none written; full log: $log)"
    echo "reproduce: cd fuzz && cargo +nightly fuzz run $target ${artifact}" >&2
  fi
  results+=("$(printf '%-14s %10s %10s %8s %8s %8s  %s' "$target" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "${artifact:-}")")
  [ "$status" -ne 0 ] || rm -f "$log"
done

printf '\n%-14s %10s %10s %8s %8s %8s  %s\n' target runs execs/s cov ft crashes artifact
printf '%s\n' "${results[@]}"
[ "$failed" -eq 0 ] || die "a fuzz target crashed (artifact above)"
say "fuzzing: no crash in ${SECONDS_EACH}s per target"
