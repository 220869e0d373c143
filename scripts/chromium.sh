#!/usr/bin/env bash
# Headless Chromium for the browser tests, from Debian's packages (Playwright's own browser download needs the
# internet, which these machines do not have). Does nothing when a chromium is already there.
set -euo pipefail
CHROMIUM="${CITESTREAM_CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: not found and apt-get is not available here; the browser tests will be skipped" \
       "(install Chromium and set CITESTREAM_CHROMIUM to its path)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "chromium: not found and not root (no passwordless sudo); the browser tests will be skipped" \
         "(run: apt-get install chromium)"
    exit 0
  fi
fi
echo "installing chromium from Debian's packages for the browser tests (about a minute)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
"$CHROMIUM" --version 2>/dev/null || true
