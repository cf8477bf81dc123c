"""Hostile request bodies, by class: what a careless or malicious client can send proofgym's HTTP apps.

Every case is the raw bytes of one body, built from a valid body by putting one hostile value at one field's
path (``json.dumps`` cannot write most of them: ``1e309``, duplicate keys, JSON nested 10,000 levels deep, an
integer of 5,000 digits, raw control bytes; NaN and lone surrogates it writes as ``NaN`` and ``\\ud800``
escapes, which is what a client sends). The classes (:data:`CLASSES`):

- ``non_finite``: ``NaN``, ``Infinity``, ``-Infinity``, ``1e309`` in each numeric field and where
  any value goes (``env.config``, ``policy.config``, a tool call's ``args``);
- ``lone_surrogate``: a high, a low and a reversed pair in each string field, as a value where
  any value goes and as a key of each object;
- ``deep_nesting``: arrays and objects 100, 1,000 and 10,000 levels deep in each field that takes an object
  or any value, and, where any value goes, data exactly at the depth limit (accepted) and one level past it;
- ``huge_integer``: integers of 5,000 digits (either sign, past Python's own limit of 4,300), of 1,001 digits
  (just past the limit) and of 1,000 digits (at the limit) in each numeric field and where any value goes;
- ``duplicate_keys``: each key of each object written twice with different values (both orders), and a new
  key written twice;
- ``wrong_type``: each field given values of other JSON types (a string for a number, an object for a string,
  a list for an object...);
- ``empty_or_truncated``: empty and blank bodies, the valid body cut at points through it (inside an escape
  too), bytes that are not UTF-8, a BOM, UTF-16;
- ``non_object``: a top level that is not an object (arrays, strings, numbers, literals);
- ``control_chars``: NUL, escape sequences, DEL, line and paragraph separators, the BOM and non-characters in
  each string field, where any value goes and as keys; raw (unescaped) control bytes in strings.

A case may say what must happen (``expect``): ``"accepted"`` (a 200), or the ``detail`` type of the refusal
(``"json_too_deep"``, ``"json_integer_too_long"``); otherwise only that the app stays well behaved: under
500, a JSON body, no traceback (what every case is checked for, in tests/taskapp/test_hostile_bodies.py for
every task app and tests/integrations/test_hostile_reward_bodies.py for the OpenRLHF reward server).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from proofgym.core._limits import MAX_DEPTH, MAX_INT_DIGITS

Path = tuple[str | int, ...]

NON_FINITE = "non_finite"
LONE_SURROGATE = "lone_surrogate"
DEEP_NESTING = "deep_nesting"
HUGE_INTEGER = "huge_integer"
DUPLICATE_KEYS = "duplicate_keys"
WRONG_TYPE = "wrong_type"
EMPTY_OR_TRUNCATED = "empty_or_truncated"
NON_OBJECT = "non_object"
CONTROL_CHARS = "control_chars"
CLASSES = (NON_FINITE, LONE_SURROGATE, DEEP_NESTING, HUGE_INTEGER, DUPLICATE_KEYS, WRONG_TYPE, EMPTY_OR_TRUNCATED,
           NON_OBJECT, CONTROL_CHARS)
#: Not hostile: the valid bodies the cases are built from, which must be accepted (or the corpus would only
#: ever exercise refusals).
VALID = "valid"

NON_FINITE_TOKENS = (b"NaN", b"Infinity", b"-Infinity", b"1e309")
#: A high surrogate, a low one, and a pair in the wrong order (each half alone).
LONE_SURROGATES = ("\ud800", "\udfff", "\udc00\ud800")
DEPTHS = (100, 1000, 10_000)
#: NUL, C0 controls and DEL, and the characters that trip text handling (BOM, separators, NEL, a non-character).
CONTROL_TEXTS = ("a\x00b", "\x1b[31mred\x1b[0m\x7f\x08\x0c\x01", "\ufeff\u2028\u2029\x85\uffff")
RAW_CONTROL_BYTES = (b"a\x00b", b"a\x01\x1f\nb")
_MARKER = "@@hostile@@"


@dataclass(frozen=True)
class Case:
    """One hostile body: its class (``kind``), what it is (``name``), its bytes, and what must happen (if
    anything more than staying well behaved): ``expect`` is ``"accepted"`` or the ``detail`` type of the
    refusal; ``loc`` the path the refusal must name (its first ``detail`` entry's ``loc`` starts there)."""

    kind: str
    name: str
    body: bytes
    expect: str | None = None
    loc: Path | None = None


@dataclass(frozen=True)
class Fields:
    """Where a valid body's fields are, by path: ``numbers`` and ``strings`` (scalar fields), ``objects`` (whose
    keys are attacked too, and that take deep nesting), ``anything`` (where any JSON value is accepted, such as
    a tool call's ``args`` entry: every hostile value goes there). ``accepts_deep`` lists the ``anything`` paths
    where data at the depth limit must be accepted (a rollout that runs with it)."""

    numbers: Sequence[Path] = ()
    strings: Sequence[Path] = ()
    objects: Sequence[Path] = ()
    anything: Sequence[Path] = ()
    accepts_deep: Sequence[Path] = ()


def encode(value: Any) -> bytes:
    """``value`` as a client writes it: compact, ASCII (lone surrogates as ``\\u`` escapes), NaN as ``NaN``."""
    return json.dumps(value, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode("ascii")


def with_value(base: Mapping[str, Any], path: Path, value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with ``value`` at ``path`` (missing objects on the way are created; an index one
    past a list's end appends)."""
    data = copy.deepcopy(dict(base))
    node: Any = data
    for part in path[:-1]:
        if isinstance(node, dict) and part not in node:
            node[part] = {}
        node = node[part]
    if isinstance(node, list) and path[-1] == len(node):
        node.append(value)  # one more item
    else:
        node[path[-1]] = value
    return data


def with_raw(base: Mapping[str, Any], path: Path, raw: bytes) -> bytes:
    """``base`` encoded, with the raw JSON text ``raw`` as the value at ``path`` (``path=()``: the whole body)."""
    if not path:
        return raw
    body = encode(with_value(base, path, _MARKER))
    return body.replace(encode(_MARKER), raw, 1)


def with_members(base: Mapping[str, Any], path: Path, raw_members: bytes, *, drop: str | None = None) -> bytes:
    """``base`` encoded, with the raw members ``raw_members`` (``"k":1,"k":2``) in the object at ``path``
    (``drop``: a key of that object left out first)."""
    data = copy.deepcopy(dict(base))
    node: Any = data
    for part in path:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[part]
    if drop is not None:
        node.pop(drop, None)
    node[_MARKER] = 0
    return encode(data).replace(encode(_MARKER) + b":0", raw_members, 1)


def nested_text(depth: int, kind: str) -> bytes:
    """``0`` inside ``depth`` arrays (``kind="array"``) or objects, as text (Python's own encoder would recurse)."""
    if kind == "array":
        return b"[" * depth + b"0" + b"]" * depth
    return b'{"k":' * depth + b"0" + b"}" * depth


def _where(path: Path) -> str:
    return ".".join(str(part) for part in path) or "<body>"


def _at(base: Mapping[str, Any], path: Path) -> Any:
    node: Any = base
    for part in path:
        node = node[part]
    return node


def corpus(base: Mapping[str, Any], fields: Fields, *, max_depth: int = MAX_DEPTH) -> list[Case]:
    """Every hostile case for a body like ``base`` whose fields are ``fields``, class by class (and ``base``
    itself, class :data:`VALID`)."""
    cases: list[Case] = [Case(VALID, "the valid body", encode(base), expect="accepted")]
    numbers, strings, objects, anything = (list(fields.numbers), list(fields.strings), list(fields.objects),
                                           list(fields.anything))

    for path in numbers + anything:
        for token in NON_FINITE_TOKENS:
            cases.append(Case(NON_FINITE, f"{token.decode()} at {_where(path)}", with_raw(base, path, token)))

    for path in strings + anything:
        for text in LONE_SURROGATES:
            cases.append(Case(LONE_SURROGATE, f"{text!r} at {_where(path)}", encode(with_value(base, path, text))))
    for path in objects:
        for text in LONE_SURROGATES:
            cases.append(Case(LONE_SURROGATE, f"{text!r} as a key of {_where(path)}",
                              with_members(base, path, encode(text) + b":1")))

    for path in [*objects, *anything]:
        for depth in DEPTHS:
            for kind in ("array", "object"):
                cases.append(Case(DEEP_NESTING, f"{kind}s {depth} deep at {_where(path)}",
                                  with_raw(base, path, nested_text(depth, kind)), expect="json_too_deep", loc=path))
    for path in fields.accepts_deep:
        room = max_depth - len(path)  # the body's top level and each step of the path are one level each
        for kind in ("array", "object"):
            cases.append(Case(DEEP_NESTING, f"{kind}s {room} deep at {_where(path)} (the limit)",
                              with_raw(base, path, nested_text(room, kind)), expect="accepted"))
            cases.append(Case(DEEP_NESTING, f"{kind}s {room + 1} deep at {_where(path)} (past the limit)",
                              with_raw(base, path, nested_text(room + 1, kind)), expect="json_too_deep", loc=path))

    for path in numbers + anything:
        for digits, sign in ((5000, b""), (5000, b"-"), (MAX_INT_DIGITS + 1, b"")):
            cases.append(Case(HUGE_INTEGER, f"{sign.decode()}{digits} digits at {_where(path)}",
                              with_raw(base, path, sign + b"7" * digits), expect="json_integer_too_long",
                              loc=path))
        cases.append(Case(HUGE_INTEGER, f"{MAX_INT_DIGITS} digits (the limit) at {_where(path)}",
                          with_raw(base, path, b"7" * MAX_INT_DIGITS),
                          expect="accepted" if path in fields.accepts_deep else None))

    for path in objects:
        node = _at(base, path) if path else base
        for key, value in (node.items() if isinstance(node, Mapping) else ()):
            other = "dup" if not isinstance(value, str) else 12345
            for first, second in ((value, other), (other, value)):
                cases.append(Case(DUPLICATE_KEYS, f"{key} twice in {_where(path)} ({first!r} first)",
                                  with_members(base, path, encode(key) + b":" + encode(first) + b"," + encode(key)
                                               + b":" + encode(second), drop=key)))
        cases.append(Case(DUPLICATE_KEYS, f"a new key twice in {_where(path)}",
                          with_members(base, path, b'"zz":1,"zz":"two"')))

    for path in numbers:
        for value in ("1", {"n": 1}):
            cases.append(Case(WRONG_TYPE, f"{value!r} at {_where(path)}", encode(with_value(base, path, value))))
    for path in strings:
        for value in (1, ["x"]):
            cases.append(Case(WRONG_TYPE, f"{value!r} at {_where(path)}", encode(with_value(base, path, value))))
    for path in objects:
        if path:
            for value in ("x", []):
                cases.append(Case(WRONG_TYPE, f"{value!r} at {_where(path)}", encode(with_value(base, path, value))))

    valid = encode(base)
    for body in (b"", b" ", b"\r\n\t ", b"{", b"}", b'{"', b"{,}", b'{"a":}', valid + b"}", valid + b"x", b"\x00"):
        cases.append(Case(EMPTY_OR_TRUNCATED, f"{body[:12]!r}", body))
    for eighth in range(1, 8):
        cut = len(valid) * eighth // 8
        cases.append(Case(EMPTY_OR_TRUNCATED, f"cut at byte {cut} of {len(valid)}", valid[:cut]))
    for body in (b'{"x":"\\ud8', b'{"x":"\\', b'{"x":"\\u12"}', b'{"x":"\xff\xfe"}', b'{"x":"\xc3"}', b"\xc0\xaf",
                 b"\xef\xbb\xbf" + valid, valid.decode().encode("utf-16"), valid.decode().encode("utf-32-le")):
        cases.append(Case(EMPTY_OR_TRUNCATED, f"{body[:16]!r}", body))

    for body in (b"[]", b"[{}]", b"[" + valid + b"]", b'"text"', b'"\\ud800"', b"0", b"-1", b"1e309", b"NaN",
                 b"-Infinity", b"true", b"false", b"null", b"7" * 5000, nested_text(10_000, "array")):
        cases.append(Case(NON_OBJECT, f"{body[:16]!r}", body))

    for path in strings + anything:
        for text in CONTROL_TEXTS:
            cases.append(Case(CONTROL_CHARS, f"{text!r} at {_where(path)}", encode(with_value(base, path, text))))
    for path in strings:
        for raw in RAW_CONTROL_BYTES:
            cases.append(Case(CONTROL_CHARS, f"raw {raw!r} at {_where(path)}", with_raw(base, path, b'"' + raw + b'"')))
    for path in objects:
        for text in CONTROL_TEXTS[:1]:
            cases.append(Case(CONTROL_CHARS, f"{text!r} as a key of {_where(path)}",
                              with_members(base, path, encode(text) + b":1")))
    return cases


def by_class(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """``cases`` grouped by class: :data:`VALID`, then :data:`CLASSES` in order (every class present)."""
    grouped: dict[str, list[Case]] = {kind: [] for kind in (VALID, *CLASSES)}
    for case in cases:
        grouped[case.kind].append(case)
    return grouped


# The task app's POST /rollout -----------------------------------------------------------------------------

#: The request fields every task app has, by the policy whose config holds them (``None``: any policy).
ROLLOUT_NUMBERS: tuple[Path, ...] = (("env", "seed"), ("max_turns",), ("safety", "max_ops"), ("safety", "max_time_s"))
ROLLOUT_STRINGS: tuple[Path, ...] = (
    ("run_id",), ("mode",), ("on_done",), ("trace_correlation_id",), ("training_session_id",), ("synth_base_url",),
    ("env", "env_name"), ("env", "env_id"), ("policy", "policy_id"), ("policy", "policy_name"),
    ("record", "trace_format"), ("ops", 0))
ROLLOUT_OBJECTS: tuple[Path, ...] = ((), ("env",), ("env", "config"), ("policy",), ("policy", "config"), ("record",),
                                     ("safety",))
#: A tool call's argument that the scripted policy sends as it is: any value goes there, and the rollout runs.
SCRIPTED_ARG: Path = ("policy", "config", "actions", 0, "args", "value")
OPENAI_NUMBERS: tuple[Path, ...] = tuple(("policy", "config", key) for key in
                                         ("temperature", "top_p", "max_tokens", "timeout_s", "max_retries",
                                          "backoff_base_s"))
OPENAI_STRINGS: tuple[Path, ...] = tuple(("policy", "config", key) for key in
                                         ("model", "inference_url", "tool_mode", "trace_correlation_id"))


def rollout_base(policy: str, *, action: Mapping[str, Any]) -> dict[str, Any]:
    """A valid one-turn ``POST /rollout`` body: the ``scripted`` policy playing ``action``, or ``openai`` with an
    inference URL that refuses connections (the rollout runs and ends at once, its policy unavailable)."""
    body: dict[str, Any] = {"run_id": "hostile", "env": {"seed": 0, "config": {}}, "max_turns": 1,
                            "record": {"return_trace": True, "trace_format": "full"}, "safety": {"max_time_s": 30},
                            "mode": "eval", "ops": ["agent", "env"]}
    if policy == "scripted":
        body["policy"] = {"policy_name": "scripted", "config": {"actions": [dict(action)]}}
    else:
        body["policy"] = {"policy_name": "openai", "config": {
            "model": "m", "inference_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout_s": 1,
            "extra_body": {"value": 1}}}
    return body


def env_config_fields(config_model: Any, prefix: Path = ("env", "config")) -> Fields:
    """The numeric and string fields of an environment's config model (pydantic), nested models included, at
    their paths under ``env.config``; every nested model and an unknown key are objects / anything."""
    numbers, strings, objects = [], [], [prefix]
    for name, field in config_model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            nested = env_config_fields(annotation, (*prefix, name))
            numbers += nested.numbers
            strings += nested.strings
            objects += nested.objects
        elif annotation in (int, float):
            numbers.append((*prefix, name))
        elif annotation in (str, str | None):
            strings.append((*prefix, name))
    return Fields(numbers=numbers, strings=strings, objects=objects[1:], anything=[(*prefix, "unknown_key")])


def rollout_corpus(config_model: Any, *, action: Mapping[str, Any], action_strings: Sequence[str]) -> list[Case]:
    """Every hostile ``POST /rollout`` case for an environment whose config model is ``config_model``: the
    request's own fields (with the scripted policy playing ``action``), its ``env.config`` fields, the tool
    call's ``args`` (``action_strings`` are its string arguments) and the ``openai`` policy's config fields."""
    scripted = rollout_base("scripted", action=action)
    config = env_config_fields(config_model)
    args = ("policy", "config", "actions", 0, "args")
    scripted_fields = Fields(
        numbers=[*ROLLOUT_NUMBERS, *config.numbers],
        strings=[*ROLLOUT_STRINGS, *config.strings, ("policy", "config", "actions", 0, "tool"),
                 *((*args, key) for key in action_strings)],
        objects=[*ROLLOUT_OBJECTS, *config.objects, ("policy", "config", "actions", 0), args],
        anything=[*config.anything, SCRIPTED_ARG, ("policy", "config", "actions", 1)],
        accepts_deep=[SCRIPTED_ARG])
    openai_fields = Fields(numbers=OPENAI_NUMBERS, strings=OPENAI_STRINGS,
                           objects=[("policy", "config", "extra_body")],
                           anything=[("policy", "config", "extra_body", "value")])
    return corpus(scripted, scripted_fields) + [case for case in corpus(rollout_base("openai", action=action),
                                                                        openai_fields)
                                                if case.kind not in (EMPTY_OR_TRUNCATED, NON_OBJECT)]


# The OpenRLHF reward server's POST /get_reward -------------------------------------------------------------

def reward_corpus(prompt: str, completion: str, gold: str, facts: Mapping[str, Any]) -> list[Case]:
    """Every hostile ``POST /get_reward`` case, from one item: the body's fields, a label given as an object
    (its gold and facts), and a label given as JSON text whose *text* is hostile (NaN, deep nesting, huge
    integers, lone surrogates and truncations inside the label's own JSON)."""
    label = {"gold": gold, "source_facts": dict(facts)}
    fact = next(iter(facts))
    as_object = {"query": [prompt + completion], "prompts": [prompt], "labels": [label]}
    as_text = {"query": [prompt + completion], "prompts": [prompt], "labels": [json.dumps(label)]}
    fields = Fields(
        numbers=[("labels", 0, "source_facts", fact)],
        strings=[("query", 0), ("prompts", 0), ("labels", 0, "gold")],
        objects=[(), ("labels", 0), ("labels", 0, "source_facts")],
        anything=[("labels", 0, "source_facts", "extra"), ("unknown_key",)])
    cases = corpus(as_object, fields)
    cases.append(Case(VALID, "the label as JSON text", encode(as_text), expect="accepted"))
    cases += [Case(WRONG_TYPE, f"{value!r} at {key}", encode({**as_object, key: value}))
              for key in ("query", "prompts", "labels") for value in ("x", 1, None, {"0": "x"}, [1], [None], [[]])]

    text = json.dumps(label, separators=(",", ":"))
    value = encode(facts[fact]).decode()
    spot = f'"{fact}":{value}'
    assert spot in text, (spot, text)
    for name, replacement in [*((f"{token.decode()} in the label text", token.decode())
                                for token in NON_FINITE_TOKENS),
                              *((f"{kind}s {depth} deep in the label text", nested_text(depth, kind).decode())
                                for depth in DEPTHS for kind in ("array", "object")),
                              ("5000 digits in the label text", "7" * 5000),
                              (f"{MAX_INT_DIGITS + 1} digits in the label text", "7" * (MAX_INT_DIGITS + 1))]:
        kind = (NON_FINITE if "Infinity" in replacement or "NaN" in replacement or "e309" in replacement
                else DEEP_NESTING if "deep" in name else HUGE_INTEGER)
        hostile = text.replace(spot, f'"{fact}":{replacement}', 1)
        # NaN and infinities parse (the label is scored); past the limits, the refusal names the label.
        cases.append(Case(kind, name, encode(with_value(as_text, ("labels", 0), hostile)),
                          loc=None if kind == NON_FINITE else ("labels", 0)))
    for surrogate in LONE_SURROGATES:
        escaped = json.dumps(surrogate)  # the label text holds the escape, as JSON written by a client would
        cases.append(Case(LONE_SURROGATE, f"{surrogate!r} escaped in the label text",
                          encode(with_value(as_text, ("labels", 0), text.replace(f'"{gold}"', escaped, 1)))))
    for cut in (1, len(text) // 2, len(text) - 1):
        cases.append(Case(EMPTY_OR_TRUNCATED, f"the label text cut at {cut}",
                          encode(with_value(as_text, ("labels", 0), text[:cut])), loc=("labels", 0)))
    for control in CONTROL_TEXTS:
        cases.append(Case(CONTROL_CHARS, f"{control!r} in the label text's gold",
                          encode(with_value(as_text, ("labels", 0), text.replace(f'"{gold}"', json.dumps(control),
                                                                                  1)))))
    return cases


# What every case is checked for -----------------------------------------------------------------------------

def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def misbehaviour(case: Case, status: int, content_type: str, body: bytes) -> str | None:
    """What is wrong with an app's answer to ``case`` (``None``: nothing): a 5xx, a body that is not strict JSON
    (UTF-8, no ``NaN``), a traceback in it, a refusal without the field's path or the limit, or an answer
    other than the one the case expects."""
    if status >= 500:
        return f"status {status}: {body[:300]!r}"
    if "application/json" not in content_type:
        return f"content type {content_type!r}: {body[:300]!r}"
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_no_constants)
    except ValueError as exc:
        return f"not strict JSON ({exc}): {body[:300]!r}"
    if b"Traceback" in body or b'File "' in body:
        return f"a traceback in the body: {body[:300]!r}"
    if status == 422:
        detail = data.get("detail") if isinstance(data, dict) else None
        if not isinstance(detail, list) or not detail or not all(
                isinstance(entry, dict) and entry.get("msg") and isinstance(entry.get("loc"), list)
                and entry["loc"][:1] == ["body"] for entry in detail):
            return f"a 422 whose detail does not name the field: {body[:300]!r}"
    if case.expect == "accepted" and status != 200:
        return f"expected 200, got {status}: {body[:300]!r}"
    if case.loc is not None:
        first = data.get("detail", [{}])[0] if isinstance(data, dict) and isinstance(data.get("detail"), list) else {}
        if status != 422 or first.get("loc", [])[:len(case.loc) + 1] != ["body", *case.loc]:
            return f"expected a 422 naming {['body', *case.loc]}, got {status}: {body[:300]!r}"
    if case.expect in ("json_too_deep", "json_integer_too_long"):
        first = data.get("detail", [{}])[0] if isinstance(data, dict) and isinstance(data.get("detail"), list) else {}
        limit = f"the limit is {MAX_DEPTH} levels" if case.expect == "json_too_deep" else \
            f"the limit is {MAX_INT_DIGITS} digits"
        if status != 422 or first.get("type") != case.expect or limit not in str(first.get("msg")):
            return f"expected a 422 {case.expect} naming {limit!r}, got {status}: {body[:300]!r}"
    return None
