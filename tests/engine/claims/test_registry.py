"""The registry: loading, validation, seeds, and refusing what cannot be used."""

import hashlib
import time

import pytest
from claimtools import TOY_CLAIM, TOY_ID, verify_toy

from claimbook import claims
from claimbook.claims import (
    claim_seed,
    claim_seeds,
    list_claims,
    load_claim,
    verify_claim,
)
from claimbook.errors import BookError, RegistryError, SeedNameError, UnknownClaimError

# --- seeds ----------------------------------------------------------------------------------


def test_claim_seed_is_the_registered_value():
    # The first 8 hex digits of sha256(b"c15-running-state") are 12e27b9d.
    assert hashlib.sha256(b"c15-running-state").hexdigest()[:8] == "12e27b9d"
    assert claim_seed("c15-running-state") == 0x12E27B9D == 316832669


@pytest.mark.parametrize("name", [None, 3, b"bytes", ["a"]])
def test_claim_seed_refuses_a_name_that_is_not_text(name):
    with pytest.raises(SeedNameError, match="parameter name must be a str") as caught:
        claim_seed(name)
    assert isinstance(caught.value, BookError) and isinstance(caught.value, ValueError)


def test_claim_seeds_derive_from_the_name_and_index():
    seeds = claim_seeds("t01-noise", 3)
    assert seeds == [
        claim_seed("t01-noise/0"),
        claim_seed("t01-noise/1"),
        claim_seed("t01-noise/2"),
    ]
    assert len(set(claim_seeds("t01-noise", 50))) == 50
    with pytest.raises(SeedNameError, match="count"):
        claim_seeds("t01-noise", 0)


# --- loading ----------------------------------------------------------------------------------


def test_real_registry_lists_and_loads_the_chapter_15_claims():
    assert {"c15-invariance-001", "c15-running-state-001"} <= set(list_claims())
    claim = load_claim("c15-running-state-001")
    assert claim.chapter == 15 and claim.kind == "deterministic"
    assert claim.seed == claim_seed("c15-running-state")
    assert load_claim("c15-invariance-001").seed is None
    assert claim.registry_digest == hashlib.sha256(claim.path.read_bytes()).hexdigest()


def test_fixture_registry_holds_a_statistical_and_a_refuted_claim(fixture_registry):
    noise = load_claim("t01-noise-001", registry_dir=fixture_registry.directory)
    assert noise.kind == "statistical" and noise.seeds == claim_seeds("t01-noise", 20)
    assert noise.statistics == {"level": 0.95, "method": "t"}
    shift = load_claim("t01-shift-001", registry_dir=fixture_registry.directory)
    assert shift.kind == "deterministic" and shift.refutes["account"].startswith("A common")


def test_the_shown_contract_reads_the_registry(registry, fixture_registry):
    assert load_claim(TOY_ID, registry_dir=registry).shown_contract == {
        "seed": f'claim_seed("toy-seed") = {claim_seed("toy-seed")}',
        "dtype": "FP64",
        "device": "CPU",
        "estimator": "closed form",
    }
    noise = load_claim("t01-noise-001", registry_dir=fixture_registry.directory).shown_contract
    assert noise["seed"] == 'claim_seeds("t01-noise", 20): 20 seeds'


def test_unknown_id_lists_the_nearest_ids(registry):
    with pytest.raises(UnknownClaimError, match="nearest registered ids: t01-toy-001"):
        load_claim("t01-toy-01", registry_dir=registry)
    with pytest.raises(UnknownClaimError, match="c15-invariance-001"):
        verify_claim("c15-invariance-01", claims.harness_pin())


def test_unknown_id_without_near_match_lists_the_registry(registry):
    with pytest.raises(UnknownClaimError, match="registered ids: t01-toy-001"):
        load_claim("zzz", registry_dir=registry)


