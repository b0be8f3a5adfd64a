#!/bin/sh
# Runs a command with a real Secret Service: a private D-Bus session bus with gnome-keyring
# unlocked, and throw-away XDG directories, so the keyring tests never touch the operator's
# own keyring.
#
#   crates/auth/tests/with-keyring.sh cargo test -p nomos-auth
#
# Inside, NOMOS_REQUIRE_KEYRING defaults to 1: a keyring test that finds no Secret Service
# fails instead of skipping. Needs the Debian packages dbus, gnome-keyring (and
# libsecret-tools for the tests that inspect the entries).
set -eu

if [ "$#" -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi
for tool in dbus-run-session gnome-keyring-daemon; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$0: $tool is missing (apt-get install dbus gnome-keyring)" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nomos-keyring.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/data" "$tmp/runtime"
chmod 700 "$tmp/runtime"

export XDG_DATA_HOME="$tmp/data"
export XDG_RUNTIME_DIR="$tmp/runtime"
export NOMOS_REQUIRE_KEYRING="${NOMOS_REQUIRE_KEYRING:-1}"

# `exec "$@"` replaces the inner shell, so the command's exit status is the script's.
dbus-run-session -- sh -c '
    printf %s pass | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    exec "$@"
' with-keyring "$@"
