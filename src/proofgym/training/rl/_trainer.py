"""The multi-step RL loop: rollouts on a task app by correlation id, judged and blended rewards, group credit, the
policy-gradient update on the exact sampled ids, and weight sync to the policy server.

One iteration: ``training.batch_size`` training seeds x ``group_size`` rollouts each run concurrently on the task app
against the served policy; every trace is resolved by its cid and scored with the rubrics (env / event / outcome
blended per the config's weights); a rollout that failed, could not be resolved or was judged invalid leaves its
group, and a group with fewer than 2 valid rollouts is skipped (both counted; past ``max_error_share`` of invalid
rollouts the run aborts). Advantages are group-normalised per trajectory (GRPO; GSPO's ratio is the sequence's),
or per decision when step rewards are on. Each turn is trained as the server sampled it: its recorded prompt ids
and completion ids, the loss on the completion ids only; turns with the same prompt ids share its forward pass.
With ``training.overlap_rollouts`` the next batch is collected while this one trains (one update stale).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import itertools
import json
import math
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, cast

import torch

from proofgym.config import TINY_MODEL
from proofgym.judges import RubricScorer, RubricSet, TrajectoryScore, resolve_rubric_set, rubric_set_from_data
from proofgym.training.rl._config import PolicyServerSection, RLConfig
from proofgym.training._grpo import padded_completions, shared_prompt_logprobs
from proofgym.training._policy_gradient import (
    MICROBATCH_TOKENS,
    clipped_loss,
    group_advantages,
)
from proofgym.training.rl._credit import Turn, decision_values, sampled_turns
from proofgym.training.rl._heldout import Evaluation, OracleGold, goal_streak, read_evaluation, success
from proofgym.training.rl._identity import check_resume, run_identity
from proofgym.training.rl._policy import PolicyServer, build_policy_models
from proofgym.training.rl._remote_policy import RemotePolicy, vllm_available
from proofgym.training.rl._task_app import LocalTaskApp, RLError, Rollout, RolloutClient, new_cid
from proofgym.traces import TraceStore
from proofgym.training._report import MetricsLog

_TRAIN_SEED_BASE = 10_000
_MAX_TOKENS = 48
_WARMUP_EPISODES = 8  # episodes per warm-up step
# Group advantages here: a group is flat below a standard deviation of 1e-8, and 1e-6 is added to the divisor.
_MIN_STD, _STD_OFFSET = 1e-8, 1e-6


@dataclass
class RunResult:
    """Where a run left its outputs, and what it measured."""

    output_dir: Path
    iterations: int
    metrics_csv: Path | None = None
    reward_curve: Path | None = None
    checkpoint: Path | None = None
    eval_before: float | None = None
    eval_after: float | None = None
    eval_after_by_decision: dict[str, float] = field(default_factory=dict)  # the last evaluation's split
    stopped_by_signal: bool = False
    stopped_by: str | None = None  # the signal that stopped it: SIGTERM or SIGINT
    reached_at: int | None = None  # the iteration at which the stop rule (evaluation.stop_at) was met
    wall_s: float | None = None  # the whole run, set-up and warm-up included
    run_id: str | None = None  # the run's id in traces.db
    summary: Path | None = None  # summary.json: what the trace store records as the run's summary
    dry_run: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class RLTrainer:
    """Runs an :class:`RLConfig` (see the module docstring); ``on_row`` gets each iteration's metrics row."""

    def __init__(self, config: RLConfig, *, output_dir: str | Path | None = None,
                 on_row: Callable[[dict[str, Any]], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.output_dir = Path(output_dir or config.training.output_dir)
        self.on_row = on_row or (lambda row: None)
        self.on_note = on_note or (lambda line: None)
        self.notes: list[str] = []
        self.metrics = MetricsLog()
        self.stop_requested = False
        self.stop_signal: str | None = None
        self.traces_path = self.output_dir / "traces.db"
        self.run_id: str | None = None  # this run's id in the trace store, once started there
        self._state: dict[str, Any] | None = None  # the checkpoint's state, when the run resumes
        self.evaluations: list[Evaluation] = []  # this process's held-out evaluations, confirmations included
        self._gold: Any = lambda seed: None  # a seed's gold decision, for rollouts whose trace names none
        self.invalid = self.total = 0
        self.stale = 0  # rollouts refused because another model than their batch's answered a turn
        self.updates_skipped = 0  # optimizer steps left out because their loss or gradient was not finite
        self.iteration = 0
        self._rng = random.Random(config.training.seed)
        self._seed_cursor = self._cursor_trained = 0  # seeds drawn; seeds drawn by the batches trained
        self._pending: concurrent.futures.Future[list[Rollout]] | None = None  # the next batch, during this update
        self._ahead = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="proofgym-rl-next-batch")
        self._pending_version = 0  # the served weights that collect it
        # seconds spent in each phase of the run (summary.json's phases_s): setup, warmup, rollout (waiting for a
        # batch), judge, update, sync, evaluation (confirmations included), checkpoint
        self.phases: dict[str, float] = {}

    def note(self, line: str) -> None:
        self.notes.append(line)
        self.on_note(line)

    def _spent(self, phase: str, since: float) -> float:
        """Add the seconds since ``since`` to ``phase``; returns them."""
        seconds = time.perf_counter() - since
        self.phases[phase] = self.phases.get(phase, 0.0) + seconds
        return seconds

    # -- services ------------------------------------------------------------------------------------------

    def _start(self) -> None:
        config = self.config
        if config.training.cpu_threads is not None:
            torch.set_num_threads(config.training.cpu_threads)  # the update's; the policy server sets its own
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self._open_run()
        for line in config.machine_notes():
            self.note(line)
        local = config.services.local_env
        self.app: LocalTaskApp | None = None
        self.ray_apps: RayTaskApps | None = None
        if local is not None and local != config.rollout.env_name:
            raise RLError(f"services.task_url local:{local} and rollout.env_name {config.rollout.env_name!r} "
                          "name different environments")
        compute = config.compute
        url: str | None
        if compute is not None and compute.on_ray:
            from proofgym.evaluation import RayTaskApps

            self.ray_apps = RayTaskApps(cast(str, local), env_config=config.rollout.env_options(), compute=compute,
                                        concurrency=config.concurrency,
                                        timeout_s=config.training.request_timeout_s,
                                        ports=compute.task_app_port_range)
            self.note(f"rollouts on the Ray cluster at {compute.ray_address}: up to {self.ray_apps.size} actors, "
                      f"each with its own {local} task app")
            url = None
        elif local is not None:
            self.app = LocalTaskApp(local, env_config=config.rollout.env_options(), traces=self.traces_path,
                                    log=self.output_dir / "task_app.log").start()
            url = self.app.url
        else:
            url = config.services.task_url
        if local is not None:
            self._gold = OracleGold(local, config.rollout.env_options())
        remote = self._policy_server()
        self.models = build_policy_models(config.model.name, trainer_mode=config.model.trainer_mode,
                                          lora=config.lora, seed=config.training.seed,
                                          cache_dir=self.output_dir.parent / ".tiny-model",
                                          corpus=self._tiny_corpus() if config.model.name == TINY_MODEL else None,
                                          served_here=remote is None)
        if config.model.name == TINY_MODEL and config.model.trainer_mode == "lora" and remote is None:
            self.note("model.trainer_mode lora: proofgym:tiny trains fully (no LoRA for a 2 M-parameter model)")
        on_ray = compute is not None and compute.on_ray
        host = compute.policy_host if compute is not None and on_ray else "127.0.0.1"
        port = compute.policy_port if compute is not None and on_ray else None
        self.server: PolicyServer | RemotePolicy
        if remote is not None:
            label = config.model.label or "policy"
            self.server = RemotePolicy(self.models, remote, output_dir=self.output_dir, label=label,
                                       base=config.model.name, lora_rank=config.lora.r,
                                       vllm_options=dict(config.vllm.model_extra or {}) if config.vllm else {},
                                       cpu_threads=config.training.cpu_threads).start()
            if on_ray and remote.launch is not None:
                self.note("policy_server.launch serves on 127.0.0.1: Ray actors on other nodes cannot reach it; give "
                          "policy_server.url, a server those nodes can reach, for a multi-node cluster")
            self.note(f"rollouts on the policy server {self.server.url} (base model {self.server.model_name!r}); "
                      + (f"each update loaded there as the LoRA adapter {label}-step-<k>" if remote.weight_sync ==
                         "lora" else "each update's weights sent over NCCL (vLLM's weight transfer)"))
        else:
            try:
                self.server = PolicyServer(self.models, max_tokens_limit=self._max_tokens(), host=host, port=port,
                                           threads=config.training.cpu_threads).start()
            except OSError as exc:  # the host is not this machine's, or the port is taken
                raise RLError(f"compute.{'policy_host' if port is None else 'policy_port'}: {exc}") from None
        if host != "127.0.0.1" and isinstance(self.server, PolicyServer):
            self.note(f"the policy is served on {self.server.url} for the Ray actors"
                      + ("" if self.server.loopback else ", without a key: keep that network private"))
        self.client = None
        self._url = url
        self.scorer = self._scorer()
        self.optimizer = torch.optim.AdamW([p for p in self.models.trainer.parameters() if p.requires_grad],
                                           lr=config.training.learning_rate)
        self.reference: Any = None  # the policy RL starts from, for training.kl_coef (set after the warm-up)

    def _policy_server(self) -> PolicyServerSection | None:
        """``[policy_server]``; else, with ``[vllm]`` on a machine with a GPU and vLLM, a ``vllm serve`` the
        trainer starts (LoRA adapters with ``model.trainer_mode = "lora"``, NCCL weight transfer otherwise); else
        None (the policy is served in this process), with one line saying why ``[vllm]`` was not started."""
        config = self.config
        if config.policy_server is not None:
            return config.policy_server
        if config.vllm is None:
            return None
        why = vllm_available()
        if why is None:
            return PolicyServerSection(launch="vllm",
                                       weight_sync="lora" if config.model.trainer_mode == "lora" else "nccl")
        self.note(f"[vllm]: vllm serve not started: {why}; the policy is served in this process instead")
        return None

    def _max_tokens(self) -> int:
        requested = self.config.rollout.policy_config.get("max_tokens")
        limit = _MAX_TOKENS if self.config.model.name == TINY_MODEL else 1024
        return min(int(requested), limit) if isinstance(requested, int) and requested > 0 else limit

    def _rubrics(self) -> RubricSet | None:
        config = self.config
        if not config.judging_enabled:
            return None
        levels = config.rubric_levels()
        if levels:
            data: dict[str, Any] = {"weights": config.blend_weights.model_dump()}
            for name, level in levels.items():
                data[name] = {"id": level.rubric_id or f"{config.rollout.env_name}/{name}",
                              "aggregation": level.aggregation, "goal_text": level.goal_text or "",
                              "criteria": [{"id": c.id or c.key, "weight": c.weight, "description": c.description,
                                            "scale": c.scale if c.scale in ("binary", "bounded") or
                                            isinstance(c.scale, dict) else "bounded",
                                            **({"function": c.function} if c.function else {})}
                                           for c in level.criteria]}
            return rubric_set_from_data(data, source="rl config rubric")
        rubrics = resolve_rubric_set(config.rubric.set or config.rollout.env_name)
        if config.rubric.weights is None and (config.judge is None or config.judge.reward_blend is None):
            return rubrics  # the set's own blend
        from proofgym.judges import RubricWeights

        # The file's [rubric.weights] / [judge.reward_blend] blend the set's rubrics (they were ignored before
        # 2026-12-05: every run blended with the set's own weights).
        return rubrics.model_copy(update={"weights": RubricWeights(**config.blend_weights.model_dump())})

    def _scorer(self) -> RubricScorer | None:
        rubrics = self._rubrics()
        if rubrics is None:
            return None
        judge = None
        llm = rubrics.needs_llm()
        url = self.config.rubric.api_base or self.config.services.judge_url
        model = self.config.rubric.model or (self.config.judge.options.model if self.config.judge else None)
        if llm and url and model:
            from proofgym.judges import JudgingConfig, build_judge

            judge = build_judge(JudgingConfig(judge_url=url, model=model, api_key_env=self.config.rubric.api_key_env,
                                              timeout_s=self.config.judge.timeout_s if self.config.judge else 45.0))
        elif llm:
            self.note(f"rubric: criteria {llm} need an LLM judge (services.judge_url / rubric.api_base and "
                      "rubric.model): skipped")
        return RubricScorer(rubrics, judge=judge, missing_judge="skip")

    def _tiny_corpus(self) -> list[str]:
        """Texts the tiny tokenizer is trained on: rendered warm-up episodes of the environment."""
        env = self._local_env()
        texts: list[str] = []
        rng = random.Random(0)
        for seed in range(400):
            for messages, completion in _episode_turns(env, seed, rng):
                texts.append(completion)
                texts.extend(str(m.get("content") or "") for m in messages)
        return texts

    def _local_env(self) -> Any:
        from proofgym.envs import make

        env = make(self.config.rollout.env_name, **self.config.rollout.env_options())
        if not hasattr(env, "warmup_actions"):
            raise RLError(f"model.base proofgym:tiny needs an environment with warmup_actions (a format warm-up); "
                          f"{self.config.rollout.env_name!r} has none: use fact_finding or a real model")
        return env

    def _close(self) -> None:
        self._ahead.shutdown(wait=True, cancel_futures=True)
        for closing in (getattr(self, "server", None), getattr(self, "app", None), getattr(self, "ray_apps", None),
                        self._gold if isinstance(self._gold, OracleGold) else None):
            if closing is not None:
                closing.close()

    # -- the run -------------------------------------------------------------------------------------------

    def run(self, *, dry_run: bool = False, iterations: int | None = None) -> RunResult:
        """Run the config (with ``dry_run``: one batch rolled out and judged, no update).

        The run is one run of its trace store (``traces.db`` in the output directory, kind ``rl``), started before
        any rollout (the task app's sessions join it) and marked ended however the run ends: ``ok`` (its
        iterations done or the stop rule met; a dry run whose first iteration could train), ``cancelled``
        (SIGTERM or SIGINT: checkpointed after the iteration; a second SIGINT stops at once) or ``error`` (an
        exception: the error budget, a service that would not start), with the run's summary, which a run that
        gets that far also writes to ``summary.json``. A checkpoint of another run (another seed or config, see
        :mod:`proofgym.training.rl._identity`) is refused before anything starts."""
        result = RunResult(self.output_dir, 0)
        started = time.perf_counter()
        self._state = self._checked_state()
        handlers = {signum: signal.signal(signum, self._on_signal)
                    for signum in (signal.SIGTERM, signal.SIGINT)} if _main_thread() else {}
        # One event loop for every batch of rollouts: the Ray rollout pool lives on it for the whole run.
        self._runner = asyncio.Runner()
        status, error = "error", None
        try:
            self._train(result, dry_run=dry_run, iterations=iterations, started=started)
            status = "cancelled" if self.stop_requested else "ok"
            if dry_run and not (result.dry_run["trainable"] and
                                result.dry_run["invalid_share"] <= result.dry_run["max_error_share"]):
                status = "error"  # the first iteration could not train (proofgym train --dry-run says why)
            return result
        except BaseException as exc:
            status = "cancelled" if isinstance(exc, KeyboardInterrupt) or self.stop_requested else "error"
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            self._close()
            self._runner.close()
            if self.run_id is not None:  # after the task app closed: every session of the run is in
                self._end_run(self.run_id, result, status, error, dry_run=dry_run,
                              wall_s=time.perf_counter() - started)

    def _train(self, result: RunResult, *, dry_run: bool, iterations: int | None, started: float) -> None:
        self._start()
        self._spent("setup", started)
        result.run_id = self.run_id
        if self.config.model.name == TINY_MODEL and not dry_run:
            warming = time.perf_counter()
            self._warmup()  # an update: a dry run makes none
            self._spent("warmup", warming)
        resumed = self._resume()
        self._freeze_reference()
        if dry_run:
            result.dry_run = self._runner.run(self._dry_run())
            (self.output_dir / "dry_run.json").write_text(json.dumps(result.dry_run, default=str, indent=1),
                                                          encoding="utf-8")
            result.notes = self.notes
            return
        total = iterations or self.config.training.iterations
        if not resumed:
            result.eval_before = self._evaluate("before").share
        while self.iteration < total and not self.stop_requested:
            self._iterate(total)
            if self.iteration % self.config.evaluation.every_n_iters == 0 or self.iteration == total:
                self.metrics.rows[-1].update(self._evaluate(f"iteration {self.iteration}").columns("eval_success"))
                if self._goal_met(started):
                    result.reached_at = self.iteration
                    break
            if self.iteration % self.config.training.checkpoint_every == 0:
                self._checkpoint()
        result.stopped_by_signal, result.stopped_by = self.stop_requested, self.stop_signal
        result.checkpoint = self._checkpoint()
        last: dict[str, Any] = next((row for row in reversed(self.metrics.rows) if "eval_success" in row), {})
        result.eval_after = last.get("eval_success")
        result.eval_after_by_decision = {key[len("eval_success_"):]: value for key, value in last.items()
                                         if key.startswith("eval_success_")}
        result.iterations = self.iteration
        result.wall_s = time.perf_counter() - started
        result.metrics_csv = self.metrics.write_csv(self.output_dir / "metrics.csv")
        result.reward_curve = self.metrics.plot(self.output_dir / "reward_curve.png",
                                                metrics=("reward", "success", "eval_success"),
                                                title=f"RL on {self.config.rollout.env_name}")
        result.notes = self.notes

    def _goal_met(self, started: float) -> bool:
        """The stop rule: ``evaluation.stop_streak`` evaluations in a row at ``evaluation.stop_at`` or more and,
        with ``evaluation.confirm_seeds``, a confirmation evaluation on them at ``stop_at`` or more too."""
        rule = self.config.evaluation
        if rule.stop_at is None:
            return False
        streak = goal_streak(self.metrics.rows, rule.stop_at)
        if streak < rule.stop_streak:
            if streak:
                self.note(f"held-out success at evaluation.stop_at = {rule.stop_at:g} or more at {streak} of the "
                          f"{rule.stop_streak} evaluations in a row evaluation.stop_streak asks for")
            return False
        reached = f"held-out success reached evaluation.stop_at = {rule.stop_at:g} at {streak} evaluations in a row"
        if rule.confirm_seeds:
            confirmation = self._evaluate(f"confirmation at iteration {self.iteration}", rule.confirm_seeds)
            self.metrics.rows[-1].update(confirmation.columns("confirm_success"))
            if not confirmation.share >= rule.stop_at:
                self.note(f"{reached}, but {confirmation.share:.1%} on the {len(rule.confirm_seeds)} "
                          "evaluation.confirm_seeds: going on")
                return False
            reached += f" and {confirmation.share:.1%} on the {len(rule.confirm_seeds)} evaluation.confirm_seeds"
        self.note(f"{reached} at iteration {self.iteration} ({time.perf_counter() - started:.0f} s into the run): "
                  "stopping")
        return True

    def _on_signal(self, signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and self.stop_requested:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now, without the checkpoint
        self.stop_requested = True
        self.stop_signal = self.stop_signal or signal.Signals(signum).name
        again = " (SIGINT again to stop now)" if signum == signal.SIGINT else ""
        self.note(f"{signal.Signals(signum).name}: checkpointing after this iteration, then stopping{again}")

    # -- the run in the trace store ------------------------------------------------------------------------

    def _open_run(self) -> None:
        """Start this run in the trace store before any rollout: the task app then stores its sessions under it
        and leaves it to this trainer to end. The first run in an output directory is named after the directory,
        each later one (a resume, a dry run) ``NAME-2``, ``NAME-3``, ..."""
        base = self.output_dir.resolve().name or "rl"
        identity = run_identity(self.config)
        with TraceStore(self.traces_path) as store:
            taken = {run.run_id for run in store.list_runs(counts=False)}
            run_id = next(name for name in itertools.chain([base], (f"{base}-{n}" for n in itertools.count(2)))
                          if name not in taken)
            store.start_run(run_id, kind="rl", env_name=self.config.rollout.env_name,
                            config={"model": self.config.model.name, "seed": identity["seed"],
                                    "config_hash": identity["config_hash"],
                                    "resumed_from": int(self._state["iteration"]) if self._state else None})
        self.run_id = run_id

    def _end_run(self, run_id: str, result: RunResult, status: str, error: str | None, *, dry_run: bool,
                 wall_s: float) -> None:
        """Mark the run ended in the trace store with its summary (written to ``summary.json`` too, unless a dry
        run: a dry run leaves the run's last summary alone)."""
        last = next((e for e in reversed(self.evaluations) if not e.when.startswith("confirmation")), None)
        confirmation = next((e for e in reversed(self.evaluations) if e.when.startswith("confirmation")), None)
        summary: dict[str, Any] = {
            "run_id": self.run_id, "status": status, "error": error, "iterations": self.iteration,
            "stopped_by": self.stop_signal, "reached_at": result.reached_at,
            "stop_rule": self.config.evaluation.model_dump(include={"stop_at", "stop_streak", "confirm_seeds"}),
            "eval_before": _finite(result.eval_before), "eval_after": _finite(result.eval_after),
            "last_evaluation": last.to_dict() if last else None,
            "confirmation": confirmation.to_dict() if confirmation else None,
            "rollouts": self.total, "invalid": self.invalid, "stale_rollouts": self.stale,
            "updates_skipped": self.updates_skipped,
            "wall_s": round(wall_s, 3), "phases_s": {key: round(value, 3) for key, value in self.phases.items()}}
        if dry_run:
            summary["dry_run"] = result.dry_run
        else:
            result.summary = self.output_dir / "summary.json"
            result.summary.write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
        with TraceStore(self.traces_path) as store:
            store.finish_run(run_id, status=status,
                             summary=json.loads(json.dumps(summary, default=str)))

    def _warmup(self) -> None:
        steps = self.config.training.warmup_steps
        if steps == 0 or self.iteration > 0 or (self.output_dir / "checkpoint" / "state.json").exists():
            return
        env = self._local_env()
        rng = random.Random(self.config.training.seed)
        optimizer = torch.optim.AdamW(self.models.trainer.parameters(), lr=self.config.training.warmup_lr)
        started = time.perf_counter()
        backend = self.server.backend
        eos = backend.eos_token_ids[0]
        for _ in range(steps):
            if self.stop_requested:
                raise RLError(f"{self.stop_signal} during the format warm-up: stopped before any RL iteration (run "
                              "again to start over)")
            turns = []
            for _ in range(_WARMUP_EPISODES):
                seed = _TRAIN_SEED_BASE + rng.randrange(10**6)
                for messages, completion in _episode_turns(env, seed, rng):
                    prompt = backend.encode(backend.render(messages, [dict(t) for t in env.tools]))
                    ids = backend.encode(completion)
                    ids = [i for i in ids if i != self.models.tokenizer.bos_token_id] + [eos]
                    turns.append(Turn(0, tuple(prompt), tuple(ids), None, 1.0))
            loss = _nll(self.models.trainer, turns, self._pad_id())
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is unannotated
            torch.nn.utils.clip_grad_norm_(self.models.trainer.parameters(), 1.0)
            optimizer.step()
        self.server.sync(0)
        self.note(f"format warm-up: {steps} supervised steps on random well-formed episodes "
                  f"({time.perf_counter() - started:.0f} s, last loss {float(loss.detach()):.3f})")

    def _freeze_reference(self) -> None:
        """A frozen copy of the weights RL starts from (after the warm-up), when ``training.kl_coef`` > 0. A
        resumed run keeps the reference it had: the checkpoint's ``reference.pt``."""
        if self.config.training.kl_coef == 0:
            return
        self.reference = copy.deepcopy(self.models.trainer).eval()
        saved = self.output_dir / "checkpoint" / "reference.pt"
        if saved.exists():
            self.reference.load_state_dict(torch.load(saved, weights_only=True))
        for parameter in self.reference.parameters():
            parameter.requires_grad_(False)

    def _pad_id(self) -> int:
        return int(self.server.backend.pad_token_id)

    def _train_seeds(self, n: int) -> list[int]:
        pool = self.config.training.train_seeds
        seeds = []
        for _ in range(n):
            seeds.append(pool[self._seed_cursor % len(pool)] if pool else _TRAIN_SEED_BASE + self._seed_cursor)
            self._seed_cursor += 1
        return seeds

    def _request(self, seed: int, cid: str, *, greedy: bool) -> dict[str, Any]:
        config = self.config
        policy = {key: value for key, value in config.rollout.policy_config.items()
                  if key not in ("provider", "model", "inference_url", "max_tokens", "temperature")}
        policy.update({"model": self.server.model_name, "inference_url": f"{self.server.url}?cid={cid}",
                       "temperature": 0.0 if greedy else float(config.rollout.policy_config.get("temperature", 1.0)),
                       "max_tokens": self._max_tokens(), "extra_body": {"logprobs": True, "return_token_ids": True}})
        env: dict[str, Any] = {"env_name": config.rollout.env_name, "seed": seed}
        return {"run_id": self.run_id, "env": env, "policy": {"policy_name": "openai", "config": policy},
                "record": {"return_trace": True, "trace_format": "full"}, "mode": "eval" if greedy else "rl",
                "max_turns": config.max_turns}

    async def _collect(self, seeds: list[int], *, greedy: bool = False) -> list[Rollout]:
        if self.ray_apps is not None:
            return await self._collect_on_ray(seeds, greedy=greedy)
        client = RolloutClient(cast(str, self._url), concurrency=self.config.concurrency,
                               timeout_s=self.config.training.request_timeout_s, app=self.app)
        try:
            jobs = []
            for seed in seeds:
                cid = new_cid()
                jobs.append(client.rollout(self._request(seed, cid, greedy=greedy), seed, cid))
            rollouts = list(await asyncio.gather(*jobs))
        finally:
            await client.aclose()
        self.retries = getattr(self, "retries", 0) + client.retries
        if self.app is not None:
            self._resolve_from_store(rollouts)
        return rollouts

    async def _collect_on_ray(self, seeds: list[int], *, greedy: bool) -> list[Rollout]:
        """The rollouts on the Ray actors, at most the rollout concurrency in flight across the cluster."""
        semaphore = asyncio.Semaphore(self.config.concurrency)
        apps = self.ray_apps

        async def one(seed: int) -> Rollout:
            cid = new_cid()
            async with semaphore:
                return await apps.rollout(self._request(seed, cid, greedy=greedy), seed, cid)  # type: ignore[union-attr]

        return list(await asyncio.gather(*(one(seed) for seed in seeds)))

    def _resolve_from_store(self, rollouts: list[Rollout]) -> None:
        """A rollout whose answer carried no full trace is resolved by its cid in the run's trace store."""
        missing = [r for r in rollouts if r.trace is None and r.error is not None and "no full trace" in r.error]
        if not missing:
            return
        with TraceStore(self.traces_path) as store:
            for rollout in missing:
                found = store.find_by_correlation_id(rollout.cid)
                if len(found) == 1 and found[0].status == "ok":
                    rollout.trace, rollout.error = found[0], None

    def _judge(self, rollouts: list[Rollout]) -> dict[str, TrajectoryScore]:
        valid = [r for r in rollouts if r.valid]
        if self.scorer is None or not valid:
            return {}
        scores = asyncio.run(self.scorer.score([r.trace for r in valid],  # type: ignore[misc]
                                               groups=[str(r.seed) for r in valid]))
        return {r.cid: s for r, s in zip(valid, scores)}

    def _reward(self, rollout: Rollout, score: TrajectoryScore | None) -> float | str:
        """The blended reward, or why the rollout is invalid."""
        trace = rollout.trace
        assert trace is not None
        if score is None:
            from proofgym.judges import env_return

            return env_return(trace)
        weights = score.reward.weights
        abstained = [c for c in score.reward.abstained if getattr(weights, c) > 0]
        if abstained:
            return f"judged invalid: {', '.join(abstained)} abstained"
        return score.reward.value

    async def _dry_run(self) -> dict[str, Any]:
        seeds = self._train_seeds(self.config.training.group_size)
        seeds = [seeds[0]] * self.config.training.group_size
        rollouts = await self._collect(seeds)
        scores = await asyncio.to_thread(self._judge, rollouts)
        readings = self._readings(rollouts, scores)  # what the first iteration would read of them
        rewards = [reward for _, reward, _ in readings]
        valid = [(i, r, turns) for i, (r, reward, turns) in enumerate(readings) if isinstance(reward, float)]
        trained = [turns for _, _, turns in valid if isinstance(turns, list)]
        return {"rollouts": len(rollouts), "valid": len(valid), "trainable": len(trained), "rewards": rewards,
                "errors": [r.error for r in rollouts if not r.valid],
                "untrainable": [f"rollout {i} (seed {r.seed}): {turns}" for i, r, turns in valid
                                if isinstance(turns, str)],
                "turns": sum(map(len, trained)),
                "invalid_share": 1 - len(trained) / len(rollouts) if rollouts else 1.0,
                "max_error_share": self.config.training.max_error_share,
                "machine_notes": self.config.machine_notes()}

    def _readings(self, rollouts: list[Rollout], scores: dict[str, TrajectoryScore]) \
            -> list[tuple[Rollout, float | str | None, list[Turn] | str]]:
        """Each rollout with its reward (or why it is invalid) and its turns as sampled (or why they cannot be read):
        a rollout is trained on only with both."""
        return [(rollout, self._reward(rollout, scores.get(rollout.cid)) if rollout.valid else rollout.error,
                 sampled_turns(rollout.trace) if rollout.trace is not None else "no trace") for rollout in rollouts]

    def _batch_seeds(self) -> list[int]:
        group = self.config.training.group_size
        return [seed for seed in self._train_seeds(self.config.training.batch_size) for _ in range(group)]

    def _overlapping(self, total: int) -> bool:
        """Whether the next batch is collected during this one's update (``training.overlap_rollouts``; not on a
        Ray cluster, whose rollout pool lives on the main event loop; never past the last iteration)."""
        return self.config.training.overlap_rollouts and self.ray_apps is None and self.iteration + 1 < total \
            and not self.stop_requested

    def _iterate(self, total: int | None = None) -> None:
        config, started = self.config, time.perf_counter()
        pending, self._pending = self._pending, None
        # collected during the last update (by the weights before it), or now
        sampled_version = self._pending_version if pending is not None else self.server.version
        rollouts = pending.result() if pending is not None else self._runner.run(self._collect(self._batch_seeds()))
        stale = self._refuse_stale(rollouts, self.server.name_for(sampled_version))
        self._cursor_trained = self._seed_cursor
        rollout_s = self._spent("rollout", started)
        if total is not None and self._overlapping(total):
            seeds = self._batch_seeds()
            self._pending_version = self.server.version
            self._pending = self._ahead.submit(asyncio.run, self._collect(seeds))  # its own event loop
        judged = time.perf_counter()
        scores = self._judge(rollouts)
        judge_s = self._spent("judge", judged)
        self._store(rollouts)
        groups: dict[int, list[tuple[Rollout, float, list[Turn]]]] = {}
        invalid = 0
        for rollout, reward, turns in self._readings(rollouts, scores):
            if not isinstance(reward, float) or isinstance(turns, str):
                invalid += 1
                continue
            groups.setdefault(rollout.seed, []).append((rollout, reward, turns))
        self.total += len(rollouts)
        self.invalid += invalid
        if self.total and self.invalid / self.total > config.training.max_error_share:
            errors = sorted({str(r.error)[:200] for r in rollouts if not r.valid})[:3]
            raise RLError(f"{self.invalid} of {self.total} rollouts were invalid, over the error budget "
                          f"training.max_error_share = {config.training.max_error_share}: {errors}")
        train_turns: list[Turn] = []
        flat = 0
        rewards, successes = [], []
        skipped = len({r.seed for r in rollouts} - set(groups))  # seeds with no valid rollout at all
        for members in groups.values():
            rewards += [reward for _, reward, _ in members]
            successes += [success(rollout.trace) for rollout, _, _ in members]  # type: ignore[arg-type]
            if len(members) < 2:
                skipped += 1
                continue
            credited = self._credit(members, scores)
            train_turns += credited
            if all(t.advantage == 0 for t in credited):
                flat += 1
        updated = time.perf_counter()
        loss = self._update(train_turns) if train_turns else None
        update_s = self._spent("update", updated)
        self.iteration += 1
        overlap_wait_s = 0.0
        if self._pending is not None:  # the next batch ends on the weights it started with: no sync mid-rollout
            waited = time.perf_counter()
            concurrent.futures.wait([self._pending])
            overlap_wait_s = self._spent("overlap_wait", waited)
        sync_s = 0.0
        if self.iteration % config.training.weight_sync_interval == 0 and config.training.weight_sync.enable:
            sync_s = self.server.sync(self.iteration)
            self.phases["sync"] = self.phases.get("sync", 0.0) + sync_s
        row = self.metrics.log(self.iteration, reward=_mean(rewards), success=_mean(successes),
                               valid=len(rollouts) - invalid, invalid=invalid, skipped_groups=skipped,
                               flat_groups=flat, turns=len(train_turns), loss=loss,
                               updates_skipped=self.updates_skipped, rollout_s=rollout_s,
                               judge_s=judge_s, update_s=update_s, sync_s=sync_s, overlap_wait_s=overlap_wait_s,
                               served_version=self.server.version, sampled_version=sampled_version, stale=stale,
                               step_s=time.perf_counter() - started)
        self.on_row(row)

    def _refuse_stale(self, rollouts: list[Rollout], expected: str) -> int:
        """Refuse each rollout with a turn the policy server answered as another model than ``expected`` (the
        model its batch asked for: the adapter of the update that collects it): sampled by other weights, it is
        never trained on as if on-policy. It becomes invalid (its error says which model answered) and is counted:
        ``stale`` in metrics.csv, ``stale_rollouts`` in summary.json. Returns how many were refused."""
        refused = 0
        for rollout in rollouts:
            if rollout.trace is None or rollout.error is not None:
                continue
            answered = {str(call.response.get("model")) if isinstance(call.response, Mapping) else "no response"
                        for step in rollout.trace.steps for call in step.lm_calls if call.response is not None}
            others = sorted(answered - {expected})
            if others:
                rollout.error = f"stale: sampled by {', '.join(others)} while its batch asked for {expected}"
                refused += 1
        self.stale += refused
        return refused

    def _credit(self, members: list[tuple[Rollout, float, list[Turn]]],
                scores: dict[str, TrajectoryScore]) -> list[Turn]:
        config = self.config
        stepwise = config.step_rewards_enabled and config.training.step_rewards_mode == "decision_stepwise"
        out: list[Turn] = []
        if stepwise and all(r.cid in scores for r, _, _ in members):
            weight = config.training.step_rewards_indicator_lambda
            values = [decision_values(scores[r.cid], r.trace, indicator_lambda=weight)  # type: ignore[arg-type]
                      for r, _, _ in members]
            flat = group_advantages([v for row in values for v in row], min_std=_MIN_STD, std_offset=_STD_OFFSET)
            index = 0
            for (rollout, _, turns), row in zip(members, values):
                by_step = {}
                for step, _ in zip(rollout.trace.steps, row):  # type: ignore[union-attr]
                    by_step[step.index] = flat[index]
                    index += 1
                out += [dataclasses.replace(t, advantage=by_step.get(t.step_index, 0.0)) for t in turns]
            return out
        advantages = group_advantages([reward for _, reward, _ in members], min_std=_MIN_STD,
                                      std_offset=_STD_OFFSET)
        for (_, _, turns), advantage in zip(members, advantages):
            out += [dataclasses.replace(t, advantage=advantage) for t in turns]
        return out

    def _update(self, turns: list[Turn]) -> float:
        """``training.updates_per_batch`` optimiser steps on ``turns`` (each clipped against the sampling
        log-probabilities); each step's gradient is summed over length-bucketed microbatches (padding costs
        compute: a batch's turns range from one short prompt to a whole episode) and equals the full batch's."""
        model, config = self.models.trainer, self.config
        model.train()
        sequence = config.algorithm.variety == "gspo"
        # GRPO's loss is a mean over every completion token of the batch, GSPO's a mean over its turns.
        total = float(len(turns)) if sequence else float(sum(len(t.completion_ids) for t in turns))
        chunks = turn_microbatches(turns, parts=config.training.gradient_accumulation_steps)
        references: list[torch.Tensor | None] = [None] * len(chunks)
        if self.reference is not None:
            with torch.no_grad():
                references = [token_logprobs(self.reference, chunk, self._pad_id())[0] for chunk in chunks]
        ramp = config.training.lr_warmup_iterations
        for group in self.optimizer.param_groups:
            group["lr"] = config.training.learning_rate * min(1.0, (self.iteration + 1) / ramp if ramp else 1.0)
        loss_value = 0.0
        for _ in range(config.training.updates_per_batch):
            self.optimizer.zero_grad()
            loss_value = 0.0
            for chunk, reference in zip(chunks, references):
                loss = policy_loss(model, chunk, self._pad_id(), clip_eps=config.training.clip_eps,
                                   sequence_ratio=sequence, total=total, reference_logprobs=reference,
                                   kl_coef=config.training.kl_coef)
                loss.backward()  # type: ignore[no-untyped-call]  # torch's Tensor.backward is unannotated
                loss_value += float(loss.detach())
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.training.max_grad_norm)
            if not (math.isfinite(loss_value) and math.isfinite(float(norm))):
                # A non-finite loss or gradient is never applied: the step is skipped and counted.
                self.optimizer.zero_grad()
                self.updates_skipped += 1
                continue
            self.optimizer.step()
        return loss_value

    def _evaluate(self, when: str, seeds: list[int] | None = None) -> Evaluation:
        """A held-out evaluation (greedy) on ``seeds`` (default: the first ``evaluation.instances`` of
        ``evaluation.seeds``), noted with its split by gold decision."""
        started = time.perf_counter()
        seeds = seeds or self.config.evaluation.seeds[:self.config.evaluation.instances]
        rollouts = self._runner.run(self._collect(seeds, greedy=True))
        self._store(rollouts)
        evaluation = read_evaluation(when, seeds, rollouts, self._gold)
        self.evaluations.append(evaluation)
        self._spent("evaluation", started)
        self.note(evaluation.line())
        return evaluation

    def _store(self, rollouts: list[Rollout]) -> None:
        if self.app is not None:
            return  # the local task app wrote them into the run's trace store already (on Ray: the driver does)
        # Each is this run's, whatever run id a remote task app wrote into it.
        sessions = [dataclasses.replace(rollout.trace, run_id=cast(str, self.run_id)) for rollout in rollouts
                    if rollout.trace is not None]
        if sessions:
            with TraceStore(self.traces_path) as store:
                store.write_sessions(sessions)

    # -- checkpoints ---------------------------------------------------------------------------------------

    def _checkpoint(self) -> Path:
        started = time.perf_counter()
        folder = self.output_dir / "checkpoint"
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self.models.trainer.state_dict(), folder / "model.pt.tmp")
        torch.save(self.optimizer.state_dict(), folder / "optimizer.pt.tmp")
        if self.reference is not None and not (folder / "reference.pt").exists():
            torch.save(self.reference.state_dict(), folder / "reference.pt.tmp")
            (folder / "reference.pt.tmp").replace(folder / "reference.pt")
        (folder / "model.pt.tmp").replace(folder / "model.pt")
        (folder / "optimizer.pt.tmp").replace(folder / "optimizer.pt")
        # A batch collected ahead and not trained yet is collected again after a resume. The run's identity (seed,
        # config hash) lets a later run refuse to resume it unless it is the same run.
        state = {"iteration": self.iteration, "seed_cursor": self._cursor_trained, "invalid": self.invalid,
                 "total": self.total, "stale": self.stale, "rows": self.metrics.rows, **run_identity(self.config)}
        (folder / "state.json.tmp").write_text(json.dumps(state, default=float), encoding="utf-8")
        (folder / "state.json.tmp").replace(folder / "state.json")
        self.metrics.write_csv(self.output_dir / "metrics.csv")
        self._spent("checkpoint", started)
        return folder

    def _checked_state(self) -> dict[str, Any] | None:
        """The checkpoint's state (None: no checkpoint), once :func:`check_resume` found it this run's."""
        path = self.output_dir / "checkpoint" / "state.json"
        if not path.exists():
            return None
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RLError(f"{path}: not a readable checkpoint state ({exc}); give another --output-dir or delete "
                          f"{path.parent}") from None
        if not isinstance(state, dict):
            raise RLError(f"{path}: expected a JSON object (a checkpoint state); give another --output-dir or "
                          f"delete {path.parent}")
        warning = check_resume(state, self.config, path.parent)
        if warning is not None:
            self.note(warning)
        return state

    def _resume(self) -> bool:
        """Load the checkpoint :meth:`_checked_state` read, if any; whether there was one."""
        folder, state = self.output_dir / "checkpoint", self._state
        if state is None:
            return False
        self.models.trainer.load_state_dict(torch.load(folder / "model.pt", weights_only=True))
        self.optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
        self.iteration, self._seed_cursor = int(state["iteration"]), int(state["seed_cursor"])
        self._cursor_trained = self._seed_cursor
        self.invalid, self.total = int(state["invalid"]), int(state["total"])
        self.stale = int(state.get("stale", 0))
        self.metrics.rows = list(state["rows"])
        self.server.sync(self.iteration)
        self.note(f"resumed from {folder} at iteration {self.iteration}")
        return True


