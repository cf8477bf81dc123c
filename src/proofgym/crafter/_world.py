"""One Crafter world: the ``crafter`` package's engine, reseeded per episode, and what the agent can see of it.

``crafter`` is an optional extra (``pip install 'proofgym[crafter]'``), imported on the first world built. The
action and achievement names are crafter 1.8.3's, written here so that configs and schemas are checked without
it (and checked against the package when it loads).
"""

from __future__ import annotations

import base64
import collections
import copy
import functools
import io
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

#: The 17 actions, in crafter's order (an action's index is its position here).
ACTIONS: tuple[str, ...] = (
    "noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep", "place_stone", "place_table",
    "place_furnace", "place_plant", "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe",
    "make_wood_sword", "make_stone_sword", "make_iron_sword",
)
#: The 22 achievements, sorted (crafter's order).
ACHIEVEMENTS: tuple[str, ...] = (
    "collect_coal", "collect_diamond", "collect_drink", "collect_iron", "collect_sapling", "collect_stone",
    "collect_wood", "defeat_skeleton", "defeat_zombie", "eat_cow", "eat_plant", "make_iron_pickaxe",
    "make_iron_sword", "make_stone_pickaxe", "make_stone_sword", "make_wood_pickaxe", "make_wood_sword",
    "place_furnace", "place_plant", "place_stone", "place_table", "wake_up",
)
CRAFTER_INSTALL_HINT = "pip install 'proofgym[crafter]' (crafter==1.8.3)"
_VITALS = ("health", "food", "drink", "energy")
#: How far the agent sees: crafter's local view is 9 x 7 cells around the player (the image's top 7 rows).
_SIGHT = (4, 3)
_MAP_RADIUS = 2  # the reference's 5 x 5 text map
_MAP_GLYPHS = {"water": "~", "grass": ".", "stone": "#", "path": "_", "sand": ":", "tree": "T", "lava": "!",
               "coal": "c", "iron": "i", "diamond": "d", "table": "t", "furnace": "f", None: " ",
               "cow": "C", "zombie": "Z", "skeleton": "S", "arrow": "a", "plant": "p"}
_HOSTILES = ("zombie", "skeleton")
TRAIT_RADIUS = 10
#: The view's offsets but the player's, nearest first, then north, then west (the order sightings are told in).
_NEAREST_FIRST: tuple[tuple[int, int], ...] = tuple(sorted(
    ((dx, dy) for dx in range(-_SIGHT[0], _SIGHT[0] + 1) for dy in range(-_SIGHT[1], _SIGHT[1] + 1) if dx or dy),
    key=lambda o: (abs(o[0]) + abs(o[1]), o[1], o[0])))
_KINDS: dict[type, str] = {}  # an object's class -> its name in the view ("zombie")


def _kind(obj: Any) -> str:
    """An object's name in the view: its class's name, lower case ("zombie"), looked up once per class."""
    cls = type(obj)
    return _KINDS.get(cls) or _KINDS.setdefault(cls, cls.__name__.lower())
#: Freshly generated worlds kept per process (worldgen is most of a reset; GRPO groups and evals repeat seeds).
WORLD_CACHE_SIZE = 64


