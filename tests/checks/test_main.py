"""``python -m checks``: the usage for a command it does not know, one line for a failure."""

import errno

import pytest

from checks import __main__ as checks_main


@pytest.mark.parametrize("argv", [[], ["bench"], ["--pip"], ["binder-check"]])
def test_an_unknown_or_missing_command_prints_the_usage_and_exits_2(argv, capsys):
    assert checks_main.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == checks_main.USAGE + "\n"


def test_help_prints_the_usage_and_exits_0(capsys):
    assert checks_main.main(["--help"]) == 0
    assert capsys.readouterr().out == checks_main.USAGE + "\n"


def test_the_commands_options_are_their_modules(capsys):
    with pytest.raises(SystemExit) as stopped:
        checks_main.main(["binder", "--against", "/nonexistent/folder"])
    assert stopped.value.code == 2
    assert "python -m checks binder: error: --against" in capsys.readouterr().err


def test_a_failure_the_check_does_not_handle_ends_in_one_line(monkeypatch, capsys):
    def fails(argv):
        raise OSError(errno.ENOSPC, "No space left on device", "/x/copy")

    monkeypatch.setitem(checks_main.COMMANDS, "matrix", (fails, "running the CI jobs locally"))
    assert checks_main.main(["matrix", "--keep"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("make: running the CI jobs locally: /x/copy: No space left on device")
