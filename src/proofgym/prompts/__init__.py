"""The prompt contract: what a domain asks of the model, and prompts that state it exactly."""

from proofgym.prompts._messages import build_messages, build_prompt_text
from proofgym.prompts._spec import DomainSpec
from proofgym.prompts._system_prompt import build_system_prompt, check_system_prompt

__all__ = ["DomainSpec", "build_messages", "build_prompt_text", "build_system_prompt", "check_system_prompt"]
