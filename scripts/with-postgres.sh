#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL: installs Debian's `postgresql` package when it is
# missing, `initdb`s a cluster into a temporary folder, starts it on 127.0.0.1 at a free port
# (and a Unix socket in the same folder), exports CALLGATE_TEST_PG_URL and the libpq variables
# (PGHOST, PGPORT, PGUSER, PGDATABASE), runs the command, then stops the server and removes the
# folder, whatever the command's outcome. Exits with the command's status.
#
#   scripts/with-postgres.sh node node_modules/vitest/vitest.mjs run packages/store-postgres
#
# initdb and postgres refuse to run as root: as root the cluster belongs to the `postgres` user.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: scripts/with-postgres.sh COMMAND [ARGUMENTS...]" >&2
  exit 2
fi

find_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

bin=$(find_bin || true)
if [ -z "$bin" ]; then
  echo "== installing PostgreSQL (Debian package postgresql)" >&2
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  "${apt_get[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq --no-install-recommends postgresql >/dev/null
  bin=$(find_bin)
fi

as_owner=()
folder=$(mktemp -d "${TMPDIR:-/tmp}/callgate-pg.XXXXXX")
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$folder"
  as_owner=(runuser -u postgres --)
  user=postgres
else
  user=$(id -un)
fi
chmod 700 "$folder"
data="$folder/data"

# A free port: bind port 0, read what the kernel gave, release it.
port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")

stop() {
  local status=$?
  if [ -f "$data/postmaster.pid" ]; then
    "${as_owner[@]}" "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$folder"
  exit "$status"
}
trap stop EXIT INT TERM

"${as_owner[@]}" "$bin/initdb" -D "$data" -U "$user" --auth=trust -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 \
  || { cat "$folder/initdb.log" >&2; exit 1; }
# fsync stays on (the kill -9 tests need acknowledged commits durable); small shared memory, many
# connections (three servers and their pools).
"${as_owner[@]}" "$bin/pg_ctl" -D "$data" -l "$folder/postgres.log" -w -t 30 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$folder -c max_connections=200 -c shared_buffers=32MB" \
  start >/dev/null || { cat "$folder/postgres.log" >&2; exit 1; }

export PGHOST=127.0.0.1 PGPORT="$port" PGUSER="$user" PGDATABASE=postgres
export CALLGATE_TEST_PG_URL="postgres://$user@127.0.0.1:$port/postgres"
echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $CALLGATE_TEST_PG_URL" >&2
"$@"
