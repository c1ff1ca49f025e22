"""``serialref event`` end to end: a double round robin of built-in players, killed and resumed.

The event runs as its own process (``python -m serialref event``) with two players on
virtual null-modem cables and two on TCP seats (one with a token, one bound to its
address), two boards at once. It is killed with SIGKILL twice while
games are under way and run again each time; in the end every pairing's games are in
the event's PGN exactly once, colours are balanced, and the standings it prints are
those an independent count of the PGN gives.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

import chess.pgn
import processes
from processes import wait_for

from serialref.cli import EXIT_INTERRUPTED
from serialref.control.client import send_request
from serialref.control.protocol import Request
from serialref.errors import ControlError
from serialref.happenings import RefereeStalled
from serialref.recorders.journal import read_journal
from serialref.referee.loop import STALL_THRESHOLD
from serialref.wire.nullmodem import null_modem_cable

# Alpha and Delta are on virtual serial cables; Beta and Gamma connect over TCP.
PLAYERS = [("Alpha", "random", 1), ("Beta", "greedy", 2), ("Gamma", "greedy", 3),
           ("Delta", "greedy", 4)]  # fmt: skip
TCP_SEATS = {
    "Beta": 'seat = "listen://127.0.0.1:0"\ntoken = "beta-token"\n',
    "Gamma": 'seat = "listen://127.0.0.1:0"\naddress = "127.0.0.1"\n',
}
GAMES_PER_PAIRING = 2
TOTAL = 6 * GAMES_PER_PAIRING
T = TypeVar("T")


def write_event(directory: Path, extra: str = "") -> Path:
    players = "".join(
        f'\n[[players]]\nname = "{name}"\nplayer = "{kind}"\nseed = {seed}\n'
        + TCP_SEATS.get(name, "")
        for name, kind, seed in PLAYERS
    )
    config = directory / "event.toml"
    config.write_text(
        'event = "Kill test"\nformat = "round-robin"\nrounds = 1\n'
        f"games = {GAMES_PER_PAIRING}\nconcurrency = 2\n"
        'tc = "30+0.3"\nreset_delay = 0.05\nconclude_delay = 0.05\ndirectory = "out"\n'
        f"{extra}{players}",
        encoding="utf-8",
    )
    return config


def start_event(config: Path, output: Path) -> subprocess.Popen[bytes]:
    with output.open("ab") as out:
        return processes.start(
            [sys.executable, "-m", "serialref", "event", "--config", str(config)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip


def finished(output: Path) -> int:
    return output.read_text(encoding="utf-8").count("Finished game ") if output.exists() else 0


def pgn_games(path: Path) -> list[chess.pgn.Headers]:
    games = []
    with path.open(encoding="utf-8") as handle:
        while (headers := chess.pgn.read_headers(handle)) is not None:
            games.append(headers)
    return games


def independent_standings(games: list[chess.pgn.Headers]) -> dict[str, tuple[float, int, int, int]]:
    """Points, wins, losses, draws of each player, counted here from the PGN's tags."""
    table: dict[str, list[float]] = {name: [0.0, 0, 0, 0] for name, _, _ in PLAYERS}
    for game in games:
        white, black, result = game["White"], game["Black"], game["Result"]
        if result == "1/2-1/2":
            for name in (white, black):
                table[name][0] += 0.5
                table[name][3] += 1
        elif result in ("1-0", "0-1"):
            winner, loser = (white, black) if result == "1-0" else (black, white)
            table[winner][0] += 1
            table[winner][1] += 1
            table[loser][2] += 1
    return {name: (row[0], int(row[1]), int(row[2]), int(row[3])) for name, row in table.items()}


def printed_standings(text: str) -> dict[str, tuple[float, int, int, int]]:
    """The final table the event printed (after its ``complete`` title line)."""
    final = text.rsplit(": complete; PGN ", maxsplit=1)[-1]
    rows = re.findall(r"^\s+\d+\s+(\w+)\s+([\d.]+)\s+\d+\s+(\d+)-(\d+)-(\d+)\s", final, re.M)
    return {name: (float(points), int(w), int(lost), int(d)) for name, points, w, lost, d in rows}


