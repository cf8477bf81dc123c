"""A rollout actor killed on its node leaves its folder; the next actor's start removes it."""

from __future__ import annotations

import os
import subprocess
import sys

from proofgym.evaluation import remove_orphaned_actor_dirs


def test_folders_of_actors_whose_process_is_gone_are_removed_and_the_rest_left(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    dead = tmp_path / f"proofgym-rl-actor-{ended.stdout.strip()}-abc123"
    alive = tmp_path / f"proofgym-rl-actor-{os.getpid()}-def456"
    unnamed = tmp_path / "proofgym-rl-actor-xyz789"  # an older actor's name, without its process id
    other = tmp_path / "something-else-1"
    for folder in (dead, alive, unnamed, other):
        folder.mkdir()
        (folder / "traces.db").write_bytes(b"x")
    assert remove_orphaned_actor_dirs(tmp_path) == [dead]
    assert not dead.exists() and alive.exists() and unnamed.exists() and other.exists()
    assert remove_orphaned_actor_dirs(tmp_path) == []