class _WorldCache:
    """Snapshots of freshly reset worlds by ``(seed, area)``, least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._snapshots: OrderedDict[tuple[int, tuple[int, int]], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, tuple[int, int]]) -> tuple[Any, Any] | None:
        with self._lock:
            found = self._snapshots.get(key)
            if found is not None:
                self._snapshots.move_to_end(key)
            return found

    def put(self, key: tuple[int, tuple[int, int]], snapshot: tuple[Any, Any]) -> None:
        with self._lock:
            self._snapshots[key] = snapshot
            while len(self._snapshots) > self.size:
                self._snapshots.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._snapshots.clear()


WORLDS = _WorldCache(WORLD_CACHE_SIZE)


class _OrderedSet(dict):  # type: ignore[type-arg]
    """A set that iterates in insertion order (what crafter keeps each chunk's objects in): a dict of its items,
    so that iterating, ``len`` and ``in`` run at the speed of crafter's own sets (the step reads every chunk's
    objects several times); as with a set, changing it while iterating raises."""

    __slots__ = ()

    def add(self, item: Any) -> None:
        self[item] = None

    def remove(self, item: Any) -> None:
        del self[item]


@functools.lru_cache(maxsize=1)
def _ordered_world(world: type) -> type:
    """crafter's World with each chunk's objects in insertion order: crafter keeps them in plain sets, which
    iterate in memory-address order, so which creature it despawns would differ between runs of one seed."""

    class OrderedWorld(world):  # type: ignore[misc]
        def reset(self, seed: Any = None) -> None:
            super().reset(seed)
            self._chunks: collections.defaultdict[Any, _OrderedSet] = collections.defaultdict(_OrderedSet)

    return OrderedWorld


class CrafterUnavailable(RuntimeError):
    """The ``crafter`` package is not installed (the message says how to install it)."""


def _engine() -> Any:
    try:
        import crafter
    except ImportError:
        raise CrafterUnavailable(f"the crafter environment needs the crafter package: {CRAFTER_INSTALL_HINT}") from None
    if tuple(crafter.constants.actions) != ACTIONS or tuple(crafter.constants.achievements) != ACHIEVEMENTS:
        raise CrafterUnavailable(f"this crafter package's actions or achievements differ from crafter 1.8.3's: "
                                 f"{CRAFTER_INSTALL_HINT}")
    return crafter


@dataclass(frozen=True)
class Sighting:
    """The nearest thing of one kind in view: its offset east (``dx``) and south (``dy``) of the player."""

    name: str
    dx: int
    dy: int

    @property
    def steps(self) -> int:
        return abs(self.dx) + abs(self.dy)

    def describe(self) -> str:
        return _describe(self.name, self.dx, self.dy)

    @property
    def line(self) -> str:
        """The view's line for it: ``- tree 2 steps to your north-west (1 north, 1 west)``."""
        return _line(self.name, self.dx, self.dy)


@functools.lru_cache(maxsize=4096)  # a few kinds x 62 offsets: told again every step
def _describe(name: str, dx: int, dy: int) -> str:
    steps = abs(dx) + abs(dy)
    parts = [f"{abs(dy)} {'north' if dy < 0 else 'south'}"] if dy else []
    if dx:
        parts.append(f"{abs(dx)} {'west' if dx < 0 else 'east'}")
    return f"{name} {steps} step{'s' if steps != 1 else ''} to your {direction(dx, dy)} ({', '.join(parts)})"


@functools.lru_cache(maxsize=4096)
def _line(name: str, dx: int, dy: int) -> str:
    return f"- {_describe(name, dx, dy)}"


def direction(dx: int, dy: int) -> str:
    """``north``, ``south-east``, ... of an offset (east and south positive); ``here`` for none."""
    vertical = "north" if dy < 0 else "south" if dy > 0 else ""
    horizontal = "west" if dx < 0 else "east" if dx > 0 else ""
    return "-".join(part for part in (vertical, horizontal) if part) or "here"


_HERE = -2  # the player's cell in a map row of _window_order (out of the world: -1)


@functools.lru_cache(maxsize=256)  # one per window shape and player cell in it: few (most windows are whole)
def _window_order(i: int, j: int, width: int, height: int) -> tuple[tuple[tuple[int, int, int], ...],
                                                                     tuple[tuple[int, ...], ...]]:
    """For a sight window ``width`` x ``height`` (flat, rows by x) with the player at ``(i, j)`` in it: the cells
    nearest first (:data:`_NEAREST_FIRST`) as ``(flat index, dx, dy)``, and the 5 x 5 map's rows north first as
    flat indices (-1 outside the world, ``_HERE`` for the player)."""
    order = tuple((x * height + y, dx, dy) for dx, dy in _NEAREST_FIRST
                  for x, y in [(i + dx, j + dy)] if 0 <= x < width and 0 <= y < height)
    rows = tuple(tuple(_HERE if dx == 0 and dy == 0 else (i + dx) * height + j + dy
                       if 0 <= i + dx < width and 0 <= j + dy < height else -1
                       for dx in range(-_MAP_RADIUS, _MAP_RADIUS + 1))
                 for dy in range(-_MAP_RADIUS, _MAP_RADIUS + 1))
    return order, rows


