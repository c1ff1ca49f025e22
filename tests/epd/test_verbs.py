"""The EPD file verbs over the fixture suites, odd bytes, and the command line."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import processes
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.epd.verbs import check_stream, normalize_stream, purge_stream
from serialref.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "epd"
FIXTURE_FILES = sorted(FIXTURES.glob("*.epd"))
REPORT_RE = re.compile(r"(?P<name>[^:]+):(?P<line>[0-9]+)(?::(?P<column>[0-9]+))?: (?P<reason>.+)")
ROOT = Path(__file__).resolve().parents[2]

Verb = Callable[..., int]


def run(verb: Verb, data: bytes, *extra: str, name: str = "in.epd") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rejected = verb(*extra, source=io.BytesIO(data), name=name, out=out, err=err)
    return rejected, out.getvalue(), err.getvalue()


def reports(err: str) -> list[re.Match[str]]:
    lines = err.splitlines()
    matches = [REPORT_RE.fullmatch(line) for line in lines]
    assert all(matches), err
    return [match for match in matches if match is not None]


def test_fixtures_are_present() -> None:
    assert {path.name for path in FIXTURE_FILES} >= {
        "bratko-kopec.epd", "kaufman.epd", "lct2.epd", "perft.epd", "silent-but-deadly.epd"
    }


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda path: path.name)
@pytest.mark.parametrize(
    ("verb", "extra"),
    [(normalize_stream, ()), (purge_stream, ("id",)), (check_stream, ())],
    ids=["normalize", "purge", "check"],
)
def test_every_fixture_record_is_written_or_rejected_with_a_reason(
    path: Path, verb: Verb, extra: tuple[str, ...]
) -> None:
    data = path.read_bytes()
    records = [line for line in data.split(b"\n") if line.strip(b" \0")]
    rejected, out, err = run(verb, data, *extra, name=path.name)
    found = reports(err)
    assert len(found) == rejected
    assert len(out.splitlines()) + rejected == len(records)
    assert all(match["name"] == path.name and match["reason"] for match in found)
    if verb is purge_stream:
        assert not any(" id " in line for line in out.splitlines())
    # Normalised output is a fixed point: reading it again changes nothing.
    again_rejected, again, again_err = run(normalize_stream, out.encode())
    assert (again_rejected, again, again_err) == (0, out, "")


def fixture_line(name: str, number: int) -> str:
    return (FIXTURES / name).read_bytes().split(b"\n")[number - 1].decode("ascii")


@pytest.mark.parametrize(
    ("name", "number", "fragment", "reason"),
    [
        ("bratko-kopec.epd", 1, "+",
         "bm: operand '+' is a check mark separated from its move by a blank"),
        ("kaufman.epd", 4, "-1",
         "en passant field '-1' is neither '-' nor a square (a missing blank after '-'?)"),
        ("kaufman.epd", 6, "Bcx3", "bm: 'Bcx3' is not a legal move"),
        ("kaufman.epd", 3, "Ne5", "am: 'Ne5' is ambiguous in this position"),
        ("lct2.epd", 9, "c0", "id takes one operand; a ';' seems to be missing before 'c0'"),
    ],
)
def test_known_bad_fixture_lines_are_rejected_with_the_right_reason(
    name: str, number: int, fragment: str, reason: str
) -> None:
    _, _, err = run(normalize_stream, (FIXTURES / name).read_bytes(), name=name)
    column = fixture_line(name, number).index(fragment) + 1
    assert f"{name}:{number}:{column}: {reason}" in err


def test_known_good_fixture_lines_normalise() -> None:
    _, out, _ = run(normalize_stream, (FIXTURES / "perft.epd").read_bytes())
    assert out.splitlines()[0] == (
        "k7/6p1/8/8/8/8/7P/K7 b - - D1 5; D2 25; D3 161; D4 1035; D5 7574; D6 55338; "
        "fmvn 1; hmvc 0;"
    )
    _, out, _ = run(normalize_stream, (FIXTURES / "bratko-kopec.epd").read_bytes())
    assert "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - bm d5; id BK.02;" in out


def test_check_names_python_chess_reasons_at_the_field_to_look_at() -> None:
    data = (
        b"4k3/8/8/8/8/8/8/4K2K w - -\n"
        b"4k3/4R3/8/8/8/8/8/4K3 w - -\n"
        b"4k3/8/8/8/8/8/8/4K3 w - -\n"
        b"  4k3/pppppppp/p7/8/8/8/8/4K3 w - -\n"
        b"4k3/8/8/8/8/8/8/4K3 w \t K -\n"
        b"4k3/8/8/8/8/8/8/4K3 b - e3 ; bm Kd7;\n"
    )
    rejected, out, err = run(check_stream, data)
    assert rejected == 5
    assert out == "4k3/8/8/8/8/8/8/4K3 w - -\n"
    assert err.splitlines() == [
        "in.epd:1:1: illegal position: too many kings",
        "in.epd:2:23: illegal position: the side not to move is in check",
        "in.epd:4:3: illegal position: too many black pawns",
        "in.epd:5:25: illegal position: castling rights without king and rook at home",
        "in.epd:6:25: illegal position: en passant square without a pawn that just moved two",
    ]


def test_check_reports_lct2_castling_rights() -> None:
    data = (FIXTURES / "lct2.epd").read_bytes()
    _, _, err = run(check_stream, data, name="lct2.epd")
    column = fixture_line("lct2.epd", 20).index(" q ") + 2
    assert (
        f"lct2.epd:20:{column}: illegal position: castling rights without king and rook at home"
        in err
    )


def test_purge_removes_one_opcode_and_normalises() -> None:
    data = b"8/8/8/8/8/8/8/k6K w - - 0 1 ; id x ; c0 \"y\"\n"
    rejected, out, _ = run(purge_stream, data, "hmvc")
    assert rejected == 0
    assert out == '8/8/8/8/8/8/8/k6K w - - c0 "y"; fmvn 1; id x;\n'


@pytest.mark.parametrize("opcode", ["", "1x", "a b", "a" * 16, "x;"])
def test_purge_refuses_a_malformed_opcode_as_a_config_error(opcode: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run(purge_stream, b"", opcode)
    assert caught.value.key == "opcode"


def test_odd_bytes_and_line_ends() -> None:
    data = (
        b"8/8/8/8/8/8/8/k6K w - - c0 \"caf\xc3\xa9\";\r\n"
        b"\r"
        b"8/8/8/8/8/8/8/k6K w - - a\x1b[31m;\r"
        b"   \t\0\n"
        b"8/8/8/8/8/8/8/k6K w - - D1 1;"
    )
    rejected, out, err = run(normalize_stream, data)
    assert rejected == 2
    assert out == "8/8/8/8/8/8/8/k6K w - - D1 1;\n"
    first, second = reports(err)
    assert (first["line"], first["column"]) == ("1", "32")
    assert "\\xc3" in first["reason"] and "\xc3" not in err
    assert (second["line"], second["column"]) == ("3", "26")
    assert second["reason"] == "character \\x1b is not printable ASCII"
    assert "\x1b" not in err


@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data: bytes) -> None:
    for verb, extra in ((normalize_stream, ()), (purge_stream, ("id",)), (check_stream, ())):
        rejected, out, err = run(verb, data, *extra)
        assert rejected == len(reports(err))
        assert out.isascii()


@given(
    st.lists(
        st.builds(
            lambda tail: b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - " + tail,
            st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b" ")),
        ),
        max_size=5,
    )
)
def test_near_epd_bytes_never_raise(lines: list[bytes]) -> None:
    rejected, out, err = run(check_stream, b"\n".join(lines))
    assert rejected == len(reports(err))
    assert run(normalize_stream, out.encode())[1] == out


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [sys.executable, "-m", "serialref", "epd", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "verb", [("normalize",), ("purge", "id"), ("check",)], ids=lambda verb: verb[0]
)
def test_cli_exit_codes_and_report_format(verb: tuple[str, ...], tmp_path: Path) -> None:
    good = tmp_path / "good.epd"
    good.write_bytes(b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ; bm e4\0\n\n")
    result = cli(*verb, str(good))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ")

    bad = FIXTURES / "bratko-kopec.epd"
    result = cli(*verb, str(bad))
    assert result.returncode == 1
    column = fixture_line("bratko-kopec.epd", 1).index("+") + 1
    assert result.stderr.startswith(f"{bad}:1:{column}: bm: operand '+' is a check mark")
    assert len(result.stdout.splitlines()) == 22
