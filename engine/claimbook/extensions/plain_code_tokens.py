"""Highlighted code without a span for a token that both of the theme's Pygments styles draw
as plain text (names, punctuation, whitespace); such a block's ``<pre>`` inherits its colour."""

from collections.abc import Iterable

from pydata_sphinx_theme.utils import get_theme_options_dict
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Text, _TokenType

THEME_STYLE_OPTIONS = ("pygments_light_style", "pygments_dark_style")
INHERIT_COLOUR = "color: inherit"  # the <pre> of a block with folded tokens


def plain_token_types(styles: Iterable[type[Style]]) -> frozenset[_TokenType]:
    """The standard token types every style in ``styles`` draws exactly as ``Token.Text``."""
    return frozenset(
        ttype
        for ttype in STANDARD_TYPES
        if ttype is not Text
        and all(style.style_for_token(ttype) == style.style_for_token(Text) for style in styles)
    )


def plain_formatter(formatter: type, plain: frozenset) -> type:
    """A subclass of HTML formatter ``formatter`` formatting the types in ``plain`` as text."""

    class PlainTokensFormatter(formatter):
        def format_unencoded(self, tokensource, outfile):
            tokens = list(tokensource)
            # One formatter per block (Sphinx makes one for each), so the style is the block's.
            if any(ttype in plain for ttype, _ in tokens):
                self.prestyles = "; ".join(filter(None, (self.prestyles, INHERIT_COLOUR)))
            folded = [((Text if ttype in plain else ttype), value) for ttype, value in tokens]
            return super().format_unencoded(folded, outfile)

    PlainTokensFormatter.__name__ = f"Plain{formatter.__name__}"
    return PlainTokensFormatter


def _builder_inited(app) -> None:
    """Fold the HTML builder's tokens that the theme's two styles draw plain; other builders,
    Sphinx's own dark style or another theme: nothing."""
    builder = app.builder
    if builder.format != "html" or builder.dark_highlighter is not None:
        return
    options, defaults = get_theme_options_dict(app), builder.theme.get_options()
    names = [options.get(key) or defaults.get(key) for key in THEME_STYLE_OPTIONS]
    if None not in names:
        styles = [get_style_by_name(name) for name in names]
        formatter = builder.highlighter.formatter
        builder.highlighter.formatter = plain_formatter(formatter, plain_token_types(styles))


def setup(app):
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
