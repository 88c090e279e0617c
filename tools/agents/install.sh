#!/usr/bin/env bash
# Install the real agent CLIs the tests-integration/test_agents_*.py tests drive, at pinned
# versions, into tools/agents/node (gitignored). Idempotent: when every pinned version is
# already there it does nothing. Needs node and npm; without them it says so and exits 0,
# and those tests skip with that reason.
set -euo pipefail
cd "$(dirname "$0")"
PREFIX="$PWD/node"

# Pinned: checked with `npm view <package> version`; bump deliberately, one at a time.
PACKAGES=(
    "@anthropic-ai/claude-code@2.1.332"
    "opencode-ai@1.18.33"
    "@openai/codex@0.171.0"
    "@google/gemini-cli@0.61.0"
    "@github/copilot@1.0.102"
)

if ! command -v npm >/dev/null 2>&1; then
    echo "tools/agents/install.sh: npm is not installed; the real-agent tests will skip" >&2
    exit 0
fi

installed_version() {
    # node_modules/<name>/package.json's version, or nothing
    local manifest="$PREFIX/node_modules/$1/package.json"
    [ -f "$manifest" ] && node -p "require('$manifest').version" 2>/dev/null || true
}

missing=()
for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    if [ "$(installed_version "$name")" != "$version" ]; then
        missing+=("$spec")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "tools/agents: claude-code, opencode, codex, gemini-cli and copilot already at the pinned versions"
    exit 0
fi

mkdir -p "$PREFIX"
echo "tools/agents: installing ${missing[*]}"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --save-exact "${PACKAGES[@]}"
for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    echo "  $name $(installed_version "$name")"
done
ls "$PREFIX/node_modules/.bin"
