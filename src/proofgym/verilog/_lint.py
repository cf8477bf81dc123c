"""The scan of a preprocessed design: which ``$`` system tasks and functions and which compiler directives
it may use (an allow-list), found in linear time with comments skipped. The judge runs it at the checkpoint
between preprocessing and compiling (:mod:`._judge`, step 2).
"""

from __future__ import annotations

import re

# Pure functions only: nothing that reads or writes files, prints, reads plusargs, stops or finishes
# the simulation, or reaches outside the design ($root, $unit).
ALLOWED_SYSTEM_FUNCTIONS = frozenset({
    "$signed", "$unsigned", "$clog2", "$bits", "$size", "$left", "$right", "$low", "$high", "$increment",
    "$dimensions", "$unpacked_dimensions", "$countones", "$countbits", "$onehot", "$onehot0", "$isunknown",
    "$time", "$stime", "$realtime", "$random", "$urandom", "$urandom_range",
    "$itor", "$rtoi", "$bitstoreal", "$realtobits", "$bitstoshortreal", "$shortrealtobits",
    "$ln", "$log10", "$exp", "$sqrt", "$pow", "$floor", "$ceil",
    "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$atan2", "$hypot",
    "$sinh", "$cosh", "$tanh", "$asinh", "$acosh", "$atanh",
    "$past", "$rose", "$fell", "$stable",
})
"""``$`` names a design may use. Everything else (``$fopen``, ``$display``, ``$finish``...) is forbidden."""

# Directives `iverilog -E` leaves in its output for the compiler; none of them reaches outside the design.
ALLOWED_DIRECTIVES = frozenset({
    "timescale", "default_nettype", "resetall", "celldefine", "endcelldefine", "unconnected_drive",
    "nounconnected_drive",
})

# Where a comment, a string or an escaped identifier (which may hold comment openers) can begin.
_OPENER = re.compile(r'//|/\*|"|\\')
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_ESCAPED_IDENTIFIER = re.compile(r"\\\S*")
_SYSTEM_NAME = re.compile(r"(?<![A-Za-z0-9_$])\$[A-Za-z0-9_$]*")
_DIRECTIVE = re.compile(r"`\s*([A-Za-z_][A-Za-z0-9_$]*)")


def forbidden_constructs(preprocessed: str) -> list[str]:
    """The ``$`` names and compiler directives in preprocessed Verilog that a design may not use, sorted.

    Comments are skipped; strings and escaped identifiers are scanned too (harmless there, but never
    a way to hide code from this scan).
    """
    code = _without_comments(preprocessed)
    found = {name for name in _SYSTEM_NAME.findall(code) if name != "$" and name not in ALLOWED_SYSTEM_FUNCTIONS}
    found |= {f"`{name}" for name in _DIRECTIVE.findall(code) if name not in ALLOWED_DIRECTIVES}
    return sorted(found)


def _without_comments(text: str) -> str:
    """``text`` with its comments blanked, in linear time (a design controls the text, so no backtracking).

    Scanned left to right as the compiler's lexer does: a string or an escaped identifier is kept
    whole, so a ``//`` or ``/*`` inside one opens nothing. An unterminated block comment or string is
    scanned as code: the compiler rejects the design anyway, and nothing gets hidden.
    """
    parts: list[str] = []
    position = 0
    last_close = text.rfind("*/")
    while (opener := _OPENER.search(text, position)) is not None:
        start, token = opener.start(), opener.group()
        if token == "//":
            end = text.find("\n", start)
            parts += [text[position:start], " "]
            position = len(text) if end < 0 else end
        elif token == "/*":
            end = text.find("*/", start + 2) if last_close >= start + 2 else -1
            if end < 0:
                parts.append(text[position : start + 2])
                position = start + 2
            else:
                parts += [text[position:start], " "]
                position = end + 2
        else:
            whole = (_STRING if token == '"' else _ESCAPED_IDENTIFIER).match(text, start)
            end = whole.end() if whole is not None else start + 1
            parts.append(text[position:end])
            position = end
    parts.append(text[position:])
    return "".join(parts)
