"""``claimbook.build.render_executes_nothing``: the render's myst-nb cannot execute a notebook."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a new interpreter: this one may have imported myst-nb's clients already, and then
# install() rightly replaces nothing.
_PROBE = """
import json, logging, sys
from claimbook.build import render_executes_nothing
from claimbook.errors import RenderExecutionError

render_executes_nothing.install()
import myst_nb.sphinx_ext  # what Sphinx loads for the book
import nbformat
from myst_nb.core.config import NbParserConfig
from myst_nb.core.execute import NotebookClientBase, create_client

notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
found = {name: name in sys.modules for name in ("sqlalchemy", "jupyter_cache")}
for mode in ("off", "force", "auto", "cache"):
    config = NbParserConfig(execution_mode=mode)
    try:
        client = create_client(notebook, "page.ipynb", config, logging.getLogger("probe"))
        found[mode] = type(client).__name__
    except RenderExecutionError as error:
        found[mode] = str(error)
print(json.dumps(found))
"""


def _probe() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_rendering_without_execution_works_and_every_executing_mode_is_refused_by_name():
    found = _probe()
    assert found["off"] == "NotebookClientBase"
    for mode, client in (("force", "Direct"), ("auto", "Direct"), ("cache", "Cache")):
        assert f"NotebookClient{client}" in found[mode]
        assert 'set execute_notebooks: "off" in _config.yml' in found[mode]
    # what the stand-ins are for: myst-nb loads without jupyter-cache and SQLAlchemy
    assert found["sqlalchemy"] is False and found["jupyter_cache"] is False


def test_a_process_that_imported_the_clients_keeps_them():
    probe = (
        "import sys, myst_nb.core.execute.direct as direct\n"
        "from claimbook.build import render_executes_nothing\n"
        "render_executes_nothing.install()\n"
        "print(sys.modules['myst_nb.core.execute.direct'] is direct, direct.__file__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    kept, file = done.stdout.split()
    assert (kept, file.endswith("myst_nb/core/execute/direct.py")) == ("True", True)
