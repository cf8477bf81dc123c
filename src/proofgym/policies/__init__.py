"""Policies: what acts in an environment -- an OpenAI-compatible server, a local Hugging Face model, a script.

``OpenAIChatPolicy`` (httpx) and ``HFLocalPolicy`` (torch, transformers) are imported on first use,
so importing this package loads neither.
"""

from typing import Any

from proofgym.policies._build import (
    POLICIES,
    HFPolicyConfig,
    OpenAIPolicyConfig,
    OraclePolicyConfig,
    PolicyKind,
    ScriptedPolicyConfig,
    build_policy,
    policy_kind,
    policy_names,
    register_policy,
    without_vision_keys,
)
from proofgym.policies._frames import FRAME_KEY, Frame, FrameError, read_frame
from proofgym.policies._oracle import OraclePolicy
from proofgym.policies._protocol import Policy, PolicyReply, PolicyRequest
from proofgym.policies._scripted import ScriptedPolicy
from proofgym.policies._text_calls import read_text_action, tool_instructions, with_tool_instructions

_LAZY = {
    "OpenAIChatPolicy": "proofgym.policies._openai",
    "HFLocalPolicy": "proofgym.policies._hf",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'proofgym.policies' has no attribute {name!r}")


__all__ = [
    "FRAME_KEY",
    "POLICIES",
    "Frame",
    "FrameError",
    "HFLocalPolicy",
    "HFPolicyConfig",
    "OpenAIChatPolicy",
    "OpenAIPolicyConfig",
    "OraclePolicy",
    "OraclePolicyConfig",
    "Policy",
    "PolicyKind",
    "PolicyReply",
    "PolicyRequest",
    "ScriptedPolicy",
    "ScriptedPolicyConfig",
    "build_policy",
    "policy_kind",
    "policy_names",
    "read_frame",
    "register_policy",
    "read_text_action",
    "tool_instructions",
    "with_tool_instructions",
    "without_vision_keys",
]
