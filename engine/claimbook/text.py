"""Text the engine prints or quotes: unsafe characters escaped, one line, a sane length."""

import re

# Controls, bidirectional marks and line separators: they could rewrite a terminal or reorder
# what is read.
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
    """``str(text)`` escaped, cut to ``limit`` characters ending ``... (N characters)``."""
    escaped = escape_unsafe(str(text))
    if len(escaped) <= limit:
        return escaped
    tail = f"... ({len(escaped)} characters)"
    return escaped[: max(0, limit - len(tail))] + tail
