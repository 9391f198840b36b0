"""headd: memhtml's head as a long-lived daemon."""

__version__ = "0.1.0"
