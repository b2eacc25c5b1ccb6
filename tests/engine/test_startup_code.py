"""Start-up code in site-packages that no installed distribution put there is found."""

from claimbook.startup_code import foreign_startup_files


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
    assert foreign_startup_files([tmp_path]) == [
        tmp_path / "sitecustomize.py",
        tmp_path / "zz_hook.pth",
    ]


def test_this_environment_has_none():
    assert foreign_startup_files() == []
