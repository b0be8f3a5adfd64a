#!/usr/bin/env bash
# Builds and launches the desktop app, installing what is missing first.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_packages "${BUILD_PACKAGES[@]}"
ensure_toolchains
ensure_ui_deps
build_ui
say "building the desktop app"
cargo build --manifest-path "$ROOT/Cargo.toml" -p nomos-desktop ${NOMOS_RELEASE:+--release}
app="$(target_dir)/${NOMOS_RELEASE:+release}${NOMOS_RELEASE:-debug}/nomos-desktop"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  # No desktop session (e.g. over SSH): run on a virtual display so the app still starts.
  ensure_packages xvfb dbus
  say "no display found: launching under Xvfb"
  exec xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- "$app" "$@"
fi
say "launching Nomos"
exec "$app" "$@"
