"""Tests of claimbook.pipeline.keys: a chapter's record is used only when every field is sound.

A record is data on disk that may have been edited, copied or cut short: a malformed one is
no record (the chapter executes again, its plan says why in one line), and an output it
names outside the build products is never hashed on its word.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from scratch_book import point_paths_at

from claimbook.errors import KeyRecordError
from claimbook.pipeline import keys

DIGEST = "a" * 64


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A book root in ``tmp_path``, the engine's paths pointed at it, and one valid record."""
    root = point_paths_at(tmp_path / "book", monkeypatch)
    (root / "_build" / "keys").mkdir()
    return root


def valid_record() -> dict:
    return {
        "format": keys.RECORD_FORMAT,
        "stem": "alpha",
        "source": DIGEST,
        "key": DIGEST,
        "parts": {
            "format": keys.RECORD_FORMAT,
            "code": DIGEST,
            "claims": {"c15-invariance-001": {"registry": DIGEST, "artifact": DIGEST}},
            "modules": {"trainable_harness.normalization": DIGEST},
            "environment": DIGEST,
        },
        "claims": ["c15-invariance-001"],
        "modules": ["trainable_harness.normalization"],
        "outputs": {
            "artifacts/claims/c15-invariance-001.json": DIGEST,
            "artifacts/figures/fig.svg": "missing",
            "chapters/alpha.ipynb": DIGEST,
        },
        "seconds": 2.5,
    }


def write(book, record, stem="alpha") -> None:
    text = record if isinstance(record, str) else json.dumps(record)
    (book / "_build" / "keys" / f"{stem}.json").write_text(text, encoding="utf-8")


def test_a_sound_record_is_read(book):
    write(book, valid_record())
    assert keys.load_record("alpha") == valid_record()
    assert keys.read_record("alpha") == valid_record()


def test_no_record_is_none_not_an_error(book):
    assert keys.load_record("alpha") is None
    assert keys.read_record("alpha") is None


def _with(field_path: str, value) -> dict:
    record = valid_record()
    *parents, last = field_path.split("/")
    target = record
    for parent in parents:
        target = target[parent]
    target[last] = value
    return record


