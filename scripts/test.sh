#!/usr/bin/env bash
# Sets up everything callgate's tests need on a fresh machine, then runs every test.
# Used as is by CI (.ci/run) and by the README.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== lint and format (biome)"
npx biome check .

echo "== tests on Node 20 (vitest)"
node node_modules/vitest/vitest.mjs run
