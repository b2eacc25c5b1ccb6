"""Claim keys: recording the harness functions that run, digesting their sources statically."""

import shutil
import sys
import textwrap

import numpy as np
import pytest
from claimtools import TOY_ID, verify_toy

from claimbook import instruments
from claimbook.claims import (
    HarnessCallRecorder,
    claim_key,
    environment_digest,
    function_digests,
    judge,
    keys,
    load_claim,
)
from trainable_harness.moments import stable_online_moments
from trainable_harness.normalization import centered_normalize, rms_normalize

CENTERED = ("trainable_harness.normalization", "centered_normalize")
RMS = ("trainable_harness.normalization", "rms_normalize")


# --- the recorder -------------------------------------------------------------------------------


def test_the_recorder_records_harness_functions_only():
    with HarnessCallRecorder() as recorder:
        centered_normalize(np.array([1.0, 2.0, 4.0]))
        np.linalg.norm(np.ones(3))  # numpy's Python functions are not harness functions
        sorted([3, 1, 2], key=lambda v: -v)
    assert CENTERED in recorder.functions
    assert RMS not in recorder.functions
    assert all(module.startswith("trainable_harness.") for module, _ in recorder.functions)
    assert not any("keys" in module for module, _ in recorder.functions)  # not itself
    assert recorder.functions == tuple(sorted(recorder.functions))


def test_the_recorder_names_methods_and_nested_functions_by_qualname():
    with HarnessCallRecorder() as recorder:
        state = stable_online_moments(np.array([1.0, 2.0, 3.0]))
        _ = state.population_variance
    qualnames = {
        qualname
        for module, qualname in recorder.functions
        if module.startswith("trainable_harness.moments")
    }
    assert "stable_online_moments" in qualnames
    assert any(q.startswith("MomentState.") for q in qualnames), qualnames


def test_recorders_nest_and_leave_any_trace_function_alone():
    calls = []

    def previous(frame, event, arg):
        calls.append(event)

    sys.settrace(previous)
    try:
        outer = HarnessCallRecorder()
        outer.start()
        rms_normalize(np.array([1.0, 2.0]))
        with HarnessCallRecorder() as inner:
            centered_normalize(np.array([1.0, 2.0, 4.0]))
        rms_normalize(np.array([3.0, 4.0]))  # the outer still records after the inner stops
        assert sys.gettrace() is previous
        outer_functions = outer.stop()
        assert sys.gettrace() is previous
    finally:
        sys.settrace(None)
    assert CENTERED in inner.functions and RMS not in inner.functions
    assert {CENTERED, RMS} <= set(outer_functions)
    assert "call" in calls  # a debugger or coverage tool keeps seeing calls meanwhile


def test_every_harness_function_carries_the_note_on_its_first_line():
    # Line numbers are unchanged: a traceback through a harness function points at its source.
    import inspect

    from claimbook import calls as _calls

    assert "__trainable_ran__" in centered_normalize.__code__.co_names
    first_body_line = centered_normalize.__code__.co_firstlineno
    assert inspect.getsourcelines(centered_normalize)[1] == first_body_line
    # The engine is not instrumented: its bookkeeping is not work a chapter or a claim does.
    assert not keys.function_digests.__module__.startswith(_calls.PACKAGE)
    assert "__trainable_ran__" not in keys.function_digests.__code__.co_names


def test_start_and_stop_are_checked():
    recorder = HarnessCallRecorder()
    with pytest.raises(RuntimeError, match="not recording"):
        recorder.stop()
    recorder.start()
    with pytest.raises(RuntimeError, match="already recording"):
        recorder.start()
    recorder.stop()
    assert sys.gettrace() is None


def test_a_computation_that_raises_still_stops_recording(toy, registry, artifacts):
    toy.result = ZeroDivisionError("boom")
    artifact = verify_toy(registry, artifacts)
    assert artifact["status"] == "failed"
    assert sys.gettrace() is None
    assert "trainable_harness.normalization:centered_normalize" in artifact["key"]["functions"]


