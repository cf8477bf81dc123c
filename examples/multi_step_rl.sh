#!/usr/bin/env bash
# The multi-step RL guide's CPU commands (docs/guides/multi-step-rl.md includes the section below): a dry run of
# configs/rl/fact_finding_tiny.toml (it starts the task app and the policy server, rolls out and judges one batch,
# no update), then the run itself, which trains proofgym:tiny on fact_finding until the stop rule holds (5-10 CPU-
# minutes alone on 2 cores; at most 150 iterations).
#
#   bash examples/multi_step_rl.sh                   (from any folder, after `make setup`)
#   bash examples/multi_step_rl.sh --iterations N    (the same run cut to N iterations: the test's size)
#
# It runs in a scratch folder holding a copy of the config (cut to N iterations when asked), so the commands read
# as they do from the repository root and the outputs (runs/rl_fact_finding_tiny) stay out of the checkout.
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
ITERATIONS=""
while [ $# -gt 0 ]; do
    case $1 in
        --iterations) ITERATIONS=${2:?--iterations needs a number}; shift 2 ;;
        *) echo "error: multi_step_rl.sh: unknown argument '$1'; expected --iterations N or nothing" >&2; exit 2 ;;
    esac
done
REPO=$(python -c 'import pathlib, proofgym; print(pathlib.Path(proofgym.__file__).parents[2])')
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/configs/rl" && cp "$REPO/configs/rl/fact_finding_tiny.toml" "$WORK/configs/rl/"
if [ -n "$ITERATIONS" ]; then
    sed -i "s/^iterations_per_epoch = .*/iterations_per_epoch = $ITERATIONS/" "$WORK/configs/rl/fact_finding_tiny.toml"
    grep -q "^iterations_per_epoch = $ITERATIONS$" "$WORK/configs/rl/fact_finding_tiny.toml"
    echo "(the config cut to $ITERATIONS iterations)"
fi
cd "$WORK"

# --8<-- [start:cpu]
proofgym train --config configs/rl/fact_finding_tiny.toml --dry-run   # start services, one judged batch, no update
proofgym train --config configs/rl/fact_finding_tiny.toml             # CPU: proofgym:tiny on fact_finding
# --8<-- [end:cpu]
tail -n 3 runs/rl_fact_finding_tiny/metrics.csv
