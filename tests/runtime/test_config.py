import pytest
from pydantic import ValidationError

from proofgym.runtime import RuntimeConfig


def test_defaults():
    config = RuntimeConfig()
    assert (config.max_concurrency, config.timeout_s, config.batch_size, config.retries) == (16, 30.0, 32, 2)
    assert (config.backoff_base_s, config.backoff_max_s) == (0.05, 2.0)
    assert (config.breaker_failure_threshold, config.breaker_reset_after_s) == (5, 30.0)
    assert (config.cache_size, config.cache_path) == (100_000, None)
    assert (config.executor, config.workers) == ("in_process", None)


@pytest.mark.parametrize("field,value", [
    ("max_concurrency", 0), ("timeout_s", 0), ("batch_size", 0), ("retries", -1), ("cache_size", -1),
    ("breaker_failure_threshold", 0), ("breaker_reset_after_s", 0), ("executor", "thread"), ("cache_path", ""),
])
def test_bad_values_are_rejected(field, value):
    with pytest.raises(ValidationError, match=field):
        RuntimeConfig(**{field: value})


def test_unknown_keys_are_rejected():
    with pytest.raises(ValidationError, match="max_concurency"):
        RuntimeConfig(max_concurency=4)


def test_cross_field_rules():
    with pytest.raises(ValidationError, match="backoff_max_s"):
        RuntimeConfig(backoff_base_s=1.0, backoff_max_s=0.5)
    with pytest.raises(ValidationError, match="workers"):
        RuntimeConfig(workers=2)
    assert RuntimeConfig(executor="process", workers=2).workers == 2


def test_frozen_and_loadable_from_plain_data():
    config = RuntimeConfig.model_validate({"timeout_s": "10", "cache_size": 0})
    assert config.timeout_s == 10.0 and config.cache_size == 0
    with pytest.raises(ValidationError):
        config.timeout_s = 5  # type: ignore[misc]
