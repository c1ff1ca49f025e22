"""Game pairs, normalized Elo and the SPRT on them, checked against fastchess's own output.

``tests/fixtures/fastchess/`` holds a 60-game match fastchess played and wrote
(``match.pgn``) and what it printed every five pairs (every five games without pairs)
under four SPRT settings (see the fixtures' README): each block printed there must come
out of the same games here, line for line.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from serialref.cli import EXIT_OK, main
from serialref.elo import Score
from serialref.pentanomial import GamePairs, Pentanomial, estimate, nelo_line, ptnml_line
from serialref.sprt import SprtModel, SprtTest
from serialref.tournament.report import games_from_pgn
from serialref.tournament.standings import FinishedGame, standings

FASTCHESS = Path(__file__).parent / "fixtures" / "fastchess"
FIRST, SECOND = "SF-1500", "SF-1000"


def _games() -> list[FinishedGame]:
    with (FASTCHESS / "match.pgn").open(encoding="utf-8") as handle:
        return list(games_from_pgn(handle))


def _blocks(name: str) -> list[dict[str, str]]:
    """fastchess's rating blocks in ``name``: each line by its first word, and the games."""
    text = (FASTCHESS / name).read_text(encoding="utf-8")
    blocks = []
    for block in re.findall(r"-{50}\n(Results of .*?)-{50}\n", text, re.S):
        lines = {line.split(":")[0]: line for line in block.splitlines()}
        lines["games"] = re.search(r"Games: (\d+)", block).group(1)  # type: ignore[union-attr]
        blocks.append(lines)
    return blocks


@pytest.mark.parametrize(
    ("output", "model"),
    [("normalized.txt", SprtModel.NORMALIZED), ("logistic.txt", SprtModel.LOGISTIC)],
)
def test_every_block_fastchess_printed_comes_out_of_its_games(output: str, model: SprtModel
                                                              ) -> None:  # fmt: skip
    games = _games()
    test = SprtTest(0, 5, 0.05, 0.05, model)
    blocks = _blocks(output)
    assert len(blocks) == 6
    for block in blocks:
        table = standings(games[: int(block["games"])])
        counts = table.pentanomials[(FIRST, SECOND)]
        assert ptnml_line(counts) == block["Ptnml(0-2)"]
        assert nelo_line(counts) == block["Elo"]
        assert test.status_line(table.pairs[(FIRST, SECOND)], counts) == block["LLR"]


def test_without_pairs_the_models_count_games_as_fastchess_does_with_penta_false() -> None:
    games = _games()
    test = SprtTest(0, 5, 0.05, 0.05, SprtModel.NORMALIZED)
    blocks = _blocks("trinomial.txt")
    assert len(blocks) == 12  # every five games
    for block in blocks:
        score = standings(games[: int(block["games"])]).pairs[(FIRST, SECOND)]
        assert test.status_line(score) == block["LLR"]


def test_report_prints_what_fastchess_printed_when_its_sprt_decided(
    capsys: pytest.CaptureFixture[str],
) -> None:
    printed = _blocks("normalized-elo1-50.txt")[-1]
    assert "SPRT ([0.00, 50.00]) completed - H1 was accepted" in (
        FASTCHESS / "normalized-elo1-50.txt").read_text(encoding="utf-8")  # fmt: skip
    code = main(["report", str(FASTCHESS / "match.pgn"), "--sprt", "elo0=0", "elo1=50",
                 "alpha=0.05", "beta=0.05", "model=normalized"])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert code == EXIT_OK
    assert lines[-3:] == [printed["Elo"], printed["Ptnml(0-2)"], printed["LLR"]]
    assert printed["LLR"] == "LLR: 3.09 (104.8%) (-2.94, 2.94) [0.00, 50.00]"


def test_one_pair_gives_what_fastchess_prints_for_it() -> None:
    # fastchess's block after one pair, a win each with White: a figure without a value
    # is printed as the C library writes it.
    one = Pentanomial().after(1.0, 0.0)
    assert ptnml_line(one) == "Ptnml(0-2): [0, 0, 1, 0, 0], WL/DD Ratio: inf"
    assert nelo_line(one) == "Elo: -0.00 +/- 0.00, nElo: -nan +/- -nan"
    assert SprtTest(0, 5, model=SprtModel.NORMALIZED).status_line(Score(1, 1, 0), one) == (
        "LLR: -0.00 (-0.0%) (-2.94, 2.94) [0.00, 5.00]"
    )


def test_a_pair_is_two_consecutive_games_with_colours_swapped_from_one_start() -> None:
    pairs = GamePairs()
    pairs.add("A", "B", "1-0", "x")
    pairs.add("A", "B", "1-0", "x")  # same colours: this one waits instead
    pairs.add("C", "D", "1-0")  # other players do not come between
    pairs.add("B", "A", "1/2-1/2", "x")  # A: a win and a draw
    pairs.add("B", "A", "0-1", "y")
    pairs.add("A", "B", "0-1", "z")  # another start: no pair
    pairs.add("B", "A", "*", "w")
    pairs.add("A", "B", "1-0", "w")  # a pair without a result counts for nothing
    assert pairs.between("A", "B") == Pentanomial(wd=1)
    assert pairs.between("B", "A") == Pentanomial(ld=1)
    assert pairs.between("C", "D") == Pentanomial()
    assert pairs.of("A", ["A", "B", "C"]) == Pentanomial(wd=1)


def test_the_five_classes_put_a_win_and_a_loss_with_two_draws() -> None:
    counts = Pentanomial()
    for first, second in [(1, 1), (1, 0.5), (1, 0), (0.5, 0.5), (0, 0.5), (0, 0), (0, 1)]:
        counts = counts.after(first, second)
    assert counts == Pentanomial(ll=1, ld=1, wl=2, dd=1, wd=1, ww=1)
    assert counts.counts() == (1, 1, 3, 1, 1)
    assert counts.swapped().counts() == (1, 1, 3, 1, 1)
    assert Pentanomial(ll=2, wd=1).swapped() == Pentanomial(ww=2, ld=1)


def test_an_even_match_has_no_normalized_elo_and_a_better_one_more() -> None:
    even = estimate(Pentanomial(ll=3, wl=4, ww=3))
    assert even.nelo == 0.0 and even.elo == 0.0
    better = estimate(Pentanomial(ll=2, wl=4, ww=4))
    assert better.nelo > 0 and better.nelo_error > 0


def test_standings_count_each_players_pairs_and_each_pairs_own() -> None:
    pgn = io.StringIO("".join(
        f'[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{result}\n\n'
        for white, black, result in [("A", "B", "1-0"), ("B", "A", "1-0"),
                                     ("A", "C", "1-0"), ("C", "A", "0-1")]
    ))  # fmt: skip
    table = standings(list(games_from_pgn(pgn)))
    by_name = {player.name: player.pentanomial for player in table.players}
    assert by_name == {"A": Pentanomial(wl=1, ww=1), "B": Pentanomial(wl=1),
                       "C": Pentanomial(ll=1)}  # fmt: skip
    assert table.pentanomials == {("A", "B"): Pentanomial(wl=1), ("A", "C"): Pentanomial(ww=1)}
