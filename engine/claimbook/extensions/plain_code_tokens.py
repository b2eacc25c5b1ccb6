"""Highlighted code without a span for a token that is drawn as plain text.

The theme's light and dark Pygments styles draw names, punctuation and whitespace exactly as
the block's text, yet each token gets a ``<span>``: most of a chapter page's elements, each
costing layout and accessibility-check time. A token type both styles draw as ``Token.Text``
(:func:`plain_token_types`) is handed to Pygments as ``Token.Text``, which has no span; a block
with such tokens gets ``<pre style="color: inherit">`` so every character looks as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Text, _TokenType

THEME_STYLE_OPTIONS = ("pygments_light_style", "pygments_dark_style")
INHERIT_COLOUR = "color: inherit"  # the <pre> of a block with folded tokens


def plain_token_types(styles: Iterable[type[Style]]) -> frozenset[_TokenType]:
    """The standard token types every style in ``styles`` draws exactly as ``Token.Text``;
    raises ValueError if ``styles`` is empty (then nothing is known to look plain)."""
    styles = list(styles)
    if not styles:
        raise ValueError("styles: at least one Pygments style is needed")
    return frozenset(
        ttype
        for ttype in STANDARD_TYPES
        if ttype is not Text
        and all(style.style_for_token(ttype) == style.style_for_token(Text) for style in styles)
    )


def folded(tokens: Iterable[tuple[_TokenType, str]], plain: frozenset) -> list:
    """``tokens`` with each of the types in ``plain`` replaced by ``Token.Text``."""
    return [((Text if ttype in plain else ttype), value) for ttype, value in tokens]


def plain_formatter(formatter: type, plain: frozenset) -> type:
    """A subclass of the HTML formatter class ``formatter`` that formats :func:`folded` tokens."""

    class PlainTokensFormatter(formatter):
        def format_unencoded(self, tokensource, outfile):
            tokens = list(tokensource)
            # One formatter per block (Sphinx makes one for each), so the style is the block's.
            if any(ttype in plain for ttype, _ in tokens):
                self.prestyles = "; ".join(filter(None, (self.prestyles, INHERIT_COLOUR)))
            return super().format_unencoded(folded(tokens, plain), outfile)

    PlainTokensFormatter.__name__ = f"Plain{formatter.__name__}"
    return PlainTokensFormatter


def theme_styles(app) -> list[type[Style]]:
    """The light and dark Pygments styles the theme writes to ``pygments.css`` (the book's
    theme options, else the theme's defaults), or [] for another theme."""
    from pydata_sphinx_theme.utils import get_theme_options_dict

    options = get_theme_options_dict(app)
    defaults = app.builder.theme.get_options() if hasattr(app.builder, "theme") else {}
    names = [options.get(key) or defaults.get(key) for key in THEME_STYLE_OPTIONS]
    if None in names:
        return []  # not the theme this was written for: fold nothing
    return [get_style_by_name(name) for name in names]


def _builder_inited(app) -> None:
    highlighter = getattr(app.builder, "highlighter", None)
    if getattr(app.builder, "format", None) != "html" or highlighter is None:
        return  # LaTeX, text, ...: their formatters draw no spans and know no <pre>
    if getattr(app.builder, "dark_highlighter", None) is not None:
        return  # Sphinx's own dark stylesheet, not the theme's two styles: fold nothing
    styles = theme_styles(app)
    if styles:
        highlighter.formatter = plain_formatter(highlighter.formatter, plain_token_types(styles))


def setup(app):
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
