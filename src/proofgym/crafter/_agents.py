"""Two baseline agents that act on the text view alone, as a language model does: uniform random actions, and a
scripted heuristic (survive; collect wood, place a table, make a wood pickaxe and sword, collect stone, make
stone tools, place a furnace, collect coal and iron, make iron tools; plant saplings; explore when nothing useful
is in view).

Both are deterministic: the random agent draws from ``(seed, turn)``, the heuristic from what it reads and
``(seed, turn)`` when it explores. Neither keeps state between turns, so one instance serves many rollouts.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, field

from proofgym.crafter._world import ACTIONS

_SIGHTING = re.compile(r"^- (\w+) \d+ steps? to your [\w-]+ \(([^)]*)\)$")
_OFFSET = re.compile(r"(\d+) (north|south|west|east)")
_STATUS = re.compile(r"(health|food|drink|energy) (\d+)/9")
_FACE = re.compile(r"You face (\w+) \(([\w-]+)\)")
_MOVES = {(-1, 0): "move_left", (1, 0): "move_right", (0, -1): "move_up", (0, 1): "move_down"}
_DIRECTIONS = list(_MOVES)
_WALKABLE = frozenset(".:_")  # grass, sand, path on the text map (lava, '!', is walkable and deadly)
_PLACEABLE = frozenset({"grass", "sand", "path"})
_MAX_PLAN = 4


@functools.lru_cache(maxsize=1)
def _costs() -> dict[str, int]:
    """What placing a table / furnace uses, from crafter's data when it is installed."""
    try:
        from crafter import constants
    except ImportError:
        return {"table": 1, "furnace": 1}
    return {"table": int(constants.place["table"]["uses"]["wood"]),
            "furnace": int(constants.place["furnace"]["uses"]["stone"])}


@dataclass
class View:
    """What the heuristic reads from one observation text."""

    status: dict[str, int] = field(default_factory=dict)
    inventory: dict[str, int] = field(default_factory=dict)
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    facing: str = "nothing"
    facing_dir: tuple[int, int] = (0, 1)
    map: list[str] = field(default_factory=list)
    seed: int = 0
    turn: int = 0

    def near(self, name: str) -> bool:
        """Within crafter's crafting reach (the 3 x 3 cells around the player)."""
        where = self.seen.get(name)
        return where is not None and max(abs(where[0]), abs(where[1])) <= 1

    def cell(self, dx: int, dy: int) -> str:
        row = 2 + dy
        if not self.map or not (0 <= row < len(self.map)) or not (0 <= 2 + dx < len(self.map[row])):
            return "?"
        return self.map[row][2 + dx]


def read_view(text: str, *, seed: int = 0, turn: int = 0) -> View:
    """Parse the text view (:class:`~proofgym.crafter.CrafterEnv`'s observation)."""
    view = View(seed=seed, turn=turn)
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("Status:"):
            view.status = {name: int(value) for name, value in _STATUS.findall(line)}
        elif line.startswith("Inventory:"):
            body = line[len("Inventory:"):].strip().rstrip(".")
            for part in body.split(", "):
                name, _, count = part.rpartition(" ")
                if name and count.isdigit():
                    view.inventory[name] = int(count)
        elif line.startswith("Position:"):
            found = _FACE.search(line)
            if found:
                view.facing = found.group(1)
                view.facing_dir = _direction_offset(found.group(2))
        elif line.startswith("- "):
            found = _SIGHTING.match(line)
            if found:
                dx = dy = 0
                for amount, where in _OFFSET.findall(found.group(2)):
                    value = int(amount)
                    if where == "north":
                        dy = -value
                    elif where == "south":
                        dy = value
                    elif where == "west":
                        dx = -value
                    else:
                        dx = value
                view.seen.setdefault(found.group(1), (dx, dy))
        elif line.startswith("Map (5x5"):
            view.map = lines[index + 1:index + 6]
    return view


def _direction_offset(name: str) -> tuple[int, int]:
    return {"north": (0, -1), "south": (0, 1), "west": (-1, 0), "east": (1, 0)}.get(name, (0, 1))


def _draw(seed: int, turn: int) -> float:
    return random.Random(f"{seed}:{turn}").random()


class RandomAgent:
    """Uniformly random single actions (crafter's random baseline), drawn from ``(seed, turn)``."""

    def decide(self, text: str, *, seed: int = 0, turn: int = 1) -> list[str]:
        return [random.Random(f"{seed}:{turn}").choice(ACTIONS)]