@pytest.mark.parametrize(
    "claim_id", ["../claims/t01-toy-001", "T01-TOY-001", "", "t01-toy-001 ", "t01-toy-001/"]
)
def test_ids_are_matched_exactly(registry, claim_id):
    with pytest.raises(UnknownClaimError) as caught:
        load_claim(claim_id, registry_dir=registry)
    hint = str(caught.value).split("; ")[-1]
    assert repr(claim_id) not in hint  # the refused id is never suggested


def test_id_matching_is_case_sensitive_even_on_a_case_insensitive_filesystem(
    registry, monkeypatch
):
    # Simulate a filesystem where T01-TOY-001.yaml opens t01-toy-001.yaml.
    monkeypatch.setattr(type(registry), "is_file", lambda self: True)
    with pytest.raises(UnknownClaimError):
        load_claim("T01-TOY-001", registry_dir=registry)


def test_the_nearest_id_hint_never_suggests_the_refused_id(registry):
    # Even if the listing held the refused id (a file vanishing between list and load).
    known = ["t01-toy-001", "t01-toy-002"]
    error = claims.registry._unknown_claim("t01-toy-001", registry, known)
    assert str(error).endswith("nearest registered ids: t01-toy-002")


def test_a_huge_unknown_id_is_quoted_briefly(registry):
    with pytest.raises(UnknownClaimError) as caught:
        load_claim("t01-" + "x" * 100_000, registry_dir=registry)
    assert len(str(caught.value)) < 600


