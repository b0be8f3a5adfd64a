#!/usr/bin/env bash
# Runs every test: formatting, lints, Rust unit and integration tests, UI checks and unit
# tests, and the end-to-end tests in the real webview. Installs what is missing first.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
ensure_toolchains
ensure_ui_deps
cd "$ROOT"

say "cargo fmt --check"
cargo fmt --all -- --check

# The desktop crate embeds ui/dist at compile time, so the UI is built before any cargo build.
build_ui

say "clippy (warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

say "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# Inside a private D-Bus session with an unlocked gnome-keyring: the sign-in tests use a real
# Secret Service and fail (not skip) when there is none.
say "Rust tests (with a real Secret Service)"
"$ROOT/crates/auth/tests/with-keyring.sh" cargo test --workspace

# A short fuzzing smoke (the long run is `make fuzz`): the targets build and hold for a while.
say "fuzzing smoke (${FUZZ_SMOKE_SECONDS:-15}s per target)"
FUZZ_SECONDS="${FUZZ_SMOKE_SECONDS:-15}" "$ROOT/scripts/fuzz.sh"

say "UI: type check, IPC boundary, unit tests"
(cd ui && npm run --silent check && npm run --silent lint:ipc && npm run --silent test)

# The `make bench` table maker and the UI bench's figures (no benchmark runs here).
say "bench table maker: unit tests"
node --test scripts/bench/

say "building the desktop app and the CLI for the end-to-end tests"
cargo build -p nomos-desktop -p nomos-cli
"$ROOT/scripts/e2e.sh"

say "all tests passed"
