"""Long legal games for the benchmarks: no rule (mate, repetition, 75 moves) ends them early."""

from __future__ import annotations

import random

import chess


def long_game(plies: int, seed: int = 7) -> list[str]:
    """A legal game of ``plies`` plies that no rule ends early (moves in UCI)."""
    rng = random.Random(seed)
    while True:
        board = chess.Board()
        counts: dict[object, int] = {}
        while len(board.move_stack) < plies:
            moves = list(board.legal_moves)
            rng.shuffle(moves)
            reset_soon = board.halfmove_clock > 60
            moves.sort(key=lambda move: not (reset_soon and board.is_zeroing(move)))
            for move in moves:
                if board.is_capture(move) and not reset_soon:
                    continue
                board.push(move)
                key = board._transposition_key()
                ok = (
                    counts.get(key, 0) < 2
                    and board.outcome() is None
                    and board.halfmove_clock < 140
                )
                if ok:
                    counts[key] = counts.get(key, 0) + 1
                    break
                board.pop()
            else:
                break
        if len(board.move_stack) >= plies:
            return [move.uci() for move in board.move_stack]
