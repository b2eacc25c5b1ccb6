"""The static reach of imports: every import statement counts, nothing is executed."""

import pytest

from claimbook import dependencies


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "trainable_harness"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("def f():\n    from trainable_harness import b\n")
    (root / "b.py").write_text("if True:\n    from .sub import c\n")
    (root / "sub" / "c.py").write_text(
        "try:\n    from .. import d\nexcept ImportError:\n    pass\n"
    )
    (root / "d.py").write_text("raise SystemExit('never executed')\n")
    (root / "e.py").write_text("import numpy\n")
    monkeypatch.setattr(dependencies, "package_folder", {"trainable_harness": root}.get)
    return root


def test_imports_inside_functions_conditions_and_try_are_followed(package):
    assert dependencies.modules_reached(["trainable_harness.a"]) == [
        "trainable_harness",
        "trainable_harness.a",
        "trainable_harness.b",
        "trainable_harness.d",
        "trainable_harness.sub",
        "trainable_harness.sub.c",
    ]


def test_a_missing_module_is_kept_as_missing(package):
    (package / "a.py").write_text("import trainable_harness.gone\n")
    reached = dependencies.modules_reached(["trainable_harness.a"])
    assert "trainable_harness.gone" in reached
    assert dependencies.module_digests(reached)["trainable_harness.gone"] == dependencies.MISSING


def test_a_module_that_does_not_parse_still_counts_by_its_bytes(package):
    (package / "a.py").write_text("def (:\n")
    reached = dependencies.modules_reached(["trainable_harness.a"])
    assert reached == ["trainable_harness", "trainable_harness.a"]
    before = dependencies.module_digests(reached)
    (package / "a.py").write_text("def (:\n\n")
    assert dependencies.module_digests(reached) != before


def test_third_party_imports_are_not_followed(package):
    assert dependencies.modules_reached(["trainable_harness.e"]) == [
        "trainable_harness",
        "trainable_harness.e",
    ]


def test_code_with_ipython_lines_is_read():
    code = "%matplotlib inline\n!ls\nfrom trainable_harness.layers import batch_norm\n"
    assert dependencies.imports_in_code(code) == {
        "trainable_harness",
        "trainable_harness.layers",
    }


def test_a_module_added_later_is_reached_by_the_same_import(package):
    # `from trainable_harness import f` names a function until a module f.py exists; the
    # import statement's parse is kept, the lookup of files is not.
    (package / "a.py").write_text("from trainable_harness import f\n")
    assert "trainable_harness.f" not in dependencies.modules_reached(["trainable_harness.a"])
    (package / "f.py").write_text("")
    assert "trainable_harness.f" in dependencies.modules_reached(["trainable_harness.a"])
    code = "from trainable_harness import g\n"
    assert "trainable_harness.g" not in dependencies.imports_in_code(code)
    (package / "g.py").write_text("")
    assert "trainable_harness.g" in dependencies.imports_in_code(code)


def test_one_reading_reads_each_file_once_and_outside_it_every_call_reads_again(package):
    reached = dependencies.modules_reached(["trainable_harness.a"])
    before = dependencies.module_digests(reached)
    with dependencies.one_reading():
        assert dependencies.module_digests(reached) == before
        (package / "d.py").write_text("raise SystemExit('never executed!')\n")
        (package / "b.py").write_text("")  # b no longer reaches sub.c and d
        assert dependencies.module_digests(reached) == before
        assert dependencies.modules_reached(["trainable_harness.a"]) == reached
    after = dependencies.module_digests(reached)
    assert after["trainable_harness.d"] != before["trainable_harness.d"]
    assert dependencies.modules_reached(["trainable_harness.a"]) == [
        "trainable_harness",
        "trainable_harness.a",
        "trainable_harness.b",
    ]


def test_the_instruments_package_init_reaches_its_modules():
    """Importing a module runs its package's __init__, which imports the package's modules."""
    reached = dependencies.modules_reached(["trainable_harness.normalization"])
    assert reached[0] == "trainable_harness" and "trainable_harness.layers.normalize" in reached
    assert all(len(digest) == 64 for digest in dependencies.module_digests(reached).values())
    found = dependencies.imports_in_code(
        "import numpy as np\nfrom trainable_harness import layers"
    )
    assert sorted(found) == ["trainable_harness", "trainable_harness.layers"]
