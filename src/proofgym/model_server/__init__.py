"""serve-model: an OpenAI-compatible chat-completions server over a local model (the tiny offline model, a Hugging
Face model, a GGUF file), with batching, tool calls and JSON-schema-constrained answers.

The app and its runner import no torch; the torch engine (:class:`GenerationBackend`, :func:`load_model`) does, and
is loaded on first use; :class:`LlamaCppBackend` serves a GGUF file with llama.cpp instead (``proofgym[llama]``).
The pieces it shares with the other servers are :mod:`proofgym.http`'s.
"""

from typing import Any

from proofgym.http import ServeError
from proofgym.model_server._server import create_model_app, serve_model

_LAZY = {"GenerationBackend": "proofgym.model_server._backend", "LoadedModel": "proofgym.model_server._backend",
         "SamplingParams": "proofgym.model_server._generation", "load_model": "proofgym.model_server._backend",
         "LlamaCppBackend": "proofgym.model_server._llama_cpp"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'proofgym.model_server' has no attribute {name!r}")


__all__ = ["GenerationBackend", "LlamaCppBackend", "LoadedModel", "SamplingParams", "ServeError", "create_model_app",
           "load_model", "serve_model"]
