#!/usr/bin/env bash
# The generated conformance harness at length: CALLGATE_FUZZ_RUNS (default 20,000) generated runs
# per integration — core executeStep, the HTTP API, the MCP gateway and the LangChain adapter on
# Node 20; the AI SDK and OpenAI Agents adapters on Node 22; the Haystack hook (hypothesis, against
# a real callgate serve). Each prints its counts (runs, calls, ran, refused, asks, normalised
# results, refusal records, and the cases played as their nearest expressible form, by reason).
# `./scripts/fuzz.sh <name>...` runs only the named ones (core http gateway langchain ai-sdk
# openai-agents haystack). The Haystack pass, which waits on its reviewers and its server more than
# it computes, runs as CALLGATE_FUZZ_SHARDS (default 4) pytest processes side by side, each with its
# own server, its share of the runs and its own seed (CALLGATE_FUZZ_SEED + shard); each prints its
# counts and the pass fails when any shard does.
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
      shards="${CALLGATE_FUZZ_SHARDS:-4}"
      base_seed="${CALLGATE_FUZZ_SEED:-2026}"
      pids=()
      for shard in $(seq 1 "$shards"); do
        share=$(( CALLGATE_FUZZ_RUNS / shards + (shard <= CALLGATE_FUZZ_RUNS % shards ? 1 : 0) ))
        (cd python/callgate-haystack && CALLGATE_FUZZ_RUNS="$share" CALLGATE_FUZZ_SEED=$(( base_seed + shard )) \
          CALLGATE_FUZZ_SHRINK="${CALLGATE_FUZZ_SHRINK:-1}" \
          ../.venv/bin/python -m pytest tests/test_generated_harness.py -q -s -p no:cacheprovider \
          -W ignore::DeprecationWarning $([ "$shard" = 1 ] || echo "-k generated_runs")) &
        pids+=($!)
      done
      failed=0
      for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
      [ "$failed" = 0 ] || { echo "fuzz: a haystack shard failed" >&2; exit 1; } ;;
    *) echo "fuzz.sh: no integration named $name" >&2; exit 2 ;;
  esac
done
