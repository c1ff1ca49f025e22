"""The one exception hierarchy: as its docstring draws it, with one-line messages."""

from __future__ import annotations

import codecs
import errno
import inspect
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref import errors
from serialref.errors import (
    ConfigError,
    LineLostError,
    ProgrammingError,
    ProtocolError,
    RecordError,
    SerialrefError,
    escape,
    recorder_error,
)

_DRAWN = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+)(?:\((?P<extra>\w+)\))?")
_BUILTINS = {"ValueError": ValueError, "OSError": OSError, "RuntimeError": RuntimeError}


def drawn_tree() -> dict[str, tuple[str | None, str | None]]:
    """{class: (parent drawn above it, builtin base in parentheses)} from the docstring."""
    assert errors.__doc__ is not None
    drawing = errors.__doc__.split("::", 1)[1].lstrip("\n")
    tree: dict[str, tuple[str | None, str | None]] = {}
    stack: list[tuple[int, str]] = []  # (column of the name, name)
    for line in drawing.splitlines():
        if line and not line.startswith("    "):
            break  # the drawing is over: the text goes on
        found = _DRAWN.match(line[4:])
        if found is None:
            continue  # a blank line, or a comment's second line
        column = len(found.group("indent"))
        while stack and stack[-1][0] >= column:
            stack.pop()
        parent = stack[-1][1] if stack and column else None
        tree[found.group("name")] = (parent, found.group("extra"))
        stack.append((column, found.group("name")))
    return tree


def test_the_drawing_names_every_exception_of_the_module() -> None:
    declared = {
        name for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, Exception)
        and value.__module__ == errors.__name__
    }  # fmt: skip
    assert set(drawn_tree()) == declared


@pytest.mark.parametrize("name", sorted(drawn_tree()))
def test_each_exception_has_the_bases_drawn(name: str) -> None:
    parent, extra = drawn_tree()[name]
    cls = getattr(errors, name)
    expected = []
    if parent is not None:
        expected.append(getattr(errors, parent))
    if extra is not None:
        expected.append(_BUILTINS[extra])
    if not expected:
        expected.append(Exception)
    assert cls.__bases__ == tuple(expected)


def test_a_programming_error_is_no_user_error() -> None:
    assert not issubclass(ProgrammingError, SerialrefError)
    assert issubclass(ProgrammingError, RuntimeError)
    assert drawn_tree()["SerialrefError"] == (None, None)


def test_all_lists_every_public_name() -> None:
    public = {
        name for name, value in vars(errors).items()
        if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == errors.__name__
    }  # fmt: skip
    assert set(errors.__all__) == public


# --- escape ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (b"refcom reset;", "refcom reset;"),
        ("refcom reset;", "refcom reset;"),
        (b"\x1b[2J", "\\x1b[2J"),
        (b"a\\b", "a\\\\b"),
        (b"\r\n\t", "\\r\\n\\t"),
        (b"\x00\x7f\xff", "\\x00\\x7f\\xff"),
        ("Käse", "K\\xc3\\xa4se"),
        ("\x9b31m", "\\xc2\\x9b31m"),  # the C1 control sequence introducer, as UTF-8
        (b"", ""),
    ],
)
def test_escape(raw: bytes | str, shown: str) -> None:
    assert escape(raw) == shown


@given(st.binary())
def test_escape_is_printable_and_unambiguous(raw: bytes) -> None:
    shown = escape(raw)
    assert all(0x20 <= ord(char) <= 0x7E for char in shown)
    assert codecs.escape_decode(shown)[0] == raw  # type: ignore[attr-defined]


# --- messages --------------------------------------------------------------------------------


def test_config_error_names_the_key_and_the_file() -> None:
    error = ConfigError("match.games", "must be at least 1, got 0", source="club.toml")
    assert str(error) == "club.toml: match.games: must be at least 1, got 0"
    assert (error.key, error.reason, error.source) == (
        "match.games", "must be at least 1, got 0", "club.toml",
    )  # fmt: skip
    assert str(ConfigError("tc", "empty time control")) == "tc: empty time control"
    assert str(ConfigError("", "no ports given")) == "no ports given"
    assert isinstance(error, ValueError)


def test_protocol_errors_keep_the_port_and_the_raw_line_escaped() -> None:
    error = ProtocolError("not a record", port="a", raw=b"\x1b]0;owned\x07")
    assert (str(error), error.port, error.raw) == ("not a record", "a", "\\x1b]0;owned\\x07")
    assert ProtocolError("quiet").raw == ""


def test_record_errors_name_the_column() -> None:
    error = RecordError("expected ';'", column=17, port="b", raw="e4 e5")
    assert str(error) == "column 17: expected ';'"
    assert (error.reason, error.column, error.port, error.raw) == ("expected ';'", 17, "b", "e4 e5")
    assert str(RecordError("empty line")) == "empty line"
    assert isinstance(error, ValueError)


def test_errors_are_caught_as_the_builtin_a_caller_expects() -> None:
    with pytest.raises(OSError, match="cable unplugged"):
        raise LineLostError("cable unplugged")
    with pytest.raises(SerialrefError):
        raise errors.EngineError("stockfish exited")


# --- recorder_error --------------------------------------------------------------------------


def test_recorder_error_names_the_file_and_the_cause(tmp_path: Path) -> None:
    path = tmp_path / "match.pgn"
    error = recorder_error("write", path, OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(error, errors.RecorderError)
    assert str(error) == f"cannot write {path}: No space left on device"


def test_recorder_error_says_which_directory_to_create(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "match.jsonl"
    error = recorder_error("open", path, FileNotFoundError(errno.ENOENT, "No such file"))
    assert str(error) == (
        f"cannot open {path}: No such file (create the directory {str(path.parent)!r} first)"
    )


def test_recorder_error_gives_no_hint_when_the_directory_is_there(tmp_path: Path) -> None:
    path = tmp_path / "match.jsonl"
    error = recorder_error("read", path, FileNotFoundError(errno.ENOENT, "No such file"))
    assert str(error) == f"cannot read {path}: No such file"


def test_recorder_error_without_a_strerror_uses_the_exception_text(tmp_path: Path) -> None:
    error = recorder_error("sync", tmp_path / "j", OSError("device went away"))
    assert str(error) == f"cannot sync {tmp_path / 'j'}: device went away"