@functools.lru_cache(maxsize=4096)  # a few kinds x 62 offsets
def _sighting(name: str, dx: int, dy: int) -> Sighting:
    return Sighting(name, dx, dy)


def _nearest_key(sighting: Sighting) -> tuple[int, str]:
    return sighting.steps, sighting.name


class CrafterWorld:
    """A crafter engine (one per environment instance), reset to the world of a seed.

    ``reset(seed)`` gives the world ``crafter.Env(seed=seed).reset()`` gives, on the same instance (no textures
    reloaded); ``step(name)`` runs one action. ``frames`` turns rendering on: without it nothing is drawn (the
    text view reads the world itself), which is most of the engine's time per step.
    """

    def __init__(self, *, max_steps: int, frames: bool, size: int = 64) -> None:
        crafter = _engine()
        draw = frames

        class _Engine(crafter.Env):  # type: ignore[misc, name-defined]
            def _obs(self) -> Any:  # crafter renders every step; a text-only episode needs no frame
                if draw:
                    return self.render()
                if self._world.daylight < 0.5:
                    # Rendering at night draws its noise from the world's generator: drawn here too, so that an
                    # episode without frames is the same episode as with them (and as crafter's own).
                    unit = self._size // self._view
                    self._world.random.uniform(32, 127, tuple(self._local_view._grid * unit))
                return None

        self._env = _Engine(size=(size, size), length=max_steps, reward=True, seed=0)
        self._env._world.__class__ = _ordered_world(crafter.engine.World)  # the views hold this object
        self._objects = crafter.objects
        self.frames = frames
        self.last_frame: Any = None
        self.seed: int | None = None
        self._around: list[str | None] | None = None  # the sight window's cell names, until the world moves
        self._geometry: tuple[Any, Any] = ((), ())  # _window_order's tables for that window
        self._nearest: list[Sighting] = []  # the sightings read from them

    def reset(self, seed: int) -> None:
        env = self._env
        key = (seed, tuple(env._area))
        snapshot = WORLDS.get(key)
        if snapshot is None:
            # crafter seeds episode k of Env(seed=s) with hash((s, k)): episode 1 of a fresh seed, every time.
            env._seed, env._episode = seed, 0
            self.last_frame = env.reset()
            WORLDS.put(key, copy.deepcopy((env._world, env._player)))
        else:
            # The snapshot copied into this engine's own world object (its views hold that object): every
            # reference to the snapshot's world in the copy becomes this one.
            world, player = snapshot
            state, env._player = copy.deepcopy((world.__dict__, player), {id(world): env._world})
            env._world.__dict__.clear()
            env._world.__dict__.update(state)
            env._seed, env._episode, env._step = seed, 1, 0
            env._last_health, env._unlocked = env._player.health, set()
            env._update_time()
            self.last_frame = env._obs()
        self.seed = seed
        self._around = None

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        """Run one action; ``(dead_or_out_of_steps, crafter's info)``."""
        frame, _, done, info = self._env.step(ACTIONS.index(action))
        self.last_frame = frame
        self._around = None
        return bool(done), info

    @property
    def player(self) -> Any:
        return self._env._player

    @property
    def steps(self) -> int:
        return int(self._env._step or 0)

    @property
    def dead(self) -> bool:
        return bool(self.player.health <= 0)

    def inventory(self) -> dict[str, int]:
        return {name: int(count) for name, count in self.player.inventory.items()}

    def achievements(self) -> dict[str, int]:
        # crafter's player counts them in a dict of ints keyed in ACHIEVEMENTS' order (_engine checks the names):
        # a copy, read twice a call.
        return dict(self.player.achievements)

    def _cell(self, x: int, y: int) -> str | None:
        world = self._env._world
        if not (0 <= x < world.area[0] and 0 <= y < world.area[1]):
            return None
        material, obj = world[x, y]
        return _kind(obj) if obj is not None else material

    def facing(self) -> tuple[int, int, str | None]:
        """The direction faced (``dx``, ``dy``) and what is there."""
        px, py = (int(v) for v in self.player.pos)
        fx, fy = (int(v) for v in self.player.facing)
        return fx, fy, self._cell(px + fx, py + fy)

    def _sight_window(self) -> list[str | None]:
        """The name of every cell in view (a material, or the object on it), read from the engine's maps in one
        slice and kept until the world moves (the text view reads it twice); flat, rows by x, in the order of
        :func:`_window_order`'s indices. The same pass finds the nearest cell of each kind for :meth:`sightings`,
        walking the cells nearest first, so the first cell of a kind met is its nearest."""
        if self._around is None:
            world = self._env._world
            px, py = (int(v) for v in self.player.pos)
            x0, y0 = max(px - _SIGHT[0], 0), max(py - _SIGHT[1], 0)
            x1, y1 = min(px + _SIGHT[0] + 1, world.area[0]), min(py + _SIGHT[1] + 1, world.area[1])
            mat_names = world._mat_names
            cells: list[str | None] = [mat_names[m] for m in world._mat_map[x0:x1, y0:y1].ravel().tolist()]
            objects = world._obj_map[x0:x1, y0:y1].ravel()
            table = world._objects
            for k in objects.nonzero()[0].tolist():  # the few cells with a creature (or the player) on them
                cells[k] = _kind(table[int(objects[k])])
            self._around = cells
            self._geometry = _window_order(px - x0, py - y0, x1 - x0, y1 - y0)
            found: dict[str | None, tuple[int, int]] = {}
            for k, dx, dy in self._geometry[0]:
                name = cells[k]
                if name not in found:
                    found[name] = dx, dy
            self._nearest = sorted((_sighting(name, dx, dy) for name, (dx, dy) in found.items()
                                    if name != "grass" and name != "player" and name is not None),
                                   key=_nearest_key)
        return self._around

    def sightings(self) -> list[Sighting]:
        """The nearest thing of each kind in view (grass and the player excluded), nearest first."""
        self._sight_window()
        return list(self._nearest)

    def text_map(self) -> list[str]:
        """The 5 x 5 cells around the player, north up, the player as ``@``."""
        cells = self._sight_window()  # the map's radius is inside the view's
        glyphs = _MAP_GLYPHS
        return ["".join("@" if k == _HERE else glyphs[None] if k < 0 else glyphs.get(cells[k], "?") for k in row)
                for row in self._geometry[1]]

    def traits(self) -> dict[str, int]:
        """The reference's difficulty traits of the world as reset: trees and hostiles within 10 cells (Euclidean)
        of the player."""
        px, py = (int(v) for v in self.player.pos)
        trees = hostiles = 0
        for dx in range(-TRAIT_RADIUS, TRAIT_RADIUS + 1):
            for dy in range(-TRAIT_RADIUS, TRAIT_RADIUS + 1):
                if math.hypot(dx, dy) > TRAIT_RADIUS:
                    continue
                name = self._cell(px + dx, py + dy)
                trees += name == "tree"
                hostiles += name in _HOSTILES
        return {"trees": trees, "hostiles": hostiles}

    def frame_png(self) -> str | None:
        """The last frame as base64 PNG (``None`` without frames)."""
        if self.last_frame is None:
            return None
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(self.last_frame).save(buffer, format="PNG", optimize=True)
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    def vitals(self) -> dict[str, int]:
        inventory = self.player.inventory
        return {name: int(inventory[name]) for name in _VITALS}

    def items(self) -> dict[str, int]:
        """The inventory without the vitals, items held only."""
        return {name: int(count) for name, count in self.player.inventory.items() if name not in _VITALS and count}

    @property
    def sleeping(self) -> bool:
        return bool(self.player.sleeping)

    @property
    def position(self) -> tuple[int, int]:
        return int(self.player.pos[0]), int(self.player.pos[1])
