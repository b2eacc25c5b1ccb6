"""checks.binder: the parts of `make binder-check` that run without Binder's environment
(the whole check, with a fresh environment and both notebooks, is `make binder-check`, which
`make slow-checks` runs)."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from checks import binder


def _artifact(folder: Path, claim_id: str, result: dict) -> None:
    (folder / f"{claim_id}.json").write_text(json.dumps({"result": result}), encoding="utf-8")


def test_equal_artifacts_make_no_difference_and_each_difference_is_one_line(tmp_path):
    written, built = tmp_path / "written", tmp_path / "built"
    written.mkdir(), built.mkdir()
    _artifact(written, "c-1", {"x": 1.0})
    _artifact(built, "c-1", {"x": 1.0})
    assert binder.artifact_differences(written, built, ["c-1"]) == []
    _artifact(written, "c-2", {"x": 1.0, "y": 2})
    _artifact(built, "c-2", {"x": 1.5, "y": 2})
    (written / "c-3.json").write_bytes(b"\xff not JSON")
    _artifact(built, "c-3", {})
    _artifact(written, "c-4", {})
    lines = binder.artifact_differences(written, built, ["c-1", "c-2", "c-3", "c-4", "c-5"])
    assert lines[0] == "c-2: result.x: on disk 1.0, expected 1.5"
    assert lines[1].startswith("c-3: unreadable: ")
    assert lines[2] == f"c-4: no artifact in {built} to compare with"
    assert lines[3] == "c-5: the notebooks wrote no artifact"
    assert len(lines) == 4


def test_only_what_names_the_environment_may_differ(tmp_path):
    """Binder's environment is the lock's runtime part: its digest and its note of what is
    missing differ from the build's by design; a computed value, or the registry digest in
    the key, is a difference."""
    written, built = tmp_path / "written", tmp_path / "built"
    written.mkdir(), built.mkdir()

    def artifact(env: str, x: float, registry: str = "r") -> str:
        return json.dumps(
            {
                "result": {"x": x},
                "key": {"digest": env, "environment_digest": env, "registry_digest": registry},
                "provenance": {"numpy": "2", "environment_mismatch": [env]},
            }
        )

    (built / "c-1.json").write_text(artifact("lock", 1.0))
    (written / "c-1.json").write_text(artifact("binder", 1.0))
    assert binder.artifact_differences(written, built, ["c-1"]) == []
    (written / "c-1.json").write_text(artifact("binder", 1.5))
    assert binder.artifact_differences(written, built, ["c-1"]) == [
        "c-1: result.x: on disk 1.5, expected 1.0"
    ]
    (written / "c-1.json").write_text(artifact("binder", 1.0, registry="other"))
    assert binder.artifact_differences(written, built, ["c-1"]) == [
        'c-1: key.registry_digest: on disk "other", expected "r"'
    ]


def test_runtime_txt_names_the_interpreter(tmp_path):
    runtime = tmp_path / "runtime.txt"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    runtime.write_text(f"python-{version}\n")
    assert Path(binder._python_for_runtime(runtime)).name == f"python{version}"
    runtime.write_text(f"python-{version}.7")  # a patch level is allowed, and ignored
    assert Path(binder._python_for_runtime(runtime)).name == f"python{version}"


@pytest.mark.parametrize("text", ["3.11", "python3.11", "python-3", "pypy-3.11"])
def test_a_runtime_txt_that_is_not_python_x_y_is_refused_quoting_it(tmp_path, text):
    runtime = tmp_path / "runtime.txt"
    runtime.write_text(text)
    with pytest.raises(SystemExit, match=f"runtime.txt must read python-X.Y, got '{text}'"):
        binder._python_for_runtime(runtime)


def test_a_runtime_whose_interpreter_is_missing_is_named(tmp_path, monkeypatch):
    runtime = tmp_path / "runtime.txt"
    runtime.write_text("python-3.99")
    monkeypatch.setattr(binder.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match=r"asks for python3\.99, which is not installed"):
        binder._python_for_runtime(runtime)


def test_the_environment_passes_on_nothing_of_the_callers_python_or_book(monkeypatch, tmp_path):
    for name, value in {
        "TRAINABLE_CHAPTER": "x",
        "PYTHONPATH": "/somewhere",
        "PYTHONDONTWRITEBYTECODE": "1",
        "VIRTUAL_ENV": "/other/.venv",
        "JUPYTER_PATH": "/j",
        "CONDA_PREFIX": "/c",
        "HOME": "/home/reader",
    }.items():
        monkeypatch.setenv(name, value)
    environment = binder._clean_environment(tmp_path / "venv")
    dropped = ("TRAINABLE_", "PYTHON", "JUPYTER", "CONDA")
    assert not [name for name in environment if name.startswith(dropped)]
    assert environment["VIRTUAL_ENV"] == str(tmp_path / "venv")
    assert environment["PATH"].split(":")[0] == str(tmp_path / "venv" / "bin")
    assert environment["HOME"] == "/home/reader" and environment["MPLBACKEND"] == "agg"


def test_the_copy_holds_what_a_push_would_hold_and_no_build_product(tmp_path, monkeypatch):
    repository = tmp_path / "repository"
    repository.mkdir()
    files = {
        "chapters/a.md": "tracked",
        "notes.md": "untracked, not ignored",
        "ignored.log": "ignored",
        ".venv/bin/python": "environment",
        "_build/html/index.html": "site",
        "artifacts/claims/c.json": "artifact",
        "node_modules/m/index.js": "npm",
    }
    for name, text in files.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    (repository / ".gitignore").write_text("*.log\n")
    (repository / "link.md").symlink_to(repository / "notes.md")

    def git(*arguments):
        subprocess.run(["git", "-C", str(repository), *arguments], check=True, capture_output=True)

    git("init", "-q")
    git("add", "-f", "chapters/a.md", ".gitignore", ".venv/bin/python", "_build/html/index.html")
    monkeypatch.setattr(binder, "REPO_ROOT", repository)
    copy = tmp_path / "copy"
    binder._copy_repository(copy)
    copied = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
    assert copied == [".gitignore", "chapters/a.md", "notes.md"]


def test_against_must_be_a_directory(tmp_path, capsys):
    with pytest.raises(SystemExit):
        binder._options(["--against", str(tmp_path / "missing")])
    assert "is not a directory (run `make` first)" in capsys.readouterr().err
    assert binder._options(["--against", str(tmp_path)]).against == tmp_path.resolve()
    assert binder._options([]).against is None and not binder._options([]).pip


def test_the_environment_is_made_with_uv_by_default_and_with_venv_and_pip_given_pip(tmp_path):
    venv = tmp_path / "venv"
    assert binder._creator("python3.11", venv, use_pip=True) == [
        "python3.11",
        "-m",
        "venv",
        str(venv),
    ]
    made = binder._creator("python3.11", venv, use_pip=False)
    assert made[1:3] == ["venv", "--quiet"] and "--seed" in made  # pip in it: postBuild uses it
    assert binder._installer(venv, use_pip=True)[:3] == [str(venv / "bin" / "python"), "-m", "pip"]
    assert binder._installer(venv, use_pip=False)[1:3] == ["pip", "install"]


def _pins(path: Path) -> dict[str, str]:
    """name -> version of each ``name==version`` line that applies on Binder's Python 3.11."""
    found = {}
    python = {"python_version": "3.11", "python_full_version": "3.11.5"}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(python):
                found[requirement.name.lower()] = str(requirement.specifier).removeprefix("==")
    return found


