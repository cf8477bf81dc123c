"""Multi-step RL over task apps: the reference's RL TOML, rollouts by correlation id, judged and blended rewards,
trajectory- and decision-level credit, and the policy update on the exact sampled token ids."""
