#!/usr/bin/env bash
# Install each Debian package in tools/system-packages.txt that is missing (one apt-get call).
#
#   tools/system_packages.sh           install what is missing (as root); otherwise say what is missing
#   tools/system_packages.sh --check   only list what is missing (exit 1 if anything is)
#
# `make test` (through `make system-packages`) and .ci/run both run this, so the README's test command
# and CI set up the same machine whatever it already has. Not root, or no apt-get: prints the command to
# run and exits 0, unless CI=true, where a missing package is an error.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
list="$here/system-packages.txt"

mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
missing=()
for pkg in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "system packages: all ${#wanted[@]} present (${wanted[*]})"
    exit 0
fi
if [ "${1:-}" = "--check" ]; then
    echo "system packages missing: ${missing[*]}"
    exit 1
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system packages missing: ${missing[*]}" >&2
    echo "  install them as root: apt-get install ${missing[*]}   (or: sudo make system-packages)" >&2
    case "${CI:-}" in 1|true|yes|TRUE|True) exit 1;; esac
    echo "  (the browser tests and the static images of figures skip or fail without them)" >&2
    exit 0
fi
echo "system packages: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"
