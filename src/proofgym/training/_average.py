"""A running average of a policy's weights: the policy a run evaluates and keeps, while the live one samples.

Late in GRPO the live policy's decision boundary moves a little with every update (each step trains on
the few groups that still disagree), so greedy accuracy on a rare boundary case hovers around its
mean instead of settling. The exponential moving average of the weights (Polyak averaging) is that
mean: it converges where the live policy oscillates.
"""

from __future__ import annotations

import copy
import math
from typing import Any


def check_decay(decay: Any, where: str = "decay") -> None:
    """Raise ``ValueError`` naming ``where`` unless ``decay`` is a finite number in [0, 1)."""
    if not (isinstance(decay, (int, float)) and not isinstance(decay, bool) and math.isfinite(decay)
            and 0.0 <= decay < 1.0):
        raise ValueError(f"{where} must be a number in [0, 1), got {decay!r}")


class WeightAverage:
    """An exponential moving average of ``model``'s floating-point parameters and buffers.

    :attr:`model` is a frozen copy of ``model`` in eval mode holding the average; :meth:`update`
    folds in the live weights: ``avg = decay * avg + (1 - decay) * live``. Until ``1 / (1 - decay)``
    updates have been made, the decay is ``(1 + n) / (10 + n)`` at update ``n`` when that is smaller,
    so that early averages are not dominated by the starting weights.
    """

    def __init__(self, model: Any, decay: float) -> None:
        check_decay(decay)
        self.decay = float(decay)
        self.model = copy.deepcopy(model).eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)
        self.updates = 0

    def update(self, live: Any) -> None:
        """Fold ``live``'s current weights (the model this average was made from) into the average."""
        import torch

        decay = min(self.decay, (1 + self.updates) / (10 + self.updates))
        # parameters() and buffers() list a tied tensor (input and output embeddings) once, state_dict() twice.
        with torch.no_grad():
            for target, value in zip(self.model.parameters(), live.parameters(), strict=True):
                target.mul_(decay).add_(value.detach(), alpha=1.0 - decay)
            for target, value in zip(self.model.buffers(), live.buffers(), strict=True):
                target.copy_(value)
        self.updates += 1