def test_binder_installs_a_readers_environment_at_the_locks_versions():
    binder_pins = _pins(binder.REPO_ROOT / "binder" / "requirements.txt")
    lock = _pins(binder.REPO_ROOT / "requirements.txt")
    assert all(binder_pins.values()), "every line of binder/requirements.txt pins a version"
    assert {name: lock.get(name) for name in binder_pins} == binder_pins
    # What a reader's kernel runs, and not what developing the book needs.
    assert {"numpy", "matplotlib", "ipykernel", "myst-nb", "papermill", "scikit-learn"} <= set(
        binder_pins
    )
    development = {"pytest", "ruff", "playwright", "hypothesis", "zizmor", "jupyter-book"}
    assert not development & set(binder_pins)
    assert not {name for name in binder_pins if name.startswith(("actionlint", "pytest"))}
    assert len(binder_pins) < len(lock)


def test_binder_reads_binder_alone_and_its_postbuild_writes_the_reader_notebooks():
    root = binder.REPO_ROOT
    # repo2docker ignores the root's configuration when binder/ exists: none is left there.
    assert not [name for name in ("postBuild", "runtime.txt") if (root / name).exists()]
    assert (root / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = (root / "binder" / "postBuild").read_text(encoding="utf-8")
    assert "python -m claimbook.reader_notebooks chapters chapters" in post_build
    assert (root / "binder" / "postBuild").stat().st_mode & 0o111  # repo2docker runs it


def _notebook(markdown: str, images: int):
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_markdown_cell(markdown))
    cell = nbformat.v4.new_code_cell("draw()")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    ] * images
    notebook.cells.append(cell)
    return notebook


def test_a_notebook_that_shows_myst_or_misses_a_figure_is_named(tmp_path):
    stem = "normalization-invariance"
    figures = binder.book_numbers(binder.REPO_ROOT).figures[stem]
    good, raw, short = (tmp_path / name for name in ("good", "raw", "short"))
    for folder, notebook in [
        (good, _notebook("Figure 15.1 shows it.", figures)),
        (raw, _notebook("{numref}`fig-a` shows it.\n\n```{note}\nx\n```", figures)),
        (short, _notebook("Figure 15.1 shows it.", figures - 1)),
    ]:
        folder.mkdir()
        nbformat.write(notebook, folder / f"{stem}.ipynb")
    assert binder.reader_problems([good / f"{stem}.ipynb"], binder.REPO_ROOT) == []
    assert binder.reader_problems([raw / f"{stem}.ipynb"], binder.REPO_ROOT) == [
        f"{stem}.ipynb: raw MyST in its prose: ```{{, {{numref}}`"
    ]
    assert binder.reader_problems([short / f"{stem}.ipynb"], binder.REPO_ROOT) == [
        f"{stem}.ipynb: {figures - 1} figure(s) drawn, the chapter shows {figures}"
    ]
