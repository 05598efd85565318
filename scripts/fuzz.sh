#!/usr/bin/env bash
# The generated conformance harness at length: CALLGATE_FUZZ_RUNS (default 20,000) generated runs
# per integration — core executeStep, the HTTP API, the MCP gateway and the LangChain adapter on
# Node 20; the AI SDK and OpenAI Agents adapters on Node 22; the Haystack hook (hypothesis, against
# a real callgate serve). Each prints its counts (runs, calls, ran, refused, asks, normalised
# results, refusal records, and the cases played as their nearest expressible form, by reason).
# `./scripts/fuzz.sh <name>...` runs only the named ones (core http gateway langchain ai-sdk
# openai-agents haystack).
set -euo pipefail
cd "$(dirname "$0")/.."
export CALLGATE_FUZZ_RUNS="${CALLGATE_FUZZ_RUNS:-20000}"
node22=tools/node22/node_modules/node/bin/node
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(core http gateway langchain ai-sdk openai-agents haystack)
for name in "${wanted[@]}"; do
  echo "== fuzz: $name ($CALLGATE_FUZZ_RUNS runs)"
  case "$name" in
    core | http | gateway) node node_modules/vitest/vitest.mjs run "test/conformance/generated/$name.test.ts" ;;
    langchain) node node_modules/vitest/vitest.mjs run packages/langchain/src/generated.test.ts ;;
    ai-sdk | openai-agents)
      "$node22" node_modules/vitest/vitest.mjs run --config test/conformance/vitest.node22.config.ts \
        "packages/$name/src/generated.test.ts" ;;
    haystack)
      [ -f packages/cli/dist/bin.js ] || npm run build --silent
      (cd python/callgate-haystack && CALLGATE_FUZZ_SHRINK="${CALLGATE_FUZZ_SHRINK:-1}" \
        ../.venv/bin/python -m pytest tests/test_generated_harness.py -q -s -W ignore::DeprecationWarning) ;;
    *) echo "fuzz.sh: no integration named $name" >&2; exit 2 ;;
  esac
done
