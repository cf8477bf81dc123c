"""The ``proofgym`` console script."""

from proofgym.cli._app import app, main

__all__ = ["app", "main"]
