#!/usr/bin/env bash
# End-to-end tests: the built app in the real webview under Xvfb and a private D-Bus session.
# Expects the UI and the app to be built (scripts/test.sh does both).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

driver="$(ensure_tauri_driver)"
export TAURI_DRIVER="$driver"
export NOMOS_APP_BINARY="${NOMOS_APP_BINARY:-$(target_dir)/debug/nomos-desktop}"
export NOMOS_CLI_BINARY="${NOMOS_CLI_BINARY:-$(target_dir)/debug/nomos}"
export NOMOS_E2E_ARTIFACTS="${NOMOS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
[ -x "$NOMOS_APP_BINARY" ] || die "app binary not found at $NOMOS_APP_BINARY"
[ -x "$NOMOS_CLI_BINARY" ] || die "CLI binary not found at $NOMOS_CLI_BINARY"

say "end-to-end tests in the real webview (tauri-driver + WebKitWebDriver, Xvfb)"
cd "$ROOT/ui"
xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
  node --test --test-reporter=spec --test-concurrency=1 e2e/*.e2e.mjs
say "end-to-end screenshots in $NOMOS_E2E_ARTIFACTS"
