#!/usr/bin/env bash
# The Ray guide's two-node cluster on one machine (docs/ray.md includes the section below): a head node and a second
# node whose Python has Ray and proofgym's dependencies but not proofgym, both on loopback (127.0.0.2, port 6391),
# then an eval (grant_ray.toml) and 2 RL iterations (rl_ray.toml) on it, which ship proofgym to the nodes
# (runtime_env). Each node is a `ray start --block` in a session of its own, stopped on exit by its process group
# (never `ray stop`, which stops every Ray process of the user, other clusters included).
#
#   bash examples/ray/cluster.sh        (from any folder, after `make setup`; a few CPU-minutes; port 6391 free)
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
export RAY_USAGE_STATS_ENABLED=0
# Ray's `ray start` turns token authentication on; the token below is this cluster's own (without it, Ray reads the
# user-wide ~/.ray/auth_token, which another cluster of the same user may rewrite). Every process started below
# (the nodes, the probes, proofgym) inherits it.
RAY_AUTH_TOKEN=$(python -c 'import secrets; print(secrets.token_hex(32))')
export RAY_AUTH_TOKEN
REPO=$(python -c 'import pathlib, proofgym; print(pathlib.Path(proofgym.__file__).parents[2])')
WORK=$(mktemp -d)
NODES=()
stop() {   # the second node first, then the head: each its whole process group, killed if not gone in 60 s
    for (( i = ${#NODES[@]} - 1; i >= 0; i-- )); do
        kill -TERM -- "-${NODES[i]}" 2>/dev/null || continue
        for _ in $(seq 60); do kill -0 -- "-${NODES[i]}" 2>/dev/null || break; sleep 1; done
        kill -KILL -- "-${NODES[i]}" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap stop EXIT
mkdir "$WORK/run" && cd "$WORK/run"     # the folder shipped to the nodes (working_dir = "."): the two files
cp "$REPO/examples/ray/grant_ray.toml" "$REPO/examples/ray/rl_ray.toml" .
# A Python with this one's packages but proofgym (its editable install and metadata): a node where `pip install ray`
# and proofgym's dependencies were run, never proofgym's install (the tests' helper makes it).
BARE_PYTHON=$(python -c 'import sys; sys.path.insert(0, sys.argv[1] + "/tests"); from pathlib import Path; from _ray_cluster import python_without_proofgym; print(python_without_proofgym(Path(sys.argv[2])))' "$REPO" "$WORK/bare")
if "$BARE_PYTHON" -c 'import proofgym' 2>/dev/null; then echo "error: cluster.sh: $BARE_PYTHON imports proofgym" >&2; exit 1; fi
echo "second node's python: $BARE_PYTHON (cannot import proofgym)"
nodes_up() {   # wait (at most 120 s) until the cluster has $1 live nodes
    for _ in $(seq 60); do
        python - "$1" <<'PY' 2>/dev/null && return 0
import sys, ray
ray.init(address="127.0.0.2:6391", logging_level="ERROR", log_to_driver=False)
sys.exit(0 if sum(node["Alive"] for node in ray.nodes()) >= int(sys.argv[1]) else 1)
PY
        sleep 2
    done
    echo "error: cluster.sh: the cluster at 127.0.0.2:6391 did not reach $1 node(s) in 120 s" >&2
    return 1
}

# --8<-- [start:cluster]
export RAY_AUTH_MODE=token    # ray start turns token authentication on: a driver (proofgym) joins only with it
setsid ray start --block --head --node-ip-address 127.0.0.2 --port 6391 --num-cpus 1 --include-dashboard false &
NODES+=($!)
nodes_up 1
setsid "$BARE_PYTHON" -m ray.scripts.scripts start --block --address 127.0.0.2:6391 \
    --node-ip-address 127.0.0.2 --num-cpus 1 &
NODES+=($!)
nodes_up 2
proofgym eval --config grant_ray.toml
proofgym train --config rl_ray.toml --output-dir runs/rl_ray
# --8<-- [end:cluster]

python - <<'PY'
from collections import Counter
from proofgym.traces import TraceStore

for name, path in (("eval", "traces/eval.db"), ("rl", "runs/rl_ray/traces.db")):
    with TraceStore(path, create=False) as store:
        sessions = list(store.iter_sessions())
    nodes = Counter(session.metadata.get("ray_node") for session in sessions)
    print(f"{name} traces by node: {len(sessions)} sessions from {len(nodes)} node(s) {sorted(nodes.values(), reverse=True)}")
PY
