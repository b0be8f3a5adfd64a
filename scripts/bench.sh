#!/usr/bin/env bash
# `make bench`: every benchmark of DESIGN §14, core and app, then ONE table (figure, budget,
# measured, reference measured in the same run, ratio, within budget), printed and written to
# artifacts/bench/table.md and table.json. Benchmarks report; they never fail the command
# because a figure is over budget (shared machines are noisy), only when one cannot run.
#
#   scripts/bench.sh            everything (the full form: well under an hour here)
#   scripts/bench.sh --ui-only  the app rows only (`make bench-ui`)
#   BENCH_QUICK=1 scripts/bench.sh   the short form (fewer samples, smaller fixtures): a smoke
#
# Every figure comes from the benches' own output in this run: `BENCH {json}` lines in the
# logs under artifacts/bench/logs, criterion's estimates.json, and the graph bench's lines.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ui_only=0
[ "${1:-}" = "--ui-only" ] && ui_only=1
quick="${BENCH_QUICK:-0}"
export BENCH_QUICK="$quick"
TARGET="$(target_dir)"
# The bare app is its own Cargo project: without this its build would go to its own target/.
export CARGO_TARGET_DIR="$TARGET"
OUT="$ROOT/artifacts/bench"
LOGS="$OUT/logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
failed=()

ensure_toolchains
started=$(date +%s)

# One bench; its output goes to the terminal and to logs/NAME.log; a failure is remembered
# (the table then shows its rows as not measured) and the others still run.
run_bench() {
  local name="$1"
  shift
  say "bench: $name"
  if ! "$@" 2>&1 | tee "$LOGS/$name.log"; then
    failed+=("$name")
  fi
}

if [ "$ui_only" -eq 0 ]; then
  ensure_packages openssh-server openssh-client
  cd "$ROOT"
  # Criterion's results of earlier runs are not this run's: only fresh estimates are read.
  rm -rf "$TARGET/criterion/corpus"
  say "building the benches (release profile)"
  cargo bench --no-run -p nomos-policy -p nomos-store -p nomos-agent -p nomos-exec
  crit=()
  [ "$quick" = 1 ] && crit=(--warm-up-time 0.5 --measurement-time 1 --sample-size 10)
  run_bench policy cargo bench -q -p nomos-policy --bench classify -- "${crit[@]}"
  # The percentile loops only (criterion's means of the same operations are not in the table).
  run_bench store env NOMOS_BENCH_ONLY=append,transcript,fts,sessions cargo bench -q -p nomos-store --bench store
  run_bench agent-overhead cargo bench -q -p nomos-agent --bench overhead
  run_bench agent-deadline cargo bench -q -p nomos-agent --bench model_deadline
  ssh_crit=(--warm-up-time 0.5 --measurement-time 2 --sample-size 10)
  [ "$quick" = 1 ] || ssh_crit=()
  run_bench exec-ssh-reuse cargo bench -q -p nomos-exec --bench ssh_reuse -- "${ssh_crit[@]}"
  run_bench exec-ssh-fanout cargo bench -q -p nomos-exec --bench ssh_fanout
fi

# The app rows: the release app and the bare Tauri window, built alike (release profile,
# thin LTO); cargo rebuilds only what changed.
ensure_packages "${BUILD_PACKAGES[@]}" xvfb webkit2gtk-driver dbus python3
ensure_ui_deps
app_bin="$TARGET/release/nomos-desktop"
# Rebuilding the UI rewrites ui/dist, which makes cargo relink the release app (many minutes
# with thin LTO on 2 cores): only when a source is newer than the binary.
if [ ! -x "$app_bin" ] || [ -n "$(find "$ROOT/ui/src" "$ROOT/ui/index.html" "$ROOT/src-tauri" "$ROOT/crates" \
    -newer "$app_bin" -type f \( -name '*.rs' -o -name '*.ts' -o -name '*.svelte' -o -name '*.css' \
    -o -name '*.html' -o -name '*.json' -o -name '*.toml' -o -name '*.sql' \) -print -quit)" ]; then
  build_ui
  say "building the release app"
  # The same package set as a full release build, so its feature resolution (and cache) is shared.
  (cd "$ROOT" && cargo build --release -p nomos-desktop -p nomos-cli)
else
  say "the release app is newer than its sources: not rebuilt"
fi
bare_bin="$TARGET/release/bare-tauri"
if [ ! -x "$bare_bin" ] || [ -n "$(find "$ROOT/bench/bare-tauri" -newer "$bare_bin" -type f -not -path '*/gen/*' -print -quit)" ]; then
  say "building the bare Tauri reference app (release)"
  (cd "$ROOT/bench/bare-tauri" && cargo build --release)
fi
export TAURI_DRIVER="$(ensure_tauri_driver)"
export NOMOS_APP_BINARY="$app_bin"
export BARE_TAURI_BINARY="$bare_bin"
cd "$ROOT/ui"
# Each in its own display and session bus, so one leaves nothing behind for the next.
run_bench ui xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- node e2e/bench-ui.mjs
graph_nodes=5000
[ "$quick" = 1 ] && graph_nodes=2000
run_bench ui-graph env BENCH_NODES="$graph_nodes" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- node e2e/bench-graph.mjs

cd "$ROOT"
elapsed=$(( $(date +%s) - started ))
say "benchmarks done in ${elapsed} s; the table (also in $OUT/table.md and table.json)"
table=(node scripts/bench/table.mjs --logs "$LOGS" --criterion "$TARGET/criterion" --out "$OUT" --load "$(uptime | sed 's/.*load/load/')")
[ "$quick" = 1 ] && table+=(--quick)
[ "$ui_only" -eq 1 ] && table+=(--only ui)
echo
"${table[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  die "benches that did not run to the end (their rows say not measured): ${failed[*]}; logs in $LOGS"
fi