MALFORMED = {
    "missing reason": (
        ("    reason: A few ulps.\n", ""),
        r"field expect\.ratio: 'reason' is a required property",
    ),
    "YAML 1.1 number as text": (
        ("abs_tol: 1.0e-12", "abs_tol: 1e-12"),
        r"field expect\.ratio\.abs_tol: '1e-12' is not of type 'number'.*write 5\.0e-4",
    ),
    "unknown top-level field": (("chapter: 1\n", "chapter: 1\nauthor: me\n"), r"field author"),
    "two tolerances": (
        ("  count:\n    equals: 3\n", "  count:\n    equals: 3\n    abs_tol: 1.0\n"),
        r"field expect\.count\.abs_tol: not allowed",
    ),
    "seed name missing": (("  name: toy-seed\n", ""), r"field seed: 'name' is a required"),
    "unknown seed policy": (("policy: derived", "policy: random"), r"field seed"),
    "chapter as text": (("chapter: 1\n", "chapter: one\n"), r"field chapter"),
    "two sentences on two lines": (
        ("1.25.\n", "1.25.\n  It is a toy.\n"),
        r"field statement",
    ),
    "compute outside the harness": (
        ("trainable_harness.witnesses.toy.toy_witness", "os.system"),
        r"field compute: 'os\.system' has the wrong form",
    ),
    "compute is a harness function but not a registered computation": (
        ("trainable_harness.witnesses.toy.toy_witness", "claimbook.claims.cli.repin"),
        r"field compute: 'claimbook\.claims\.cli\.repin' has the wrong form",
    ),
    "compute names a registered module's helper": (
        (
            "trainable_harness.witnesses.toy.toy_witness",
            "trainable_harness.witnesses.chapter16.residual_depth.gains_to_output",
        ),
        r"field compute: .* is not a function marked with @claim_computation",
    ),
    "id differs from file name": (("id: t01-toy-001", "id: t01-toy-002"), r"field id"),
    "reversed interval": (("[1.0, 1.5]", "[1.5, 1.0]"), r"field expect\[group\.spread\]"),
    "duplicate key": (("chapter: 1\n", "chapter: 1\nchapter: 2\n"), r"duplicate key 'chapter'"),
    "not YAML": (
        ("seed:\n", "seed: [\n"),
        r"yaml: line 6, column 7: expected ',' or '\]', but got ':' \(while parsing a flow "
        r"sequence that starts at line 4, column 7\)$",
    ),
    "empty file": ((TOY_CLAIM, ""), r"field \(top level\): None is not of type 'object'"),
    "infinite tolerance": (
        ("abs_tol: 1.0e-12", "abs_tol: .inf"),
        r"field expect\.ratio\.abs_tol: inf is not a finite",
    ),
    "NaN value": (
        ("value: 0.5", "value: .nan"),
        r"field expect\.ratio\.value: nan is not a finite",
    ),
    "negative infinity in an interval": (
        ("[1.0, 1.5]", "[-.inf, 1.5]"),
        r"field expect\[group\.spread\]\.interval\[0\]: -inf",
    ),
    "alias": (
        ("  count:\n    equals: 3\n", "  count: &same\n    equals: 3\n  flag: *same\n"),
        r"anchors and aliases .* are not allowed",
    ),
    "control character in the statement": (
        (
            "statement: A toy witness returns a half, three, true and a nested spread of 1.25.",
            'statement: "A toy witness returns a half\\a, three and a spread of 1.25."',
        ),
        r"field statement: control character \\u0007 at character 29",
    ),
    "NUL in a reason": (
        ("reason: A few ulps.", 'reason: "A few\\0 ulps."'),
        r"field expect\.ratio\.reason: control character \\u0000 at character 6",
    ),
    "DEL in the estimator": (
        ("estimator: closed form", 'estimator: "closed\\x7f form"'),
        r"field contract\.estimator: control character \\u007f at character 7",
    ),
    "statistics on a deterministic claim": (
        ("contract:\n", "statistics:\n  level: 0.95\n  method: t\ncontract:\n"),
        r"field statistics is only for seed policy derived-set",
    ),
    "statistical expectation on a deterministic claim": (
        ("    interval: [1.0, 1.5]\n", "    ci_within: [1.0, 1.5]\n"),
        r"field expect\[group\.spread\]\.ci_within needs a statistical claim",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_registry_file_names_file_and_field(registry, case):
    (old, new), field_pattern = MALFORMED[case]
    path = registry / f"{TOY_ID}.yaml"
    assert old in TOY_CLAIM  # the mutation must apply, or the test proves nothing
    path.write_text(TOY_CLAIM.replace(old, new, 1))
    with pytest.raises(RegistryError, match=field_pattern) as caught:
        load_claim(TOY_ID, registry_dir=registry)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)  # one line, YAML errors included


STATISTICAL = """\
id: t01-stat-001
chapter: 1
statement: A statistical toy.
seed:
  policy: derived-set
  name: t01-stat
  count: {count}
{statistics}contract:
  dtype: FP64
  device: CPU
  estimator: mean over seeds
compute: trainable_harness.witnesses.toy.toy_witness
expect:
  ratio:
    {expectation}
    reason: A stated reason.
"""


@pytest.mark.parametrize(
    ("count", "statistics", "expectation", "message"),
    [
        (1, "statistics: {level: 0.95, method: t}\n", "ci_within: [0.0, 1.0]", "field seed"),
        (10, "", "ci_within: [0.0, 1.0]", "field statistics is required"),
        (
            10,
            "statistics: {level: 1.5, method: t}\n",
            "ci_within: [0.0, 1.0]",
            "field statistics.level",
        ),
        (
            10,
            "statistics: {level: 0.95, method: z}\n",
            "ci_within: [0.0, 1.0]",
            "field statistics.method",
        ),
        (
            10,
            "statistics: {level: 0.95, method: t}\n",
            "ci_within: [1.0, 0.0]",
            r"ci_within is \[1\.0, 0\.0\]",
        ),
        (10, "statistics: {level: 0.95, method: t}\n", "fraction: {above: 0.5}", "at_least"),
        (
            10,
            "statistics: {level: 0.95, method: t}\n",
            "mean: {value: 0.5}",
            "field expect.ratio.mean",
        ),
    ],
)
def test_malformed_statistical_claims(registry, count, statistics, expectation, message):
    (registry / "t01-stat-001.yaml").write_text(
        STATISTICAL.format(count=count, statistics=statistics, expectation=expectation)
    )
    with pytest.raises(RegistryError, match=message):
        load_claim("t01-stat-001", registry_dir=registry)


def test_an_alias_bomb_is_refused_fast_with_a_short_message(registry):
    # A billion-laughs file of about 1 KB: expanding it would take gigabytes.
    lines = ['a0: &a0 "' + "x" * 50 + '"']
    for level in range(1, 12):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([previous] * 9)}]")
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 1200
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(bomb)
    start = time.perf_counter()
    with pytest.raises(RegistryError, match="anchors and aliases") as caught:
        load_claim(TOY_ID, registry_dir=registry)
    assert time.perf_counter() - start < 1.0
    assert len(str(caught.value)) < 1000


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("statement: A toy", "statement: " + "A" * 5000 + ". B toy"),
        ("value: 0.5", "value: '" + "9" * 5000 + "'"),
        ("estimator: closed form", "estimator: [" + ", ".join(["1"] * 2000) + "]"),
        (
            "compute: trainable_harness.witnesses.toy.toy_witness",
            "compute: trainable_harness.x.y" + "z" * 5000,
        ),
    ],
)
def test_error_messages_quote_only_an_excerpt_of_a_long_value(registry, old, new):
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(TOY_CLAIM.replace(old, new, 1))
    with pytest.raises(RegistryError) as caught:
        load_claim(TOY_ID, registry_dir=registry)
    message = str(caught.value).replace(str(path), "")
    assert len(message) < 700, message[:300]
    assert "X" * 81 not in message.upper().replace("A", "X").replace("9", "X").replace("Z", "X")


