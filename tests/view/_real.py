"""Trace stores filled only through proofgym's own paths, for the viewer tests: evals (the rollout loop with a
scripted or oracle policy), a GRPO step as the demo stores it (completions scored by the demo's reward function),
``proofgym judge`` re-scoring a run (programmatic or LLM criteria), and single rollouts under a chosen id."""

from __future__ import annotations

import asyncio
import functools
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.evaluation import parse_eval_config, run_eval
from proofgym.policies import ScriptedPolicy
from proofgym.rollouts import run_rollout
from proofgym.traces import TraceStore

#: The text every hostile test completion carries: markup, a script, a huge tail.
EVIL = "<script>alert('x')</script><img src=x onerror=alert(1)>"
#: Bidirectional controls a completion may carry: each must show as a marker, never act on the page.
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
WRONG_AND_GATE = "module TopModule (input a, input b, output out);\n  assign out = a | b;\nendmodule\n"
BROKEN_AND_GATE = "module TopModule (input a, input b, output out);\n  assign out = a & ;\nendmodule\n"


T = TypeVar("T")


def _own_thread(fill: Callable[..., T]) -> Callable[..., T]:
    """``fill`` run on a thread of its own: the browser tests' playwright keeps an event loop running on the main
    thread, where ``asyncio.run`` (under the eval, the rollout loop, the judges) refuses to start."""
    @functools.wraps(fill)
    def run(*args: Any, **kwargs: Any) -> T:
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(fill, *args, **kwargs).result()
    return run


def answer(completion: str) -> list[dict[str, Any]]:
    """The scripted actions of a rulebook answer."""
    return [{"tool": "answer", "args": {"completion": completion}}]


def grant_completion(facts: dict[str, Any], decision: str = "permit", reasoning: str = "checked") -> str:
    """A grant_eligibility answer in the domain's format."""
    return (f"<reasoning>\n{reasoning}\n</reasoning>\n<decision>"
            f"{json.dumps({'classification': decision, 'facts': facts})}</decision>")


@_own_thread
def eval_run(store: Path, env_name: str, *, seeds: Sequence[int], actions: list[Any] | None = None,
             policy: str = "scripted", env_config: dict[str, Any] | None = None,
             max_turns: int | None = None) -> str:
    """One eval (``run_eval``: the rollout loop, the environment's own verifier) into ``store``; its run id."""
    section: dict[str, Any] = {"env_name": env_name, "policy_name": policy, "seeds": list(seeds),
                               "traces": str(store), "concurrency": 1}
    if actions is not None:
        section["policy_config"] = {"actions": actions}
    if env_config is not None:
        section["env_config"] = env_config
    if max_turns is not None:
        section["max_turns"] = max_turns
    return run_eval(parse_eval_config({"evaluation": section}).evaluation).run_id


@_own_thread
def rollout_as(store: Path, run_id: str, session_id: str, actions: list[Any], *, seed: int = 0,
               env_name: str = "grant_eligibility", correlation_id: str | None = None) -> None:
    """One rollout of a scripted policy stored under ``session_id`` (in run ``run_id``, created when new)."""
    result = asyncio.run(run_rollout(env_name, seed=seed, policy=ScriptedPolicy(actions), run_id=run_id,
                                     session_id=session_id, correlation_id=correlation_id))
    with TraceStore(store) as opened:
        if run_id not in {r.run_id for r in opened.list_runs(counts=False)}:
            opened.start_run(run_id, kind="eval", env_name=env_name)
        opened.write_session(result.session)


@_own_thread
def grpo_step(store: Path, run_id: str, step: int, groups: Sequence[Sequence[str]], *, seed: int = 0) -> list[str]:
    """One GRPO step as ``proofgym demo`` stores it: group ``g`` holds completions ``groups[g]`` to one prompt,
    scored by the demo's reward function, with their group advantages; the session ids, in order."""
    from proofgym.training import CompactGRPOStep, Rollout, demo_rows, demo_run_config, group_advantages
    from proofgym.training._demo import _sessions

    size = len(groups[0])
    rows = demo_rows(seed, len(groups))
    prompts, completions, refs, owners = [], [], [], []
    for g, texts in enumerate(groups):
        for text in texts:
            prompts.append(rows[g]["prompt"])
            gold = rows[g]["gold"]
            completions.append(text.format(**{k: json.dumps(v) for k, v in rows[g]["source_facts"].items()},
                                           gold=gold, other="deny" if gold == "permit" else "permit"))
            refs.append(rows[g])
            owners.append(g)
    with demo_run_config().reward_function() as reward_fn:
        items = reward_fn.score(prompts, completions, refs)
    advantages = group_advantages([item.reward for item in items], size)
    rollouts = [Rollout(row=refs[i], completion=completions[i], item=items[i], group=owners[i],
                        advantage=advantages[i]) for i in range(len(items))]
    sessions = _sessions(CompactGRPOStep(step=step, metrics={}, rollouts=rollouts), run_id, seed)
    with TraceStore(store) as opened:
        if run_id not in {r.run_id for r in opened.list_runs(counts=False)}:
            opened.start_run(run_id, kind="demo", env_name="grant_eligibility")
        opened.write_sessions(sessions)
    return [s.session_id for s in sessions]


#: Demo completions, formatted with the row's facts (JSON), its gold decision and the other one: the right answer,
#: the wrong decision, and one the parser cannot read.
DEMO_RIGHT = ('<decision>{{"facts": {{"age": {age}, "annual_income": {annual_income}, "resident": {resident}, '
              '"has_active_grant": {has_active_grant}}}, "classification": "{gold}"}}</decision>')
DEMO_WRONG = DEMO_RIGHT.replace("{gold}", "{other}")
DEMO_UNREADABLE = "<decision>{{\"facts\": {{\"age\": "


@_own_thread
def judge_run(store: Path, run_id: str, rubric: str | Path, *extra: str) -> str:
    """``proofgym judge`` re-scoring ``run_id``; the judge run it wrote."""
    result = CliRunner().invoke(app, ["judge", "--rubric", str(rubric), "--traces", str(store), "--run", run_id,
                                      *extra])
    assert result.exit_code == 0, result.output
    with TraceStore(store, create=False) as opened:
        return [r.run_id for r in opened.list_runs(counts=False) if r.kind == "judge"][-1]


def session_ids(store: Path, run_id: str) -> list[str]:
    with TraceStore(store, create=False) as opened:
        return [s.session_id for s in opened.list_sessions(run_id=run_id)]
