"""Deterministic sessions for the trace store tests (also used by the crash-test writer subprocess)."""

from __future__ import annotations

from proofgym.traces import (
    EnvEvent,
    EventReward,
    LMCallEvent,
    OutcomeReward,
    SessionTrace,
    StepTrace,
    VerificationEvent,
)


def make_session(i: int, run_id: str = "run-1", *, env_name: str = "grant_eligibility", n_steps: int | None = None,
                 prefix: str = "s") -> SessionTrace:
    """Session ``i``: 1-5 steps, each with LM calls, an env event and event rewards; a verification on the last."""
    n = 1 + i % 5 if n_steps is None else n_steps
    steps = []
    for k in range(n):
        last = k == n - 1
        steps.append(StepTrace(
            index=k,
            observation={"text": f"observation {i}.{k} — ünïcode ✓", "turn": k,
                         "nested": {"list": [1, 2.5, None]}},
            action={"tool": "submit" if last else "think", "args": {"answer": f"<decision>{i % 3}</decision>"}},
            reward=0.25 * (k + 1) - 0.1 * (i % 2),
            done=last, truncated=False,
            info={"step": k, "flags": [True, False]},
            lm_calls=_lm_calls(i, k),
            env_event=EnvEvent(tool="submit" if last else "think", args={"k": k}, result={"ok": not k % 2},
                               reward=0.1 * k, done=last, truncated=False),
            verification=VerificationEvent(verifier="rulebook", outcome="certified" if i % 3 else "refuted",
                                           verdict={"outcome": "certified" if i % 3 else "refuted",
                                                    "evidence": {"rules_fired": ["r1", "r2"][: 1 + i % 2]}})
            if last else None,
            event_rewards=[EventReward(value=0.5, kind="shaped", key="format", source="shaper",
                                       annotation={"why": "well formed"}),
                           EventReward(value=-0.1 * (i % 3), kind="penalty", key="length", source="shaper")],
        ))
    total = sum(step.reward for step in steps)
    return SessionTrace(
        session_id=f"{prefix}{i:06d}", run_id=run_id, env_name=env_name, seed=i, policy_id="policy-a",
        correlation_id=f"trace_{i // 2:06d}", started_at=1_700_000_000.0 + i, ended_at=1_700_000_000.5 + i,
        status="ok" if i % 7 else "error", error=None if i % 7 else "turn limit",
        steps=steps, outcome_reward=OutcomeReward(total=total, steps=n, score=float(i % 3 != 0),
                                                  kind="sparse", source="environment", annotation={"i": i}),
        metadata={"task_id": f"task-{i}", "split": "train" if i % 2 else "test"})


def _lm_calls(i: int, k: int) -> list[LMCallEvent]:
    calls = [LMCallEvent(
        model="tiny-lm",
        request={"messages": [{"role": "system", "content": "be brief"},
                              {"role": "user", "content": f"question {i} turn {k}"}], "temperature": 0.7},
        response={"choices": [{"message": {"role": "assistant", "content": f"answer {i}.{k}"}}]},
        prompt_tokens=20 + k, completion_tokens=5 + i % 7, latency_s=0.01 * (k + 1))]
    if k == 0 and i % 4 == 0:  # a failed call before the one that answered
        calls.insert(0, LMCallEvent(model="tiny-lm", request={"prompt": f"question {i}"}, response=None,
                                    latency_s=0.5, error="rate limited"))
    return calls
