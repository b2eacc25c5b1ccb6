"""The package's version, defined once: the package and ``pyproject.toml`` read it."""

__version__ = "0.2.0"
