#!/usr/bin/env bash
# The viewer guide's commands (docs/guides/viewer.md includes each section below), in one shell: the demo, then
# `proofgym view` on its trace store, on an eval store with run folders, and a static export of the demo's run.
# Each server is started in the background, waited for, its pages fetched, and stopped.
#
#   bash examples/viewer.sh        (from any folder, after `make setup`; the demo trains for 2-3 CPU-minutes; port
#                                   8765 free)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
REPO=$(python -c 'import pathlib, proofgym; print(pathlib.Path(proofgym.__file__).parents[2])')
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
cd "$WORK"
# the viewer's default port, which must be free (else the pages fetched below would be another server's)
if curl -s -o /dev/null http://127.0.0.1:8765/; then echo "error: viewer.sh: port 8765 is in use" >&2; exit 1; fi
ready() {   # wait for the viewer's first page (at most 60 s), then print its title and run links
    for _ in $(seq 120); do curl -sf -o page.html "$1" && break; sleep 0.5; done
    python -c 'import re, sys; page = open("page.html").read(); print("viewer:", re.search(r"<title>(.*?)</title>", page)[1], "|", len(re.findall(r"href=\"/runs/[^\"]+\"", page)), "run link(s)")'
}

# --8<-- [start:demo]
proofgym demo                                 # what `make demo` runs; ends by printing the view line below
proofgym view --traces runs/demo/traces.db &  # then open http://127.0.0.1:8765/
# --8<-- [end:demo]
ready http://127.0.0.1:8765/
kill %1 && wait %1 || true

# --8<-- [start:eval]
proofgym eval --config "$REPO/configs/eval/grant.toml"     # writes traces/eval.db
proofgym view --traces traces/eval.db --runs runs/ &       # an eval store; charts from run folders under runs/
# --8<-- [end:eval]
ready http://127.0.0.1:8765/
kill %1 && wait %1 || true

# --8<-- [start:export]
RUN_ID=$(python -c 'import json; print(json.load(open("runs/demo/summary.json"))["run_id"])')
proofgym view --traces runs/demo/traces.db --export share/ --run "$RUN_ID"   # static HTML, opens from disk
ls share/
# --8<-- [end:export]
