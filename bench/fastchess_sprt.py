"""serialref's pentanomial lines and LLR against a live fastchess, on fastchess's own games.

    python bench/fastchess_sprt.py --fastchess PATH [--engine /usr/games/stockfish]
        [--openings tests/fixtures/fastchess/book.epd] [--rounds 30]
        [--model normalized|logistic] [--elo0 0 --elo1 5]

fastchess plays a match (the engine at 1500 nodes a move against itself at 1000, both
colours of each opening, ``-report penta=true``, ``-ratinginterval 5``, its SPRT with the
model given) and writes its PGN; every block it prints (``Elo: ..., nElo: ...``,
``Ptnml(0-2): ...``, ``LLR: ...``) is then computed by serialref from the games of that
PGN the block counted, and the lines are compared word for word. The command prints
each disagreement and a last line ``agree: N of M blocks``; it exits 1 on any
disagreement. The recorded run that the tests check is in tests/fixtures/fastchess/.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from serialref.pentanomial import nelo_line, ptnml_line
from serialref.sprt import SprtModel, SprtTest
from serialref.tournament.report import read_pgn_games
from serialref.tournament.standings import standings

BOOK = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "fastchess" / "book.epd"
STRONG, WEAK = "Strong", "Weak"
BLOCK = re.compile(r"-{50}\n(Results of .*?)-{50}\n", re.S)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fastchess", required=True, type=Path, help="the fastchess binary")
    parser.add_argument("--engine", default="/usr/games/stockfish", help="a UCI engine")
    parser.add_argument("--openings", type=Path, default=BOOK, help="an EPD file of openings")
    parser.add_argument("--rounds", type=int, default=30, help="pairs to play")
    parser.add_argument("--model", choices=("normalized", "logistic"), default="normalized")
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=5.0)
    args = parser.parse_args()
    test = SprtTest(args.elo0, args.elo1, 0.05, 0.05, SprtModel(args.model))
    with tempfile.TemporaryDirectory(prefix="fastchess-sprt-") as scratch:
        pgn = Path(scratch) / "match.pgn"
        printed = subprocess.run(
            [str(args.fastchess),
             "-engine", f"cmd={args.engine}", f"name={STRONG}", "nodes=1500",
             "-engine", f"cmd={args.engine}", f"name={WEAK}", "nodes=1000",
             "-each", "proto=uci", "tc=inf", "option.Hash=16", "option.Threads=1",
             "-openings", f"file={args.openings}", "format=epd", "order=sequential",
             "-rounds", str(args.rounds), "-repeat", "-concurrency", "1",
             "-ratinginterval", "5", "-report", "penta=true",
             "-sprt", f"elo0={args.elo0:g}", f"elo1={args.elo1:g}", "alpha=0.05", "beta=0.05",
             f"model={args.model}", "-pgnout", f"file={pgn}"],
            capture_output=True, text=True, check=True, timeout=3600,
        ).stdout  # fmt: skip
        games = read_pgn_games([pgn])
    blocks = BLOCK.findall(printed)
    agree = 0
    for block in blocks:
        lines = {line.split(":")[0]: line for line in block.splitlines()}
        counted = int(re.search(r"Games: (\d+)", block).group(1))  # type: ignore[union-attr]
        table = standings(games[:counted])
        pairs, score = table.pentanomials[(STRONG, WEAK)], table.pairs[(STRONG, WEAK)]
        ours = {"Elo": nelo_line(pairs), "Ptnml(0-2)": ptnml_line(pairs),
                "LLR": test.status_line(score, pairs)}  # fmt: skip
        wrong = [key for key, line in ours.items() if lines.get(key) != line]
        for key in wrong:
            print(f"after {counted} games, {key}: fastchess {lines.get(key)!r}, "
                  f"serialref {ours[key]!r}")  # fmt: skip
        agree += not wrong
    print(f"agree: {agree} of {len(blocks)} blocks")
    return 0 if blocks and agree == len(blocks) else 1


if __name__ == "__main__":
    sys.exit(main())
