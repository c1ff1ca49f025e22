"""serialref.appliance.config: the TOML file, command-line overrides and one-line errors."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from serialref.appliance.config import (
    DEFAULT_CONFIG_PATH,
    check_config,
    load_config,
    missing_for_run,
    require_port_paths,
)
from serialref.appliance.options import PORT_KEYS, TOP_LEVEL_KEYS
from serialref.appliance.values import STANDARD_START
from serialref.errors import ConfigError, InputError
from serialref.referee.settings import OnInfraction
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address
from serialref.wire.transport import LineDelay

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "match.toml"

PORTS = """
[ports.a]
path = "/dev/serialref/a"
[ports.b]
path = "/dev/serialref/b"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "match.toml"
    path.write_text(text, encoding="utf-8")
    return path


def rejection(path: Path) -> str:
    """The message `serialref config check` would print after the file's name, on one line."""
    with pytest.raises(ConfigError) as caught:
        check_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert caught.value.source == str(path)
    return message.removeprefix(f"{path}: ")


# --- the shipped example and the defaults ------------------------------------------------

def test_shipped_example_is_accepted() -> None:
    config = check_config(EXAMPLE)
    assert (config.port_a.path, config.port_b.path) == ("/dev/serialref/a", "/dev/serialref/b")
    assert config.tc.text == "300+3"
    assert config.port_a.settings.baudrate == 9600
    assert config.port_a.newline == b"\r\n"


def test_example_documents_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    for key in TOP_LEVEL_KEYS:
        if key != "ports":
            assert f"\n{key} = " in text, key
    for key in PORT_KEYS:
        assert f"\n{key} = " in text or f"\n# {key} = " in text, key


def test_defaults_without_a_file() -> None:
    config = load_config(None)
    assert config.games == 1
    assert config.tc == TimeControl.parse("300+3")
    assert (config.reset_delay, config.conclude_delay) == (5.0, 5.0)
    assert config.on_infraction is OnInfraction.FORFEIT
    assert config.rejoin_window == 0.0
    assert config.site == socket.gethostname()
    assert config.log_level == "info"
    assert (config.fen, config.openings, config.pgn, config.journal, config.replicate) == (
        None, None, None, None, None)
    assert config.start_positions == STANDARD_START
    assert config.port_a.path is None
    assert config.port_a.name is None
    settings = config.port_b.settings
    assert (settings.baudrate, settings.bytesize, settings.parity, settings.stopbits) == (
        9600, 8, "N", 1)
    assert config.port_b.newline == b"\r\n"


def test_default_path_is_where_the_unit_looks() -> None:
    unit = (EXAMPLE.parent.parent / "systemd" / "serialref.service").read_text(encoding="utf-8")
    assert f"--config {DEFAULT_CONFIG_PATH}" in unit


# --- precedence ------------------------------------------------------------------------

def test_command_line_wins_over_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'games = 4\ntc = "60+1"\n' + PORTS)
    config = load_config(path, {"games": 2, "tc": None, "port_a": "/dev/pts/7"})
    assert config.games == 2
    assert config.tc.text == "60+1"
    assert config.port_a.path == "/dev/pts/7"
    assert config.port_b.path == "/dev/serialref/b"


def test_port_table_overrides_top_level_and_command_line_overrides_both(tmp_path: Path) -> None:
    text = 'baud = 4800\nnewline = "lf"\n' + PORTS + "baud = 19200\n"
    config = load_config(write(tmp_path, text))
    assert config.port_a.settings.baudrate == 4800
    assert config.port_b.settings.baudrate == 19200
    assert config.port_a.newline == config.port_b.newline == b"\n"
    config = load_config(write(tmp_path, text), {"baud": 2400, "newline": "crlf"})
    assert config.port_a.settings.baudrate == config.port_b.settings.baudrate == 2400
    assert config.port_b.newline == b"\r\n"


def test_names_come_from_ports_tables_or_options(tmp_path: Path) -> None:
    path = write(tmp_path, PORTS.replace('[ports.b]', 'name = "Deep Thought"\n[ports.b]'))
    config = load_config(path, {"name_b": "Stockfish"})
    assert (config.port_a.name, config.port_b.name) == ("Deep Thought", "Stockfish")


def test_serial_settings_reach_port_settings(tmp_path: Path) -> None:
    text = PORTS + ('bytesize = 7\nparity = "E"\nstopbits = 2\nrtscts = true\n'
                    'line_delay = "off"\nwrite_timeout = 2.5\n')
    settings = load_config(write(tmp_path, text)).port_b.settings
    assert (settings.bytesize, settings.parity, settings.stopbits) == (7, "E", 2)
    assert settings.rtscts is True
    assert settings.xonxoff is False
    assert (settings.line_delay, settings.write_timeout) == (LineDelay.OFF, 2.5)


