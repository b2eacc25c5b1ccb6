"""``python -m claimbook ...`` for the book tier, in forks of one preloaded interpreter.

A fixture-book build run as ``python -m claimbook build`` spends about half its CPU time
importing Sphinx, Jupyter Book, MyST-NB (which imports jupyter-cache and SQLAlchemy even with
execution off), Jupytext, the themes and docutils before it does anything. The build-driver
tests start about eighty such processes. A :class:`Preloaded` server is one interpreter
per test worker that has imported those third-party packages once and forks one child per
command; the child becomes what a fresh ``python -m claimbook`` would be (working directory,
environment, ``sys.path`` with ``PYTHONPATH`` first, ``sys.argv``, standard streams to
files, the exit status, the interpreter's exit steps: non-daemon threads joined, ``atexit``
handlers run) and runs the module as ``__main__``.

Only packages whose import does not depend on the book are preloaded: never ``claimbook``
(its paths are read from ``TRAINABLE_ROOT`` when imported) nor ``trainable_harness`` (each
fixture book carries its own copy, first on ``PYTHONPATH``). A command whose environment
differs from the server's in anything but ``PYTHONPATH`` and the engine's ``TRAINABLE_*``
variables runs as a plain subprocess instead, as does every command when
``TRAINABLE_TEST_PRELOAD=0``.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["Preloaded", "run"]

_SPHINX_BUILDERS = (
    "changes", "dummy", "epub3", "gettext", "html.transforms", "latex.transforms", "linkcheck",
    "manpage", "singlehtml", "texinfo", "text", "xml",
)  # fmt: skip
_SPHINX_DOMAINS = (
    "c", "changeset", "citation", "cpp", "index", "javascript", "python", "rst",
)  # fmt: skip
_SPHINXCONTRIB = ("applehelp", "devhelp", "htmlhelp", "qthelp", "serializinghtml")
# Imported once by the server (each is imported by every render; see the module doc).
PRELOAD = (
    "sphinx.application",
    "sphinx.builders.html",
    "sphinx.ext.mathjax",
    "jupyter_book.config",
    "jupyter_book.pdf",
    "myst_nb",
    "myst_nb.sphinx_ext",
    "myst_parser.sphinx_ext.main",
    "jupytext",
    "nbformat",
    "papermill",
    "jupyter_client.manager",
    "sphinx_book_theme",
    "pydata_sphinx_theme",
    "sphinx_design",
    "sphinx_design.extension",
    "sphinxcontrib.bibtex",
    "sphinx_proof",
    "sphinx_external_toc",
    "sphinx_togglebutton",
    "sphinx_copybutton",
    "sphinx_comments",
    "sphinx_thebe",
    "sphinx_jupyterbook_latex",
    "sphinx_multitoc_numbering",
    "bs4",
    "yaml",
    "numpy",  # its BLAS reads *_NUM_THREADS when imported: the server has the same values
    "ipython_pygments_lexers",
    "doctest",
    "unittest",
    # What a render imports beyond the packages above, by name (sphinx.application's built-in
    # extensions, the domains and builders they load, ...): about 120 modules, 0.1 CPU-s of
    # each render in a fork (more where their bytecode was never written), paid once per
    # worker here. Not the pygments styles of a11y_pygments, which the theme loads while it
    # renders: importing one configures the root logger (logging.basicConfig), and a build
    # that did so before executing its chapters would print papermill's log.
    *(f"sphinx.builders.{name}" for name in _SPHINX_BUILDERS),
    *(f"sphinx.domains.{name}" for name in _SPHINX_DOMAINS),
    "sphinx.directives.code",
    "sphinx.directives.other",
    "sphinx.directives.patches",
    "sphinx.environment.collectors.asset",
    "sphinx.environment.collectors.dependencies",
    "sphinx.environment.collectors.metadata",
    "sphinx.environment.collectors.title",
    "sphinx.environment.collectors.toctree",
    "sphinx.ext.doctest",
    "sphinx.transforms.compact_bullet_list",
    "sphinx.transforms.post_transforms.code",
    "sphinx.transforms.post_transforms.images",
    "sphinx.writers.manpage",
    "sphinx.writers.texinfo",
    "sphinx.writers.text",
    "sphinx.writers.xml",
    *(f"sphinxcontrib.{name}" for name in _SPHINXCONTRIB),
    "sphinx_external_toc.collectors",
    "sphinx_external_toc.events",
    "sphinx_jupyterbook_latex.events",
    "sphinx_jupyterbook_latex.transforms",
    "alabaster",
    "docutils.languages.en",
    "docutils.parsers.rst.directives.admonitions",
    "docutils.parsers.rst.directives.tables",
    "docutils.writers.docutils_xml",
    "docutils.writers.manpage",
    "myst_nb.core.lexers",
    "myst_nb.ext.execution_tables",
    "myst_nb.ext.glue.directives",
    "myst_nb.ext.glue.domain",
    "myst_nb.ext.glue.roles",
    "myst_parser.sphinx_ext.directives",
    "myst_parser.sphinx_ext.mathjax",
    "myst_parser.sphinx_ext.myst_refs",
    "pybtex.style.formatting.alpha",
    "pybtex.style.formatting.unsrt",
    "pybtex.style.labels",
    "IPython.lib.lexers",
    "jinja2.ext",
    "packaging.requirements",
    "packaging.tags",
    "psutil",
    "xml.dom.minidom",
    "secrets",
    "plistlib",
)
# What a command may set differently from the server's environment: the book's path and
# whatever else the engine reads from a TRAINABLE_ variable (TRAINABLE_ROOT, the kernel sandbox
# switch, the footer stamp: only claimbook reads them, and the server never imports it), and
# the name of the running test, which pytest changes in every phase of every test (the server
# started with the first one's; no preloaded package reads it).
_PER_COMMAND = ("PYTHONPATH", "PYTEST_CURRENT_TEST")
_PER_COMMAND_PREFIX = "TRAINABLE_"


def _shared(environment: dict) -> dict:
    """The variables of ``environment`` that must be the server's for a command to fork."""
    return {
        key: value
        for key, value in environment.items()
        if key not in _PER_COMMAND and not key.startswith(_PER_COMMAND_PREFIX)
    }


