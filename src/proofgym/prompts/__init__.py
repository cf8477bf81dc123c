"""The prompt contract, kept under its old name: it lives beside the domains it describes, in
:mod:`proofgym.domains` (``DomainSpec``, ``build_messages``, ``build_prompt_text``, ``build_system_prompt``,
``check_system_prompt``)."""

from proofgym.domains import DomainSpec, build_messages, build_prompt_text, build_system_prompt, check_system_prompt

__all__ = ["DomainSpec", "build_messages", "build_prompt_text", "build_system_prompt", "check_system_prompt"]
