#!/usr/bin/env bash
# Install PostgreSQL from Debian when it is missing, so that the trace store's Postgres tests can start a throwaway
# cluster (tests/traces/conftest.py; they skip when no server can be had). Exits non-zero when it cannot install.
set -euo pipefail

have_postgres() {
    if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
        return 0
    fi
    compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null
}

if have_postgres; then
    echo "postgres.sh: PostgreSQL is installed"
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "postgres.sh: no apt-get here; install PostgreSQL (initdb, pg_ctl) another way" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "postgres.sh: not root and no sudo; cannot install PostgreSQL" >&2
        exit 1
    fi
    sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql
have_postgres
echo "postgres.sh: PostgreSQL installed"
