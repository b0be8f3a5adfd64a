#!/usr/bin/env bash
# Scans what the tests left behind for every token, key and password they used: the e2e
# artifacts, the apps' private homes (databases with their -wal, logs, settings.json, exports)
# and any path given as an argument. Fails naming the file and the secret's label, never the
# secret. The secrets: ui/e2e/fixtures/canary-secrets.tsv, plus every list a test registered
# at run time (<artifacts>/*secrets.tsv, written by registerSecret in ui/e2e/harness.mjs).
#
#   scripts/scan-secrets.sh [PATH …]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

artifacts="${NOMOS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
tmp="${TMPDIR:-/tmp}"

lists=(--secrets "$ROOT/ui/e2e/fixtures/canary-secrets.tsv")
registered=0
shopt -s nullglob
for list in "$artifacts"/*secrets.tsv; do
  lists+=(--secrets "$list")
  registered=$((registered + 1))
done

# The apps' homes the e2e harness made (launchApp: nomos-e2e-<name>-*; the graph benchmark).
paths=("$artifacts")
for home in "$tmp"/nomos-e2e-* "$tmp"/nomos-bench-graph-*; do
  [ -d "$home" ] && paths+=("$home")
done
paths+=("$@")
shopt -u nullglob

say "secrets scan: ${#paths[@]} places, the canary list and $registered registered list(s)"
python3 "$ROOT/scripts/scan_secrets.py" "${lists[@]}" "${paths[@]}"
