"""YAML as proofgym reads it from people: the safe loader, with one key once, no aliases, bounded depth.

Every YAML file proofgym reads (run configs, eval and environment configs, rulebooks) goes through
:func:`load_yaml`, so they all refuse the same things:

- a mapping key given twice (YAML would silently keep the last: ``{timeout_s: 10, timeout_s: 0.001}``);
- aliases (``*name``): a 1 KB file of nested aliases ("billion laughs") expands to billions of values;
  the first alias is refused, before anything is expanded;
- mappings and lists nested deeper than :data:`~proofgym.formats.MAX_DEPTH`, counted while composing, so
  the composer (which recurses once per level) never goes deep;
- integers of more than :data:`~proofgym.formats.MAX_INT_DIGITS` digits, before Python converts them;
- anything the safe loader refuses (tags that build objects, several documents in one file).

Each refusal is a :class:`~proofgym.formats.DocumentError` with the line and the key path.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from proofgym.formats._errors import DocumentError
from proofgym.formats._limits import MAX_DEPTH, MAX_INT_DIGITS, check_tree, integer_too_long, too_deep


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one YAML document (``None`` when ``text`` holds none), or raise
    :class:`~proofgym.formats.DocumentError` naming the line and key path at fault."""
    loader = None
    try:
        loader = _Loader(text, max_depth)  # the reader checks the characters here
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        context = exc.context
        if context and exc.context_mark is not None and exc.problem_mark is not None:  # where the construct began
            context += f" (from line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
        what = ": ".join(part for part in (context, exc.problem) if part)
        raise DocumentError(f"not valid YAML: {what}", line=mark.line + 1 if mark else None,
                            column=mark.column + 1 if mark else None, path=_where(loader)) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a control character)
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise DocumentError(f"not valid YAML: {exc.reason} (character #x{exc.character:04x})", line=line,
                            column=column, path=_where(loader)) from None
    except yaml.YAMLError as exc:
        raise DocumentError(f"not valid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    check_tree(data, max_depth)
    return data


def _where(loader: _Loader | None) -> tuple[Any, ...]:
    """The key path of the value being read when parsing stopped (the parser itself knows only the line)."""
    return loader.stopped_at if loader is not None and loader.stopped_at is not None else ()


class _Loader(yaml.SafeLoader):
    """The safe loader, keeping each node's key path so that every refusal can say where it is."""

    def __init__(self, text: str, max_depth: int) -> None:
        super().__init__(text)
        self._max_depth = max_depth
        self._depth = 0
        self.reading: list[Any] = []  # the key path of the node being composed
        self.stopped_at: tuple[Any, ...] | None = None  # that path when the parser failed
        self.paths: dict[Node | None, tuple[Any, ...]] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        part = _path_part(parent, index)
        if part is not _NONE:
            self.reading.append(part)
        try:
            event = self.peek_event()  # type: ignore[no-untyped-call]  # parsing it may fail: the path then names the value at fault
            if isinstance(event, yaml.AliasEvent):
                raise self._refuse(event, "aliases (*name) are not allowed in proofgym files: write the value "
                                          "out (an alias can expand a small file into billions of values)")
            nested = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
            if nested:
                if self._depth >= self._max_depth:
                    raise self._refuse(event, too_deep(self._max_depth))
                self._depth += 1
            try:
                node = super().compose_node(parent, index)
            finally:
                if nested:
                    self._depth -= 1
            self.paths[node] = tuple(self.reading)
            return node
        except yaml.YAMLError:
            if self.stopped_at is None:  # the innermost node: the path is unwound on the way out
                self.stopped_at = tuple(self.reading)
            raise
        finally:
            if part is not _NONE:
                self.reading.pop()

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:  # a scalar constructor's (a date such as 2024-13-01)
            if isinstance(exc, DocumentError):
                raise
            raise self._refuse(node, f"cannot read this value: {exc}") from None

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            self.flatten_mapping(node)
            first: dict[Any, str] = {}  # key -> where it was first given
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    seen = key in first
                except TypeError:
                    raise self._refuse(key_node, "a mapping key must be a single value, not a list or "
                                                 "mapping") from None
                mark = key_node.start_mark
                if seen:
                    raise DocumentError(f"key given twice (first at {first[key]})", line=mark.line + 1,
                                        column=mark.column + 1, path=(*self.paths.get(node, ()), key))
                first[key] = f"line {mark.line + 1}, column {mark.column + 1}"
        return super().construct_mapping(node, deep=deep)  # type: ignore[arg-type]  # PyYAML refuses a non-mapping

    def _refuse(self, where: Any, reason: str) -> DocumentError:
        """A refusal at an event or node (both have a ``start_mark``), with its key path."""
        path = self.paths.get(where, tuple(self.reading)) if isinstance(where, Node) else tuple(self.reading)
        mark = where.start_mark
        return DocumentError(reason, line=mark.line + 1, column=mark.column + 1, path=path)


def _construct_int(loader: _Loader, node: ScalarNode) -> int:
    digits = sum(char.isalnum() for char in node.value)  # a 0x / 0b / 0o prefix counts too
    if digits > MAX_INT_DIGITS:
        raise loader._refuse(node, integer_too_long(digits))
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_NONE = object()


def _path_part(parent: Node | None, index: Any) -> Any:
    """The key or index under which a node sits in ``parent``: ``index`` is the key node of a mapping's
    value, and ``None`` for a mapping key itself (a key is placed at its mapping's path: nothing is added)."""
    if isinstance(parent, SequenceNode):
        return index
    if parent is None or index is None:
        return _NONE
    return index.value if isinstance(index, ScalarNode) else "<complex key>"


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
