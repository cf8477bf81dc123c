"""Precision: fp32, bf16 autocast, or bf16 only where the CPU computes it natively."""

import pytest

from proofgym.training import CompactGRPOConfig, SFTConfig
from proofgym.training import _precision
from proofgym.training._precision import resolve_precision


def test_explicit_precisions_are_kept():
    assert resolve_precision("fp32") == "fp32"
    assert resolve_precision("bf16") == "bf16"


@pytest.mark.parametrize("native, expected", [(True, "bf16"), (False, "fp32")])
def test_auto_is_bf16_only_on_a_cpu_with_bf16_instructions(monkeypatch, native, expected):
    monkeypatch.setattr(_precision, "cpu_has_native_bf16", lambda: native)
    assert resolve_precision("auto", "cpu") == expected


@pytest.mark.parametrize("make", [lambda: CompactGRPOConfig(precision="fp16"), lambda: SFTConfig(precision="half")])
def test_an_unknown_precision_is_refused_naming_the_field(make):
    with pytest.raises(ValueError, match=r"Config.precision must be one of auto, fp32, bf16"):
        make()


def test_bf16_autocast_runs_the_matrix_products_in_bf16_and_fp32_does_not():
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(4, 4)
    x = torch.ones(2, 4)
    with _precision.autocast("bf16", model):
        assert model(x).dtype == torch.bfloat16
    with _precision.autocast("fp32", model):
        assert model(x).dtype == torch.float32
