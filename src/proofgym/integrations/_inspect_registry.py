"""What inspect_ai imports through proofgym's ``inspect_ai`` entry point (``proofgym =
"proofgym.integrations._inspect_registry"``): importing it registers the tasks (``proofgym/<env>``,
``proofgym/env``), the scorer and the ``proofgym`` model API. Light: inspect loads every package's entry point when
it looks a name up, and this one imports no model library (torch, transformers) and builds no environment."""

from proofgym.integrations._inspect_model import proofgym_model_api
from proofgym.integrations._inspect_scorer import proofgym_scorer
from proofgym.integrations._inspect_tasks import ENV_TASKS, env, proofgym_episode

__all__ = ["ENV_TASKS", "env", "proofgym_episode", "proofgym_model_api", "proofgym_scorer"]
