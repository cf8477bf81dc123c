#!/usr/bin/env bash
# The Crafter guide's commands (docs/guides/crafter.md includes the sections below): the random and heuristic
# baselines (100 episodes each, offline), then the seed's two eval files against a local crafter task app and the
# offline SmolLM2 model server, both started in the background, waited for and stopped on exit.
#
#   bash examples/crafter.sh                  (from any folder, after `make setup`; about an hour of CPU on 2 cores)
#   bash examples/crafter.sh --episodes N     (the test's size: each eval cut to its first N seeds, SmolLM2's answers
#                                             to 128 tokens, 300 s each)
#
# It runs in a scratch folder holding copies of the four eval files (cut to N seeds when asked), so the commands read
# as they do from the repository root and the trace stores stay out of the checkout. The servers use the files'
# ports, 8000 (the app) and 8001 (the model), which must be free.
set -euo pipefail
export PATH="${BIN:-$PWD/.venv/bin}:$PATH"
EPISODES=""
while [ $# -gt 0 ]; do
    case $1 in
        --episodes) EPISODES=${2:?--episodes needs a number}; shift 2 ;;
        *) echo "error: crafter.sh: unknown argument '$1'; expected --episodes N or nothing" >&2; exit 2 ;;
    esac
done
REPO=$(python -c 'import pathlib, proofgym; print(pathlib.Path(proofgym.__file__).parents[2])')
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/configs/eval" && cp "$REPO"/configs/eval/crafter_*.toml "$WORK/configs/eval/"
if [ -n "$EPISODES" ]; then
    seeds=$(python -c "print(list(range($EPISODES)))")
    sed -i "s/^seeds = \"0-99\"$/seeds = \"0-$((EPISODES - 1))\"/; s/^seeds = \[0, 1, 2\]$/seeds = $seeds/" \
        "$WORK"/configs/eval/crafter_*.toml
    [ "$(grep -lxF -e "seeds = \"0-$((EPISODES - 1))\"" -e "seeds = $seeds" "$WORK"/configs/eval/crafter_*.toml | wc -l)" = 4 ]
    # and SmolLM2's answers cut to 128 tokens, given 300 s each instead of the policy's default 60 s, as the RL dry
    # run's SmolLM2 test does on a CPU: on a busy 2-core machine answers of up to 512 tokens took over 60 s
    # ("no response within 60 s (after 4 attempts)") and, given 300 s, the episode over its 900 s budget (load 9)
    sed -i -e 's/^max_tokens = 512$/max_tokens = 128/' \
        -e '/^\[evaluation.policy_config\]$/a timeout_s = 300.0' "$WORK"/configs/eval/crafter_eval_*.toml
    [ "$(grep -lx "timeout_s = 300.0" "$WORK"/configs/eval/crafter_eval_*.toml | wc -l)" = 2 ]
    [ "$(grep -lx "max_tokens = 128" "$WORK"/configs/eval/crafter_eval_*.toml | wc -l)" = 2 ]
    echo "(each eval cut to its first $EPISODES seed(s); SmolLM2's answers to 128 tokens, 300 s each)"
fi
cd "$WORK"
for port in 8000 8001; do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then echo "error: crafter.sh: port $port is in use" >&2; exit 1; fi
done

# --8<-- [start:baselines]
proofgym eval --config configs/eval/crafter_baseline_random.toml      # 100 episodes, offline
proofgym eval --config configs/eval/crafter_baseline_heuristic.toml   # 100 episodes, offline
# --8<-- [end:baselines]

# --8<-- [start:smollm2]
# the seed's two eval files, as proofgym copies pointed at a local app and the offline SmolLM2 (in one shell: the
# two servers in the background; or each in a shell of its own)
proofgym serve-model smollm2 --port 8001 &
ENVIRONMENT_API_KEY=k proofgym serve crafter --port 8000 --allow-env-override env_params &
until curl -sf http://127.0.0.1:8001/health >/dev/null && curl -sf http://127.0.0.1:8000/health >/dev/null; do
    sleep 1
done
ENVIRONMENT_API_KEY=k proofgym eval --config configs/eval/crafter_eval_synth_qwen4b.toml
ENVIRONMENT_API_KEY=k proofgym eval --config configs/eval/crafter_eval_text_only_groq_qwen32b.toml
# --8<-- [end:smollm2]
