"""The rulebook domains, in one place: each domain's records, rulebook and prompt contract, the ``rulebook`` verifier
that checks claims against a rulebook, the domains' single-turn environments and the fact-finding environment, and
the grant rules written in plain Python (:mod:`proofgym.domains.grant_rules`, an independent oracle). The rule
kernel itself (language, checker, engine) is :mod:`proofgym.rules`.

To add a domain, write one module of the shape of ``_grant_eligibility.py`` (a ``DomainSpec``, a
generator, a renderer and a ``Domain``), its rulebook YAML and its default run config (``<rulebook>.run.yaml``)
beside it, and one ``register_domain`` line below; a plugin's domain comes in through the ``proofgym.domains``
entry-point group instead. Its environment is ``register_rulebook_env(name)``.

The environments, the verifier and their dependencies (the reward path, the environment contract) are imported on
first use of their names, so that reading a domain's records loads no environment. The ``rulebook`` verifier kind,
the ``grant_eligibility`` / ``loan`` / ``fact_finding`` environments and fact-finding's rubrics are registered
through entry points (pyproject.toml).
"""

from typing import TYPE_CHECKING, Any

from proofgym.domains import _grant_eligibility, _loan
from proofgym.domains._dataset import (
    build_dataset,
    build_example,
    gold_completion,
    gold_decision,
    to_hf_dataset,
    write_jsonl,
)
from proofgym.domains._messages import build_prompt_messages, build_prompt_text
from proofgym.domains._spec import DomainSpec
from proofgym.domains._system_prompt import build_system_prompt, check_system_prompt
from proofgym.domains._domain import DOMAINS, Domain, Record, domain_names, get_domain, register_domain
from proofgym.domains._locate import is_domain_path, resolve_domain
# The grant domain's income limit (inclusive): the boundary its records probe, and the demo reports apart.
from proofgym.domains._grant_eligibility import INCOME_THRESHOLD as GRANT_INCOME_THRESHOLD

register_domain(_grant_eligibility.DOMAIN)
register_domain(_loan.DOMAIN)

if TYPE_CHECKING:  # what the lazy names are, for type checkers (imported on first use at run time)
    from proofgym.domains._env import (
        RulebookEnv, RulebookEnvConfig, balance_period, default_run_config, folder_run_config,
        make_rulebook_env, shared_reward_function,
    )
    from proofgym.domains._factory import (
        GRANT_ELIGIBILITY_ENV, LOAN_ENV, SHIPPED_RULEBOOK_DOMAINS, RulebookEnvFactory, register_rulebook_env,
    )
    from proofgym.domains._draft import DraftRound, RulebookDraft, draft_rulebook
    from proofgym.domains._csv import CsvDataError, RULE_KEYWORDS
    from proofgym.domains._folder import (
        DatasetCounts, FolderDomain, InitSummary, export_dataset, init_domain, load_domain, typed_records,
    )
    from proofgym.domains._schema_infer import InferredSchema, infer_schema
    from proofgym.domains._splits import SplitPlan, near_key
    from proofgym.domains._fact_finding import (
        FACT_FINDING_RUBRICS, FactFindingConfig, FactFindingEnv, make_fact_finding_env,
    )
    from proofgym.domains._verifier import (
        RULEBOOK_VERIFIER, RulebookOptions, RulebookVerifier, build_rulebook_verifier, verdict_from_report,
    )

#: Names imported on first use, by the module that defines them.
_LAZY = {
    "_env": ("RulebookEnv", "RulebookEnvConfig", "balance_period", "default_run_config", "folder_run_config",
             "make_rulebook_env", "shared_reward_function"),
    "_factory": ("GRANT_ELIGIBILITY_ENV", "LOAN_ENV", "SHIPPED_RULEBOOK_DOMAINS", "RulebookEnvFactory",
                 "register_rulebook_env"),
    "_draft": ("DraftRound", "RulebookDraft", "draft_rulebook"),
    "_csv": ("CsvDataError", "RULE_KEYWORDS"),
    "_folder": ("DatasetCounts", "FolderDomain", "InitSummary", "export_dataset", "init_domain", "load_domain",
                "typed_records"),
    "_schema_infer": ("InferredSchema", "infer_schema"),
    "_splits": ("SplitPlan", "near_key"),
    "_fact_finding": ("FACT_FINDING_RUBRICS", "FactFindingConfig", "FactFindingEnv", "make_fact_finding_env"),
    "_verifier": ("RULEBOOK_VERIFIER", "RulebookOptions", "RulebookVerifier", "build_rulebook_verifier",
                  "verdict_from_report"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'proofgym.domains' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"proofgym.domains.{module}"), name)


__all__ = [
    "DOMAINS",
    "DatasetCounts",
    "CsvDataError",
    "FACT_FINDING_RUBRICS",
    "FactFindingConfig",
    "FactFindingEnv",
    "FolderDomain",
    "GRANT_ELIGIBILITY_ENV",
    "GRANT_INCOME_THRESHOLD",
    "InferredSchema",
    "InitSummary",
    "LOAN_ENV",
    "RULEBOOK_VERIFIER",
    "RULE_KEYWORDS",
    "Domain",
    "DomainSpec",
    "DraftRound",
    "Record",
    "RulebookEnv",
    "RulebookEnvConfig",
    "RulebookDraft",
    "RulebookEnvFactory",
    "RulebookOptions",
    "RulebookVerifier",
    "SHIPPED_RULEBOOK_DOMAINS",
    "SplitPlan",
    "balance_period",
    "build_dataset",
    "build_example",
    "build_prompt_messages",
    "build_prompt_text",
    "build_rulebook_verifier",
    "build_system_prompt",
    "check_system_prompt",
    "default_run_config",
    "domain_names",
    "export_dataset",
    "draft_rulebook",
    "folder_run_config",
    "get_domain",
    "gold_completion",
    "gold_decision",
    "infer_schema",
    "init_domain",
    "is_domain_path",
    "make_fact_finding_env",
    "load_domain",
    "make_rulebook_env",
    "near_key",
    "register_domain",
    "register_rulebook_env",
    "resolve_domain",
    "shared_reward_function",
    "to_hf_dataset",
    "typed_records",
    "verdict_from_report",
    "write_jsonl",
]
