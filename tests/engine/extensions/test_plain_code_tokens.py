"""Tests of claimbook.extensions.plain_code_tokens: no span for a token drawn as plain text."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace
from typing import ClassVar

from pygments import highlight
from pygments.lexers import PythonLexer, TextLexer
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import Keyword, Name, Operator, Punctuation, Text, Whitespace
from sphinx.highlighting import PygmentsBridge

from claimbook.extensions import plain_code_tokens

THEME_STYLES = [
    get_style_by_name("a11y-high-contrast-light"),
    get_style_by_name("a11y-high-contrast-dark"),
]
CODE = (
    "def spread(values, eps=1e-5):\n"
    "    return (values - values.mean()) / (values.var() + eps) ** 0.5\n"
)
SPAN = re.compile(r"<span[^>]*>")


class NamesInRed(Style):
    """A style that draws names unlike plain text."""

    styles: ClassVar = {Text: "#000000", Name: "#aa0000", Punctuation: "#000000"}


def formatted(code, lexer, plain):
    formatter = plain_code_tokens.plain_formatter(PygmentsBridge.html_formatter, plain)
    return highlight(code, lexer, formatter())


def text_of(markup):
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_the_theme_styles_fold_names_punctuation_and_whitespace_but_nothing_coloured():
    plain = plain_code_tokens.plain_token_types(THEME_STYLES)
    assert {Name, Punctuation, Whitespace} <= plain
    assert not {Keyword, Operator, Text} & plain


def test_a_type_one_style_colours_is_not_folded():
    plain = plain_code_tokens.plain_token_types([*THEME_STYLES, NamesInRed])
    assert Name not in plain and Punctuation in plain


def test_folded_code_reads_the_same_with_fewer_spans_and_keeps_the_coloured_ones():
    plain = plain_code_tokens.plain_token_types(THEME_STYLES)
    before = highlight(CODE, PythonLexer(), PygmentsBridge.html_formatter())
    after = formatted(CODE, PythonLexer(), plain)
    assert text_of(after) == text_of(before)
    assert len(SPAN.findall(after)) < len(SPAN.findall(before)) / 2
    for kept in ('class="k"', 'class="o"', 'class="mf"', 'class="nf"'):
        assert after.count(kept) == before.count(kept), kept
    assert 'class="n"' not in after and 'class="p"' not in after
    # The folded text takes the style's colour for plain text, set on the block, not the
    # theme's colour for <pre>.
    assert '<pre style="color: inherit">' in after


def test_a_block_with_nothing_folded_is_written_as_before():
    plain = plain_code_tokens.plain_token_types(THEME_STYLES)
    output = "largest change: centered 0.0, RMS 2.055\n"
    assert formatted(output, TextLexer(), plain) == highlight(
        output, TextLexer(), PygmentsBridge.html_formatter()
    )


def test_the_html_builder_gets_the_folding_formatter_and_others_are_left_alone():
    theme = SimpleNamespace(
        get_options=lambda: dict.fromkeys(
            plain_code_tokens.THEME_STYLE_OPTIONS, "a11y-high-contrast-light"
        )
    )
    html_builder = SimpleNamespace(
        format="html",
        highlighter=PygmentsBridge("html", "sphinx"),
        dark_highlighter=None,
        theme=theme,
        theme_options={},
    )
    app = SimpleNamespace(builder=html_builder, config=SimpleNamespace(html_theme_options={}))
    plain_code_tokens._builder_inited(app)
    assert issubclass(html_builder.highlighter.formatter, PygmentsBridge.html_formatter)
    assert html_builder.highlighter.formatter is not PygmentsBridge.html_formatter
    latex = PygmentsBridge("latex", "sphinx")
    latex_builder = SimpleNamespace(format="latex", highlighter=latex, theme=theme)
    plain_code_tokens._builder_inited(SimpleNamespace(builder=latex_builder, config=app.config))
    assert latex_builder.highlighter.formatter is PygmentsBridge.latex_formatter
    dark = PygmentsBridge("html", "monokai")  # Sphinx's pygments_dark_style: not the theme's
    sphinx_dark = SimpleNamespace(
        **{
            **vars(html_builder),
            "highlighter": PygmentsBridge("html", "sphinx"),
            "dark_highlighter": dark,
        }
    )
    plain_code_tokens._builder_inited(SimpleNamespace(builder=sphinx_dark, config=app.config))
    assert sphinx_dark.highlighter.formatter is PygmentsBridge.html_formatter
