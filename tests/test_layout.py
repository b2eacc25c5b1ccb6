"""The tests mirror the packages: every module of the harness and of the engine has a test
module of its own, at the same place under ``tests/harness/`` or ``tests/engine/``."""

from claimbook import paths

PACKAGES = {"harness": "harness/trainable_harness", "engine": "engine/claimbook"}


def expected_test_module(tests: str, relative) -> str:
    """``tests/<tests>/<folders>/test_<name>.py`` of a module (``_version`` -> ``version``)."""
    name = relative.stem.lstrip("_")
    return "/".join(["tests", tests, *relative.parent.parts, f"test_{name}.py"])


def test_every_module_has_its_test_module():
    missing = []
    for tests, package in PACKAGES.items():
        root = paths.REPO_ROOT / package
        for module in sorted(root.rglob("*.py")):
            if module.name in ("__init__.py", "__main__.py") or "__pycache__" in module.parts:
                continue
            expected = expected_test_module(tests, module.relative_to(root))
            if not (paths.REPO_ROOT / expected).is_file():
                missing.append(f"{module.relative_to(paths.REPO_ROOT)}: no {expected}")
    assert missing == [], "\n".join(missing)
