import pytest

from proofgym.http import api_key_from_env, is_loopback
from proofgym.http._auth import key_matches, presented_key


def test_the_key_comes_from_the_first_set_variable():
    assert api_key_from_env({"ENV_API_KEY": "c", "PROOFGYM_API_KEY": "b"}) == "b"
    assert api_key_from_env({"ENVIRONMENT_API_KEY": "a", "PROOFGYM_API_KEY": "b"}) == "a"
    assert api_key_from_env({"ENVIRONMENT_API_KEY": "  ", "ENV_API_KEY": "c"}) == "c"
    assert api_key_from_env({}) is None


def test_a_request_presents_the_key_as_x_api_key_or_bearer():
    assert presented_key({"x-api-key": "k"}) == "k"
    assert presented_key({"authorization": "Bearer k"}) == "k"
    assert presented_key({"authorization": "bearer  k "}) == "k"
    assert presented_key({"authorization": "Basic k"}) is None
    assert presented_key({"authorization": "Bearer "}) is None
    assert presented_key({}) is None


def test_keys_are_compared_exactly():
    assert key_matches("secret", "secret")
    assert not key_matches("secret", "secret ")
    assert not key_matches("secret", "secre")
    assert not key_matches("secret", None)
    assert not key_matches("secret", "s\udcffcret")  # undecodable header bytes never crash the check


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True),
                                            ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                            ("::", False), ("10.0.0.5", False), ("example.com", False)])
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback
