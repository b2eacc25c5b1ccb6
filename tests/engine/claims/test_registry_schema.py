"""The registry's limits: size, nesting, text length and characters, vacuous tolerances.

Every refusal is one line naming the file and the field, with unsafe characters escaped.
"""

from __future__ import annotations

import time

import pytest
from claimtools import TOY_CLAIM, TOY_ID

from claimbook.claims import list_claims, load_claim, registry_schema
from claimbook.errors import RegistryError

STATEMENT = "statement: A toy witness returns a half, three, true and a nested spread of 1.25."
TOLERANCE = "value: 0.5\n    abs_tol: 1.0e-12"


def refused(registry, text: str) -> str:
    """The one-line message refusing the toy claim file holding ``text``."""
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as caught:
        load_claim(TOY_ID, registry_dir=registry)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message and "\x1b" not in message and "\u202e" not in message
    assert len(message) <= 1000
    return message.removeprefix(f"{path}: ")


def accepted(registry, text: str):
    (registry / f"{TOY_ID}.yaml").write_text(text, encoding="utf-8")
    return load_claim(TOY_ID, registry_dir=registry)


def toy(old: str, new: str) -> str:
    assert old in TOY_CLAIM  # the mutation must apply, or the test proves nothing
    return TOY_CLAIM.replace(old, new, 1)


# --- size and nesting -----------------------------------------------------------------------


def test_a_file_over_64_kib_is_refused_before_it_is_parsed(registry):
    problem = refused(registry, toy(STATEMENT, "statement: " + "A" * (1 << 20) + "."))
    assert problem == (
        "larger than 65536 bytes, the most a registry file may hold (one claim is about 1 000)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000 + "]" * 10_000,
        "{a: " * 10_000 + "1" + "}" * 10_000,
        "".join("  " * level + f"k{level}:\n" for level in range(30)) + "  " * 30 + "x\n",
    ],
    ids=["flow sequences", "flow mappings", "block mappings"],
)
def test_deep_nesting_is_one_line_not_a_recursion_error(registry, text):
    start = time.perf_counter()
    problem = refused(registry, text)
    assert time.perf_counter() - start < 5.0  # about 0.3 s: PyYAML scans 1 024 characters ahead
    assert problem.endswith("nested deeper than 20 levels; a registry file needs a handful")
    assert problem.startswith("line ")


def test_nesting_up_to_the_limit_is_left_to_the_schema(registry):
    # expect.count.equals lies in three mappings (the file, expect, count).
    lists = registry_schema.MAX_DEPTH - 3
    deep = "[" * lists + "1" + "]" * lists
    problem = refused(
        registry, toy("  count:\n    equals: 3\n", f"  count:\n    equals: {deep}\n")
    )
    assert "nested deeper" not in problem and problem.startswith("field expect.count")
    too_deep = "[" + deep + "]"
    problem = refused(
        registry, toy("  count:\n    equals: 3\n", f"  count:\n    equals: {too_deep}\n")
    )
    assert problem.endswith("nested deeper than 20 levels; a registry file needs a handful")


# --- YAML errors ----------------------------------------------------------------------------


def test_a_yaml_syntax_error_is_one_line_with_line_and_column(registry):
    problem = refused(registry, "id: t01-toy-001\nchapter: 1\nstatement: [unclosed\n")
    assert problem == (
        "line 4, column 1: expected ',' or ']', but got '<stream end>' (while parsing a flow "
        "sequence that starts at line 3, column 12)"
    )


def test_a_raw_escape_character_is_named_escaped_never_echoed(registry):
    problem = refused(registry, toy("statement: A toy", "statement: A \x1b[31mtoy"))
    assert problem == "line 3, column 14: character \\u001b is not allowed in YAML"


# --- text -----------------------------------------------------------------------------------


def test_a_statement_of_2000_characters_is_the_longest_accepted(registry):
    longest = "A" * 1999 + "."
    assert accepted(registry, toy(STATEMENT, f"statement: {longest}")).statement == longest
    problem = refused(registry, toy(STATEMENT, f"statement: A{longest}"))
    assert problem == "field statement: text of 2001 characters; a text field holds at most 2000"


def test_a_statement_of_60_words_is_the_longest_accepted(registry):
    longest = "A" + " word" * 58 + " $B^{-1/2}$."
    assert len(longest.split()) == 60
    assert accepted(registry, toy(STATEMENT, f"statement: {longest}")).statement == longest
    problem = refused(registry, toy(STATEMENT, f"statement: A word{longest[1:]}"))
    assert problem.startswith("field statement: 'A word word")
    assert problem.endswith(
        "has the wrong form; expected: at most 60 words (what spaces "
        "separate; the claim page's statement is read at a glance, the "
        "fields hold the details)"
    )


SENTENCES = (
    "expected: whole sentences on one line: each begins with a capital letter, a digit, a "
    "bracket or a quote and ends with a full stop, so none runs into the next"
)


