#!/usr/bin/env bash
# End-to-end tests: the built app in the real webview under Xvfb and a private D-Bus session.
# Expects the UI and the app to be built (scripts/test.sh does both).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_packages "${TEST_PACKAGES[@]}"
driver="$(ensure_tauri_driver)"
export TAURI_DRIVER="$driver"
export NOMOS_APP_BINARY="${NOMOS_APP_BINARY:-$(target_dir)/debug/nomos-desktop}"
export NOMOS_CLI_BINARY="${NOMOS_CLI_BINARY:-$(target_dir)/debug/nomos}"
export NOMOS_E2E_ARTIFACTS="${NOMOS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
[ -x "$NOMOS_APP_BINARY" ] || die "app binary not found at $NOMOS_APP_BINARY"
[ -x "$NOMOS_CLI_BINARY" ] || die "CLI binary not found at $NOMOS_CLI_BINARY"

say "end-to-end tests in the real webview (tauri-driver + WebKitWebDriver, Xvfb, dunst)"
cd "$ROOT/ui"
mkdir -p "$NOMOS_E2E_ARTIFACTS"
# Inside the private session bus: the real notification daemon (dunst) owns
# org.freedesktop.Notifications before the app starts, with the tests' configuration, and
# stops with the session.
xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- bash -c '
  set -euo pipefail
  dunst -config "$1" >"$NOMOS_E2E_ARTIFACTS/dunst.log" 2>&1 &
  dunst_pid=$!
  trap "kill $dunst_pid 2>/dev/null || true" EXIT
  # Asked of the bus itself: a call to the name would start a second dunst by activation.
  owned() {
    gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
      --method org.freedesktop.DBus.NameHasOwner org.freedesktop.Notifications | grep -q true
  }
  for _ in $(seq 100); do owned && break; sleep 0.1; done
  owned || { echo "dunst did not start: $(cat "$NOMOS_E2E_ARTIFACTS/dunst.log")" >&2; exit 1; }
  node --test --test-reporter=spec --test-concurrency=1 e2e/*.e2e.mjs
' e2e "$ROOT/ui/e2e/fixtures/dunstrc"
say "end-to-end screenshots in $NOMOS_E2E_ARTIFACTS"

# Secrets scan (issue 16): what the suites left (artifacts, the apps' homes: databases, logs,
# settings, exports) holds none of the tests' tokens, keys or passwords. The scanner's own
# tests first, so a scan that finds nothing is known to be able to find something.
say "secrets scanner self-test"
python3 "$ROOT/scripts/scan_secrets_test.py" >"$NOMOS_E2E_ARTIFACTS/scan-secrets-selftest.log" 2>&1 \
  || { cat "$NOMOS_E2E_ARTIFACTS/scan-secrets-selftest.log" >&2; die "secrets scanner self-test failed"; }
"$ROOT/scripts/scan-secrets.sh"
