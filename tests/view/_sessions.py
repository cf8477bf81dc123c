"""Hand-made sessions for the fast viewer tests (the browser tests use stores filled through the real paths)."""

from __future__ import annotations

from proofgym.traces import EventReward, OutcomeReward, SessionTrace, StepTrace, VerificationEvent

EVIL = "<script>alert('x')</script><img src=x onerror=alert(1)>"
PNG_1PX = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
           "awAAAABJRU5ErkJggg==")


def grant_session(i: int, run_id: str = "run-a", *, completion: str = "<decision>permit</decision>",
                  policy: str = "policy-a") -> SessionTrace:
    """A one-step rule-kernel session: certified when ``i`` is even, refuted otherwise."""
    outcome = "certified" if i % 2 == 0 else "refuted"
    verdict = {"outcome": outcome, "decision": "permit", "verifier": "rulebook:grant", "reason": "checked",
               "evidence": {"decision": "permit", "status": "decided", "proof_checked": True,
                            "proof_summary": "certified by the proof checker",
                            "deciding_rules": ["permit_eligible"],
                            "rejected_facts": [{"fact": "income", "reason": "not in the record"}],
                            "proof": {"inputs": {"age": 30}, "firings": [
                                {"rule": "adult", "stratum": 1, "premises": {"age": 30},
                                 "conclusion": {"fact": "is_adult", "value": True}}],
                                "decision": {"status": "decided", "decision": "permit",
                                             "deciding_rules": ["permit_eligible"]}}}}
    components = {"format": 0.1, "certified": 0.5 if outcome == "certified" else 0.0, "step_penalty": -0.0}
    reward = sum(components.values())
    step = StepTrace(index=0, observation={"text": f"applicant {i}", "data": {"record_id": f"rec-{i}"}},
                     action={"tool": "answer", "args": {"completion": completion}}, reward=reward, done=True,
                     info={"outcome": outcome, "reward_components": components},
                     verification=VerificationEvent("rulebook:grant", outcome, verdict))
    return SessionTrace(session_id=f"{run_id}-s{i:04d}", run_id=run_id, env_name="grant_eligibility", seed=i % 10,
                        policy_id=policy, correlation_id=f"cid-{i}", started_at=1_700_000_000.0 + i,
                        steps=[step], outcome_reward=OutcomeReward(total=reward, steps=1,
                                                                   score=1.0 if outcome == "certified" else 0.0))


def demo_session(i: int, run_id: str = "run-demo", *, reward: float | None = None) -> SessionTrace:
    """A GRPO rollout as the demo stores it: raw components in info, contributions as event rewards."""
    raw = {"format": 1.0, "correct": float(i % 2)}
    weights = {"format": 0.1, "correct": 1.0}
    contributions = {k: raw[k] * weights[k] for k in raw}
    total = sum(contributions.values()) if reward is None else reward
    step = StepTrace(index=0, observation="prompt", action=f"completion {i}", reward=total, done=True,
                     info={"step": 1, "group": i // 4, "advantage": 0.5 if i % 2 else -0.5, "outcome": "refuted",
                           "components": raw, "frame": PNG_1PX},
                     event_rewards=[EventReward(v, key=k, source="reward_function") for k, v in contributions.items()])
    return SessionTrace(session_id=f"{run_id}-00001-{i:04d}", run_id=run_id, env_name="grant_eligibility", seed=0,
                        started_at=1_700_000_100.0, steps=[step],
                        outcome_reward=OutcomeReward(total=total, steps=1, source="reward_function"))
