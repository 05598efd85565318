#!/usr/bin/env bash
# Every figure of DESIGN §7 that depends on speed, one after another in one run, each printed with
# the load average it ran under, into bench/results/figures.txt (and each benchmark's JSON beside
# it). Benchmarks are not tests: run this on demand, on a machine as idle as you can get.
# Usage: bench/figures.sh   (after npm run build; bench/peers/run.sh builds its own venv)
set -uo pipefail
cd "$(dirname "$0")/.."
out=bench/results/figures.txt
mkdir -p bench/results
: >"$out"
step() {
  echo "== $* (load before: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out"
  "$@" 2>&1 | tee -a "$out"
  echo | tee -a "$out"
}
PY=python/.venv/bin/python
[ -x "$PY" ] || PY=bench/peers/.venv/bin/python
date -u +"run at %Y-%m-%dT%H:%M:%SZ on $(nproc) cores" | tee -a "$out"
step bench/peers/run.sh --rounds 5 --runs 6
step "$PY" python/callgate-haystack/bench/hook_overhead.py --calls 1000 --json bench/results/hook-overhead.json
step "$PY" python/callgate-haystack/bench/http_clients.py --requests 300 --rounds 5 --json bench/results/http-clients.json
step node bench/gateway.mjs --quick
step node bench/verify.mjs --records 100000