@pytest.mark.parametrize(
    "reason",
    [
        "a few ulps.",  # not a sentence's beginning
        "A few ulps",  # no full stop
        "A few ulps of a vector near 1 The rest is rounding.",  # two run together
    ],
)
def test_a_reason_that_is_not_whole_sentences_is_refused_naming_the_field(registry, reason):
    problem = refused(registry, toy("reason: A few ulps.", f"reason: {reason}"))
    assert problem.startswith("field expect.ratio.reason: ")
    assert problem.endswith(SENTENCES)


def test_a_reason_of_several_sentences_or_starting_with_a_number_is_accepted(registry):
    for reason in ("A few ulps. The rest is rounding.", "8 ulps of 1, measured."):
        accepted(registry, toy("reason: A few ulps.", f"reason: {reason}"))


def test_every_registered_statement_and_reason_meets_the_limits():
    # The registry's own files load (their checks are the schema's); this names the limits.
    for claim_id in list_claims():
        claim = load_claim(claim_id)
        assert len(claim.statement.split()) <= 60, claim_id
        for field, expectation in claim.expect.items():
            for key in ("reason", "wide_because", "vacuous_ok"):
                text = expectation.get(key)
                assert text is None or text.endswith((".", "?", "!")), (claim_id, field, key)


@pytest.mark.parametrize(
    ("old", "field"),
    [
        ("reason: A few ulps.", "expect.ratio.reason"),
        ("estimator: closed form", "contract.estimator"),
    ],
)
def test_every_free_text_field_is_limited(registry, old, field):
    key = old.split(":")[0]
    problem = refused(registry, toy(old, f"{key}: " + "w" * 2001))
    assert problem == f"field {field}: text of 2001 characters; a text field holds at most 2000"


def test_a_refuted_account_and_source_are_limited_too(registry):
    refutes = "refutes:\n  account: {}\n  source: a short citation\nseed:\n"
    problem = refused(registry, toy("seed:\n", refutes.format("An account. " * 200)))
    assert problem.startswith("field refutes.account: text of 2399 characters")  # one space cut


@pytest.mark.parametrize(
    ("character", "kind"),
    [
        ("\u202e", "bidirectional control"),
        ("\u202a", "bidirectional control"),
        ("\u2066", "bidirectional control"),
        ("\u200f", "bidirectional control"),
        ("\u2028", "line or paragraph separator"),
        ("\u2029", "line or paragraph separator"),
        ("\x85", "control character"),
        ("\t", "control character"),
    ],
)
def test_unsafe_characters_in_text_are_refused_and_named_escaped(registry, character, kind):
    escaped = f"\\u{ord(character):04x}"
    text = toy(STATEMENT, f'statement: "A toy {escaped} witness."')  # a YAML escape
    problem = refused(registry, text)
    assert problem == (
        f"field statement: {kind} {escaped} at character 7; a text field is one line of "
        "printable text"
    )


def test_an_unsafe_character_in_a_key_is_escaped_in_the_message(registry):
    problem = refused(registry, toy("  count:\n", '  "co\\e[31munt":\n'))
    assert problem.startswith("field expect.co\\u001b[31munt: control character \\u001b at")


# --- vacuous tolerances ---------------------------------------------------------------------


def test_an_absolute_tolerance_as_wide_as_the_value_is_refused(registry):
    problem = refused(registry, toy(TOLERANCE, "value: 7777\n    abs_tol: 1.0e+300"))
    assert problem == (
        "field expect.ratio: abs_tol 1e+300 is at least |value| = 7777, so a result of 0 "
        "passes and the check says nothing; tighten the tolerance, or state why it is meant "
        "with vacuous_ok: <reason>"
    )
    problem = refused(registry, toy(TOLERANCE, "value: -2.0\n    abs_tol: 2.0"))
    assert problem.startswith("field expect.ratio: abs_tol 2.0 is at least |value| = 2.0")


def test_a_relative_tolerance_of_one_or_more_is_refused(registry):
    problem = refused(registry, toy(TOLERANCE, "value: 0.5\n    rel_tol: 1.0"))
    assert problem.startswith("field expect.ratio: rel_tol 1.0 is at least 1, so a result of 0")
    assert accepted(registry, toy(TOLERANCE, "value: 0.5\n    rel_tol: 0.999"))


def test_a_vacuous_tolerance_with_its_reason_is_accepted(registry):
    claim = accepted(
        registry,
        toy(
            TOLERANCE,
            "value: 7777\n    abs_tol: 1.0e+300\n    vacuous_ok: Any finite ratio passes.",
        ),
    )
    assert claim.expect["ratio"]["vacuous_ok"] == "Any finite ratio passes."


@pytest.mark.parametrize("reason", ['""', "' '", "[a, b]"])
def test_vacuous_ok_must_be_a_line_of_text(registry, reason):
    problem = refused(
        registry, toy(TOLERANCE, f"value: 7777\n    abs_tol: 1.0e+300\n    vacuous_ok: {reason}")
    )
    assert problem.startswith("field expect.ratio.vacuous_ok")


