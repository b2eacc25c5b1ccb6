"""The call recorder's compiled-module cache: keyed by content, naming where the source is."""

from __future__ import annotations

import shutil
import types

from claimbook import calls

MODULE = "trainable_harness._cache_probe"


def _code(path):
    return calls._Loader(MODULE, str(path)).get_code(MODULE)


def _functions(code):
    return [const for const in code.co_consts if isinstance(const, types.CodeType)]


def test_a_cached_module_copied_to_another_checkout_names_its_new_file(tmp_path):
    original = tmp_path / "original" / "probe.py"
    original.parent.mkdir()
    original.write_text("def probe():\n    return 1\n")
    assert _code(original).co_filename == str(original)
    copy = tmp_path / "copy"
    shutil.copytree(original.parent, copy)  # as cp -a does: the cache travels with the source
    (cached,) = (copy / "__pycache__").glob(f"*.{calls.CACHE_TAG}.pyc")
    before = cached.stat()
    code = _code(copy / "probe.py")
    after = cached.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # a hit
    assert code.co_filename == str(copy / "probe.py")
    assert [inner.co_filename for inner in _functions(code)] == [str(copy / "probe.py")]


def test_an_edit_with_the_old_time_restored_compiles_afresh(tmp_path):
    import os

    source = tmp_path / "probe.py"
    source.write_text("def probe():\n    return 1\n")
    before = source.stat()
    first = _code(source)
    source.write_text("def probe():\n    return 2\n")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = _code(source)
    assert 1 in _functions(first)[0].co_consts
    assert 2 in _functions(second)[0].co_consts
