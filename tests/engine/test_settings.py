"""Settings glued for the prose (`claimbook.settings`) and the check that holds results
to claims: a name pasted with plain glue must be glued with `glue_setting`."""

from pathlib import Path

import numpy as np
import pytest

from claimbook.errors import SettingError
from claimbook.settings import _plain_setting, glue_setting, results_pasted_as_glue

SOURCES = Path(__file__).resolve().parents[1] / "books" / "sources"


def test_the_check_names_results_pasted_with_plain_glue_and_only_them():
    # "batch_size" is a setting; "measured_gap" is glued with plain glue; "in_a_string" only
    # appears inside a string literal; the fenced example is not prose.
    assert results_pasted_as_glue(SOURCES / "glued.md") == ["measured_gap", "in_a_string"]


def test_the_check_answers_again_when_the_chapter_changes(tmp_path):
    chapter = tmp_path / "glued.md"
    text = (SOURCES / "glued.md").read_text(encoding="utf-8")
    chapter.write_text(text, encoding="utf-8")
    first = results_pasted_as_glue(chapter)
    first.append("mutated by the caller")  # a cached answer is never shared
    assert results_pasted_as_glue(chapter) == ["measured_gap", "in_a_string"]
    chapter.write_text(text + "\nAnother pasted result: {glue:text}`fresh_result`.\n")
    assert results_pasted_as_glue(chapter) == ["measured_gap", "in_a_string", "fresh_result"]


def test_settings_are_stored_as_plain_python_values():
    assert _plain_setting("count", np.int64(32)) == 32
    assert type(_plain_setting("count", np.int64(32))) is int
    assert type(_plain_setting("momentum", np.float32(0.5))) is float
    assert _plain_setting("sizes", (np.int64(2), 3)) == (2, 3)
    assert _plain_setting("name", "pre-norm") == "pre-norm"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("batch-size", 1, "not an identifier"),
        ("flag", True, "must be a number"),
        ("array", np.zeros(2), "must be a number"),
        ("eps", float("nan"), "not finite"),
        ("eps", float("inf"), "not finite"),
    ],
)
def test_unusable_settings_are_refused_by_name(name, value, message):
    with pytest.raises(SettingError, match=message):
        glue_setting(name, value)