def _episode_turns(env: Any, seed: int, rng: random.Random) -> list[tuple[list[dict[str, Any]], str]]:
    """The (messages, completion text) of each turn of a random well-formed episode, as the task app's policy
    would send them."""
    actions = env.warmup_actions(seed, rng)
    observation = env.reset(seed)
    messages: list[dict[str, Any]] = [{"role": "user", "content": observation.text}]
    turns = []
    for turn, action in enumerate(actions, start=1):
        completion = json.dumps(action)
        turns.append(([dict(m) for m in messages], completion))
        call = {"type": "function", "id": f"call_{turn}",
                "function": {"name": action["tool"], "arguments": json.dumps(action["args"])}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = env.step(action)
        messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": result.observation.text})
        if result.done:
            break
    return turns


def token_logprobs(model: Any, turns: list[Turn], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``[B, T]`` log-probabilities of every completion token of ``turns`` under ``model`` (``T`` the longest
    completion), with the completion ids and their mask. Turns with the same prompt ids (a group's rollouts that
    asked the same so far: most of a batch once the policy settles) share one forward pass of it, its keys and
    values handed to each completion (:func:`~proofgym.training.shared_prompt_logprobs`: the same computation as
    one pass per turn, the gradient of a shared prompt summed over its turns)."""
    ids, mask = padded_completions([t.completion_ids for t in turns], pad_id)
    logprobs = shared_prompt_logprobs(model, [t.prompt_ids for t in turns], [t.completion_ids for t in turns],
                                      pad_id=pad_id)
    device = logprobs.device
    return logprobs, ids.to(device), mask.to(device)


def trained_ids(turns: list[Turn], pad_id: int) -> list[list[int]]:
    """The ids the loss covers, per turn (what a token-exactness test compares with the sampled ids)."""
    ids, mask = padded_completions([t.completion_ids for t in turns], pad_id)
    return [ids[row][mask[row]].tolist() for row in range(len(turns))]


def turn_microbatches(turns: list[Turn], *, parts: int = 1, tokens: int | None = None) -> list[list[Turn]]:
    """``turns`` split into at least ``parts`` microbatches of at most ``tokens`` padded tokens each (default
    :data:`MICROBATCH_TOKENS`), counted as :func:`token_logprobs` runs them: each distinct prompt once at the
    longest prompt's width, each completion at the longest completion's. Turns with the same prompt go together
    (they share its forward pass) and prompts of similar lengths too (padding costs compute); a microbatch is cut
    where the next turn would pass the budget or past its share of ``parts``."""
    tokens = tokens or MICROBATCH_TOKENS
    by_prompt: dict[tuple[int, ...], list[Turn]] = {}
    for turn in turns:
        by_prompt.setdefault(turn.prompt_ids, []).append(turn)
    share = -(-len(turns) // max(parts, 1)) if turns else 1
    chunks: list[list[Turn]] = []
    prompts: set[tuple[int, ...]] = set()
    prompt_width = completion_width = 0
    for group in sorted(by_prompt.values(), key=lambda g: len(g[0].prompt_ids)):
        for turn in group:
            wide = max(prompt_width, len(turn.prompt_ids))
            long = max(completion_width, len(turn.completion_ids))
            distinct = len(prompts) + (turn.prompt_ids not in prompts)
            if not chunks or len(chunks[-1]) >= share or distinct * wide + (len(chunks[-1]) + 1) * long > tokens:
                chunks.append([])
                prompts, wide, long = set(), len(turn.prompt_ids), len(turn.completion_ids)
            chunks[-1].append(turn)
            prompts.add(turn.prompt_ids)
            prompt_width, completion_width = wide, long
    return chunks


def policy_loss(model: Any, turns: list[Turn], pad_id: int, *, clip_eps: float, sequence_ratio: bool,
                total: float | None = None, reference_logprobs: torch.Tensor | None = None,
                kl_coef: float = 0.0) -> torch.Tensor:
    """The clipped policy-gradient loss over the completion tokens of ``turns``: token ratios averaged over all
    tokens (GRPO, DAPO's token mean), or one ratio per turn, the exp of its mean log-ratio (GSPO). With ``total``
    the sum is divided by it instead (the batch's token or turn count: microbatches then add up to the batch's
    mean). With ``reference_logprobs`` (:func:`token_logprobs` of the reference on the same turns) each
    completion token adds ``kl_coef`` times the k3 estimate of KL(policy || reference), as GRPO does."""
    logprobs, _, mask = token_logprobs(model, turns, pad_id)
    old = torch.zeros_like(logprobs)
    for row, turn in enumerate(turns):
        values = turn.old_logprobs if turn.old_logprobs is not None else None
        positions = mask[row].nonzero().squeeze(-1)
        old[row, positions] = torch.tensor(values, dtype=old.dtype, device=old.device) if values is not None \
            else logprobs[row, positions].detach()
    advantages = torch.tensor([t.advantage for t in turns], dtype=logprobs.dtype, device=logprobs.device)
    loss: torch.Tensor = clipped_loss(logprobs, old, advantages, mask, clip_eps=clip_eps,
                                      ratio_level="sequence" if sequence_ratio else "token",
                                      ref_logp=reference_logprobs if kl_coef > 0 else None, kl_coef=kl_coef,
                                      total=total).loss
    return loss


def _nll(model: Any, turns: list[Turn], pad_id: int) -> torch.Tensor:
    logprobs, _, mask = token_logprobs(model, turns, pad_id)
    return -(logprobs * mask.float()).sum() / mask.float().sum().clamp(min=1)


def _mean(values: list[float]) -> float:
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
