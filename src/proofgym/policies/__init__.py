"""Policies: what acts in an environment -- an OpenAI-compatible server, a local Hugging Face model, a script.

``OpenAIChatPolicy`` (httpx) and ``HFLocalPolicy`` (torch, transformers) are imported on first use, and
:func:`build_tiny_model` (the tiny local model) imports torch only when called, so importing this package loads
neither.
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
from proofgym.policies._tiny import (
    DEMO_DOMAIN_NAME,
    TinyModelConfig,
    build_tiny_model,
    demo_completion,
    demo_prompt,
    quiet_transformers,
)

_LAZY = {
    "OpenAIChatPolicy": "proofgym.policies._openai",
    "HFLocalPolicy": "proofgym.policies._hf",
    "read_chat_reply": "proofgym.policies._openai",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'proofgym.policies' has no attribute {name!r}")


__all__ = [
    "DEMO_DOMAIN_NAME",
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
    "TinyModelConfig",
    "build_policy",
    "build_tiny_model",
    "demo_completion",
    "demo_prompt",
    "policy_kind",
    "policy_names",
    "quiet_transformers",
    "read_chat_reply",
    "read_frame",
    "register_policy",
    "read_text_action",
    "tool_instructions",
    "with_tool_instructions",
    "without_vision_keys",
]
