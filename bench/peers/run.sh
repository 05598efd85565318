#!/usr/bin/env bash
# Side-by-side benchmark against the closest Python peer: installs tracekit-ai 1.4.2 from PyPI
# into bench/peers/.venv (with haystack-ai and this checkout's callgate-haystack), then runs
# peer_bench.py and writes bench/results/peers.json. Needs a build (npm run build) for the server.
# Usage: bench/peers/run.sh [--rounds 5] [--runs 8] [--warmup-runs 1]
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=bench/peers/.venv
PEER=tracekit-ai==1.4.2
if [ ! -x "$VENV/bin/tracekit" ]; then
  python=$(command -v python3.11 || command -v python3)
  "$python" -m venv "$VENV"
  # The peer must exist on PyPI as named; say so plainly when it does not.
  if ! "$VENV/bin/python" -m pip download --quiet --no-deps "$PEER" -d "$VENV/peer-download" >/dev/null 2>&1; then
    echo "bench/peers: $PEER cannot be downloaded from PyPI; the side-by-side figures cannot be made" >&2
    exit 1
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PEER" "haystack-ai>=3.4,<3.5" -e python/callgate-haystack
fi
[ -f packages/cli/dist/bin.js ] || npm run build --silent
mkdir -p bench/results
"$VENV/bin/python" bench/peers/peer_bench.py --json bench/results/peers.json "$@"
