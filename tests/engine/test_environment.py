"""claimbook.environment: the running environment compared with the lock, and what a
difference does (keys, provenance, the build's refusal, the footer)."""

from __future__ import annotations

import platform
import sys

import pytest

from claimbook import build_stamp, environment
from claimbook.claims import keys, store
from claimbook.errors import EnvironmentMismatchError
from claimbook.extensions import book_site
from claimbook.pipeline import driver, noop

INSTALLED = {"numpy": "2.4.6", "importlib-metadata": "10.2.0", "pyyaml": "6.0.3"}


@pytest.fixture
def book(tmp_path):
    """A root with a lock of three pins that :data:`INSTALLED` satisfies."""
    (tmp_path / "requirements.txt").write_text(
        "# a lock\nnumpy==2.4.6\nimportlib_metadata==10.2.0 \\\n    --hash=sha256:00\n"
        "PyYAML==6.0.3  # a comment\n"
    )
    return tmp_path


@pytest.fixture
def installed(monkeypatch):
    """The installed distributions, as a test sets them (the process's scan is not used)."""
    versions = dict(INSTALLED)
    monkeypatch.setattr(environment, "installed_versions", lambda: versions)
    return versions


def test_the_lock_installed_as_locked_differs_in_nothing(book, installed):
    assert environment.differences(book) == []
    assert environment.check_environment(book) == []


def test_a_version_other_than_the_locked_one_is_named(book, installed):
    installed["numpy"] = "2.3.5"
    assert environment.differences(book) == ["numpy 2.3.5 installed, 2.4.6 locked"]
    with pytest.raises(EnvironmentMismatchError) as refused:
        environment.check_environment(book)
    message = str(refused.value)
    assert message.startswith(
        "the environment differs from requirements.txt: numpy 2.3.5 installed, 2.4.6 locked; "
    )
    assert "--allow-environment-mismatch" in message and "\n" not in message


def test_a_missing_package_is_named(book, installed):
    del installed["pyyaml"]
    assert environment.differences(book) == ["PyYAML not installed, 6.0.3 locked"]


def test_names_are_compared_canonically(book, installed):
    # importlib_metadata in the lock, importlib-metadata installed: the same distribution.
    assert "importlib-metadata" in installed and environment.differences(book) == []


def test_a_requirement_for_another_python_is_ignored(book, installed):
    lock = book / "requirements.txt"
    lock.write_text(
        lock.read_text() + 'tomli==2.0.1; python_version < "3.0"\n'
        'future-thing==9.9; python_version >= "3.99"\n'
    )
    assert environment.differences(book) == []
    lock.write_text(lock.read_text() + 'present==1.0; python_version >= "3.0"\n')
    assert environment.differences(book) == ["present not installed, 1.0 locked"]


def test_the_books_own_packages_are_not_locked(book, installed):
    lock = book / "requirements.txt"
    lock.write_text(lock.read_text() + "claimbook==9.9\ntrainable_harness==9.9\n")
    assert environment.differences(book) == []


def test_a_range_is_a_range(book, installed):
    (book / "requirements.txt").write_text("numpy>=2,<3\n")
    assert environment.differences(book) == []
    installed["numpy"] = "1.26.4"
    assert environment.differences(book) == ["numpy 1.26.4 installed, <3,>=2 locked"]


def test_a_line_that_is_not_a_requirement_is_named(book, installed):
    (book / "requirements.txt").write_text("numpy==2.4.6\nnot a requirement!\n")
    with pytest.raises(EnvironmentMismatchError, match=r"requirements.txt line 2: 'not a requ"):
        environment.differences(book)


def test_python_must_satisfy_the_packages_requires_python(book, installed):
    (book / "engine").mkdir()
    project = book / "engine" / "pyproject.toml"
    project.write_text('[project]\nname = "claimbook"\nrequires-python = ">=3.99"\n')
    running = platform.python_version()
    assert environment.differences(book) == [
        f"Python {running} running, >=3.99 required by engine/pyproject.toml"
    ]
    project.write_text(f'[project]\nrequires-python = "=={running}"\n')
    assert environment.differences(book) == []


def test_the_digest_follows_the_installed_versions(book, installed):
    as_locked = keys.environment_digest(book)
    installed["numpy"] = "2.3.5"
    older = keys.environment_digest(book)
    installed["numpy"] = "2.4.7"
    newer = keys.environment_digest(book)
    assert len({as_locked, older, newer}) == 3
    installed["numpy"] = "2.4.6"
    assert keys.environment_digest(book) == as_locked


