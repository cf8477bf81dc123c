"""Constrained decoding for ``response_format``: at each step, the tokens that keep the reply valid JSON (of a schema).

Backed by lm-format-enforcer (a pure-Python character-level JSON Schema parser walked over a prefix tree of the
vocabulary). Its own transformers integration imports a module transformers 5 removed, so the per-tokenizer data
is built here from the tokenizer alone, the way that integration does. Imported only when a request asks for
JSON output; lm-format-enforcer is then required (``pip install lm-format-enforcer``).
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any, Callable, Mapping

#: Whitespace runs allowed between JSON tokens: the library's default (12) lets a small model pad forever.
MAX_WHITESPACE_RUN = 2


class ConstraintError(ValueError):
    """A ``response_format`` that cannot be enforced (the message says why)."""


def library_available() -> bool:
    """Whether lm-format-enforcer can be imported (constrained decoding is possible)."""
    return importlib.util.find_spec("lmformatenforcer") is not None


class JSONConstraint:
    """A JSON Schema (or any JSON object, ``schema=None``) compiled once per request; :meth:`start` gives each row
    of the request its own allowed-token function ``allowed(token_ids) -> list[int]`` over prompt + generated ids.

    The schema is checked here (on the caller's thread): an unusable one raises :class:`ConstraintError`.
    """

    def __init__(self, schema: Mapping[str, Any] | None, vocabulary: TokenizerVocabulary) -> None:
        try:
            from lmformatenforcer import JsonSchemaParser
        except ImportError:
            raise ConstraintError("response_format needs the lm-format-enforcer package on the server "
                                  "(pip install lm-format-enforcer==0.11.3)") from None
        self.schema = dict(schema) if schema is not None else {"type": "object"}
        self.vocabulary = vocabulary
        try:
            JsonSchemaParser(self.schema)
        except Exception as exc:  # noqa: BLE001 - a client's schema: any failure is theirs to fix
            raise ConstraintError(f"the JSON schema cannot be enforced: {type(exc).__name__}: {exc}") from None

    def start(self) -> Callable[[list[int]], list[int]]:
        """A fresh allowed-token function for one row (it keeps the parser state of that row's reply)."""
        from lmformatenforcer import (
            CharacterLevelParserConfig,
            JsonSchemaParser,
            TokenEnforcer,
        )

        data = self.vocabulary.enforcer_data()
        parser = JsonSchemaParser(self.schema)
        enforcer = TokenEnforcer(data, parser)
        parser.config = CharacterLevelParserConfig(alphabet=data.tokenizer_alphabet,
                                                   max_consecutive_whitespaces=MAX_WHITESPACE_RUN)
        return lambda token_ids: enforcer.get_allowed_tokens(token_ids).allowed_tokens


class TokenizerVocabulary:
    """lm-format-enforcer's per-tokenizer data (each token's text, and whether it starts a word), built on first
    use (half a second for a 49k-token vocabulary) and kept. ``decode(ids)`` must be safe to call from the
    generation thread."""

    def __init__(self, tokenizer: Any, decode: Callable[[list[int]], str], eos_token_ids: list[int],
                 vocab_size: int) -> None:
        self.tokenizer = tokenizer
        self.decode = decode
        self.eos_token_ids = eos_token_ids
        self.vocab_size = vocab_size
        self._data: Any = None
        self._lock = threading.Lock()

    def enforcer_data(self) -> Any:
        with self._lock:
            if self._data is None:
                from lmformatenforcer import TokenEnforcerTokenizerData

                self._data = TokenEnforcerTokenizerData(
                    self._regular_tokens(), lambda ids: self.decode(ids).rstrip("\ufffd"),
                    list(self.eos_token_ids), False, self.vocab_size)
            return self._data

    def _regular_tokens(self) -> list[tuple[int, str, bool]]:
        # As lm-format-enforcer's transformers integration: decoding after "0" keeps a token's leading space,
        # which decoding it alone may drop; the difference says the token starts a word.
        zero = self.tokenizer.encode("0", add_special_tokens=False)[-1]
        special = set(self.tokenizer.all_special_ids)
        tokens = []
        for token in range(self.vocab_size):
            if token in special:
                continue
            after_zero = self.decode([zero, token])[1:]
            if "\ufffd" in after_zero:  # a byte of a multi-byte character: the parser reads whole characters
                continue
            tokens.append((token, after_zero, len(after_zero) > len(self.decode([token]))))
        return tokens