def test_empty_strings_mean_not_given_and_paths_become_paths(tmp_path: Path) -> None:
    openings = tmp_path / "book.epd"
    openings.write_text("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n")
    text = f'pgn = "out.pgn"\njournal = ""\nopenings = "{openings}"\nreplicate = "[::1]:7600"\n'
    config = load_config(write(tmp_path, text))
    assert config.pgn == Path("out.pgn")
    assert config.journal is None
    assert config.openings is not None
    assert config.openings.source == str(openings)
    assert [opening.fen for opening in config.openings.openings] == [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"]
    assert config.start_positions is config.openings
    assert config.replicate == Address("::1", 7600)


def test_the_openings_keys_deal_out_the_book(tmp_path: Path) -> None:
    book = tmp_path / "book.pgn"
    book.write_text("".join(f'[Event "{n}"]\n\n1. {move} e5 2. Nf3 Nc6 *\n\n'
                            for n, move in enumerate(["e4", "d4", "c4", "Nc3"])))  # fmt: skip
    text = (f'openings = "{book}"\nopenings_order = "random"\nopenings_seed = 9\n'
            "openings_start = 2\nopenings_plies = 2\n")  # fmt: skip
    config = load_config(write(tmp_path, text))
    start = config.start_positions
    assert start.source == f"{book}, random order (seed 9), from opening 2, 2 plies"
    assert sorted(opening.moves[0] for opening in start.openings) == ["Nc3", "c4", "d4", "e4"]
    assert {len(opening.moves) for opening in start.openings} == {2}
    again = load_config(None, {"openings": book, "openings_order": "random", "openings_seed": 9,
                               "openings_start": 2, "openings_plies": 2})  # fmt: skip
    assert again.start_positions == start
    other = load_config(None, {"openings": book, "openings_order": "random",
                               "openings_seed": 10})  # fmt: skip
    assert [o.moves[0] for o in other.start_positions.openings] != [
        o.moves[0] for o in load_config(None, {"openings": book}).start_positions.openings]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('openings_order = "shuffled"', "openings_order: expected one of 'sequential', 'random'"),
        ("openings_start = 0", "openings_start: expected a whole number >= 1, got 0"),
        ("openings_plies = -1", "openings_plies: expected a whole number, got -1"),
        ("openings_seed = -1", "openings_seed: expected a whole number from 0 to 1844"),
    ],
)
def test_bad_openings_keys_are_named(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(write(tmp_path, text + "\n"))


def test_a_fen_is_read_once_and_kept_as_written() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - -"
    config = load_config(None, {"fen": fen})
    assert config.fen is not None
    assert config.fen.source == fen  # the match's identity in its journal names it so
    assert [opening.fen for opening in config.fen.openings] == ["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]
    assert config.start_positions is config.fen


def test_require_port_paths_names_the_missing_port() -> None:
    config = load_config(None, {"port_a": "loop://"})
    with pytest.raises(ConfigError, match=r"^ports\.b\.path: missing"):
        require_port_paths(config)
    assert require_port_paths(load_config(None, {"port_a": "a", "port_b": "b"})) == ("a", "b")


# --- rejected files: one clear line each ---------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('games = "3"\n', "games: expected a whole number >= 1, got '3'"),
        ("games = 0\n", "games: expected a whole number >= 1, got 0"),
        ("games = true\n", "games: expected a whole number >= 1, got true"),
        ("reset_delay = -1\n", "reset_delay: expected seconds >= 0, got -1"),
        ('conclude_delay = "5"\n', "conclude_delay: expected a number, got '5'"),
        ("rejoin_window = nan\n", "rejoin_window: expected a finite number, got nan"),
        ('newline = "cr"\n', "newline: expected one of 'crlf', 'lf', got 'cr'"),
        ('on_infraction = "warn"\n',
         "on_infraction: expected one of 'forfeit', 'fault', got 'warn'"),
        ('log_level = "loud"\n', "log_level: expected one of 'debug', 'info', 'warning', 'error'"),
        ("event = 7\n", "event: expected a string, got 7"),
        ('replicate = "standby"\n', "replicate: expected HOST:PORT"),
        ('replicate = "host:99999"\n', "replicate: expected HOST:PORT"),
        ('replicate = "::1:7600"\n', "replicate: expected HOST:PORT"),
        ('tc = "5 minutes"\n', "tc: '5 minutes'"),
        ("tc = 300\n", "tc: expected a string, got 300"),
        ('fen = "not a fen"\n', "fen: 'not a fen' is not a FEN"),
        ('fen = "4k2R/8/8/8/8/8/8/4K3 w - - 0 1"\n',
         "fen: '4k2R/8/8/8/8/8/8/4K3 w - - 0 1': not a legal position to play from: "
         "the side not to move is in check"),
        ('fen = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"\n',
         "fen: '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1': the game is already over there (stalemate)"),
        ('fen = "4k3/8/8/8 w - - 0 1"\n',
         "fen: '4k3/8/8/8 w - - 0 1' is not a FEN: expected 8 rows in position part of fen"),
        ('openings = "missing.epd"\n', "openings: 'missing.epd' is not a file"),
        ("gamez = 3\n", "gamez: unknown key; did you mean 'games'?"),
        ("zzz = 3\n", "zzz: unknown key; expected one of games, tc,"),
    ],
)
def test_bad_top_level_values_are_rejected(tmp_path: Path, text: str, expected: str) -> None:
    assert rejection(write(tmp_path, text + PORTS)).startswith(expected)


