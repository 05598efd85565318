#!/usr/bin/env bash
# Sets up everything callgate's tests need on a fresh machine, then runs every test.
# Used as is by CI (.ci/run) and by the README.
set -euo pipefail
cd "$(dirname "$0")/.."

# A throwaway PostgreSQL (installed when missing) for the store-postgres and replica tests: the
# whole run goes through scripts/with-postgres.sh, which sets CALLGATE_TEST_PG_URL and stops it.
if [ -z "${CALLGATE_TEST_PG_URL:-}" ]; then
  exec bash scripts/with-postgres.sh bash scripts/test.sh "$@"
fi
bash scripts/setup.sh
mkdir -p test-artifacts
node22=tools/node22/node_modules/node/bin/node

echo "== lint and format (biome)"
npx biome check .

echo "== tests on Node 20 (vitest)"
node node_modules/vitest/vitest.mjs run --exclude 'packages/ai-sdk/**' --exclude 'packages/openai-agents/**' \
  --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest-node20.json

echo "== tests on Node 22: ai-sdk, openai-agents, langchain (vitest)"
"$node22" node_modules/vitest/vitest.mjs run --config test/conformance/vitest.node22.config.ts \
  --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest-node22.json

echo "== adapter conformance page is current"
node test/conformance/report.mjs --check test-artifacts/vitest-node20.json test-artifacts/vitest-node22.json

echo "== examples check themselves"
"$node22" examples/ai-sdk-agent/main.mjs
"$node22" examples/openai-agents-agent/main.mjs
node examples/langchain-agent/main.mjs
"$node22" examples/ai-sdk-agent/server.mjs >/dev/null || { echo "examples/ai-sdk-agent/server.mjs failed"; exit 1; }
"$node22" examples/openai-agents-agent/server.mjs >/dev/null || { echo "examples/openai-agents-agent/server.mjs failed"; exit 1; }
node examples/langchain-agent/server.mjs >/dev/null || { echo "examples/langchain-agent/server.mjs failed"; exit 1; }
echo "server-backed examples (ai-sdk, openai-agents, langchain): OK"
(cd "$(mktemp -d)" && node "$OLDPWD/examples/gateway/agent.mjs" >/dev/null) || { echo "examples/gateway failed"; exit 1; }
echo "examples/gateway: OK (run from a folder outside the repository)"
demo_log=test-artifacts/demo.log
node packages/cli/dist/bin.js demo >"$demo_log" 2>&1 || { cat "$demo_log"; echo "callgate demo failed"; exit 1; }
echo "callgate demo: $(tail -n 2 "$demo_log" | head -n 1)"

echo "== Python: callgate-haystack (pytest against a real server) and examples/haystack-agent"
bash scripts/python-test.sh

echo "== installable packages: npm pack tarballs and pip install, from a folder outside the repository"
if [ "${CALLGATE_SKIP_PACKAGE_TEST:-}" = 1 ]; then echo "skipped (CALLGATE_SKIP_PACKAGE_TEST=1)"; else bash scripts/package-test.sh; fi
