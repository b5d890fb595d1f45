"""simcore: one simulator core for reproducing five load-balancing papers."""

__version__ = "0.1.0"
