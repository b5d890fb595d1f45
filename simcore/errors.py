"""The error every kind of bad input raises: the CLI turns it into one sentence and exit code 2."""


class InputError(ValueError):
    """Bad input (spec, config, topology, model or argument); the message names the file and key."""
