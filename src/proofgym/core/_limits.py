"""The two limits on data from outside, and the cheap tests of them that the rest of ``proofgym.core`` shares.

Python's JSON encoders and decoders recurse once per nested array or object, and Python refuses to turn an
integer of more than 4,300 digits into text. Data from a model, a client or a file is therefore held to
:data:`MAX_DEPTH` levels and :data:`MAX_INT_DIGITS` digits: :func:`~proofgym.core.bounded_json` describes
what goes past them, :func:`~proofgym.core.json_limit_problem` refuses JSON text that does, and
``proofgym.formats`` refuses documents that do. The tests here run in C code over the bytes (a few passes)
or on the integer itself, so the common case, data within both limits, costs next to nothing.
"""

from __future__ import annotations

import math
from itertools import accumulate

#: Data nested deeper than this is kept as a short description instead (JSON encoders recurse).
MAX_DEPTH = 64
#: Integers with more digits than this are kept as a short description (Python refuses to print them).
MAX_INT_DIGITS = 1000

_DIGIT_BYTES = b"0123456789"
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_INT_LIMIT = 10 ** MAX_INT_DIGITS


def has_digit_run(data: bytes, max_digits: int = MAX_INT_DIGITS) -> bool:
    """Whether ``data`` holds more than ``max_digits`` digits in a row anywhere, strings included: a fast bound
    on whether it writes an integer past the limit.

    A run of ``L = max_digits + 1`` digits covers exactly one position that is a multiple of ``L``, so only those
    positions are looked at, and around a digit found there only its own run is measured: the common case, a
    response of a few KB, costs a handful of byte reads instead of a pass over it."""
    run = max_digits + 1
    if len(data) < run:
        return False
    for i in range(0, len(data), run):
        if 48 <= data[i] <= 57:  # an ASCII digit
            before, after = data[max(0, i - max_digits):i], data[i:i + run]
            if len(before) - len(before.rstrip(_DIGIT_BYTES)) + len(after) - len(after.lstrip(_DIGIT_BYTES)) >= run:
                return True
    return False


def outside_strings(data: bytes) -> bytes:
    """JSON text ``data`` without its strings: with escaped backslashes and quotes taken out, every quote left
    opens or closes a string, so every other piece between quotes is outside them."""
    return b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])


def nests_deeper_than(data: bytes, max_depth: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of JSON text ``data`` nest more than ``max_depth`` levels deep (the top
    level is level 1); brackets inside strings do not count. A count of the brackets decides most texts."""
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return False
    steps = map(_STEP.__getitem__, outside_strings(data).translate(None, _NOT_BRACKETS))
    return max(accumulate(steps), default=0) > max_depth


def digits_past_limit(value: int) -> int | None:
    """About how many digits integer ``value`` has when that is more than :data:`MAX_INT_DIGITS`; ``None``
    when it is within (decided exactly, without printing it)."""
    if -_INT_LIMIT < value < _INT_LIMIT:
        return None
    return int(value.bit_length() * math.log10(2)) + 1
