"""The error an evaluation that cannot start raises."""


class EvalError(ValueError):
    """The evaluation cannot run as configured (unreachable task app, refused key, unusable policy or
    environment); the message names the config key and what to change."""