MALFORMED = {
    "modules entry that is a pair": (
        _with("modules", [["trainable_harness.normalization", "f"]]),
        "field modules is not a list of dotted module names",
    ),
    "modules entry that is a number": (
        _with("modules", [3]),
        "field modules is not a list of dotted module names",
    ),
    "modules as a mapping": (_with("modules", {"a": "b"}), "field modules is not a list"),
    "module name that is a path": (
        _with("modules", ["../../etc/passwd"]),
        "field modules is not a list",
    ),
    "outputs as a list": (_with("outputs", ["chapters/alpha.ipynb"]), "field outputs is not a"),
    "absolute output": (
        _with("outputs", {"/etc/passwd": DIGEST}),
        "output '/etc/passwd' is not a path relative to the book",
    ),
    "output climbing out": (
        _with("outputs", {"artifacts/../../etc/passwd": DIGEST}),
        "output 'artifacts/../../etc/passwd' is not a build product",
    ),
    "output among the sources": (
        _with("outputs", {"package.json": DIGEST}),
        "output 'package.json' is not a build product",
    ),
    "output digest of another type": (
        _with("outputs", {"chapters/alpha.ipynb": 7}),
        "output 'chapters/alpha.ipynb' has 7, not a digest",
    ),
    "claim id that is a path": (
        _with("claims", ["../../package"]),
        "field claims is not a list of claim ids",
    ),
    "parts.claims entry without its artifact's digest": (
        _with("parts/claims", {"c15-invariance-001": {"registry": DIGEST}}),
        "field parts.claims has an entry 'c15-invariance-001'",
    ),
    "parts.claims keyed by a path": (
        _with("parts/claims", {"../../package": DIGEST}),
        "field parts.claims has an entry '../../package'",
    ),
    "parts.modules of the wrong type": (
        _with("parts/modules", [1, 2]),
        "field parts.modules is not a mapping",
    ),
    "parts missing": (_with("parts", None), "field parts is not a mapping of format"),
    "key of the wrong form": (_with("key", "abc"), "field key is not a digest"),
    "another chapter's record": (_with("stem", "beta"), "field stem is 'beta', not 'alpha'"),
    "another format": (_with("format", 1), "has format 1; this engine reads format"),
    "seconds as text": (_with("seconds", "2.5"), "field seconds is not a duration"),
    "negative seconds": (_with("seconds", -1), "field seconds is not a duration"),
    "a list, not a record": ([1, 2], "holds list, not a record"),
    "cut short": ('{"format": 2, "stem": "al', "is not readable JSON (JSONDecodeError"),
    "nested 100 000 deep": ("[" * 100_000 + "]" * 100_000, "is not readable JSON (Recursion"),
    "not UTF-8": ("\udcff", "is not readable JSON (UnicodeDecodeError"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_record_is_no_record_and_says_why_in_one_line(book, case):
    record, problem = MALFORMED[case]
    if record == "\udcff":
        (book / "_build" / "keys" / "alpha.json").write_bytes(b"\xff\xfe")
    else:
        write(book, record)
    with pytest.raises(KeyRecordError) as caught:
        keys.load_record("alpha")
    message = str(caught.value)
    assert message.startswith("_build/keys/alpha.json")
    assert problem in message
    assert "\n" not in message and len(message) <= 300
    assert keys.read_record("alpha") is None
    # The plan executes the chapter again, saying why, without reading its source.
    plan = keys.plan_chapter(book / "chapters" / "alpha.md")
    assert plan.execute
    assert plan.reason == f"record unusable, executing again: {message}"


def test_an_output_outside_the_tree_is_never_hashed(book, monkeypatch):
    secret = book.parent / "outside" / "secret.txt"
    secret.write_text("not the book's")
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    hashed = []
    monkeypatch.setattr(keys, "file_digest", lambda path: hashed.append(path) or digest)
    for name in (str(secret), "../outside/secret.txt", "artifacts/../../outside/secret.txt"):
        write(book, _with("outputs", {name: digest}))
        assert keys.plan_chapter(book / "chapters" / "alpha.md").execute
    assert hashed == []


def test_an_output_through_a_link_that_leads_out_is_refused(book):
    (book / "artifacts" / "claims").symlink_to(book.parent / "outside", target_is_directory=True)
    write(book, valid_record())
    with pytest.raises(KeyRecordError, match=r"'artifacts/claims/c15-invariance-001\.json'"):
        keys.load_record("alpha")


def test_a_record_larger_than_the_limit_is_refused_unparsed(book):
    write(book, " " * (keys.MAX_RECORD_BYTES + 1))
    with pytest.raises(KeyRecordError, match=r"is larger than 1048576 bytes$"):
        keys.load_record("alpha")


def test_a_record_that_is_a_folder_is_no_record(book):
    (book / "_build" / "keys" / "alpha.json").mkdir()
    with pytest.raises(KeyRecordError, match=r"^_build/keys/alpha\.json cannot be read"):
        keys.load_record("alpha")


def test_a_record_path_is_never_built_from_a_stem_outside_the_grammar(book):
    from claimbook.errors import InvalidChapterStemError

    with pytest.raises(InvalidChapterStemError):
        keys.record_path("../../package")


def test_a_record_is_written_only_for_build_products(book):
    from claimbook.errors import OutsideBuildProductsError

    source = book / "chapters" / "alpha.md"
    source.write_text("source")
    key = {"digest": DIGEST, "parts": valid_record()["parts"]}
    with pytest.raises(OutsideBuildProductsError):
        keys.write_record(source, key, [], [], [book / "package.json"], 1.0)
    assert not (book / "_build" / "keys" / "alpha.json").exists()
    notebook = book / "chapters" / "alpha.ipynb"
    notebook.write_text("{}")
    record = keys.write_record(source, key, [], [], [notebook], 1.0)
    assert keys.load_record("alpha") == record
