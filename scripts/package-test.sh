#!/usr/bin/env bash
# Installs callgate the way a user outside this repository would, until the packages are
# published: `npm pack` of every workspace package, installed together from those files into a
# fresh npm project in a temporary folder (no @callgate package comes from the registry), and
# `pip install ./python/callgate-haystack` into a fresh venv. Then runs an example from each.
# Called by scripts/test.sh after the build; CALLGATE_KEEP_PACKAGE_TEST=1 keeps the folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/callgate-package-test-XXXXXX")
[ "${CALLGATE_KEEP_PACKAGE_TEST:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
cd "$repo"

echo "== packages: npm pack of every workspace package into $work/packs"
mkdir -p "$work/packs"
# Private workspaces (@callgate/testing: what the tests share) are never published: not packed.
workspaces=$(node -e '
const { readFileSync } = require("node:fs");
const published = (folder) => !JSON.parse(readFileSync(`${folder}/package.json`, "utf8")).private;
console.log(require("./package.json").workspaces.filter(published).join(" "));')
for workspace in $workspaces; do
  npm pack --silent --pack-destination "$work/packs" -w "$workspace" >/dev/null
done
# Every @callgate dependency must name a sibling's exact version (so the tarballs satisfy each
# other), and every tarball must hold what its package.json exports.
node scripts/check-packs.mjs "$work/packs" $workspaces

echo "== packages: a fresh npm project installs the tarballs together (no @callgate/* from the registry)"
mkdir -p "$work/app"
cd "$work/app"
npm init -y >/dev/null
core_packs=()
for name in protocol core store-sqlite store-postgres client mcp-gateway server cli; do
  core_packs+=("$work/packs/callgate-$name-0.1.0.tgz")
done
JOBS=max npm install --no-audit --no-fund --loglevel=error "${core_packs[@]}"
cat >use-core.mjs <<'EOF'
// The README's TypeScript snippet, as plain ESM against the installed packages.
import { Engine, executeStep, loadPolicy, MemoryStore } from '@callgate/core';
import { Ledger, generateLogSigner, verifyBundle } from '@callgate/core/ledger';
const policy = loadPolicy('version: 1\ndefault: deny\nrules:\n  - id: reads\n    match: { tools: [read_file] }\n    effect: allow\n');
const store = new MemoryStore();
const signer = generateLogSigner('example.com/log');
const ledger = await Ledger.open(store, { signer, origin: 'example.com/log' });
const tool = { name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
const engine = new Engine({ store, ledger, policy, tools: [tool] });
const run = await engine.startRun({ principal: 'package-test', framework: 'plain' });
const results = await executeStep(engine, run.run_id, [{ id: 'c1', tool: 'read_file', arguments: { path: 'a' } }, { id: 'c2', tool: 'delete_file', arguments: {} }], () => 'text');
await engine.endRun(run.run_id);
const report = verifyBundle(await engine.exportRun(run.run_id), { publicKey: signer.verifierKey, strict: true });
const summary = results.map((result) => (result.ok ? 'ok' : result.error.kind)).join(', ');
console.log(`@callgate/core from the tarball: ${summary}; bundle ${report.ok ? 'verifies' : 'FAILS'}`);
if (summary !== 'ok, tool-not-found' || !report.ok) process.exit(1);
EOF
node use-core.mjs
demo_log="$work/demo.log"
./node_modules/.bin/callgate demo >"$demo_log" 2>&1 || { cat "$demo_log"; echo "callgate demo from the installed tarballs failed"; exit 1; }
echo "installed callgate demo: $(tail -n 2 "$demo_log" | head -n 1)"

echo "== packages: pip install ./python/callgate-haystack into a fresh venv"
python=${PYTHON:-python3}
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$repo/python/callgate-haystack"
cd "$work"
"$work/venv/bin/python" -c 'import haystack_integrations.hooks.callgate, haystack_integrations.tools.callgate; print("callgate-haystack imports from a plain install")'
CALLGATE_REPO="$repo" "$work/venv/bin/python" "$repo/examples/haystack-agent/agent.py" >"$work/haystack.log" 2>&1 ||
  { cat "$work/haystack.log"; echo "examples/haystack-agent from the installed package failed"; exit 1; }
echo "installed callgate-haystack: examples/haystack-agent $(tail -n 1 "$work/haystack.log")"
