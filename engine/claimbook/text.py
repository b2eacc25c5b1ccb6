"""Text the engine prints or quotes: unsafe characters escaped, one line, a sane length.

A message may quote what a file or a chapter holds (a claim id, a registry value, a YAML
line, a file name). Printed raw, such text can rewrite the terminal (an escape sequence),
reorder what the reader sees (a bidirectional override such as U+202E), or break one
message into several lines (a newline, U+2028, U+2029). Every message the command line
prints goes through :func:`one_line`, and the registry builds its messages with it.

*Unsafe* characters, :data:`UNSAFE`, are the C0 controls (U+0000-U+001F, newline and tab
included), DEL and the C1 controls (U+007F-U+009F), the bidirectional marks, embeddings,
overrides and isolates (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), and the
line and paragraph separators U+2028 and U+2029. :func:`escape_unsafe` writes each as the
six characters ``\\uXXXX``; nothing else changes.

Examples
--------
>>> escape_unsafe("a\\x1b[31mb\\u202ec")
'a\\\\u001b[31mb\\\\u202ec'
>>> one_line("first\\nsecond")
'first\\\\u000asecond'
>>> one_line("x" * 50, limit=30)
'xxxxxxxxxxx... (50 characters)'
"""

from __future__ import annotations

import re

__all__ = ["MESSAGE_LIMIT", "UNSAFE", "escape_unsafe", "find_unsafe", "one_line"]

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
MESSAGE_LIMIT = 1000  # characters of one printed message


def escape_unsafe(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` written as ``\\uXXXX``."""
    return UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def find_unsafe(text: str) -> str | None:
    """The first unsafe character of ``text``, escaped (``'\\u202e'``), or None."""
    found = UNSAFE.search(text)
    return None if found is None else escape_unsafe(found.group())


def one_line(text: object, limit: int = MESSAGE_LIMIT) -> str:
    """``str(text)`` escaped (:func:`escape_unsafe`) and cut to at most ``limit`` characters.

    A cut message ends with ``... (N characters)``, ``N`` the escaped length, so the reader
    knows it was cut and by how much.
    """
    escaped = escape_unsafe(str(text))
    if len(escaped) <= limit:
        return escaped
    tail = f"... ({len(escaped)} characters)"
    return escaped[: max(0, limit - len(tail))] + tail
