"""The error a server's start refuses with, before anything is bound or loaded."""

from __future__ import annotations


class ServeError(ValueError):
    """The app cannot be started as asked (the message says why and what to change)."""