# --- static digests -----------------------------------------------------------------------------


MODULE = '''\
"""A module of a fake harness."""

RANK_TOLERANCE = 1e-10
SCALE: float = 2.0
UNUSED = 3


def uses_constants(x):
    return x * SCALE > RANK_TOLERANCE


def plain(x):
    return x + 1


class Box:
    def method(self):
        return plain(1)


def outer():
    def inner():
        return 1

    return inner()
'''


@pytest.fixture
def fake_harness(tmp_path):
    package = tmp_path / "trainable_harness"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(MODULE)
    return package


def _digest(package, qualname):
    return function_digests([("trainable_harness.mod", qualname)], package)[
        f"trainable_harness.mod:{qualname}"
    ]


def test_digests_resolve_qualnames_statically(fake_harness):
    for qualname in ("uses_constants", "plain", "Box.method", "outer.<locals>.inner", "outer"):
        assert len(_digest(fake_harness, qualname)) == 64
    for missing in ("nothing", "Box.nothing", "plain.<locals>.x", "Box.<locals>.method"):
        assert _digest(fake_harness, missing) == "missing"
    assert function_digests([("trainable_harness.gone", "f")], fake_harness) == {
        "trainable_harness.gone:f": "missing"
    }


@pytest.mark.parametrize(
    ("edit", "changed"),
    [
        (("RANK_TOLERANCE = 1e-10", "RANK_TOLERANCE = 1e-12"), {"uses_constants"}),
        (("SCALE: float = 2.0", "SCALE: float = 3.0"), {"uses_constants"}),
        (("UNUSED = 3", "UNUSED = 4"), set()),
        (("return x + 1", "return x + 2"), {"plain"}),
        (("        return plain(1)", "        return plain(2)"), {"Box.method"}),
        (("        return 1\n", "        return 2\n"), {"outer.<locals>.inner", "outer"}),
        (('"""A module of a fake harness."""', '"""Edited docstring."""'), set()),
    ],
)
def test_a_digest_changes_exactly_when_its_source_or_constants_change(fake_harness, edit, changed):
    names = ["uses_constants", "plain", "Box.method", "outer", "outer.<locals>.inner"]
    before = {name: _digest(fake_harness, name) for name in names}
    path = fake_harness / "mod.py"
    old, new = edit
    assert old in MODULE
    path.write_text(MODULE.replace(old, new, 1))
    after = {name: _digest(fake_harness, name) for name in names}
    assert {name for name in names if before[name] != after[name]} == changed


def test_a_removed_function_digests_to_missing(fake_harness):
    assert _digest(fake_harness, "plain") != "missing"
    (fake_harness / "mod.py").write_text(MODULE.replace("def plain(x)", "def renamed(x)"))
    assert _digest(fake_harness, "plain") == "missing"


def test_environment_digest_follows_the_lock(tmp_path):
    unlocked = environment_digest(tmp_path)  # no lock: the Python and numpy versions
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    locked = environment_digest(tmp_path)
    (tmp_path / "requirements.txt").write_text("numpy==2.4.7\n")
    assert len({unlocked, locked, environment_digest(tmp_path)}) == 3


def test_claim_key_covers_registry_environment_and_functions(registry):
    claim = load_claim(TOY_ID, registry_dir=registry)
    key = claim_key(claim, [CENTERED])
    assert set(key) == {"digest", "registry_digest", "environment_digest", "functions"}
    assert key["registry_digest"] == claim.registry_digest
    assert list(key["functions"]) == ["trainable_harness.normalization:centered_normalize"]
    assert claim_key(claim, [CENTERED, RMS])["digest"] != key["digest"]


# --- staleness follows the functions a claim ran ---------------------------------------------


