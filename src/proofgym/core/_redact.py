"""Credentials in names and URLs: which names hold one, and a URL with its credentials taken out.

A config file is shared, committed and logged, and so are traces and reports; credentials belong in
the environment. :func:`is_secret_name` says whether a key (a config key, a header, a query parameter)
names a credential; :func:`redact_url` is the one way a URL is written down anywhere proofgym records it.
"""

from __future__ import annotations

import re
from typing import overload
from urllib.parse import unquote_plus

REDACTED = "***"

# Words that make a name a credential: api keys, tokens (as a word: hf_token, x-auth-token, accessToken,
# not max_tokens or tokenizer), secrets, passwords, credentials, the Authorization / Cookie headers,
# private / access / signing keys, bearer and basic auth.
_SECRET_NAME = re.compile(
    r"api[_-]?key|(?:^|[_-])token(?:$|[_-])|(?:access|refresh|id|auth|session|bearer)[_-]?token|secret|passw(?:or)?d"
    r"|(?:^|[_-])pwd(?:$|[_-])|credential|authori[sz]ation|(?:^|[_-])auth(?:$|[_-])|cookie|bearer"
    r"|(?:private|access|signing|session|encryption)[_-]?key",
    re.IGNORECASE,
)
# Query parameters that carry a credential under a short name (Google's key=, Azure's sig=, S3's signature).
_SECRET_PARAMS = frozenset({"key", "sig", "signature", "code"})
# ``scheme://userinfo@``: the userinfo of a URL written inside any text (up to the authority's last @; only
# ASCII whitespace ends it, so a no-break space cannot hide a password).
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#]*)@", re.ASCII)


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a config key, a header, a query parameter) names a credential."""
    return bool(_SECRET_NAME.search(name))


@overload
def redact_url(url: str) -> str: ...
@overload
def redact_url(url: None) -> None: ...


def redact_url(url: str | None) -> str | None:
    """``url`` with its credentials replaced by ``***``: the userinfo (``https://user:pass@host`` becomes
    ``https://***@host``) and the value of every query or fragment parameter whose name is a credential
    (``?api_key=...``, ``#access_token=...``). Everything else is kept as written, so the ``cid``
    parameter (the trace correlation id) survives; a URL without credentials comes back unchanged, and
    ``None`` stays ``None``. Never raises, and works on the text alone: a URL that does not parse (an
    unclosed IPv6 bracket) is redacted all the same.
    """
    if url is None:
        return None
    url = _USERINFO.sub(lambda found: f"{found['scheme']}{REDACTED}@", url)
    before, hash_, fragment = url.partition("#")
    head, question, query = before.partition("?")
    return f"{head}{question}{_redact_params(query)}{hash_}{_redact_params(fragment)}"


def _redact_params(text: str) -> str:
    """``a=1&token=x`` -> ``a=1&token=***``: values of credential-named parameters, the rest as written."""
    pieces = []
    for piece in text.split("&"):
        name, equals, value = piece.partition("=")
        secret = is_secret_name(unquote_plus(name)) or unquote_plus(name).lower() in _SECRET_PARAMS
        pieces.append(f"{name}={REDACTED}" if equals and value and secret else piece)
    return "&".join(pieces)