def test_a_double_round_robin_killed_twice_finishes_with_every_game_once(tmp_path: Path) -> None:
    config = write_event(tmp_path)
    output = tmp_path / "stdout.txt"
    for kill_after in (2, 6):
        event = start_event(config, output)
        try:
            wait_for(lambda n=kill_after: finished(output) >= n, f"{kill_after} games")
        finally:
            event.send_signal(signal.SIGKILL)
            event.wait()
    event = start_event(config, output)
    assert event.wait(timeout=120) == 0, output.read_text(encoding="utf-8")[-3000:]

    games = pgn_games(tmp_path / "out" / "event.pgn")
    assert len(games) == TOTAL
    pairs = Counter((game["White"], game["Black"]) for game in games)
    assert len(pairs) == TOTAL and set(pairs.values()) == {1}  # each pair, each colour, once
    whites = Counter(game["White"] for game in games)
    assert set(whites.values()) == {TOTAL // len(PLAYERS)}
    assert all(game["Result"] in ("1-0", "0-1", "1/2-1/2") for game in games)
    text = output.read_text(encoding="utf-8")
    assert printed_standings(text) == independent_standings(games)
    assert "resuming the event" in text


def test_players_on_serial_seats_started_once_play_every_pairing(tmp_path: Path) -> None:
    """Each player PC runs ``serialref client`` once (docs/raspberry-pi.md): after each
    pairing's ``disconnect`` it stays on its line and signs on again for the next."""
    names = ("Alpha", "Beta", "Gamma")
    with ExitStack() as stack:
        cables = [stack.enter_context(null_modem_cable()) for _ in names]
        seats = "".join(f'\n[[players]]\nname = "{name}"\nseat = "{cable.path_a}"\n'
                        for name, cable in zip(names, cables, strict=True))  # fmt: skip
        config = tmp_path / "event.toml"
        config.write_text(
            'event = "Seats"\nformat = "round-robin"\ngames = 1\ntc = "30+0.3"\n'
            f'reset_delay = 0.05\nconclude_delay = 0.05\ndirectory = "out"\n{seats}',
            encoding="utf-8",
        )
        clients = []
        for seed, (name, cable) in enumerate(zip(names, cables, strict=True), start=1):
            client = processes.start(
                [sys.executable, "-m", "serialref", "client", cable.path_b, "--player", "greedy",
                 "--seed", str(seed), "--name", name, "--log", str(tmp_path / f"{name}.log")],
                stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            stack.callback(processes.end, client)
            clients.append(client)
        output = tmp_path / "stdout.txt"
        event = start_event(config, output)
        stack.callback(processes.end, event)
        assert event.wait(timeout=120) == 0, output.read_text(encoding="utf-8")[-3000:]
        assert [client.poll() for client in clients] == [None] * len(names)
        for client in clients:
            client.send_signal(signal.SIGTERM)
            assert client.wait(timeout=20) == 0
    games = pgn_games(tmp_path / "out" / "event.pgn")
    pairings = {frozenset((game["White"], game["Black"])) for game in games}
    assert len(games) == 3 and len(pairings) == 3


def test_a_match_with_sprt_stops_when_the_test_decides(tmp_path: Path) -> None:
    # Greedy against random at one move a second decides fast: H1 (greedy stronger) is accepted.
    config = tmp_path / "match.toml"
    config.write_text(
        'format = "match"\ngames = 40\ntc = "30+0.3"\nreset_delay = 0.05\n'
        'conclude_delay = 0.05\ndirectory = "out"\n'
        '\n[[players]]\nname = "Greedy"\nplayer = "greedy"\nseed = 5\n'
        '\n[[players]]\nname = "Random"\nplayer = "random"\nseed = 6\n',
        encoding="utf-8",
    )
    done = processes.run(
        [sys.executable, "-m", "serialref", "event", "--config", str(config), "--sprt",
         "elo0=0", "elo1=200", "alpha=0.1", "beta=0.1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "H1 was accepted" in done.stdout
    games = pgn_games(tmp_path / "out" / "event.pgn")
    assert 2 <= len(games) < 40


def test_names_in_other_alphabets_are_shown_as_written_once_per_player(tmp_path: Path) -> None:
    # Müller plays from a TCP seat: its client signs on as Muller and the seat knows it.
    config = tmp_path / "match.toml"
    config.write_text(
        'format = "match"\ngames = 2\ntc = "30+0.3"\nreset_delay = 0.05\n'
        'conclude_delay = 0.05\ndirectory = "out"\n'
        '\n[[players]]\nname = "Müller"\nplayer = "greedy"\nseed = 5\n'
        'seat = "listen://127.0.0.1:0"\n'
        '\n[[players]]\nname = "Øster"\nplayer = "random"\nseed = 6\n',
        encoding="utf-8",
    )
    done = processes.run(
        [sys.executable, "-m", "serialref", "event", "--config", str(config)],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    stdout = done.stdout.decode("utf-8")
    assert done.returncode == 0, stdout[-2000:] + done.stderr.decode("utf-8", "replace")
    games = pgn_games(tmp_path / "out" / "event.pgn")
    pairs = [(game["White"], game["Black"]) for game in games]
    assert pairs == [("Müller", "Øster"), ("Øster", "Müller")]
    assert set(printed_standings(stdout)) == {"Müller", "Øster"}
    assert "?" not in stdout.rsplit(": complete; PGN ", maxsplit=1)[-1]
    assert "Muller" not in stdout  # the ASCII form is the line's alone


def test_a_stall_of_the_event_is_charged_to_no_one_on_every_board(tmp_path: Path) -> None:
    """SIGSTOP stops the one loop that referees every board: each board's journal says so."""
    socket_path = tmp_path / "ctl.sock"
    config = write_event(tmp_path, f'control_socket = "{socket_path}"\n')
    paced = config.read_text(encoding="utf-8").replace("\nseed = ", "\npace = 30\nseed = ")
    config.write_text(paced, encoding="utf-8")
    output = tmp_path / "stdout.txt"
    event = start_event(config, output)
    try:
        boards = wait_for(lambda: boards_in_game(socket_path), "two boards in game")
        event.send_signal(signal.SIGSTOP)
        time.sleep(2 * STALL_THRESHOLD + 0.2)  # the stall itself: its length is the point
        event.send_signal(signal.SIGCONT)
        journals = [tmp_path / "out" / f"pairing-{board:03d}.jsonl" for board in boards]
        wait_for(lambda: all("RefereeStalled" in path.read_text() for path in journals),
                 "both stalls")  # fmt: skip
    except AssertionError as exc:  # what the event said is what tells why
        raise AssertionError(f"{exc}\n{output.read_text(encoding='utf-8')[-3000:]}") from exc
    finally:
        event.send_signal(signal.SIGCONT)
        event.send_signal(signal.SIGTERM)
        assert event.wait(timeout=60) == EXIT_INTERRUPTED
    stalls = [{round(e.seconds, 6) for e in read_journal(path) if isinstance(e, RefereeStalled)}
              for path in journals]  # fmt: skip
    shared = stalls[0] & stalls[1]  # one stall, charged alike on every board
    assert shared and max(shared) > 2 * STALL_THRESHOLD


def boards_in_game(path: Path) -> list[int] | None:
    """The boards being played, once two are under way (their status over the socket)."""
    try:
        reply = send_request(path, Request("status"))
    except ControlError:
        return None
    boards = (reply.status or {}).get("boards", []) if reply.ok else []
    playing = [board["board"] for board in boards if board["game"] and board["game"]["ply"] >= 2]
    return playing if len(playing) == 2 else None
