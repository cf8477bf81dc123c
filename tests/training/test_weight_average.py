"""WeightAverage: an exponential moving average of a model's weights, tied weights counted once."""

import pytest

torch = pytest.importorskip("torch")

from proofgym.training._average import WeightAverage  # noqa: E402


class _Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(4, 3)
        self.head = torch.nn.Linear(3, 4, bias=False)
        self.head.weight = self.embed.weight  # tied, as the tiny Llama's input and output embeddings are
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))


def test_the_average_moves_by_one_minus_decay_towards_the_live_weights_and_ties_count_once():
    live = _Tied()
    average = WeightAverage(live, 0.5)
    start = live.embed.weight.detach().clone()
    average.updates = 100  # past the early ramp: the decay is 0.5 itself
    with torch.no_grad():
        live.embed.weight.add_(1.0)
        live.steps.fill_(7)
    average.update(live)
    # Once, not twice (state_dict lists the tied tensor under both names): start + 0.5.
    assert torch.allclose(average.model.embed.weight, start + 0.5)
    assert average.model.head.weight is average.model.embed.weight
    assert int(average.model.steps) == 7  # buffers are copied, not averaged
    assert not any(p.requires_grad for p in average.model.parameters())
    assert not average.model.training


def test_early_updates_follow_the_live_weights_closely():
    live = _Tied()
    average = WeightAverage(live, 0.99)
    with torch.no_grad():
        live.embed.weight.add_(1.0)
    start = average.model.embed.weight.detach().clone()
    average.update(live)  # decay min(0.99, 1/10) = 0.1: 90 % of the way
    assert torch.allclose(average.model.embed.weight, start + 0.9)


@pytest.mark.parametrize("decay", [1.0, -0.1, float("nan"), True, "0.9"])
def test_a_bad_decay_is_refused(decay):
    with pytest.raises(ValueError, match="decay must be a number in"):
        WeightAverage(_Tied(), decay)