def test_a_digest_as_locked_is_the_lock_and_python_alone(book, installed):
    """Keys made before the installed versions entered stay valid where they are the lock's."""
    import hashlib

    expected = hashlib.sha256(
        b"lock\0"
        + (book / "requirements.txt").read_bytes()
        + b"\0python\0"
        + platform.python_version().encode()
    ).hexdigest()
    assert keys.environment_digest(book) == expected


def test_provenance_records_the_installed_numpy_and_the_mismatch(monkeypatch):
    import numpy

    monkeypatch.setattr(environment, "differences", lambda root=None: [])
    record = store.provenance()
    assert record["numpy"] == numpy.__version__ and "environment_mismatch" not in record
    found = ["numpy 2.3.5 installed, 2.4.6 locked"]
    monkeypatch.setattr(environment, "differences", lambda root=None: found)
    assert store.provenance()["environment_mismatch"] == found


@pytest.fixture
def refused_build(monkeypatch):
    """The driver with a numpy the lock does not hold; a build that starts says so."""
    found = ["numpy 2.3.5 installed, 2.4.6 locked", "PyYAML not installed, 6.0.3 locked"]
    monkeypatch.setattr(environment, "differences", lambda root=None: list(found))
    started = []

    def build(*arguments, **options):
        started.append(options)
        return 0

    monkeypatch.setattr(driver, "build", build)
    monkeypatch.setattr(driver, "build_lock", lambda path: _NoLock())
    monkeypatch.setattr(driver, "check_checkout", lambda: None)
    return started


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("command", ["build", "execute", "render"])
def test_the_build_refuses_a_mismatch_in_one_line(refused_build, capsys, command):
    assert driver.main([command]) == 2
    printed = capsys.readouterr()
    assert refused_build == [] and printed.out == ""
    assert printed.err == (
        "make: the environment differs from requirements.txt: numpy 2.3.5 installed, 2.4.6 "
        "locked; PyYAML not installed, 6.0.3 locked; run `touch requirements.txt && make` to "
        "reinstall the lock, or build anyway with --allow-environment-mismatch (make "
        "ALLOW_ENV_MISMATCH=1; every page then names the differences)\n"
    )


def test_the_author_may_build_anyway_and_leave_no_clean_record(refused_build, capsys):
    assert driver.main(["build", "--allow-environment-mismatch"]) == 0
    assert refused_build == [{"out": driver._print, "foreign_environment": True}]
    assert capsys.readouterr().out.startswith(
        "build: the environment differs from requirements.txt: numpy 2.3.5 installed, "
    )


def test_the_footer_names_the_mismatch(monkeypatch, tmp_path):
    found = ["numpy 2.3.5 installed, 2.4.6 locked"]
    monkeypatch.setattr(environment, "differences", lambda root=None: found)
    stamp = build_stamp.build_stamp(str(tmp_path), environ={})
    assert stamp["environment"] == "numpy 2.3.5 installed, 2.4.6 locked"
    footer = book_site.footer_html(stamp)
    assert (
        '<span class="build-environment">Computed in an environment that differs from '
        "requirements.txt: numpy 2.3.5 installed, 2.4.6 locked.</span>"
    ) in footer


def test_a_no_op_build_is_refused_once_a_version_changes(tmp_path, monkeypatch):
    """The clean-build record covers the installed distributions' folders (their names carry
    their versions), so `make` after a reinstall takes the path that compares them."""
    site = tmp_path / "site-packages"
    (site / "numpy-2.4.6.dist-info").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(site)])
    before = noop._stamp(tmp_path)
    (site / "numpy-2.4.6.dist-info").rename(site / "numpy-2.3.5.dist-info")
    assert noop._stamp(tmp_path) != before


def _distribution(folder, name, files):
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir()
    rows = [f"{file},sha256=x,1" for file in files] + [f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


def test_only_files_no_record_lists_are_foreign(tmp_path):
    _distribution(tmp_path, "editable", ["__editable__.editable-1.0.pth"])
    _distribution(tmp_path, "plain", ["plain/__init__.py"])
    (tmp_path / "__editable__.editable-1.0.pth").write_text("/somewhere\n")
    (tmp_path / "zz_hook.pth").write_text("import os\n")
    (tmp_path / "sitecustomize.py").write_text("print('hello')\n")
    assert environment.foreign_startup_files([tmp_path]) == [
        tmp_path / "sitecustomize.py",
        tmp_path / "zz_hook.pth",
    ]


def test_this_environment_has_none():
    assert environment.foreign_startup_files() == []
