"""Tests of claimbook.text: unsafe characters escaped, one line, a sane length."""

import pytest

from claimbook.text import MESSAGE_LIMIT, escape_unsafe, find_unsafe, one_line

UNSAFE_SAMPLES = [
    ("\x1b", "\\u001b"),  # ESC, the start of a terminal escape sequence
    ("\x00", "\\u0000"),
    ("\n", "\\u000a"),
    ("\t", "\\u0009"),
    ("\x7f", "\\u007f"),
    ("\x85", "\\u0085"),  # C1: next line
    ("\x9b", "\\u009b"),  # C1: control sequence introducer
    ("\u202e", "\\u202e"),  # right-to-left override
    ("\u202a", "\\u202a"),
    ("\u2066", "\\u2066"),
    ("\u2069", "\\u2069"),
    ("\u200e", "\\u200e"),
    ("\u200f", "\\u200f"),
    ("\u061c", "\\u061c"),
    ("\u2028", "\\u2028"),  # line separator
    ("\u2029", "\\u2029"),  # paragraph separator
]


@pytest.mark.parametrize(("character", "escaped"), UNSAFE_SAMPLES)
def test_every_unsafe_character_is_escaped(character, escaped):
    assert escape_unsafe(f"a{character}b") == f"a{escaped}b"
    assert find_unsafe(f"a{character}b") == escaped
    assert one_line(f"a{character}b") == f"a{escaped}b"


@pytest.mark.parametrize("text", ["plain ASCII", "Zoë, 東京, π ≈ 3.14", "emoji 🙂", "a\\u202eb"])
def test_printable_text_is_left_as_it_is(text):
    assert escape_unsafe(text) == text
    assert find_unsafe(text) is None


def test_a_long_message_is_cut_and_says_how_long_it_was():
    line = one_line("x" * 5000)
    assert len(line) == MESSAGE_LIMIT
    assert line.endswith("... (5000 characters)")
    assert one_line("y" * MESSAGE_LIMIT) == "y" * MESSAGE_LIMIT


def test_one_line_takes_any_object():
    assert one_line(ValueError("bad\nvalue")) == "bad\\u000avalue"
