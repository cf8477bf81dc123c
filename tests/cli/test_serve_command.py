import pytest
from typer.testing import CliRunner

from proofgym.cli import app
from proofgym.cli._serve import load_env_config
from proofgym.config import ConfigError

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_api_key(monkeypatch):
    for name in ("ENVIRONMENT_API_KEY", "PROOFGYM_API_KEY", "ENV_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def serve(*args, tmp_path):
    return runner.invoke(app, ["serve", *args, "--traces", str(tmp_path / "t.db")])


def test_a_non_loopback_address_without_a_key_is_refused(tmp_path):
    result = serve("verilog", "--host", "0.0.0.0", tmp_path=tmp_path)
    assert result.exit_code == 2
    assert "without an API key" in result.output and "ENVIRONMENT_API_KEY" in result.output
    assert not (tmp_path / "t.db").exists()


@pytest.mark.parametrize("args, message", [
    (["chess"], "unknown environment 'chess'"),
    (["verilog", "--env-config", '{"max_turns": 0}'], "max_turns"),
    (["verilog", "--env-config", "{oops"], "--env-config: line 1, column 2: not valid JSON"),
    (["verilog", "--env-config", "missing.yaml"], "neither a JSON object nor an existing file"),
    (["loan", "--policy", "gpt"], "unknown policy names"),
])
def test_bad_arguments_exit_2_with_the_reason(tmp_path, args, message):
    result = serve(*args, tmp_path=tmp_path)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_an_unusable_trace_store_exits_2(tmp_path):
    (tmp_path / "file").write_text("")
    result = runner.invoke(app, ["serve", "loan", "--traces", str(tmp_path / "file" / "t.db")])
    assert result.exit_code == 2 and "cannot open the trace store" in " ".join(result.output.split())


def test_env_config_from_json_yaml_and_toml_files(tmp_path):
    (tmp_path / "c.json").write_text('{"problem_id": "Prob001_and_gate"}')
    (tmp_path / "c.yaml").write_text("problem_id: Prob001_and_gate\n")
    (tmp_path / "c.toml").write_text('problem_id = "Prob001_and_gate"\n')
    for name in ("c.json", "c.yaml", "c.toml"):
        assert load_env_config(str(tmp_path / name)) == {"problem_id": "Prob001_and_gate"}
    assert load_env_config(' {"max_turns": 3}') == {"max_turns": 3}


def test_env_config_must_be_an_object_without_secrets(tmp_path):
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "secret.yaml").write_text("api_key: x\n")
    with pytest.raises(ConfigError, match="list.json: expected a mapping at the top level, got list"):
        load_env_config(str(tmp_path / "list.json"))
    with pytest.raises(ConfigError, match="secrets must not be stored"):
        load_env_config(str(tmp_path / "secret.yaml"))


def test_the_cli_slow_client_defaults_are_the_servers():
    """The defaults are written out in the CLI (importing the servers would load FastAPI for every command):
    they must be the servers' own, and the reward server's header timeout the task app's."""
    import inspect

    from proofgym.cli._serve import serve_command
    from proofgym.cli._train import serve_reward_command
    from proofgym.reward_server import _app as reward_app
    from proofgym.http import _timeouts

    def defaults(command):
        return {name: p.default.default for name, p in inspect.signature(command).parameters.items()
                if name in ("header_timeout_s", "body_timeout_s", "max_connections")}

    assert defaults(serve_command) == {"header_timeout_s": _timeouts.DEFAULT_HEADER_TIMEOUT_S,
                                       "body_timeout_s": _timeouts.DEFAULT_BODY_TIMEOUT_S,
                                       "max_connections": _timeouts.DEFAULT_MAX_CONNECTIONS}
    assert defaults(serve_reward_command) == {"header_timeout_s": reward_app.DEFAULT_HEADER_TIMEOUT_S,
                                              "body_timeout_s": reward_app.DEFAULT_BODY_TIMEOUT_S,
                                              "max_connections": reward_app.DEFAULT_MAX_CONNECTIONS}
    assert reward_app.DEFAULT_HEADER_TIMEOUT_S == _timeouts.DEFAULT_HEADER_TIMEOUT_S