@pytest.mark.parametrize(
    ("port_text", "expected"),
    [
        ('parity = "X"\n', "ports.b.parity: must be one of N, E, O, M, S, not 'X'"),
        ("parity = 1\n", "ports.b.parity: expected a string, got 1"),
        ("bytesize = 9\n", "ports.b.bytesize: must be 5 to 8, not 9"),
        ("stopbits = 3\n", "ports.b.stopbits: must be 1, 1.5 or 2, not 3"),
        ("baud = 9600.0\n", "ports.b.baud: expected a whole number, got 9600.0"),
        ("baud = 0\n", "ports.b.baud: must be positive, not 0"),
        ('rtscts = "yes"\n', "ports.b.rtscts: expected true or false, got 'yes'"),
        ('newline = "CRLF"\n', "ports.b.newline: expected one of 'crlf', 'lf', got 'CRLF'"),
        ('line_delay = "always"\n',
         "ports.b.line_delay: expected one of 'auto', 'on', 'off', got 'always'"),
        ("write_timeout = 0\n", "ports.b.write_timeout: must be positive, not 0"),
        ("path = 3\n", "ports.b.path: expected a string, got 3"),
        ("baudrate = 9600\n", "ports.b.baudrate: unknown key; did you mean 'baud'?"),
    ],
)
def test_bad_port_values_are_rejected(tmp_path: Path, port_text: str, expected: str) -> None:
    path_b = "" if port_text.startswith("path") else 'path = "/dev/serialref/b"\n'
    text = '[ports.a]\npath = "/dev/serialref/a"\n[ports.b]\n' + port_text + path_b
    assert rejection(write(tmp_path, text)).startswith(expected)


def test_ports_must_be_tables(tmp_path: Path) -> None:
    assert rejection(write(tmp_path, "ports = 3\n")) == (
        "ports: expected a table ([ports.a], [ports.b]), got 3")
    assert rejection(write(tmp_path, "[ports]\na = 3\n")) == (
        "ports.a: expected a table [ports.a], got 3")


def test_top_level_baud_error_names_the_top_level_key(tmp_path: Path) -> None:
    assert rejection(write(tmp_path, 'baud = "fast"\n' + PORTS)).startswith(
        "baud: expected a whole number, got 'fast'")


def test_unknown_port_table_is_rejected(tmp_path: Path) -> None:
    message = rejection(write(tmp_path, PORTS + '[ports.c]\npath = "/dev/ttyUSB2"\n'))
    assert message == "ports.c: unknown port; expected 'a' or 'b'"


def test_check_accepts_what_run_accepts_and_names_what_is_still_missing(tmp_path: Path) -> None:
    path = write(tmp_path, '[ports.a]\npath = "/dev/serialref/a"\n')
    config = check_config(path)
    assert config.port_b.path is None
    assert missing_for_run(config) == ("PORT_B",)
    assert missing_for_run(check_config(write(tmp_path, "games = 2\n"))) == ("PORT_A", "PORT_B")
    assert missing_for_run(check_config(write(tmp_path, PORTS))) == ()
    with pytest.raises(ConfigError, match=r"^ports\.b\.path: missing;"):
        require_port_paths(config)


def test_the_same_port_twice_is_rejected(tmp_path: Path) -> None:
    assert rejection(write(tmp_path, PORTS.replace("/b", "/a"))) == (
        "player A and player B are both given '/dev/serialref/a'; "
        "each player needs a port of its own"
    )
    device = tmp_path / "ttyUSB0"
    device.touch()
    (tmp_path / "by-path").symlink_to(device)
    config = load_config(None, {"port_a": str(device), "port_b": str(tmp_path / "by-path")})
    with pytest.raises(ConfigError, match=rf"are the same port \({re.escape(repr(str(device)))}\)"):
        require_port_paths(config)
    for url in ("socket://localhost:7000", "rfc2217://localhost:7000"):
        with pytest.raises(ConfigError, match="both given"):
            require_port_paths(load_config(None, {"port_a": url, "port_b": url}))
    # Every loop:// is a line of its own.
    assert require_port_paths(load_config(None, {"port_a": "loop://", "port_b": "loop://"}))