@pytest.fixture
def harness_copy(tmp_path, monkeypatch):
    """A copy of the harness sources that the keys read (the code that runs is unchanged)."""
    copy = tmp_path / "harness-copy" / "trainable_harness"
    shutil.copytree(instruments.package_dir(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(instruments, "package_dir", lambda: copy)
    return copy


def _edit_function(path, name, comment):
    text = path.read_text()
    head = f"def {name}("
    assert text.count(head) == 1
    start = text.index(head)
    body = text.index('"""', text.index('"""', start) + 3) + 3  # after the docstring
    path.write_text(text[:body] + f"\n    # {comment}" + text[body:])


def test_editing_a_function_the_claim_never_runs_keeps_it_current(
    toy, registry, artifacts, harness_copy
):
    verify_toy(registry, artifacts)
    _edit_function(harness_copy / "normalization.py", "rms_normalize", "an edit")
    (harness_copy / "witnesses" / "__init__.py").write_text(
        (harness_copy / "witnesses" / "__init__.py").read_text() + "\n# an edit\n"
    )
    state, _, reason = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "verified", reason


def test_editing_a_function_the_claim_runs_makes_it_stale(toy, registry, artifacts, harness_copy):
    verify_toy(registry, artifacts)
    _edit_function(harness_copy / "normalization.py", "centered_normalize", "an edit")
    state, _, reason = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale"
    assert "trainable_harness.normalization:centered_normalize" in reason


def test_the_real_claims_record_their_witness_and_its_instruments(tmp_path):
    from claimbook.claims import harness_pin, verify_claim

    artifact = verify_claim("c15-invariance-001", harness_pin(), artifacts_dir=tmp_path)
    functions = artifact["key"]["functions"]
    assert "trainable_harness.witnesses.chapter15.invariance:invariance_witness" in functions
    assert "trainable_harness.normalization:normalization_jacobian" in functions
    assert not any(name.startswith("trainable_harness.layers") for name in functions)
    assert all(len(digest) == 64 for digest in functions.values())


def test_witness_sources_are_read_without_importing(fake_harness, monkeypatch):
    (fake_harness / "boom.py").write_text(
        textwrap.dedent(
            """
            raise SystemExit("imported!")

            def f():
                return 1
            """
        )
    )
    assert len(function_digests([("trainable_harness.boom", "f")], fake_harness)) == 1


def test_a_cached_value_notes_again_the_functions_it_needed():
    # A claim served from a cache that a figure filled must record what a fresh run records.
    from claimbook.calls import cached_with_calls

    @cached_with_calls(maxsize=2)
    def normalized(values):
        return tuple(centered_normalize(np.array(values)))

    with HarnessCallRecorder() as fresh:
        first = normalized((1.0, 2.0, 4.0))
    with HarnessCallRecorder() as served:
        second = normalized((1.0, 2.0, 4.0))
    assert first == second
    assert CENTERED in fresh.functions
    assert served.functions == fresh.functions
    with pytest.raises(ValueError, match="maxsize"):
        cached_with_calls(maxsize=0)


def test_a_modules_digests_are_kept_between_builds(fake_harness, tmp_path, monkeypatch):
    from claimbook import cache, paths
    from claimbook.claims import keys

    monkeypatch.setattr(paths, "BUILD_DIR", tmp_path / "_build")
    cache.reset()  # this process may hold the table already (another test read the module)
    names = ["uses_constants", "plain", "Box.method", "outer", "outer.<locals>.inner"]
    first = {name: _digest(fake_harness, name) for name in names}
    cache.reset()

    def parse(data):
        raise AssertionError("parsed again")

    monkeypatch.setattr(keys, "_parse", parse)
    assert {name: _digest(fake_harness, name) for name in names} == first


def test_the_stored_table_gives_each_harness_function_the_digest_parsing_gives():
    from claimbook.claims import keys

    checked = 0
    for path in sorted(instruments.package_dir().rglob("*.py")):
        data = path.read_bytes()
        table = keys._digest_table(data)
        for qualname, digest in table.items():
            assert keys._digest_of(keys._parse(data), qualname) == digest, (path, qualname)
            checked += 1
    assert checked > 100  # every definition of the harness, not a sample