_SERVER = r"""
import importlib, json, os, sys, traceback
base_path = [entry for entry in sys.path if entry]  # '' is the server's working directory
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # a stray print must not corrupt the replies


def child(request):
    import io, runpy, threading, atexit
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name in ((0, os.devnull), (1, request["stdout"]), (2, request["stderr"])):
        os.dup2(os.open(name, os.O_RDONLY if fd == 0 else os.O_WRONLY), fd)
    # The streams a fresh interpreter has on files: block-buffered stdout, line-buffered
    # stderr with backslashreplace.
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        errors="backslashreplace", line_buffering=True,
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    python_path = [e for e in request["env"].get("PYTHONPATH", "").split(os.pathsep) if e]
    sys.path[:] = [request["cwd"], *python_path, *base_path]
    sys.argv = ["-m", *request["argv"]]
    try:
        runpy.run_module("claimbook", run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as stop:
        code = stop.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    # What the interpreter does on exit: join non-daemon threads, run atexit handlers.
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status & 0xFF)


for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(request)
    replies.write(json.dumps({"pid": pid}).encode() + b"\n")
    replies.flush()
    _, status, usage = os.wait4(pid, 0)
    reply = {"status": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime}
    replies.write(json.dumps(reply).encode() + b"\n")
    replies.flush()
"""


class Preloaded:
    """One preloaded server; :meth:`run` is ``subprocess.run`` of ``python -m claimbook``."""

    def __init__(self, modules: tuple[str, ...] = PRELOAD) -> None:
        self.environment = _shared(dict(os.environ))
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVER, json.dumps(list(modules))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.environment,
            cwd=tempfile.gettempdir(),
        )
        self._replies = self.process.stdout
        self.cpu_seconds = 0.0
        self.forked = 0  # commands run in a fork (the rest ran as plain subprocesses)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a server that ended has a broken pipe
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()

    def _reply(self, timeout: float | None) -> dict | None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._replies, selectors.EVENT_READ)
            if not selector.select(timeout):
                return None
        line = self._replies.readline()
        if not line:
            raise RuntimeError("the preloaded build server ended")
        return json.loads(line)

    def run(
        self, argv: list[str], cwd: Path, env: dict, timeout: float
    ) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "claimbook", *argv]
        rest = _shared(env)
        if rest != self.environment or self.process.poll() is not None:
            return _plain(command, cwd, env, timeout)
        with tempfile.TemporaryDirectory() as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            out.touch()
            err.touch()
            request = {
                "argv": argv,
                "cwd": str(cwd),
                "env": env,
                "stdout": str(out),
                "stderr": str(err),
            }
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
            pid = self._reply(None)["pid"]  # after the preload, on the first command
            reply = self._reply(timeout)
            if reply is None:
                os.kill(pid, signal.SIGKILL)
                self._reply(None)
                raise subprocess.TimeoutExpired(command, timeout, out.read_text(), err.read_text())
            self.cpu_seconds += reply["cpu"]  # the command's own (not its children's)
            self.forked += 1
            return subprocess.CompletedProcess(
                command, reply["status"], out.read_text(), err.read_text()
            )


def _plain(command, cwd, env, timeout) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


_server: Preloaded | None = None


def run(argv: list[str], cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """``python -m claimbook *argv`` in ``cwd`` with ``env``, as ``subprocess.run`` would
    (output captured as text), in a fork of this process's preloaded server."""
    global _server
    if os.environ.get("TRAINABLE_TEST_PRELOAD", "1") == "0":
        return _plain([sys.executable, "-m", "claimbook", *argv], cwd, env, timeout)
    if _server is None:
        _server = Preloaded()
    return _server.run(argv, cwd, env, timeout)


def close() -> None:
    """End this process's server, if it started one."""
    global _server
    if _server is not None:
        _server.close()
        _server = None
