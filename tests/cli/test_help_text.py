"""Every command's ``--help`` prints its texts as written: a config section such as ``[evaluation]`` must not vanish."""

import re

import pytest
import typer
from typer.testing import CliRunner

from proofgym.cli import app

runner = CliRunner()


def _commands(command, path: tuple[str, ...] = ()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) or "proofgym" for p, _ in COMMANDS])
def test_every_bracketed_word_of_a_help_text_is_printed(path, command):
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
    brackets = {b for text in texts for b in re.findall(r"\[\[?[A-Za-z_.]+\]\]?", text)}
    result = runner.invoke(app, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    printed = " ".join(result.output.split())
    assert not [b for b in brackets if b not in printed], result.output


def test_the_commands_with_config_sections_in_their_help_are_covered():
    assert any("[evaluation]" in (c.help or "") for _, c in COMMANDS)
    assert any("[algorithm]" in (c.help or "") for _, c in COMMANDS)
