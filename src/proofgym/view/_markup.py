"""How a stored value reaches the page: escaped, and with the characters that would act on the page made visible.

A bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) in a completion would reorder the text around
it, so that a reason, a fact or a reward reads as something it is not; other control characters are invisible.
Every expression a template prints goes through :func:`visible` (the Jinja environment's ``finalize``), so each such
character shows as a marker, ``<U+202E>``, wherever stored text is shown.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

from proofgym.core import CONTROL_CHARACTERS

#: The characters that act on the page instead of showing (core's one list: bidirectional and other controls).
HIDDEN = CONTROL_CHARACTERS


def _marker(match: re.Match[str]) -> str:
    # No quotes in the marker: it stays well-formed even inside a quoted attribute value.
    return f"<span class=control>&lt;U+{ord(match.group()):04X}&gt;</span>"


def visible(value: Any) -> Markup:
    """``value`` as HTML text: escaped, each character of ``HIDDEN`` shown as a ``<U+XXXX>`` marker. Markup (a
    macro's output, a chart) is already made of values shown this way and passes unchanged."""
    if isinstance(value, Markup):
        return value
    return Markup(HIDDEN.sub(_marker, str(escape(value))))


def attribute(value: Any) -> Markup:
    """``value`` escaped for an attribute whose value must come back as it was (a form field's value): a control
    character stays in it, where it cannot reorder the page."""
    return Markup(escape(value))
