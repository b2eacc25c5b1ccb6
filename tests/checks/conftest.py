"""The tiny fixture book of the build-driver tests (tests/engine/pipeline/conftest.py), for the
matrix check's test: under pytest-xdist, the one built copy the driver's tests use."""

from tests.engine.pipeline.conftest import (  # noqa: F401 (fixtures)
    _preloaded_server,
    built_tiny_book,
    unbuilt_tiny_book,
)
