#!/usr/bin/env bash
# The one place that knows proofgym's system packages: which tool each Debian package provides, how to tell it is
# there, and what goes without it. `make setup` (so `make test` and `make demo`) and `.ci/run` call it.
#
#   scripts/system_packages.sh [--strict] [TOOL...]
#
# TOOLs: make python3 venv iverilog bwrap chromium postgres; none given: all but postgres (a server: .ci/run asks for
# it).
# Present tools cost a `command -v` each, and nothing is printed. Missing ones are installed with apt-get when this
# runs as root or passwordless sudo works; otherwise (not root, no passwordless sudo, no apt-get, apt-get failed, or
# PROOFGYM_NO_SYSTEM_PACKAGES=1) it prints ONE line to stderr naming what is missing, what goes without it and the
# command to install it, and exits 0: a missing Verilog tool only makes the Verilog tests skip. --strict exits 1
# then instead (for CI, where everything must be installed).
set -uo pipefail
here="${BASH_SOURCE[0]%/*}"
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
cd "$here/.."

PYTHON="${PYTHON:-python3}"
strict=0
if [ "${1:-}" = "--strict" ]; then
    strict=1
    shift
fi

# tool: package | what it is | what goes without it
declare -A PACKAGE=([make]=make [python3]=python3 [venv]=python3-venv [iverilog]=iverilog [bwrap]=bubblewrap
                    [postgres]=postgresql [chromium]=chromium)
declare -A LABEL=([make]=make [python3]=python3 [venv]="Python's venv module (python3-venv)"
                  [iverilog]="Icarus Verilog (iverilog)" [bwrap]="bubblewrap (bwrap)" [postgres]=PostgreSQL
                  [chromium]="Chromium (chromium)")
declare -A WITHOUT=([make]="make cannot run" [python3]="nothing can run" [venv]="make cannot create .venv"
                    [iverilog]="the Verilog tests will skip" [bwrap]="the Verilog tests will skip"
                    [postgres]="the Postgres trace-store tests will skip"
                    [chromium]="the viewer's browser tests will skip")
DEFAULT=(make python3 venv iverilog bwrap chromium)

present() {
    case "$1" in
        venv) [ -x .venv/bin/python ] || "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ;;  # only to create .venv
        iverilog) command -v iverilog >/dev/null && command -v vvp >/dev/null ;;
        postgres) { command -v initdb >/dev/null && command -v pg_ctl >/dev/null; } ||
                  compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null ;;
        *) command -v "$1" >/dev/null ;;
    esac
}

missing() {  # the tools of "$@" that are not here
    local tool
    for tool in "$@"; do
        present "$tool" || echo "$tool"
    done
}

join() {  # "a", "a and b", "a, b and c"
    local out="$1"
    shift
    while [ $# -gt 1 ]; do out+=", $1"; shift; done
    [ $# -eq 0 ] || out+=" and $1"
    printf '%s' "$out"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=("${DEFAULT[@]}")
for tool in "${tools[@]}"; do
    if [ -z "${PACKAGE[$tool]:-}" ]; then
        echo "system_packages.sh: unknown tool '$tool' (known: ${!PACKAGE[*]})" >&2
        exit 2
    fi
done
mapfile -t need < <(missing "${tools[@]}")
[ ${#need[@]} -eq 0 ] && exit 0

packages=()
for tool in "${need[@]}"; do packages+=("${PACKAGE[$tool]}"); done

sudo=""
why=""
if [ "${PROOFGYM_NO_SYSTEM_PACKAGES:-}" = 1 ]; then
    why="PROOFGYM_NO_SYSTEM_PACKAGES=1"
elif ! command -v apt-get >/dev/null; then
    why="no apt-get here"
elif [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        why="not root, and no sudo"
    elif sudo -n true 2>/dev/null; then
        sudo="sudo"
    else
        why="not root, and sudo needs a password"
    fi
fi
if [ -z "$why" ]; then
    echo "proofgym: installing ${packages[*]} with apt-get" >&2
    if $sudo apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
    then
        mapfile -t need < <(missing "${need[@]}")
        if [ ${#need[@]} -eq 0 ]; then
            echo "proofgym: installed ${packages[*]}" >&2
            exit 0
        fi
        why="still missing after apt-get install"
    else
        why="apt-get failed"
    fi
fi

labels=() consequences=() packages=()
for tool in "${need[@]}"; do
    labels+=("${LABEL[$tool]}")
    packages+=("${PACKAGE[$tool]}")
    [[ " ${consequences[*]} " == *" ${WITHOUT[$tool]} "* ]] || consequences+=("${WITHOUT[$tool]}")
done
if [ ${#need[@]} -eq 1 ]; then are="is" them="it"; else are="are" them="them"; fi
command="apt-get install -y ${packages[*]}"
[ "$(id -u)" -eq 0 ] || command="sudo $command"
echo "proofgym: $(join "${labels[@]}") $are not installed, so $(join "${consequences[@]}"); install $them with:" \
     "$command (not installed automatically: $why)" >&2
exit $strict
