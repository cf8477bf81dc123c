"""What the "why" panel shows for a session: its verdicts read per evidence kind, and the reward arithmetic.

Everything here reads stored, untrusted data: any field may be missing or of the wrong type, and nothing raises
on it (a panel shows what it can read). Values stay plain Python; the templates escape them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from proofgym.traces import SessionTrace, StepTrace

_SUM_TOLERANCE = 1e-6


@dataclass
class Term:
    """One line of the reward arithmetic: ``value`` x ``weight`` = ``contribution`` (either factor may be unknown)."""

    name: str
    contribution: float
    value: float | None = None
    weight: float | None = None


@dataclass
class Breakdown:
    """Terms that sum to ``total``, the reward the page shows; ``adds_up`` says whether they do."""

    title: str
    terms: list[Term]
    total: float

    @property
    def term_sum(self) -> float:
        return math.fsum(t.contribution for t in self.terms)

    @property
    def adds_up(self) -> bool:
        return abs(self.term_sum - self.total) <= _SUM_TOLERANCE * max(1.0, abs(self.total))


@dataclass
class Panel:
    """One piece of evidence: ``kind`` picks its template (rulebook, verilog, judge, crafter, verdict)."""

    kind: str
    step_index: int | None
    data: dict[str, Any] = field(default_factory=dict)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def verdict_panel(step_index: int | None, verdict: Mapping[str, Any]) -> Panel:
    """The panel of one verifier verdict (``Verdict.to_dict()``), by what its evidence holds."""
    evidence = _map(verdict.get("evidence"))
    common = {"outcome": verdict.get("outcome"), "verifier": verdict.get("verifier"),
              "reason": verdict.get("reason"), "decision": verdict.get("decision"),
              "error_kind": verdict.get("error_kind")}
    if "phase" in evidence and ("sim_log" in evidence or "mismatches" in evidence or "detail" in evidence):
        return Panel("verilog", step_index, {**common, **_verilog(evidence)})
    if "proof" in evidence or "deciding_rules" in evidence or "proof_checked" in evidence:
        return Panel("rulebook", step_index, {**common, **_rulebook(evidence, verdict)})
    return Panel("verdict", step_index, {**common, "evidence": evidence})


def _rulebook(evidence: Mapping[str, Any], verdict: Mapping[str, Any]) -> dict[str, Any]:
    proof = _map(evidence.get("proof"))
    decision = _map(proof.get("decision"))
    rejected = _list(evidence.get("rejected_facts")) or _list(verdict.get("rejected_facts"))
    return {
        "status": evidence.get("status") or decision.get("status"),
        "proof_checked": evidence.get("proof_checked"),
        "proof_summary": evidence.get("proof_summary"),
        "inputs": _map(proof.get("inputs")),
        "firings": [{"rule": f.get("rule"), "stratum": f.get("stratum"), "premises": _map(f.get("premises")),
                     "conclusion": _map(f.get("conclusion"))} for f in map(_map, _list(proof.get("firings")))],
        "constraints": [_map(c) for c in _list(proof.get("constraints"))],
        "deciding_rules": _list(evidence.get("deciding_rules")) or _list(decision.get("deciding_rules")),
        "by_default": decision.get("by_default"),
        "rejected": [_map(r) if isinstance(r, Mapping) else {"fact": r} for r in rejected],
        "checker_problems": _list(evidence.get("checker_problems")),
        "rulebook": _map(proof.get("rulebook")),
    }


def _verilog(evidence: Mapping[str, Any]) -> dict[str, Any]:
    return {key: evidence.get(key) for key in ("problem", "phase", "detail", "mismatches", "samples",
                                               "expected_samples", "sim_log", "compile_log", "sandboxed",
                                               "duration_s")} | {"hints": _list(evidence.get("hints")),
                                                                 "toolchain": _map(evidence.get("toolchain"))}


def design_files(session: SessionTrace, upto: int) -> dict[str, str]:
    """The Verilog design as submitted: every ``write_file`` of the steps up to ``upto``, last write wins."""
    files: dict[str, str] = {}
    for step in session.steps:
        if step.index > upto:
            break
        action = _map(step.action)
        args = _map(action.get("args"))
        if action.get("tool") == "write_file" and isinstance(args.get("path"), str):
            files[args["path"]] = str(args.get("content", ""))
    return dict(sorted(files.items()))


def judge_panel(step_index: int | None, annotation: Mapping[str, Any]) -> Panel | None:
    """A rubric's verdict (an event or outcome reward's annotation with ``criteria``), or None."""
    criteria = _list(annotation.get("criteria"))
    if not criteria and "rubric" not in annotation:
        return None
    rows = [{"id": c.get("id"), "score": _number(c.get("score")), "weight": _number(c.get("weight")),
             "reason": c.get("reason"), "judge": c.get("judge")} for c in map(_map, criteria)]
    return Panel("judge", step_index, {"rubric": annotation.get("rubric"), "level": annotation.get("level"),
                                       "total": _number(annotation.get("total")), "valid": annotation.get("valid"),
                                       "criteria": rows, "invalid": _list(annotation.get("invalid"))})


def crafter_panel(session: SessionTrace) -> Panel | None:
    """Achievements over time (from each step's ``info``), when the session has any."""
    timeline = []
    for step in session.steps:
        info = _map(step.info)
        unlocked = info.get("achievements_unlocked") or info.get("new_achievements")
        achievements = info.get("achievements")
        if isinstance(achievements, Mapping):
            achievements = sorted(k for k, v in achievements.items() if v)
        if unlocked or achievements:
            timeline.append({"step": step.index, "unlocked": _list(unlocked) or None,
                             "achievements": _list(achievements)})
    return Panel("crafter", None, {"timeline": timeline}) if timeline else None


#: Where an environment's observation data carries its rendered frame, base64 PNG without a ``data:`` prefix
#: (:data:`proofgym.policies.FRAME_KEY`, crafter's ``use_vision`` / ``frames.store``).
_RAW_FRAME_KEY = "image_png_base64"


def frames(step: StepTrace) -> list[str]:
    """``data:image/...;base64`` URIs of a step's frames (PNG, JPEG or WebP only), for ``<img src>``: those its
    observation or info carries, then the one its result carries (what the world looked like after the step; a
    stored trace keeps each frame once, so a later step's observation points at the previous result)."""
    found = []
    result = _map(_map(step.env_event.result).get("data")) if step.env_event is not None else {}
    observation_data = _map(_map(step.observation).get("data"))
    for holder in (_map(step.observation), observation_data, _map(step.info)):
        for key in ("frame", "image", "frames"):
            for item in _list(holder.get(key)) or [holder.get(key)]:
                uri = _image_uri(item)
                if uri:
                    found.append(uri)
    for holder in (observation_data, result):
        raw = holder.get(_RAW_FRAME_KEY)
        uri = _image_uri(f"data:image/png;base64,{raw}") if isinstance(raw, str) else None
        if uri:
            found.append(uri)
    return found


_IMAGE_PREFIXES = ("data:image/png;base64,", "data:image/jpeg;base64,", "data:image/webp;base64,")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _image_uri(item: Any) -> str | None:
    if isinstance(item, Mapping):
        mime, data = item.get("mime", "image/png"), item.get("base64") or item.get("data")
        item = f"data:{mime};base64,{data}" if isinstance(mime, str) and isinstance(data, str) else None
    if not isinstance(item, str) or not item.startswith(_IMAGE_PREFIXES):
        return None
    payload = item.split(",", 1)[1]
    return item if payload and set(payload) <= _BASE64 else None


def panels(session: SessionTrace) -> list[Panel]:
    """Every piece of evidence of ``session``: verdicts, rubric verdicts, achievements; step order."""
    found: list[Panel] = []
    for step in session.steps:
        info = _map(step.info)
        verdict = step.verification.verdict if step.verification is not None else info.get("verdict")
        if isinstance(verdict, Mapping) and verdict:
            panel = verdict_panel(step.index, verdict)
            if panel.kind == "verilog":
                panel.data["design"] = design_files(session, step.index)
            found.append(panel)
        for reward in step.event_rewards:
            panel = judge_panel(step.index, _map(reward.annotation))
            if panel is not None:
                found.append(panel)
    blend = _map(session.outcome_reward.annotation) if session.outcome_reward is not None else {}
    outcome = judge_panel(None, _map(blend.get("outcome")))
    if outcome is not None:
        found.append(outcome)
    crafter = crafter_panel(session)
    if crafter is not None:
        found.append(crafter)
    return found


def breakdowns(session: SessionTrace) -> list[Breakdown]:
    """The reward arithmetic: the judge blend of the session's reward when there is one, then each step's
    components (``info["reward_components"]``, or the shaper's contributions with their raw component values)."""
    found: list[Breakdown] = []
    outcome = session.outcome_reward
    blend = _map(outcome.annotation) if outcome is not None else {}
    weights = _map(blend.get("weights"))
    if weights and outcome is not None:
        terms = []
        for name, key in (("env", "env_return"), ("event", "event_total"), ("outcome", "outcome_total")):
            value, weight = _number(blend.get(key)), _number(weights.get(name))
            if weight is not None:
                terms.append(Term(f"{name} ({key})", (value or 0.0) * weight, value, weight))
        found.append(Breakdown("session reward: the judge blend", terms, outcome.total))
    for step in session.steps:
        info = _map(step.info)
        components = _map(info.get("reward_components"))
        if components:
            terms = [Term(str(k), v) for k, v in components.items() if _number(v) is not None]
            found.append(Breakdown(f"step {step.index} reward", terms, step.reward))
            continue
        raw = _map(info.get("components"))
        shaped = [r for r in step.event_rewards if r.source != "judge" and _map(r.annotation).get("criteria") is None]
        if shaped:
            terms = []
            for r in shaped:
                value = _number(raw.get(r.key)) if r.key is not None else None
                weight = r.value / value if value not in (None, 0.0) else None
                terms.append(Term(str(r.key or r.kind), r.value, value, weight))
            found.append(Breakdown(f"step {step.index} reward", terms, step.reward))
    return found


def group_of(session: SessionTrace) -> tuple[int, int] | None:
    """``(training step, group)`` of a GRPO rollout (the demo's and the trainer's step info), else None."""
    if not session.steps:
        return None
    info = _map(session.steps[0].info)
    step, group = info.get("step"), info.get("group")
    if isinstance(step, int) and isinstance(group, int) and "advantage" in info:
        return step, group
    return None
