"""Finding ``<tag>...</tag>`` blocks in linear time."""

from __future__ import annotations

import re
from functools import lru_cache


def find_blocks(text: str, tag: str) -> list[str]:
    """The contents of the complete ``<tag>...</tag>`` blocks in ``text``, in order.

    Tags match case-insensitively and blocks do not nest. An opening tag with no closing tag after
    it is ignored; when several opening tags precede one closing tag, the block starts after the
    last of them, so a tag mentioned in prose does not swallow the block that follows it. Runs in
    time linear in ``len(text)``: only literal searches, each resuming where the previous stopped.
    """
    opening, closing = _tag_patterns(tag)
    blocks: list[str] = []
    position = 0
    while (opened := opening.search(text, position)) is not None:
        closed = closing.search(text, opened.end())
        if closed is None:
            break
        start = opened.end()
        while (reopened := opening.search(text, start, closed.start())) is not None:
            start = reopened.end()
        blocks.append(text[start : closed.start()])
        position = closed.end()
    return blocks


@lru_cache(maxsize=64)
def _tag_patterns(tag: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (
        re.compile(re.escape(f"<{tag}>"), re.IGNORECASE),
        re.compile(re.escape(f"</{tag}>"), re.IGNORECASE),
    )
