"""headd: memhtml's head as a long-lived daemon."""

__version__ = "0.1.0"


def installed_version() -> str:
    """The installed distribution's version (``--version`` of both commands), else ``0+unknown``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("headd")
    except PackageNotFoundError:
        return "0+unknown"
