import json

import pytest

from proofgym.parsers import JSONBlockParser


def _block(answer="permit", facts=None, *, tag="decision", **extra):
    body = {"classification": answer, **({} if facts is None else {"facts": facts}), **extra}
    return f"<{tag}>{json.dumps(body)}</{tag}>"


@pytest.fixture
def block():
    """Build a decision block: block("deny", {"age": 3}) -> '<decision>{...}</decision>'."""
    return _block


@pytest.fixture
def parser():
    return JSONBlockParser(decisions=("permit", "deny"))
