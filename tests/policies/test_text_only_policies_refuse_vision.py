"""A policy that shows its model text only refuses use_vision / image_only_mode = true at config time, naming the
key (a vision eval on it would measure a text-only model), takes them false, and ignores a request's frame."""

import pytest

from proofgym.config import ConfigError
from proofgym.policies import HFLocalPolicy, PolicyRequest, build_policy, read_frame

from ._support import COMPILE, MESSAGES, png_base64

TEXT_ONLY = [("hf", {"model": "/nonexistent/model"}), ("local", {"model": "/nonexistent/model"}),
             ("scripted", {"actions": []}), ("oracle", {"env_name": "loan"}), ("crafter-random", {})]


@pytest.mark.parametrize("name, config", TEXT_ONLY)
@pytest.mark.parametrize("key", ["use_vision", "image_only_mode"])
def test_a_text_only_policy_refuses_to_be_shown_frames(name, config, key):
    with pytest.raises(ConfigError, match=rf"policy '{name}': {key}: this policy shows its model the observation's "
                                          "text only") as raised:
        build_policy(name, {**config, key: True})
    assert raised.value.problems[0]["loc"] == (key,)


@pytest.mark.parametrize("name, config", [entry for entry in TEXT_ONLY if entry[0] not in ("hf", "local")])
def test_a_text_only_policy_takes_the_vision_keys_false(name, config):
    assert build_policy(name, {**config, "use_vision": False, "image_only_mode": False}) is not None


def test_a_vision_key_that_is_not_a_boolean_is_refused():
    with pytest.raises(ConfigError, match="use_vision: expected true or false"):
        build_policy("scripted", {"actions": [], "use_vision": 1})


def test_the_local_model_is_shown_the_text_whatever_the_frame(tiny_lm):
    policy = HFLocalPolicy(*tiny_lm)
    framed = PolicyRequest(messages=MESSAGES, tools=[COMPILE], frame=read_frame(png_base64()))
    assert policy.render(framed) == policy.render(PolicyRequest(messages=MESSAGES, tools=[COMPILE]))
