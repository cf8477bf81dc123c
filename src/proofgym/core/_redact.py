"""Credentials in names, URLs, text and data: which names hold one, and each kind of value with them taken out.

A config file is shared, committed and logged, and so are traces, reports, error bodies and server logs;
credentials belong in the environment, and a credential a client sends (in a URL, in a request's settings) is
used where the client sent it and written down nowhere. :func:`is_secret_name` says whether a key (a config key,
a header, a query parameter) names a credential: the one place credentials are recognised. The rest take them
out of what proofgym writes down: :func:`redact_url` of one URL, :func:`redact_text` of free text (a log line,
an error message), :func:`redact_secrets` of data (a request, a config, a session's metadata).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, overload
from urllib.parse import unquote_plus

#: What a credential is written down as.
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
# Query parameters that carry a credential under a short name (Google's key=, Azure's sig=, an OAuth code=), or
# end in one (S3's X-Amz-Signature=, Google's X-Goog-Signature=, a jwt=).
_SECRET_PARAMS = frozenset({"key", "sig", "signature", "code"})
_SECRET_PARAM_END = re.compile(r"(?:^|[-_.])(?:sig|signature|jwt)$", re.IGNORECASE)
# ``scheme://userinfo@``: the userinfo of a URL written inside any text (up to the authority's last @; only
# ASCII whitespace ends it, so a no-break space cannot hide a password).
_USERINFO = re.compile(r"(?P<scheme>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^\s/?#]*)@", re.ASCII)
# A URL inside text: a scheme (its characters), ``://``, then up to whitespace, a quote or an angle bracket.
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_URL_REST = re.compile(r"[^\s\"'<>`]*")
# ``name=value`` wherever it is written: a query parameter in a URL, a request line or a bytes repr of a query
# string (``b'api_key=...&x=1'``), a setting in a message. The name is taken whole: ``monkey=`` is not ``key=``.
_ASSIGNED = re.compile(r"(?<![\w.~%+-])(?P<name>[\w.~%+-]+)=(?P<value>[^&#\s'\"]+)")
# ``name: value``: a header line (``Authorization: Bearer ...``), a JSON or repr key (``"api_key": "..."``).
_LABELLED = re.compile(r"""(?<![\w.~%-])(?P<name>[\w.~%-]+)(?P<sep>["']?[ \t]*:[ \t]*)"""
                       r"""(?P<value>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|(?:(?:bearer|basic)[ \t]+)?[^\s"',;&}\]]+)""",
                       re.IGNORECASE)
# A bearer or basic credential wherever it stands (``-H "Authorization: Bearer ..."``).
_SCHEME_CREDENTIAL = re.compile(r"\b(?P<scheme>bearer|basic)[ \t]+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)


@lru_cache(maxsize=4096)  # the same few keys (role, content, model...) are asked about in every request
def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a config key, a header, a query parameter) names a credential. A name ending in
    ``_env`` (``api_key_env``) names the environment variable that holds one, and is not one."""
    return bool(_SECRET_NAME.search(name)) and not name.lower().endswith("_env")


def _is_secret_param(name: str) -> bool:
    """Whether a query parameter's name (as written, percent-encoded or not) names a credential."""
    name = unquote_plus(name)
    return is_secret_name(name) or name.lower() in _SECRET_PARAMS or bool(_SECRET_PARAM_END.search(name))


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
        pieces.append(f"{name}={REDACTED}" if equals and value and _is_secret_param(name) else piece)
    return "&".join(pieces)


def redact_text(text: str) -> str:
    """``text`` (a log line, an error message, anything that may quote a request) with every credential in it
    replaced by ``***``: the userinfo of each URL, the value of each credential-named ``name=value`` (a query
    parameter in a URL, a request line or a query string's bytes repr) and ``name: value`` (a header line, a
    JSON or repr key), and bearer / basic credentials. Over-redacting free text is the safe side: what is not
    a credential is kept as written. Never raises."""
    if not text:
        return text
    if "@" in text:
        text = _USERINFO.sub(lambda found: f"{found['scheme']}{REDACTED}@", text)
    if "=" in text:
        text = _ASSIGNED.sub(_assigned, text)
    if ":" in text:
        text = _LABELLED.sub(_labelled, text)
    return _SCHEME_CREDENTIAL.sub(lambda found: f"{found['scheme']} {REDACTED}", text)


def _assigned(found: re.Match[str]) -> str:
    return f"{found['name']}={REDACTED}" if _is_secret_param(found["name"]) else found.group()


def _labelled(found: re.Match[str]) -> str:
    if not is_secret_name(unquote_plus(found["name"])):
        return found.group()
    value = found["value"]
    quote = value[0] if value[0] in "\"'" else ""
    return f"{found['name']}{found['sep']}{quote}{REDACTED}{quote}"


def redact_secrets(value: Any) -> Any:
    """``value`` (JSON-like data: a request, a config, a session's metadata) with every credential in it
    replaced by ``***``, at any depth: the value of each key that names one (a string, or a whole list or
    mapping; numbers, booleans and ``null`` are kept), the value of each ``[name, value]`` pair whose name
    names one (a header list), and in every string each URL's credentials (:func:`redact_url`). Other text is
    kept as written (a prompt stays the prompt). What holds no credential comes back as the same object; data
    nested past Python's recursion limit (which no JSON encoder writes either) comes back as ``***``."""
    try:
        return _redacted(value)
    except RecursionError:
        return REDACTED


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return _redact_urls(value) if "://" in value else value
    if isinstance(value, Mapping):
        redacted = {key: _under(key, item) for key, item in value.items()}
        return value if all(redacted[key] is item for key, item in value.items()) else redacted
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and isinstance(value[0], str) and is_secret_name(value[0]):
            items = [value[0], _under(value[0], value[1])]
        else:
            items = [_redacted(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def _under(key: Any, item: Any) -> Any:
    """What ``item``, held under ``key``, is written down as."""
    if isinstance(key, str) and is_secret_name(key) and isinstance(item, (str, Mapping, list, tuple)) and item:
        return REDACTED
    return _redacted(item)


def _redact_urls(text: str) -> str:
    """``text`` with each URL in it through :func:`redact_url`. Found by ``str.find`` of ``://`` and read out
    from there: a prompt of many kilobytes costs a scan, not a regex attempt at every position."""
    pieces: list[str] = []
    done = 0
    at = text.find("://")
    while at != -1:
        begin = at
        while begin > done and text[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        while begin < at and not (text[begin].isascii() and text[begin].isalpha()):  # a scheme starts with a letter
            begin += 1
        rest = _URL_REST.match(text, at + 3)
        assert rest is not None  # the pattern matches the empty string
        end = rest.end()
        url = text[begin:end]
        redacted = redact_url(url) if begin < at else url
        if redacted != url:
            pieces += [text[done:begin], redacted]
            done = end
        at = text.find("://", end)
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)
