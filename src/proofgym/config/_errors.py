"""The error every config problem is reported with."""


class ConfigError(ValueError):
    """A config file or value is invalid; the message names the file, the key path and what was expected."""