def test_chapter_in_id_must_match_chapter_field(registry):
    text = TOY_CLAIM.replace("t01-toy-001", "c16-toy-001")
    (registry / "c16-toy-001.yaml").write_text(text)
    with pytest.raises(RegistryError, match="field chapter is 1 but the id 'c16-toy-001'"):
        load_claim("c16-toy-001", registry_dir=registry)


def test_yml_files_are_refused_rather_than_ignored(registry):
    (registry / "t01-other-001.yml").write_text(TOY_CLAIM)
    with pytest.raises(RegistryError, match=r"must end in \.yaml; rename t01-other-001\.yml"):
        list_claims(registry)


def test_a_registry_file_that_is_a_symbolic_link_is_refused_naming_it(registry, tmp_path):
    target = tmp_path / "elsewhere.yaml"
    target.write_text(TOY_CLAIM.replace(TOY_ID, "t01-linked-001"))
    (registry / "t01-linked-001.yaml").symlink_to(target)
    with pytest.raises(RegistryError, match=r"t01-linked-001\.yaml: is a symbolic link; "):
        list_claims(registry)
    with pytest.raises(RegistryError, match=r"t01-linked-001\.yaml: is a symbolic link; "):
        load_claim("t01-linked-001", registry_dir=registry)


def test_missing_registry_directory_is_named(tmp_path):
    with pytest.raises(RegistryError, match=r"does not exist.*TRAINABLE_ROOT"):
        list_claims(tmp_path / "nowhere")


def test_repin_named_as_compute_is_refused_and_rewrites_nothing(registry, artifacts, tmp_path):
    from claimtools import make_chapters

    chapters = make_chapters(tmp_path)
    before = {path.name: path.read_bytes() for path in chapters.iterdir()}
    path = registry / f"{TOY_ID}.yaml"
    path.write_text(
        TOY_CLAIM.replace(
            "trainable_harness.witnesses.toy.toy_witness", "claimbook.claims.cli.repin"
        )
    )
    with pytest.raises(RegistryError, match="field compute"):
        verify_toy(registry, artifacts)
    assert not artifacts.exists()
    assert {path.name: path.read_bytes() for path in chapters.iterdir()} == before
