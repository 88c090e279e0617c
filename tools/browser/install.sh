#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the web-interface browser tests
# (tests-integration/test_gui_browser.py). Idempotent: does nothing when it is there.
# Playwright drives it through executable_path; `playwright install` is never run,
# because its own browser download fails offline.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "tools/browser/install.sh: no apt-get; install chromium at /usr/bin/chromium yourself" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "tools/browser/install.sh: not root and no sudo; as root run: apt-get install chromium fonts-dejavu-core" >&2
        exit 1
    fi
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
