"""Shared by the training tests."""

from proofgym.policies import TinyModelConfig

# Smaller than the demo's model: these tests check behaviour, not learning, and must stay fast.
SMALL = TinyModelConfig(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128)
