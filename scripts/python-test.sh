#!/usr/bin/env bash
# Python side of callgate: sets up python/.venv (Python >= 3.11) when missing, installs
# python/callgate-haystack with its test extras, runs its pytest suite against a real
# `callgate serve` process, then runs examples/haystack-agent. Works on a fresh machine; called
# by scripts/test.sh after the npm build (and builds the CLI itself when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=python/.venv

pick_python() {
  for candidate in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "python-test.sh: needs Python >= 3.11 (python3.11 on PATH, or PYTHON=...)" >&2
  return 1
}

if [ ! -x "$VENV/bin/python" ]; then
  python=$(pick_python)
  echo "== python: creating $VENV with $python"
  "$python" -m venv "$VENV"
fi

echo "== python: installing callgate-haystack[test]"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "python/callgate-haystack[test]"

if [ ! -f packages/cli/dist/bin.js ]; then
  echo "== python: building the callgate CLI (npm run build)"
  npm run build --silent
fi

echo "== python: pytest (callgate-haystack, against a real callgate server)"
# The JUnit XML feeds the Haystack column of docs/adapters-conformance.md (test/conformance/report.mjs).
mkdir -p test-artifacts
(cd python/callgate-haystack && ../.venv/bin/python -m pytest -q -p no:cacheprovider \
  --junitxml=../../test-artifacts/pytest-haystack.xml)

echo "== python: examples/haystack-agent"
"$VENV/bin/python" examples/haystack-agent/agent.py
