"""``proofgym serve ENV``: serve an environment as a task app (FastAPI + uvicorn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from proofgym.cli._errors import fail
from proofgym.cli._slow_clients import body_timeout_option, header_timeout_option, max_connections_option
from proofgym.config import ConfigError, parse_config_text, read_config_file


def load_env_config(value: str) -> dict[str, Any]:
    """``--env-config``: a JSON object, or a ``.json`` / ``.yaml`` / ``.yml`` / ``.toml`` file holding one.

    Read as every config file is (a key given twice, YAML aliases, deep nesting, huge integers and
    secrets are refused); raises ``ConfigError`` naming the option or the file, the key and what was expected.
    """
    if value.lstrip().startswith("{"):
        return parse_config_text(value, syntax="json", source="--env-config")
    path = Path(value)
    if not path.is_file():
        raise ConfigError(f"--env-config: {value!r} is neither a JSON object nor an existing file")
    return read_config_file(path)


def env_override_list(allow: List[str], forbid: List[str]) -> tuple[str, ...]:
    """The operator's override list as the task app reads it (``"!KEY"``: forbidden); ``ConfigError`` naming the
    option for a key that is empty, starts with ``!`` or is both allowed and forbidden."""
    for option, keys in (("--allow-env-override", allow), ("--forbid-env-override", forbid)):
        for key in keys:
            if not key.strip() or key.startswith("!") or (option == "--forbid-env-override" and key == "*"):
                raise ConfigError(f"{option}: {key!r} is not an environment config key")
    both = sorted(set(allow) & set(forbid))
    if both:
        raise ConfigError(f"--forbid-env-override: {both[0]!r} is also given to --allow-env-override")
    return (*allow, *(f"!{key}" for key in forbid))


def domain_folder_env(env: str, workers: int) -> str:
    """The environment name to serve for the ``ENV`` argument: ``env`` itself, or for a domain folder (a path), the
    name its single-answer environment is registered under (loaded and registered here); ``ConfigError`` naming
    the folder when it cannot be loaded."""
    from proofgym.domains import is_domain_path, register_rulebook_env, resolve_domain
    from proofgym.envs import env_names

    if not is_domain_path(env):
        return env
    if workers > 1:  # the worker processes are spawned: they would not know the folder's domain
        raise ConfigError(f"--workers: a domain folder ({env}) is served by one worker process; give --workers 1")
    try:
        domain = resolve_domain(env)
    except (KeyError, ValueError) as exc:
        raise ConfigError(exc.args[0] if isinstance(exc, KeyError) else str(exc)) from None
    if domain.name not in env_names():
        register_rulebook_env(domain.name)
    return domain.name


def serve_command(
    env: str = typer.Argument(..., help="The environment to serve (verilog, grant_eligibility, loan, ...), or a "
                                        "domain folder by path (./my_domain, written by 'proofgym domain init')."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; a non-loopback one needs an API key."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to bind (0: any free port)."),
    env_config: Optional[str] = typer.Option(None, "--env-config",
                                             help="The environment's config: a JSON object or a .json/.yaml/.toml "
                                                  "file."),
    traces: Optional[str] = typer.Option(None, "--traces", help="Trace store: a SQLite path or a SQLAlchemy URL "
                                                                "(default traces/proofgym.db)."),
    max_concurrency: int = typer.Option(32, "--max-concurrency", min=1, help="Rollouts running at once."),
    max_time_s: float = typer.Option(900.0, "--max-time-s", min=0.001, help="Wall-clock limit of one rollout."),
    max_body_bytes: int = typer.Option(4 << 20, "--max-body-bytes", min=1, help="Largest request body accepted."),
    grace_s: float = typer.Option(30.0, "--grace-s", min=0.0,
                                  help="On shutdown, how long running rollouts may finish before they are cancelled."),
    allow_env_override: List[str] = typer.Option([], "--allow-env-override",
                                                 help="An environment config key a request may set (repeatable; "
                                                      "'*' for any). difficulty, split and index (the reference "
                                                      "client's) may be set unless forbidden."),
    forbid_env_override: List[str] = typer.Option([], "--forbid-env-override",
                                                  help="An environment config key a request may not set, even "
                                                       "difficulty, split or index (repeatable); with '*' too, "
                                                       "every key but these."),
    policies: List[str] = typer.Option([], "--policy",
                                       help="A policy name requests may use (repeatable; default: openai, vllm, "
                                            "openai-chat, scripted, oracle)."),
    workers: int = typer.Option(1, "--workers", min=1, help="App processes on the port, about one core each (each "
                                                             "with its own --max-concurrency; on Linux, its own "
                                                             "socket)."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
    header_timeout_s: float = header_timeout_option(),
    body_timeout_s: float = body_timeout_option(30.0),
    max_connections: int = max_connections_option(256, "one worker holds"),
    judges: bool = typer.Option(False, "--judges", help="Score every rollout with the environment's rubrics "
                                                        "(event and outcome) and answer the blended reward."),
    rubric: Optional[str] = typer.Option(None, "--rubric", help="Judge with this rubric set instead (a registered "
                                                                "name or a .yaml/.toml/.json file); implies "
                                                                "--judges."),
    judge_url: Optional[str] = typer.Option(None, "--judge-url", help="OpenAI-compatible endpoint of the LLM judge "
                                                                      "(for criteria no function computes)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="The LLM judge's model."),
    judge_api_key_env: Optional[str] = typer.Option(None, "--judge-api-key-env",
                                                    help="Environment variable holding the judge's API key."),
    skip_llm_criteria: bool = typer.Option(False, "--skip-llm-criteria",
                                           help="Without --judge-url, drop the criteria an LLM would judge."),
) -> None:
    """Serve an environment as a task app: GET /health, /info, /task_info?seed=, POST /rollout.

    The API key comes from ENVIRONMENT_API_KEY (or PROOFGYM_API_KEY, ENV_API_KEY); without one the
    app only binds a loopback address. Every rollout is recorded in the trace store. A request's env.config
    may change only the keys --allow-env-override names, and difficulty, split and index unless
    --forbid-env-override names them. With --judges (or --rubric), every rollout is scored with rubrics and
    answered with the blended reward and each decision's verdicts. A domain folder (a path: ./my_domain) is
    served as its domain's single-answer environment, under the domain's name.
    """
    from proofgym.taskapp import DEFAULT_POLICIES, ServeError, serve

    try:
        env = domain_folder_env(env, workers)
        config = load_env_config(env_config) if env_config is not None else None
        overrides = env_override_list(allow_env_override, forbid_env_override)
        judging = None
        if judges or rubric is not None or judge_url is not None:
            judging = {"rubric": rubric, "judge_url": judge_url, "model": judge_model,
                       "api_key_env": judge_api_key_env, "skip_llm_criteria": skip_llm_criteria}
        serve(env, host=host, port=port, env_config=config, traces=traces, max_concurrency=max_concurrency,
              max_body_bytes=max_body_bytes, max_time_s=max_time_s, grace_s=grace_s,
              env_overrides=overrides, policies=tuple(policies) or DEFAULT_POLICIES,
              workers=workers, log_level=log_level, header_timeout_s=header_timeout_s,
              body_timeout_s=body_timeout_s, max_connections=max_connections, judging=judging)
    except (ConfigError, ServeError) as exc:
        fail(exc)


