"""A scripted UCI engine for the tests: ``python fake_uci.py BEHAVIOUR SCORE LOG``.

Every line it receives is appended to LOG, so a test can see what the client sent
(``go wtime ...``, ``stop``). It plays ``e2e4``/``e7e5`` when legal, else the first legal
move in UCI order. Behaviours:

- ``normal``: answers ``go`` at once;
- ``crash``, ``crash-once``: exits on ``go`` (always, or the first time);
- ``crash-later``: answers the first ``go`` as ``normal``, exits on the next;
- ``stall-start-once``: the first process names itself, then never finishes ``uci``;
- ``obey-stop``: searches until ``stop``, printing a principal variation first;
- ``deaf``: prints a principal variation on ``go``, then answers nothing, ``stop`` included;
- ``silent``: answers neither ``go`` nor ``stop`` and prints no variation;
- ``illegal-later``: answers the first ``go`` as ``normal``, later ones with ``e2e5``;
- ``fresh``: as ``normal``, but never plays into a position the game has had before, so
  that no repetition ends a game early;
- ``trust-clock:N``: as ``fresh``, and trusts the clock it is told completely. From move 4
  it spends all of its time (``wtime``/``btime``) but 30 ms, or that divided by
  ``movestogo``, then answers (at once on ``stop``); from move N it scores ``cp -1000``
  and answers at once, so a client with ``--resign-below`` resigns there.
- ``slow-start``: says nothing for its first 3 s (an engine starting on a busy machine),
  then plays as ``normal``;
- ``flood``: on ``go`` prints 3 MB of progress lines, each with a score and a
  variation, the last 300 kB long (its variation has 60,000 plies), then searches
  until ``stop``;
- ``remembers``: as ``normal``, but its score is ``cp N`` for the Nth search since
  ``ucinewgame`` (a hash table that carries one position's search into the next).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from pathlib import Path

import chess

PREFERRED = ("e2e4", "e7e5")
TRUSTED_FROM = 4
"""The move from which ``trust-clock`` spends all the time it is told."""
KEPT_BACK = 0.03
"""Seconds of its clock ``trust-clock`` does not spend."""


def choose(board: chess.Board, *, fresh: bool = False) -> chess.Move:
    """The preferred move, else the first legal one in UCI order; ``fresh``: one that
    does not bring a position back, if there is one."""
    moves = [chess.Move.from_uci(uci) for uci in PREFERRED]
    moves = [move for move in moves if move in board.legal_moves]
    moves += sorted(board.legal_moves, key=chess.Move.uci)
    if fresh:
        moves.sort(key=lambda move: _repeats(board, move))  # stable: the order otherwise
    return moves[0]


def _repeats(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_repetition(2)
    finally:
        board.pop()


def read_lines(lines: queue.SimpleQueue[str | None]) -> None:
    """stdin, line by line, so that a search can wait for ``stop`` and its time at once."""
    for line in sys.stdin:
        lines.put(line)
    lines.put(None)


def trusted_time(board: chess.Board, words: list[str], resign_at: int) -> float:
    """Seconds ``trust-clock`` spends on this ``go``: its clock but KEPT_BACK, per move to go."""
    if board.fullmove_number < TRUSTED_FROM or board.fullmove_number >= resign_at:
        return 0.0
    told = {name: int(value) for name, value in zip(words[1::2], words[2::2], strict=False)}
    own = told["wtime" if board.turn == chess.WHITE else "btime"] / 1000
    return max(0.0, own - KEPT_BACK) / told.get("movestogo", 1)


FLOOD_BYTES = 3_000_000
LONG_PV = 30_000
"""Times the long line repeats its variation's first two moves."""


def flood(pv: str) -> str:
    """Progress lines, each with a score and a variation, of about :data:`FLOOD_BYTES`."""
    lines = []
    size = 0
    number = 0
    while size < FLOOD_BYTES * 0.9:
        number += 1
        line = (
            f"info depth {number % 40} seldepth 52 multipv 1 score cp {number % 97} "
            f"nodes {number * 1000} nps 1500000 hashfull 12 tbhits 0 time {number} pv {pv}\n"
        )
        lines.append(line)
        size += len(line)
    long_pv = " ".join([" ".join(pv.split()[:2])] * LONG_PV)
    lines.append(f"info depth 41 score cp 30 nodes {number * 1000} pv {long_pv}\n")
    return "".join(lines)


def main() -> None:
    behaviour, score, log = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    board = chess.Board()
    searching: chess.Move | None = None
    answered = False
    searches = 0  # since ucinewgame
    if behaviour == "slow-start":
        time.sleep(3.0)
    lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    threading.Thread(target=read_lines, args=(lines,), daemon=True).start()
    while (line := lines.get()) is not None:
        with log.open("a") as record:
            record.write(line)
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "uci":
            cpus = sorted(os.sched_getaffinity(0))  # where the client lets its start-up run
            log.with_suffix(".cpus").write_text(" ".join(map(str, cpus)))
            stalled = log.with_suffix(".stalled")
            print("id name Fake Engine 1.0", flush=True)
            if behaviour == "stall-start-once" and not stalled.exists():
                stalled.write_text("x")
                continue
            print("option name Hash type spin default 16 min 1 max 1024")
            print("uciok", flush=True)
        elif command == "isready":
            print("readyok", flush=True)
        elif command == "ucinewgame":
            searches = 0
        elif command == "position":
            board = chess.Board() if words[1] == "startpos" else chess.Board(
                " ".join(words[2:8])
            )
            if "moves" in words:
                for uci in words[words.index("moves") + 1:]:
                    board.push_uci(uci)
        elif command == "go":
            crashed = log.with_suffix(".crashed")
            if (
                behaviour == "crash"
                or (behaviour == "crash-once" and not crashed.exists())
                or (behaviour == "crash-later" and answered)
            ):
                crashed.write_text("x")
                sys.exit(3)
            fresh = behaviour == "fresh" or behaviour.startswith("trust-clock:")
            move = choose(board, fresh=fresh)
            board.push(move)
            answer = choose(board, fresh=fresh) if board.legal_moves else None
            board.pop()
            pv = f"{move.uci()} {answer.uci()}" if answer else move.uci()
            searches += 1
            if behaviour == "remembers":
                score = f"cp {searches}"
            if behaviour == "flood":
                sys.stdout.write(flood(pv))
                sys.stdout.flush()
            elif behaviour != "silent":
                print(f"info depth 3 score {score} nodes 1234 time 2500 pv {pv}", flush=True)
            if behaviour in ("obey-stop", "deaf", "silent", "flood"):
                searching = move
                continue
            if behaviour == "illegal-later" and answered:
                move = chess.Move.from_uci("e2e5")
            if behaviour.startswith("trust-clock:"):
                resign_at = int(behaviour.split(":")[1])
                if board.fullmove_number >= resign_at:
                    print("info depth 3 score cp -1000 pv " + move.uci(), flush=True)
                thinking_until = time.monotonic() + trusted_time(board, words, resign_at)
                while (left := thinking_until - time.monotonic()) > 0:
                    try:
                        heard = lines.get(timeout=left)
                    except queue.Empty:
                        break
                    if heard is None:
                        break
                    with log.open("a") as record:
                        record.write(heard)
                    if heard.split()[:1] in (["stop"], ["quit"]):
                        break
            answered = True
            print(f"bestmove {move.uci()}", flush=True)
        elif command == "stop" and searching is not None and behaviour in ("obey-stop", "flood"):
            print(f"bestmove {searching.uci()}", flush=True)
            searching = None
        elif command == "quit":
            break


if __name__ == "__main__":
    main()
