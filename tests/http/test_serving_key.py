"""The one address/key check every proofgym server makes before it binds (proofgym.http.serving_key)."""

import pytest

from proofgym.http import API_KEY_ENV_VARS, ServeError, serving_key

_SET = "Set ENVIRONMENT_API_KEY (or PROOFGYM_API_KEY, ENV_API_KEY), or bind a loopback address such as 127.0.0.1"


@pytest.fixture
def no_key_in_env(monkeypatch):
    for name in API_KEY_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def test_a_given_key_is_the_key_anywhere(no_key_in_env, monkeypatch):
    monkeypatch.setenv("PROOFGYM_API_KEY", "from-env")
    assert serving_key("0.0.0.0", 80, "given", could="x") == "given"
    assert serving_key("0.0.0.0", 80, None, could="x") == "from-env"
    assert serving_key("127.0.0.1", 80, None, could="x", read_env=False) is None


def test_loopback_needs_no_key(no_key_in_env):
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.3.2.1"):
        assert serving_key(host, 8000, None, could="x") is None


def test_beyond_loopback_without_a_key_is_refused_naming_what_anyone_could_do(no_key_in_env):
    with pytest.raises(ServeError) as refused:
        serving_key("0.0.0.0", 8000, None, could="run rollouts")
    assert str(refused.value) == ("refusing to serve on '0.0.0.0' without an API key: anyone who can reach it could "
                                  f"run rollouts. {_SET}")
    with pytest.raises(ServeError) as refused:
        serving_key("10.0.0.1", 8000, None, could="read every trace", server="the viewer")
    assert str(refused.value) == ("refusing to serve the viewer on '10.0.0.1' without an API key: anyone who can "
                                  f"reach it could read every trace. {_SET}")


def test_the_environment_is_read_only_when_asked_and_the_variables_named_are_those_read(monkeypatch):
    monkeypatch.setenv("PROOFGYM_API_KEY", "from-env")
    with pytest.raises(ServeError) as refused:
        serving_key("0.0.0.0", 8001, None, could="score completions", names=("PROOFGYM_API_KEY", "ENVIRONMENT_API_KEY"),
                    read_env=False)
    assert str(refused.value) == ("refusing to serve on '0.0.0.0' without an API key: anyone who can reach it could "
                                  "score completions. Set PROOFGYM_API_KEY (or ENVIRONMENT_API_KEY), or bind a "
                                  "loopback address such as 127.0.0.1")


@pytest.mark.parametrize("port", [-1, 65536])
def test_a_port_out_of_range_is_refused(port):
    with pytest.raises(ServeError, match=rf"port must be in 0\.\.65535, got {port}"):
        serving_key("127.0.0.1", port, "k", could="x")
    assert serving_key("127.0.0.1", 0, "k", could="x") == "k" and serving_key("127.0.0.1", 65535, "k", could="x")


def test_every_server_refuses_with_its_own_words_before_binding(no_key_in_env, tmp_path):
    from proofgym.model_server import serve_model
    from proofgym.reward_server import serve_reward
    from proofgym.taskapp import serve
    from proofgym.view import serve_view

    refusals = {
        "run rollouts": lambda: serve("verilog", host="0.0.0.0", port=1, traces=str(tmp_path / "t.db")),
        "use the model": lambda: serve_model("no-such-model-is-loaded", host="0.0.0.0"),
        "read every trace": lambda: serve_view(tmp_path / "t.db", host="0.0.0.0", port=1),
        "score completions": lambda: serve_reward(lambda *a: None, host="0.0.0.0", port=1),
    }
    for could, start in refusals.items():
        with pytest.raises(ServeError, match="without an API key") as refused:
            start()
        assert f"anyone who can reach it could {could}. Set " in str(refused.value)
    assert not (tmp_path / "t.db").exists()
