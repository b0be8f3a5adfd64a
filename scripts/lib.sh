# Shared helpers for the project scripts. Sourced, not executed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Packages needed to build the desktop app (Tauri v2 on WebKitGTK).
BUILD_PACKAGES=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libssl-dev pkg-config build-essential curl file)
# Extra packages the tests start for real: a virtual display, the WebKit WebDriver, a D-Bus
# session with a Secret Service, an OpenSSH server, a notification daemon (dunst, whose
# dunstctl activates notifications; x11-utils gives the e2e test a second window, xmessage, to
# move the focus to), screenshots, and bubblewrap, the throwaway sandbox the policy tests run read-only commands in.
# (Not dbus-x11: WebKit would spawn a stray session bus that outlives the app.)
TEST_PACKAGES=(xvfb webkit2gtk-driver dbus gnome-keyring openssh-server openssh-client xdotool
  imagemagick dunst x11-utils libglib2.0-bin libsecret-tools python3 bubblewrap)

# Installs the Debian packages that are missing, as root or through sudo.
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}) and no sudo: install them as root"
    sudo=(sudo)
  fi
  say "installing system packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_toolchains() {
  command -v cargo >/dev/null || die "cargo not found: install the Rust toolchain (rustup) first"
  command -v node >/dev/null || die "node not found: install Node.js 20.19 or newer first"
  local node_major
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old: the UI toolchain needs 20.19 or newer"
}

# Installs the UI's npm dependencies when the lockfile changed since the last install.
ensure_ui_deps() {
  local stamp="$ROOT/ui/node_modules/.nomos-lock"
  if [ ! -f "$stamp" ] || ! cmp -s "$ROOT/ui/package-lock.json" "$stamp"; then
    say "installing UI dependencies (npm ci)"
    (cd "$ROOT/ui" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$ROOT/ui/package-lock.json" "$stamp"
  fi
}

build_ui() {
  say "building the UI"
  (cd "$ROOT/ui" && npm run --silent build)
}

target_dir() {
  echo "${CARGO_TARGET_DIR:-$ROOT/target}"
}

# Installs tauri-driver (the WebDriver bridge) next to the build output, once.
ensure_tauri_driver() {
  local root
  root="$(target_dir)/tools"
  if [ ! -x "$root/bin/tauri-driver" ]; then
    say "installing tauri-driver"
    cargo install --quiet --locked tauri-driver --version '^2' --root "$root"
  fi
  echo "$root/bin/tauri-driver"
}