def test_a_wrong_value_names_its_file_and_a_wrong_option_does_not(tmp_path: Path) -> None:
    path = write(tmp_path, "games = 0\n" + PORTS)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: games: expected a whole number >= 1, got 0"
    with pytest.raises(ConfigError) as caught:
        load_config(path, {"games": -1})
    assert str(caught.value) == "--games: expected a whole number >= 1, got -1"


def test_fen_and_openings_together_are_rejected(tmp_path: Path) -> None:
    openings = tmp_path / "book.pgn"
    openings.write_text("1. e4 *\n")
    text = f'fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"\nopenings = "{openings}"\n'
    assert rejection(write(tmp_path, text + PORTS)).startswith(
        "openings: cannot be combined with fen")


def test_toml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, 'games = 2\ntc = "300+3\n')
    message = rejection(path)
    assert message.startswith("line 2, column ")
    assert "invalid TOML" in message


@pytest.mark.parametrize("name", ["nowhere.toml", "."])
def test_an_unreadable_file_is_an_input_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError) as caught:
        check_config(tmp_path / name)
    reason = "No such file or directory" if name != "." else "Is a directory"
    assert str(caught.value) == (
        f"cannot read configuration file {str(tmp_path / name)!r}: {reason}"
    )


def test_file_that_is_not_utf8_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "match.toml"
    path.write_bytes(b'games = 1\nevent = "Caf\xe9"\n')
    assert rejection(path) == "line 2: not UTF-8 text"


# --- overrides -------------------------------------------------------------------------------

def test_bad_override_names_the_option() -> None:
    with pytest.raises(ConfigError, match=r"^--reset-delay: expected seconds >= 0, got -2$"):
        load_config(None, {"reset_delay": -2})
    with pytest.raises(ConfigError, match=r"^--baud: must be positive, not 0$"):
        load_config(None, {"baud": 0})
    with pytest.raises(ConfigError, match=r"^--tc: "):
        load_config(None, {"tc": "40/"})


def test_override_rescues_a_bad_file_value(tmp_path: Path) -> None:
    path = write(tmp_path, "games = 0\n" + PORTS)
    assert load_config(path, {"games": 3}).games == 3


def test_unknown_override_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"^gamez: not an option of serialref run$"):
        load_config(None, {"gamez": 3})


def test_path_overrides_may_be_paths(tmp_path: Path) -> None:
    config = load_config(None, {"pgn": tmp_path / "games.pgn", "journal": None})
    assert config.pgn == tmp_path / "games.pgn"
    assert config.journal is None


# --- adjudication, in cutechess-cli's words ----------------------------------------------

TABLES = Path(__file__).resolve().parents[1] / "fixtures" / "syzygy"


def test_adjudication_is_read_from_the_file_and_the_command_line(tmp_path: Path) -> None:
    from serialref.referee.adjudicator import DrawRule, ResignRule

    top = f'draw = "movenumber=40 movecount=8 score=10"\nmaxmoves = 150\ntb = "{TABLES}"\n'
    path = write(tmp_path, top + PORTS)
    config = load_config(path, {"resign": ["movecount=3", "score=1000", "twosided=true"],
                                "tb_pieces": 4})  # fmt: skip
    assert config.draw == DrawRule(move_number=40, move_count=8, score=10)
    assert config.resign == ResignRule(move_count=3, score=1000, two_sided=True)
    assert (config.maxmoves, config.tb, config.tb_pieces) == (150, (TABLES,), 4)
    assert (load_config(None).draw, load_config(None).tb) == (None, None)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('resign = "movecount=3"', "resign: score missing in 'movecount=3'"),
        ('draw = "movenumber=40 movecount=8 score=ten"', "draw: score must be a whole number"),
        ('tb = "/no/such/tables"', "tb: '/no/such/tables' is not a directory"),
        ("tb_pieces = 2", "tb_pieces: expected a whole number >= 3, got 2"),
    ],
)
def test_wrong_adjudication_is_one_error_naming_the_key(
    tmp_path: Path, line: str, message: str
) -> None:
    assert rejection(write(tmp_path, line + "\n" + PORTS)).startswith(message)


def test_a_directory_without_tables_is_refused(tmp_path: Path) -> None:
    (tmp_path / "KQvK.txt").write_text("no table", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^--tb: .* holds no Syzygy tables \(.rtbw, .rtbz\)"):
        load_config(None, {"tb": str(tmp_path)})
