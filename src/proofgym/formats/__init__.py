"""The text formats people write proofgym files in (YAML, JSON, TOML), read into plain data with one set
of refusals: a key given twice, YAML aliases, nesting deeper than :data:`MAX_DEPTH` levels and integers of
more than :data:`MAX_INT_DIGITS` digits. Each is a :class:`DocumentError` naming the line or key path.

It sits just above :mod:`proofgym.core` (and imports nothing else of proofgym), so that configs, rulebooks
and the command line all read files the same way.
"""

from proofgym.formats._errors import DocumentError
from proofgym.formats._json import load_json
from proofgym.formats._limits import MAX_DEPTH, MAX_INT_DIGITS
from proofgym.formats._toml import load_toml
from proofgym.formats._yaml import load_yaml

__all__ = ["DocumentError", "MAX_DEPTH", "MAX_INT_DIGITS", "load_json", "load_toml", "load_yaml"]
