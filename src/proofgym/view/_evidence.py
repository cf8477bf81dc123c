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
    if "phase" in evidence and "problem" in evidence:  # the Verilog judge's evidence (proofgym.verilog)
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
        "rejected": [_rejected_fact(r) for r in rejected],
        "checker_problems": _list(evidence.get("checker_problems")),
        "rulebook": _map(proof.get("rulebook")),
    }


def _rejected_fact(item: Any) -> dict[str, Any]:
    """A fact the kernel's gate refused, as it stores one (``RejectedFact.to_dict()``: field, value, reasons)."""
    fact = _map(item)
    return {"field": fact.get("field"), "value": fact.get("value"),
            "reasons": [str(r) for r in _list(fact.get("reasons"))]}


def _verilog(evidence: Mapping[str, Any]) -> dict[str, Any]:
    # "log" is the output of a phase stopped by a limit; "constructs" what a refused design used.
    return {key: evidence.get(key) for key in ("problem", "phase", "reason", "detail", "mismatches", "samples",
                                               "expected_samples", "sim_log", "compile_log", "log", "limit",
                                               "sandboxed", "duration_s")} | {
        "hints": _list(evidence.get("hints")), "constructs": _list(evidence.get("constructs")),
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
    # As the judges store a level's verdicts (proofgym.judges: LevelScore.to_dict, CriterionVerdict.to_dict).
    rows = [{"id": c.get("id"), "score": _number(c.get("score")), "reason": c.get("reason"), "judge": c.get("judge")}
            for c in map(_map, criteria)]
    invalid = [{"judge": v.get("judge"), "error_kind": v.get("error_kind"), "reason": v.get("reason")}
               for v in map(_map, _list(annotation.get("invalid")))]
    return Panel("judge", step_index, {"rubric": annotation.get("rubric"), "level": annotation.get("level"),
                                       "total": _number(annotation.get("total")), "valid": annotation.get("valid"),
                                       "criteria": rows, "invalid": invalid})


def crafter_panel(session: SessionTrace) -> Panel | None:
    """Achievements over time, when the session has any: each step's ``info`` (``proofgym.crafter``) holds
    ``unlocked`` (this decision's new achievements) and ``achievements`` (every achievement's count so far)."""
    timeline = []
    for step in session.steps:
        info = _map(step.info)
        unlocked = [str(name) for name in _list(info.get("unlocked"))]
        achievements = sorted(str(k) for k, v in _map(info.get("achievements")).items() if _number(v))
        if unlocked or achievements:
            timeline.append({"step": step.index, "unlocked": unlocked, "achievements": achievements})
    return Panel("crafter", None, {"timeline": timeline}) if timeline else None


#: A step's ``info["outcome"]`` when its answer never reached a verifier: the parser refused it, or the episode
#: ended before any answer (the environments' ``format_failure`` / ``no_answer`` reward components).
_FORMAT_OUTCOMES = {"format_error": "format_failure", "no_answer": "no_answer"}


def format_panel(step: StepTrace) -> Panel | None:
    """Why an answer scored the format floor: what the parser said was wrong with it (``info["format_error"]``,
    or ``info["reason"]`` as the demo stores it), and the floor."""
    info = _map(step.info)
    outcome = info.get("outcome")
    if outcome not in _FORMAT_OUTCOMES:
        return None
    reason = next((r for r in (info.get("format_error"), info.get("reason"), info.get("error"))
                   if isinstance(r, str) and r), None)
    floor = _number(_map(info.get("reward_components")).get(_FORMAT_OUTCOMES[outcome]))
    return Panel("format", step.index, {"outcome": outcome, "reason": reason,
                                        "floor": step.reward if floor is None else floor})


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
            # The environment's account of the reward (the shaper's reason: what was rejected, what matched).
            if isinstance(info.get("reason"), str) and info["reason"] != panel.data.get("reason"):
                panel.data["reward_reason"] = info["reason"]
            if panel.kind == "verilog":
                panel.data["design"] = design_files(session, step.index)
            found.append(panel)
        refused = format_panel(step)
        if refused is not None:
            found.append(refused)
        for reward in step.event_rewards:
            judged = judge_panel(step.index, _map(reward.annotation))
            if judged is not None:
                found.append(judged)
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
            continue
        if info.get("outcome") == "format_error":  # the demo stores no component: the reward is the floor itself
            found.append(Breakdown(f"step {step.index} reward: the format floor", [Term("format floor", step.reward)],
                                   step.reward))
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
