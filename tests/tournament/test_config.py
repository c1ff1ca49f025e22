"""The event file: its keys, its players and the match settings it passes to every board."""

from __future__ import annotations

from pathlib import Path

import pytest

from serialref.errors import ConfigError, InputError
from serialref.sprt import SprtTest
from serialref.tournament.config import load_tournament_config
from serialref.tournament.pairings import TournamentFormat

PLAYERS = '''
[[players]]
name = "Alpha"
player = "random"
seed = 1

[[players]]
name = "Beta"
engine = "/usr/games/stockfish"
nodes = 500
options = { Threads = 1 }

[[players]]
name = "Gamma"
seat = "/dev/ttyUSB0"
notes = "the club's old PC"
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "event.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_file_is_read(tmp_path: Path) -> None:
    config = load_tournament_config(write(tmp_path, 'event = "Club"\nformat = "gauntlet"\n'
                                     'rounds = 2\ngames = 4\nconcurrency = 2\ntc = "40/60"\n'
                                     'directory = "club"\n' + PLAYERS))  # fmt: skip
    assert (config.name, config.format, config.rounds, config.games, config.concurrency) == (
        "Club", TournamentFormat.GAUNTLET, 2, 4, 2)  # fmt: skip
    assert config.directory == tmp_path / "club"
    assert config.match_settings == {"tc": "40/60"}
    alpha, beta, gamma = config.players
    assert alpha.client_arguments() == ["--player", "random", "--name", "Alpha", "--seed", "1"]
    assert beta.client_arguments() == ["--engine", "/usr/games/stockfish", "--name", "Beta",
                                       "--nodes", "500", "--option", "Threads=1"]  # fmt: skip
    assert (gamma.seat, gamma.notes) == ("/dev/ttyUSB0", "the club's old PC")
    assert len(config.pairings()) == 4


def test_a_match_may_carry_an_sprt(tmp_path: Path) -> None:
    text = 'format = "match"\nsprt = "elo0=0 elo1=10 alpha=0.1 beta=0.1"\n' + PLAYERS.split(
        "[[players]]\nname = \"Gamma\"", maxsplit=1)[0]  # fmt: skip
    assert load_tournament_config(write(tmp_path, text)).sprt == SprtTest(0, 10, 0.1, 0.1)


def test_the_standings_come_after_every_game_unless_a_rating_interval_says(
    tmp_path: Path,
) -> None:
    assert load_tournament_config(write(tmp_path, PLAYERS)).rating_interval == 1
    config = load_tournament_config(write(tmp_path, "rating_interval = 0\n" + PLAYERS))
    assert config.rating_interval == 0
    with pytest.raises(ConfigError, match="rating_interval: expected a whole number"):
        load_tournament_config(write(tmp_path, "rating_interval = -2\n" + PLAYERS))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("colour = 1\n", "colour: not a key of an event file"),
        ("port_a = '/dev/x'\n", "port_a: not a key of an event file"),
        ("tc = 'soon'\n", "tc"),
        ("concurrency = 0\n", "concurrency: must be a whole number of at least 1"),
        ("format = 'swiss'\n", "format: must be one of match, round-robin, gauntlet"),
        ("sprt = 'elo0=0 elo1=5'\n", "sprt: an SPRT needs a match"),
        ("[[players]]\nname = 'X'\nplayer = 'random'\nseat = '/dev/x'\n",
         "players\\[3\\]: give exactly one of seat, player"),
        ("[[players]]\nname = 'X'\nplayer = 'clever'\n", "players\\[3\\].player: must be random"),
        ("[[players]]\nname = 'X'\nplayer = 'random'\nseed = -1\n", "seed: must be a whole"),
        ("[[players]]\nname = 'Alpha'\nplayer = 'random'\n", "a name of its own"),
        ('[[players]]\nname = "\\u001b[2J"\nplayer = "random"\n', "a printable name"),
        ("[[players]]\nname = 'X'\nseat = '/dev/x'\nnodes = 3\n", "no client settings"),
        ("[[players]]\nname = 'Müller'\nseat = 'listen://127.0.0.1:0'\n"
         "[[players]]\nname = 'Muller'\nseat = 'listen://127.0.0.1:0'\n",
         "players\\[4\\].name: 'Muller' signs on as 'Muller', as 'Müller' does"),
        ("[[players]]\nname = '\u0301'\nseat = 'listen://127.0.0.1:0'\n",
         "players\\[3\\].name: '\u0301' has no ASCII form for a TCP seat's sign_on"),
    ],
)
def test_mistakes_are_one_error_naming_the_file_and_key(
    tmp_path: Path, text: str, reason: str
) -> None:
    # Top-level keys go before the tables; a player goes after the others.
    body = PLAYERS + text if text.startswith("[[") else text + PLAYERS
    with pytest.raises(ConfigError, match=reason) as caught:
        load_tournament_config(write(tmp_path, body))
    assert str(caught.value).startswith(str(tmp_path / "event.toml"))


def test_a_missing_file_and_bad_toml_are_clear(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_tournament_config(tmp_path / "none.toml")
    with pytest.raises(ConfigError, match="line 1, column 10: invalid TOML"):
        load_tournament_config(write(tmp_path, "format = \n"))


def test_the_shipped_example_is_a_valid_event() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "event.toml"
    config = load_tournament_config(example)
    assert config.format is TournamentFormat.ROUND_ROBIN
    assert len(config.pairings()) == 12
    assert [p.name for p in config.players if p.listen is not None] == ["Random"]


def test_the_pairings_option_prints_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    from serialref.cli import EXIT_OK, main

    example = Path(__file__).resolve().parents[2] / "examples" / "event.toml"
    assert main(["event", "--config", str(example), "--pairings"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 12
    assert lines[0].startswith("pairing   1  round  1  ")


def test_chess960_openings_are_numbers_not_a_file(tmp_path: Path) -> None:
    numbered = load_tournament_config(write(tmp_path, 'variant = "chess960"\nopenings = "0-959"\n'
                                       + PLAYERS))  # fmt: skip
    assert numbered.match_settings["openings"] == "0-959"
    (tmp_path / "book.epd").write_text("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n")
    named = load_tournament_config(write(tmp_path, 'openings = "book.epd"\n' + PLAYERS))
    assert named.match_settings["openings"] == str(tmp_path / "book.epd")


def test_the_socket_and_feeds_are_the_events_own(tmp_path: Path) -> None:
    config = load_tournament_config(write(tmp_path, 'control_socket = "ctl.sock"\n'
                                     'style12 = "127.0.0.1:5001"\nweb = "127.0.0.1:0"\n'
                                     + PLAYERS))  # fmt: skip
    assert config.control_socket == Path("ctl.sock")
    assert config.style12 is not None and config.style12.port == 5001
    assert config.web is not None and config.web.host == "127.0.0.1"
    assert not {"control_socket", "style12", "web"} & set(config.match_settings)


def test_a_bad_feed_address_is_one_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="style12"):
        load_tournament_config(write(tmp_path, 'style12 = "nowhere:port"\n' + PLAYERS))


@pytest.mark.parametrize(
    ("seat", "extra", "problem"),
    [
        ("listen://0.0.0.0:7601", "", "players\\[3\\].seat: 0.0.0.0:7601 can be reached from "
         "other machines and the seat has neither token nor address: anyone could take it"),
        ("listen://[::]:7601", "", "can be reached from other machines"),
        ("listen://192.0.2.7:7601", "", "can be reached from other machines"),
        ("listen://club.example:7601", "", "can be reached from other machines"),
        ("listen://0.0.0.0:7601", "open = 'yes'\n", "players\\[3\\].open: must be true or false"),
        ("listen://0.0.0.0:7601", "open = true\ntoken = 't'\n", "with a token or an address "
         "is not open"),
        ("/dev/ttyUSB1", "open = true\n", "players\\[3\\].open: only a listen:// seat"),
    ],
)
def test_a_seat_anyone_could_take_is_refused_unless_the_file_says_it_is_meant(
    tmp_path: Path, seat: str, extra: str, problem: str
) -> None:
    player = f'[[players]]\nname = "Delta"\nseat = "{seat}"\n{extra}'
    with pytest.raises(ConfigError, match=problem) as caught:
        load_tournament_config(write(tmp_path, PLAYERS + player))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("seat", "extra", "is_open"),
    [
        ("listen://0.0.0.0:7601", "open = true\n", True),
        ("listen://127.0.0.1:7601", "", False),
        ("listen://localhost:7601", "", False),
        ("listen://[::1]:7601", "", False),
        ("listen://0.0.0.0:7601", "token = 'club'\n", False),
        ("listen://0.0.0.0:7601", "address = '192.0.2.9'\n", False),
    ],
)
def test_a_guarded_or_loopback_or_declared_open_seat_is_taken(
    tmp_path: Path, seat: str, extra: str, is_open: bool
) -> None:
    player = f'[[players]]\nname = "Delta"\nseat = "{seat}"\n{extra}'
    delta = load_tournament_config(write(tmp_path, PLAYERS + player)).players[-1]
    assert delta.open is is_open


def test_names_in_other_alphabets_are_kept_and_may_share_an_ascii_form_off_tcp(
    tmp_path: Path,
) -> None:
    config = load_tournament_config(write(tmp_path, PLAYERS + (
        "[[players]]\nname = 'Müller'\nplayer = 'random'\n"
        "[[players]]\nname = 'Muller'\nplayer = 'greedy'\n"
        "[[players]]\nname = 'Øster'\nseat = 'listen://127.0.0.1:0'\n"
    )))  # fmt: skip
    assert [player.name for player in config.players][3:] == ["Müller", "Muller", "Øster"]


def test_adjudication_applies_to_every_board_its_tables_found_next_to_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "syzygy").mkdir()
    (tmp_path / "syzygy" / "KQvK.rtbw").write_bytes(b"")
    config = load_tournament_config(write(tmp_path, 'resign = "movecount=3 score=1000"\n'
                                     'tb = "syzygy"\n' + PLAYERS))  # fmt: skip
    assert config.match_settings["resign"] == "movecount=3 score=1000"
    assert config.match_settings["tb"] == str(tmp_path / "syzygy")
