"""Reference sample counts kept on disk, so that a new process does not re-run every problem's reference.

One small JSON file per key (a hash of the problem's content, the tool versions, the judge version and its
limits), written atomically into a directory that only this user may write. A count is used only when its file
is a regular file owned by this user, not writable by anyone else, and names the same key; anything else in the
directory is ignored, never trusted. Designs never reach the directory: a sandboxed job sees its own job
directory only, and runs as another user when this process is root. Failures are not kept (a broken problem
costs one run per process), and every error here only means the count is computed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

_LOG = logging.getLogger("proofgym.verilog")

_MAX_FILE_BYTES = 4096


def default_reference_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/proofgym/verilog`` (``~/.cache/proofgym/verilog`` when the variable is unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "proofgym" / "verilog"


def cache_key(*parts: Any) -> str:
    """A file-name-safe key for ``parts`` (strings, numbers, ``None``)."""
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


class ReferenceCache:
    """Sample counts by key in ``directory`` (created, mode 0700, on the first store)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory).expanduser()

    def get(self, key: str) -> int | None:
        """The count stored under ``key``, or ``None`` (absent, unreadable or not trustworthy)."""
        if not self._directory_is_private(create=False):
            return None
        try:
            fd = os.open(self.directory / f"{key}.json", os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022
                    or info.st_size > _MAX_FILE_BYTES):
                return None
            data = json.loads(os.read(fd, _MAX_FILE_BYTES))
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        samples = data.get("samples")
        return samples if type(samples) is int and samples > 0 else None

    def put(self, key: str, samples: int) -> None:
        """Store ``samples`` under ``key`` (best effort: a failure is logged and ignored)."""
        try:
            if not self._directory_is_private(create=True):
                return
            fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"key": key, "samples": samples}, handle)
                os.replace(temporary, self.directory / f"{key}.json")
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as exc:
            _LOG.debug("could not store a reference sample count in %s: %s", self.directory, exc)

    def _directory_is_private(self, *, create: bool) -> bool:
        """Whether the directory exists (made if ``create``), is ours and nobody else may write in it."""
        try:
            if create:
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.stat(self.directory, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            _warn_once(str(self.directory))
            return False
        return True


_WARNED: set[str] = set()


def _warn_once(directory: str) -> None:
    if directory not in _WARNED:
        _WARNED.add(directory)
        _LOG.warning("not using the reference sample cache %s: it is not a directory owned by this user and "
                     "writable by it alone", directory)
