#!/usr/bin/env bash
# Sets up callgate on a fresh machine and runs its main job: `callgate demo` on the embedded
# default (SQLite). Extra arguments go to `callgate demo` (e.g. --interactive, --dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
CALLGATE_SKIP_BROWSER=1 CALLGATE_SKIP_NODE22=1 bash scripts/setup.sh >&2
exec node packages/cli/dist/bin.js demo "$@"
