"""The referee's CPU per ply in each fairy variant, next to standard chess, in one run.

Run as ``python bench/fairy.py [--plies N]``.  For each variant a random game (seeded)
is chosen first with pyffish directly, so that the referee's caches start cold; then
the referee's own work on each reply is timed: read the SAN (``parse_san``), play it
(``GameBoard.push``, which writes the SAN and the FEN) and look for the game's end
(``automatic_verdict``). Standard chess runs the same loop on python-chess.

A pyffish call costs about 2 ms whatever it asks (it sets its variant up again), so
the figure counts calls more than it counts work.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import pyffish

from serialref.referee.rulings import GameBoard
from serialref.rules import find_rules

VARIANTS = ("standard", "capablanca", "seirawan", "makruk", "shogi", "xiangqi")


def _game(variant: str, plies: int, seed: int) -> list[str]:
    """The SANs of a random game of up to ``plies`` plies, chosen without the referee's code."""
    rules = find_rules(variant)
    if not rules.fairy:
        board = rules.board()
        chooser = random.Random(seed)
        sans = []
        while len(sans) < plies and not board.is_game_over():
            move = chooser.choice(list(board.legal_moves))
            sans.append(board.san(move))
            board.push(move)
        return sans
    start, moves, sans = rules.starting_fen, [], []
    chooser = random.Random(seed)
    while len(sans) < plies:
        legal = pyffish.legal_moves(variant, start, moves)
        if not legal or pyffish.is_optional_game_end(variant, start, moves)[0]:
            break
        move = chooser.choice(legal)
        fen = pyffish.get_fen(variant, start, moves)
        sans.append(pyffish.get_san(variant, fen, move, False, pyffish.NOTATION_SAN))
        moves.append(move)
    return sans


def _per_ply(variant: str, sans: list[str]) -> list[float]:
    game = GameBoard(find_rules(variant).board())
    costs = []
    for san in sans:
        started = time.process_time()
        game.push(game.board.parse_san(san))
        game.automatic_verdict()
        costs.append(time.process_time() - started)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=120, help="plies per game (default 120)")
    args = parser.parse_args()
    print(f"referee CPU per ply: read the SAN, play it, look for the end ({args.plies} plies)")
    for variant in VARIANTS:
        sans = _game(variant, args.plies, seed=1)
        costs = _per_ply(variant, sans)
        print(
            f"  {variant:<11} {len(sans):>4} plies  median {statistics.median(costs) * 1e3:7.2f} ms"
            f"  max {max(costs) * 1e3:7.2f} ms"
        )


if __name__ == "__main__":
    main()
