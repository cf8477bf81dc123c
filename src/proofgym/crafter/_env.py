"""The Crafter environment: a text view of a Crafter world, ``interact_many`` / ``interact`` tools, achievement
rewards (see :mod:`proofgym.crafter._rewards`), episodes that end on death or a limit and say which.

One tool call is one *decision*; ``interact_many`` runs up to ``max_actions_per_call`` (8) of crafter's 17
actions in order, stopping early when the episode ends. Unknown action names are skipped (and reported), a call
whose actions are all unknown, or empty, runs ``noop``; anything else malformed (not a list, not strings, too many)
is an error observation that costs the turn and runs nothing.

Limits, each ending the episode with ``info["end_reason"]``: ``death``; ``step_limit`` (crafter steps,
``env_params.max_steps_per_episode``, truncated); ``turn_limit`` (decisions, ``max_turns``, truncated);
``time_limit`` (``max_time_s`` of wall-clock time since reset, truncated). Memory per instance is one 64 x 64 world
and, with ``frames``, at most ``frames.max_frames`` stored PNG frames.

Determinism: the world of seed ``s`` is ``crafter.Env(seed=s)``'s first; the same seed, config and actions give the
same episode.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from proofgym.crafter._agents import HeuristicAgent
from proofgym.crafter._difficulty import TraitCache
from proofgym.crafter._rewards import EpisodeRewards, StepRewardConfig
from proofgym.crafter._rubrics import CRAFTER_RUBRICS
from proofgym.crafter._world import ACHIEVEMENTS, ACTIONS, CrafterWorld, direction
from proofgym.envs import Observation, StepResult, Tool, ToolCall, ToolEnv, ToolResult
from proofgym.judges import RubricSet

Difficulty = Literal["easy", "medium", "hard"]  # proofgym.envs.DIFFICULTIES
MAX_ACTIONS_PER_CALL = 8
_HISTORY = 3  # the reference shows the last 3 tool calls
_ENDINGS = {"death": "You died. The episode is over.", "step_limit": "The episode reached its step limit.",
            "time_limit": "The episode ran out of time.", "turn_limit": "The episode reached its turn limit."}


class CrafterEnvParams(BaseModel):
    """``env_params`` (the reference's table): ``max_steps_per_episode``, crafter steps before the episode is
    truncated (crafter's own ``length``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps_per_episode: int = Field(10_000, ge=1, le=100_000)


class FrameConfig(BaseModel):
    """``frames``: store the rendered frame (a 64 x 64 PNG, base64) in every ``every``-th step's observation data,
    at most ``max_frames`` per episode (``proofgym crafter frames`` writes them as a GIF or a PNG strip)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    store: bool = False
    every: int = Field(1, ge=1, le=10_000)
    max_frames: int = Field(64, ge=1, le=1024)


class CrafterEnvConfig(BaseModel):
    """Configuration of :class:`CrafterEnv` (validated strictly; unknown keys are refused).

    ``max_turns`` caps decisions; ``env_params.max_steps_per_episode`` crafter steps; ``max_time_s`` wall-clock time.
    ``difficulty`` (``easy`` / ``medium`` / ``hard``, from the world's traits: :mod:`proofgym.crafter._difficulty`)
    makes seed ``i`` the ``i``-th world of that level. ``event_rewards_kind``, ``step_rewards`` and
    ``outcome_weight``: see :mod:`proofgym.crafter._rewards`. ``use_vision`` adds the frame to every observation's
    data (``image_png_base64``) for vision models; ``frames`` stores frames with the trace.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(100, ge=1, le=100_000)
    env_params: CrafterEnvParams = Field(default_factory=CrafterEnvParams)
    difficulty: Difficulty | None = None
    max_actions_per_call: int = Field(MAX_ACTIONS_PER_CALL, ge=1, le=MAX_ACTIONS_PER_CALL)
    event_rewards_kind: Literal["unique", "ach_delta"] = "unique"
    step_rewards: StepRewardConfig = Field(default_factory=StepRewardConfig)
    outcome_weight: float = Field(0.0, ge=0, le=100, allow_inf_nan=False)
    max_time_s: float = Field(600.0, gt=0, le=86_400, allow_inf_nan=False)
    use_vision: bool = False
    frames: FrameConfig = Field(default_factory=FrameConfig)


_ANY_ARGS = {"type": "object", "properties": {}, "additionalProperties": True}  # checked by _actions, not here


def tool_schemas(max_actions: int) -> list[dict[str, Any]]:
    """The two tools in the OpenAI format, with their full JSON schemas."""
    names = list(ACTIONS)
    return [
        {"type": "function", "function": {
            "name": "interact_many",
            "description": f"Run 1 to {max_actions} Crafter actions in order (unknown names are skipped; an empty "
                           "list waits one step).",
            "parameters": {"type": "object", "properties": {"actions": {
                "type": "array", "items": {"type": "string", "enum": names}, "maxItems": max_actions,
                "description": "action names, e.g. [\"move_left\", \"do\"]"}},
                "required": ["actions"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": "interact",
            "description": "Run one Crafter action.",
            "parameters": {"type": "object", "properties": {"action": {"type": "string", "enum": names}},
                           "required": ["action"], "additionalProperties": False}}},
    ]


_TRAITS: TraitCache | None = None
_TRAITS_LOCK = threading.Lock()


def _trait_cache() -> TraitCache:
    """The process's cache of world traits (one world built to measure them, on first use)."""
    global _TRAITS
    with _TRAITS_LOCK:
        if _TRAITS is None:
            world = CrafterWorld(max_steps=1, frames=False)

            def measure(seed: int) -> dict[str, int]:
                world.reset(seed)
                return world.traits()

            _TRAITS = TraitCache(measure)
        return _TRAITS


class CrafterEnv(ToolEnv):
    """Crafter through a text view (see the module docstring); one instance per rollout.

    Every step's ``info`` has ``tool``, ``actions_run``, ``skipped`` (unknown names), ``unlocked`` (this decision's
    new achievements), ``achievements`` (all 22 counts: what an evaluation's achievement table reads),
    ``inventory``, ``position``, ``world_step``; the last step adds ``end_reason`` and ``progress``.
    """

    def __init__(self, config: CrafterEnvConfig | None = None) -> None:
        self.config = config or CrafterEnvConfig()
        tools = [Tool("interact_many", "run up to 8 actions", _ANY_ARGS), Tool("interact", "run one action", _ANY_ARGS)]
        super().__init__(tools, max_turns=self.config.max_turns)
        self._schemas = tool_schemas(self.config.max_actions_per_call)
        self._world = CrafterWorld(max_steps=self.config.env_params.max_steps_per_episode,
                                   frames=self.config.use_vision or self.config.frames.store)
        self._rewards: EpisodeRewards | None = None
        self._history: list[str] = []
        self._started_at = 0.0
        self._frames_kept = 0
        self._seed = 0

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [dict(schema) for schema in self._schemas]

    @property
    def rubrics(self) -> RubricSet:
        """The seed's event and outcome rubric criteria (:data:`~proofgym.crafter._rubrics.CRAFTER_RUBRICS`)."""
        return CRAFTER_RUBRICS

    def world_seed(self, seed: int) -> int:
        """The crafter world seed episode ``seed`` plays (``seed`` itself unless a ``difficulty`` is set)."""
        if self.config.difficulty is None:
            return seed
        return _trait_cache().seed_at(self.config.difficulty, seed)

    def oracle_actions(self, seed: int) -> list[Any]:
        """The heuristic agent's decisions for episode ``seed`` (played here, then the episode is reset): a
        known-good play that unlocks achievements, for tests and the oracle policy."""
        agent = HeuristicAgent()
        observation = self.reset(seed)
        actions: list[Any] = []
        while True:
            action = {"tool": "interact_many", "args": {"actions": agent.decide(observation.text)}}
            actions.append(action)
            result = self.step(action)
            if result.done:
                break
            observation = result.observation
        self.reset(seed)
        return actions

    def _reset(self, seed: int) -> Observation:
        world_seed = self.world_seed(seed)
        self._seed = world_seed
        self._world.reset(world_seed)
        config = self.config
        self._rewards = EpisodeRewards(config.event_rewards_kind, config.step_rewards, config.outcome_weight)
        self._history = []
        self._frames_kept = 0
        self._started_at = time.monotonic()
        view = self._view()
        # The rules go in the system message (the rollout loop sends data["system"] first): a model shown frames
        # alone (image_only_mode replaces every observation's text) still reads them.
        data = {**view.data, "task_id": f"crafter-{world_seed}", "world_seed": world_seed,
                "difficulty": config.difficulty, "system": _instructions(config)}
        return Observation(view.text, data)

    def step(self, action: Any) -> StepResult:
        result = super().step(action)
        info = dict(result.info)
        if result.done and "end_reason" not in info:  # the base class's turn limit
            assert self._rewards is not None
            outcome = self._rewards.outcome()
            info.update(self._ending("turn_limit"), reward_components={**info["reward_components"], **outcome})
            text = f"{result.observation.text}\n{_ENDINGS['turn_limit']}"
            return dataclasses.replace(result, observation=Observation(text, result.observation.data),
                                       reward=result.reward + outcome["outcome"], info=info, components=None)
        if info.get("end_reason") in ("step_limit", "time_limit") and not result.truncated:
            return dataclasses.replace(result, truncated=True)
        return result

    def _ending(self, reason: str) -> dict[str, Any]:
        assert self._rewards is not None
        return {"end_reason": reason, "progress": len(self._rewards.unlocked) / len(ACHIEVEMENTS),
                "unique_achievements": sorted(self._rewards.unlocked)}

    def _call_tool(self, call: ToolCall) -> ToolResult:
        assert self._rewards is not None  # steps only run between reset and close
        actions, skipped, error = _actions(call, self.config.max_actions_per_call)
        if error is not None:
            return self._refused(call.name, error)
        world = self._world
        before = world.achievements()
        ran: list[str] = []
        dead = False
        for name in actions:
            done, _ = world.step(name)
            ran.append(name)
            if done:
                dead = world.dead
                break
        after, inventory = world.achievements(), world.inventory()
        components, new = self._rewards.decision(before, after, inventory)
        end_reason = "death" if dead else "step_limit" if world.steps >= self.config.env_params.max_steps_per_episode \
            else "time_limit" if time.monotonic() - self._started_at > self.config.max_time_s else None
        if end_reason is not None:
            components.update(self._rewards.outcome())
        note = f"{call.name} [{', '.join(ran)}]" + (f" -> unlocked {', '.join(new)}" if new else "")
        if skipped:
            note += f" (skipped unknown actions: {', '.join(skipped)})"
        self._history = (self._history + [note])[-_HISTORY:]
        view = self._view(skipped=skipped, unlocked=new, end_reason=end_reason)
        info: dict[str, Any] = {"tool": call.name, "actions_run": ran, "skipped": skipped, "unlocked": new,
                                "achievements": after, "inventory": inventory,
                                "position": list(world.position), "world_step": world.steps}
        if end_reason is not None:
            info.update(self._ending(end_reason))
        return ToolResult(view, components, done=end_reason is not None, info=info)

    def _unreadable(self, error: str) -> ToolResult:
        return self._refused(None, error)  # the state in info as every step has it (the last one is read by eval)

    def _refused(self, tool: str | None, error: str) -> ToolResult:
        # A malformed call runs nothing; it still costs the turn (and may be the last one).
        info: dict[str, Any] = {"tool": tool, "actions_run": [], "skipped": [], "unlocked": [],
                                "achievements": self._world.achievements(), "inventory": self._world.inventory(),
                                "position": list(self._world.position), "world_step": self._world.steps,
                                "error": error}
        view = self._view()
        return ToolResult(Observation(f"Error: {error}\n\n{view.text}", {**view.data, "error": error}),
                          {"achievements": 0.0}, info=info)

    def _view(self, *, skipped: list[str] = (), unlocked: list[str] = (),  # type: ignore[assignment]
              end_reason: str | None = None) -> Observation:
        world, config = self._world, self.config
        vitals = world.vitals()
        items = world.items()
        unique = sorted(self._rewards.unlocked) if self._rewards is not None else []
        fx, fy, faced = world.facing()
        sightings, text_map = world.sightings(), world.text_map()
        x, y = world.position
        lines = [
            f"Step {world.steps} of {config.env_params.max_steps_per_episode}; turn {self._turn} of "
            f"{config.max_turns}.",
            _status_line(vitals["health"], vitals["food"], vitals["drink"], vitals["energy"], world.sleeping),
            f"Position: ({x}, {y}). You face {faced or 'nothing'} ({direction(fx, fy)}).",
            _inventory_line(tuple(items.items())),
            _achievements_line(tuple(unique)),
            "You see:" if sightings else "You see nothing but grass.",
            *[s.line for s in sightings],
            "Map (5x5, north up, @ is you):",
            *text_map,
        ]
        if self._history:
            lines.append("Last tool calls: " + " | ".join(self._history))
        if unlocked:
            lines.append("Unlocked now: " + ", ".join(unlocked) + ".")
        if end_reason is not None:
            lines.append(_ENDINGS[end_reason])
        data: dict[str, Any] = {"step": world.steps, "turn": self._turn, "status": vitals, "inventory": items,
                                "position": [x, y], "facing": faced,
                                "achievements_unlocked": unique,
                                "nearby": [{"name": s.name, "dx": s.dx, "dy": s.dy} for s in sightings],
                                "map": text_map}
        frames = config.frames
        keep = frames.store and self._frames_kept < frames.max_frames and self._turn % frames.every == 0
        if config.use_vision or keep:
            data["image_png_base64"] = world.frame_png()
            self._frames_kept += keep
        return Observation("\n".join(lines), data)


# The view's lines that change seldom, made once per value (a few hundred values in an episode at most).
@functools.lru_cache(maxsize=4096)
def _status_line(health: int, food: int, drink: int, energy: int, sleeping: bool) -> str:
    return (f"Status: health {health}/9, food {food}/9, drink {drink}/9, energy {energy}/9"
            + (" (sleeping)" if sleeping else "") + ".")


@functools.lru_cache(maxsize=4096)
def _inventory_line(items: tuple[tuple[str, int], ...]) -> str:
    return "Inventory: " + (", ".join(f"{name} {count}" for name, count in items) or "nothing") + "."


@functools.lru_cache(maxsize=4096)
def _achievements_line(unique: tuple[str, ...]) -> str:
    return f"Achievements unlocked ({len(unique)}/{len(ACHIEVEMENTS)}): " + (", ".join(unique) or "none") + "."


def _actions(call: ToolCall, limit: int) -> tuple[list[str], list[str], str | None]:
    """``(actions to run, unknown names skipped, error)`` of a call; an error means nothing runs."""
    args: Mapping[str, Any] = call.args
    key = "actions" if call.name == "interact_many" else "action"
    extra = sorted(str(name)[:40] for name in args if name != key)
    if extra:
        return [], [], f"{call.name}: unexpected argument(s) {', '.join(map(repr, extra))}; it takes {key!r}"
    if key not in args:
        return [], [], f"{call.name}: missing required argument {key!r}"
    value = args[key]
    if call.name == "interact":
        if not isinstance(value, str):
            return [], [], "interact: argument 'action' must be a string, one of " + ", ".join(ACTIONS)
        if value not in ACTIONS:
            return [], [], f"interact: unknown action {value[:40]!r}; the actions are " + ", ".join(ACTIONS)
        return [value], [], None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return [], [], "interact_many: argument 'actions' must be a list of action names (strings)"
    if len(value) > limit:
        return [], [], f"interact_many: {len(value)} actions, more than the limit of {limit} per call"
    known = [name for name in value if name in ACTIONS]
    skipped = [name[:40] for name in value if name not in ACTIONS]
    return (known or ["noop"]), skipped, None


def _instructions(config: CrafterEnvConfig) -> str:
    return (
        "You play Crafter, a 2D survival game. Survive (keep health, food, drink and energy up: eat cows, drink "
        "water, sleep when tired) and unlock as many of the 22 achievements as you can: collect wood, place a "
        "table, make a wood pickaxe, collect stone, make stone tools, place a furnace, collect coal and iron, "
        "make iron tools, collect diamonds, and more.\n"
        f"Each turn call interact_many with 1 to {config.max_actions_per_call} actions, or interact with one. "
        "Actions: " + ", ".join(ACTIONS) + ". 'do' acts on the cell you face (collect, attack, eat, drink); "
        "moving towards a blocked cell turns you to face it. Crafting needs a table nearby (iron tools a furnace "
        "too).\n"
        'Example: {"tool": "interact_many", "args": {"actions": ["move_left", "do"]}}\n'
        "Map legend: @ you, . grass, T tree, ~ water, # stone, _ path, : sand, ! lava, c coal, i iron, "
        "d diamond, t table, f furnace, C cow, Z zombie, S skeleton, a arrow, p plant."
    )


def make_crafter_env(**config: Any) -> CrafterEnv:
    """``make("crafter", **config)``: the config's fields as keyword arguments, validated strictly."""
    return CrafterEnv(CrafterEnvConfig.model_validate(config, strict=True))
