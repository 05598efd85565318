#!/usr/bin/env bash
# Installs what callgate needs on a fresh machine: npm packages (workspace and the separate Node 22
# used by the tests of packages that require it), Debian's chromium for the browser tests, and the
# build. Safe to run again: each step is skipped or quick when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
if [ "${CALLGATE_SKIP_BROWSER:-}" != 1 ] && [ ! -x /usr/bin/chromium ]; then need_apt+=(chromium); fi
if ! command -v python3 >/dev/null; then need_apt+=(python3 python3-venv); fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  "${apt_get[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# npm ci only when the lock file changed since the last install here (npm ci always starts over).
npm_ci() { # folder
  local folder=$1 marker="$1/node_modules/.callgate-lock-sha256" sum
  sum=$(sha256sum "$folder/package-lock.json" | cut -d' ' -f1)
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$sum" ]; then
    echo "== npm packages in $folder: up to date"
    return
  fi
  echo "== npm packages in $folder"
  npm ci --prefix "$folder" --no-audit --no-fund --loglevel=error
  echo "$sum" >"$marker"
}
npm_ci .
[ "${CALLGATE_SKIP_NODE22:-}" = 1 ] || npm_ci tools/node22

echo "== build (tsc -b)"
npm run build --silent

# npm links package commands at install time, before dist/ exists on a fresh clone: link the
# callgate command now, so `npx callgate` runs this repository's build (never the registry).
chmod +x packages/cli/dist/bin.js
[ -e node_modules/.bin/callgate ] || ln -s ../@callgate/cli/dist/bin.js node_modules/.bin/callgate

echo "callgate is set up: run npx callgate demo (or ./scripts/test.sh for every test; npx callgate --help for the commands)"