def test_vacuous_ok_on_a_tolerance_that_is_not_vacuous_is_refused(registry):
    problem = refused(registry, toy(TOLERANCE, f"{TOLERANCE}\n    vacuous_ok: Just in case."))
    assert problem == (
        "field expect.ratio.vacuous_ok: the tolerance is narrower than the value, so there is "
        "nothing to excuse; remove vacuous_ok"
    )


def test_a_tolerance_around_zero_says_how_close_to_zero_and_is_not_vacuous(registry):
    assert accepted(registry, toy(TOLERANCE, "value: 0.0\n    abs_tol: 0.0"))
    assert accepted(registry, toy(TOLERANCE, "value: 0.0\n    abs_tol: 1.0e-12"))


def test_a_vacuous_mean_of_a_statistical_claim_is_refused(fixture_registry):
    path = fixture_registry.directory / "t01-noise-001.yaml"
    text = path.read_text(encoding="utf-8")
    assert "      value: 0.1\n      rel_tol: 0.05\n" in text
    path.write_text(text.replace("rel_tol: 0.05", "abs_tol: 0.5"), encoding="utf-8")
    with pytest.raises(RegistryError, match=r"field expect\.spread: abs_tol 0\.5 is at least"):
        load_claim("t01-noise-001", registry_dir=fixture_registry.directory)


def test_no_registered_claim_has_a_vacuous_tolerance():
    for claim_id in list_claims():
        claim = load_claim(claim_id)
        assert not any("vacuous_ok" in e for e in claim.expect.values()), claim_id


# --- file names -----------------------------------------------------------------------------


def test_a_registry_file_not_named_by_a_claim_id_is_refused(registry):
    (registry / "T01 Toy.yaml").write_text(TOY_CLAIM)
    with pytest.raises(RegistryError, match=r"'T01 Toy\.yaml' is not named <id>\.yaml"):
        list_claims(registry)


# --- wide_because -----------------------------------------------------------------------------


def test_wide_because_on_a_deterministic_claim_is_refused(registry):
    problem = refused(registry, toy(TOLERANCE, f"{TOLERANCE}\n    wide_because: A side."))
    assert problem == (
        "field expect[ratio].wide_because is only for a statistical claim (seed policy "
        "derived-set), whose tolerance is measured in standard errors"
    )


def test_wide_because_on_a_statistical_claim_is_accepted(fixture_registry):
    path = fixture_registry.directory / "t01-noise-001.yaml"
    text = path.read_text(encoding="utf-8")
    assert "      rel_tol: 0.05\n" in text
    path.write_text(
        text.replace("      rel_tol: 0.05\n", "      rel_tol: 0.05\n    wide_because: A side.\n"),
        encoding="utf-8",
    )
    claim = load_claim("t01-noise-001", registry_dir=fixture_registry.directory)
    assert claim.expect["spread"]["wide_because"] == "A side."


def test_interval_method_on_a_deterministic_claim_is_refused(registry):
    problem = refused(registry, toy(TOLERANCE, f"{TOLERANCE}\n    interval_method: median-rank"))
    assert problem.startswith("field expect[ratio].interval_method is only for a statistical")


def test_an_unknown_interval_method_is_refused(fixture_registry):
    path = fixture_registry.directory / "t01-noise-001.yaml"
    text = path.read_text(encoding="utf-8")
    old = "    ci_within: [0.98, 1.02]\n"
    assert old in text
    path.write_text(text.replace(old, old + "    interval_method: mode\n"), encoding="utf-8")
    with pytest.raises(RegistryError, match=r"field expect\.estimate\.interval_method"):
        load_claim("t01-noise-001", registry_dir=fixture_registry.directory)


def test_libyaml_reads_every_registry_file_as_the_reference_loader_does():
    """The fast loader (libyaml's parser) is an optimisation: same data, same refusals."""
    import yaml

    from claimbook import paths
    from claimbook.claims.registry_schema import _StrictSafeLoader, parse_registry_yaml

    assert yaml.__with_libyaml__, "the locked PyYAML wheel carries libyaml"
    files = sorted(paths.CLAIMS_DIR.glob("*.yaml"))
    assert files
    for path in files:
        raw = path.read_bytes()
        assert parse_registry_yaml(raw, path) == yaml.load(raw.decode(), Loader=_StrictSafeLoader)
    for bad, problem in [
        (b"a: &x 1\nb: *x\n", "anchors and aliases"),
        (b"a: {b: 1, b: 2}\n", "duplicate key 'b'"),
        (b"[" * 30, "nested deeper than"),
    ]:
        with pytest.raises(RegistryError, match=problem):
            parse_registry_yaml(bad, paths.CLAIMS_DIR / "c0-toy-001.yaml")