class HeuristicAgent:
    """A scripted agent over the text view: the first rule that applies gives the next few actions."""

    def decide(self, text: str, *, seed: int = 0, turn: int = 1) -> list[str]:
        view = read_view(text, seed=seed, turn=turn)
        for rule in (self._fight, self._survive, self._craft, self._place, self._gather):
            plan = rule(view)
            if plan:
                return plan[:_MAX_PLAN]
        return self._explore(view)

    def _fight(self, view: View) -> list[str] | None:
        for enemy in ("zombie", "skeleton"):
            where = view.seen.get(enemy)
            if where is not None and abs(where[0]) + abs(where[1]) == 1:
                return [_MOVES[where], "do", "do"]
        return None

    def _survive(self, view: View) -> list[str] | None:
        status, inventory = view.status, view.inventory
        threatened = any(name in view.seen and sum(map(abs, view.seen[name])) <= 4 for name in ("zombie", "skeleton"))
        if status.get("energy", 9) <= 2 and not threatened:
            return ["sleep"] * 4
        if status.get("drink", 9) <= 5 and "water" in view.seen:
            return self._go_do(view, "water", repeat=3)
        if status.get("food", 9) <= 5 and "cow" in view.seen:
            return self._go_do(view, "cow", repeat=3)
        if status.get("food", 9) <= 5 and "plant" in view.seen and inventory.get("sapling", 0) == 0:
            return self._go_do(view, "plant")
        return None

    def _craft(self, view: View) -> list[str] | None:
        have = view.inventory
        wood, stone, coal, iron = (have.get(name, 0) for name in ("wood", "stone", "coal", "iron"))
        if view.near("table"):
            for tool, needs in (("wood_pickaxe", wood >= 1), ("wood_sword", wood >= 1),
                                ("stone_pickaxe", wood >= 1 and stone >= 1),
                                ("stone_sword", wood >= 1 and stone >= 1)):
                if needs and not have.get(tool):
                    return [f"make_{tool}"]
            if view.near("furnace") and wood >= 1 and coal >= 1 and iron >= 1:
                for tool in ("iron_pickaxe", "iron_sword"):
                    if not have.get(tool):
                        return [f"make_{tool}"]
            if stone >= _costs()["furnace"] and not view.near("furnace") and "furnace" not in view.seen:
                return self._place_here(view, "place_furnace")
        elif "table" not in view.seen and wood >= _costs()["table"] + 1:
            return self._place_here(view, "place_table")
        elif "table" in view.seen and (not have.get("wood_pickaxe") or (stone and not have.get("stone_pickaxe"))
                                       or (iron and coal and not have.get("iron_pickaxe"))):
            return self._go_near(view, "table")
        return None

    def _place(self, view: View) -> list[str] | None:
        have = view.inventory
        if have.get("sapling") and view.facing == "grass":
            return ["place_plant"]
        if have.get("stone", 0) >= 2 and view.facing in ("water", "grass", "sand", "path") and \
                have.get("stone_pickaxe"):
            return ["place_stone"]
        return None

    def _gather(self, view: View) -> list[str] | None:
        have = view.inventory
        wants = []
        if have.get("wood_pickaxe"):
            if have.get("stone_pickaxe"):
                if have.get("iron_pickaxe"):
                    wants.append("diamond")
                if not have.get("iron"):
                    wants.append("iron")
            if have.get("coal", 0) < 1:
                wants.append("coal")
            if have.get("stone", 0) < 5:
                wants.append("stone")
        if have.get("wood", 0) < 5:
            wants.append("tree")
        if view.status.get("drink", 9) < 8:
            wants.append("water")
        if view.status.get("food", 9) < 8:
            wants.append("cow")
        for target in wants:
            if target in view.seen:
                return self._go_do(view, target, repeat=2 if target == "tree" else 1)
        if view.facing == "grass" and not have.get("sapling") and _draw(view.seed, view.turn) < 0.3:
            return ["do"]  # grass gives a sapling one time in ten
        return None

    def _go_do(self, view: View, target: str, *, repeat: int = 1) -> list[str]:
        dx, dy = view.seen[target]
        if abs(dx) + abs(dy) == 1:
            return [_MOVES[(dx, dy)]] + ["do"] * repeat
        return self._approach(view, dx, dy)

    def _go_near(self, view: View, target: str) -> list[str]:
        dx, dy = view.seen[target]
        return self._approach(view, dx, dy)

    def _approach(self, view: View, dx: int, dy: int) -> list[str]:
        """Moves towards the cell next to ``(dx, dy)``, the longer axis first, round what the map shows blocked."""
        steps = []
        axes = [(int(dx > 0) - int(dx < 0), 0), (0, int(dy > 0) - int(dy < 0))]
        if abs(dy) > abs(dx):
            axes.reverse()
        for step in axes:
            if step != (0, 0) and view.cell(*step) in _WALKABLE:
                steps.append(_MOVES[step])
                break
        if not steps:
            return self._explore(view)
        return steps

    def _place_here(self, view: View, action: str) -> list[str]:
        if view.facing in _PLACEABLE:
            return [action]
        for step in _DIRECTIONS:
            if view.cell(*step) in _WALKABLE:
                return [_MOVES[step], action]  # turn to (or walk onto) open ground, then place ahead
        return self._explore(view)

    def _explore(self, view: View) -> list[str]:
        rng = random.Random(f"{view.seed}:{view.turn // 6}")
        order = rng.sample(_DIRECTIONS, len(_DIRECTIONS))
        for step in order:
            if view.cell(*step) in _WALKABLE and view.cell(2 * step[0], 2 * step[1]) != "!":
                return [_MOVES[step]] * 2
        return [_MOVES[order[0]], "do"]
