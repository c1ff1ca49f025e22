"""A UCI engine that plays a fixed game and reports scripted scores: ``scored_uci.py SCORES``.

Adjudication is judged on scores, so the tests and ``bench/adjudication.py`` need an
engine whose scores are known ahead, under serialref and under cutechess-cli alike.
It plays the first legal move in UCI order that does not bring a position back, at once,
so every referee sees the same moves. ``SCORES`` is a comma-separated list, one entry a
ply of the game (counted from the position ``position`` names, so the n-th entry scores
the n-th move played in the game), the last entry repeated for every later ply. An entry
is a score in centipawns for the side to move (``-600``), a mate (``m3``: mates in three,
``m-3``: is mated in three), or ``-`` for no score at all (no ``info`` line).
"""

from __future__ import annotations

import sys

import chess


def choose(board: chess.Board) -> chess.Move:
    """The first legal move in UCI order that does not repeat a position, if there is one."""
    moves = sorted(board.legal_moves, key=chess.Move.uci)
    for move in moves:
        board.push(move)
        repeats = board.is_repetition(2)
        board.pop()
        if not repeats:
            return move
    return moves[0]


def info(entry: str, move: chess.Move) -> str | None:
    """The ``info`` line of a script entry, or None for ``-``."""
    if entry == "-":
        return None
    score = f"mate {entry[1:]}" if entry.startswith("m") else f"cp {int(entry)}"
    return f"info depth 5 score {score} nodes 500 time 1 pv {move.uci()}"


def main() -> None:
    script = sys.argv[1].split(",")
    board = chess.Board()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            print("id name Scored 1.0\nuciok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            fen = "startpos" if words[1] == "startpos" else " ".join(words[2:8])
            board = chess.Board() if fen == "startpos" else chess.Board(fen)
            if "moves" in words:
                for uci in words[words.index("moves") + 1 :]:
                    board.push_uci(uci)
        elif words[0] == "go":
            move = choose(board)
            said = info(script[min(len(board.move_stack), len(script) - 1)], move)
            if said is not None:
                print(said)
            print(f"bestmove {move.uci()}", flush=True)
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
