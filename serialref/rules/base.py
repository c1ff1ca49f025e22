"""One :class:`Rules` per variant: the board type that knows its moves, and its names.

python-chess's boards already know their variant (legal moves, SAN, FEN, checks
given, pieces in hand, the variant's own wins and draws), and so do the fairy boards
on Fairy-Stockfish's rules (:mod:`serialref.rules.fairy`), so a rules object only
says which board to build and what the variant is called where: on the command
line, in PGN's ``Variant`` tag, in UCI's ``UCI_Variant`` and in XBoard's ``variant``.
A fairy variant's moves come from the rules too: python-chess cannot read a move
beyond h8.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import chess
import chess.variant

from serialref.errors import ConfigError, missing_extra
from serialref.rules.fairy import FairyBoard, FairyMove, load_pyffish
from serialref.rules.fairyvariants import (
    CapablancaBoard,
    MakrukBoard,
    SeirawanBoard,
    ShogiBoard,
    XiangqiBoard,
)

__all__ = ["STANDARD", "Drawing", "Rules", "find_rules", "rules_of_tags", "variant_names"]

Drawing = Literal["chess", "xiangqi", "shogi"]
"""How a variant's board is drawn: chess's squares and pieces, xiangqi's points with
its river and palaces, or shogi's plain squares and pieces facing the opponent."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules of one variant; ``name`` is how a user names it (``--variant``).

    ``pgn_name`` is the PGN ``Variant`` tag as lichess and cutechess write it (empty
    for standard chess, which has no tag); ``chess960`` marks Fischer-random castling;
    ``drawing`` is how a picture of its board looks.
    """

    name: str
    pgn_name: str
    board_type: type[chess.Board]
    chess960: bool = False
    source: str = "python-chess"
    drawing: Drawing = "chess"

    @property
    def standard(self) -> bool:
        """Standard chess: no ``Variant`` tag, no variant option for engines."""
        return not self.pgn_name

    @property
    def uci_variant(self) -> str:
        """The ``UCI_Variant`` value (and XBoard ``variant``) that names these rules."""
        return "chess960" if self.chess960 else self.board_type.uci_variant or "chess"

    @property
    def xboard_variant(self) -> str:
        """XBoard's ``variant`` name (``normal`` for standard chess)."""
        return "fischerandom" if self.chess960 else self.board_type.xboard_variant or "normal"

    @property
    def starting_fen(self) -> str:
        """The variant's usual starting position (Chess960: the standard array, number 518)."""
        return self.board_type.starting_fen

    @property
    def fairy(self) -> bool:
        """Played on Fairy-Stockfish's rules (pyffish), not python-chess's."""
        return issubclass(self.board_type, FairyBoard)

    def move(self, uci: str) -> chess.Move:
        """A move from its UCI text (a fairy board's squares may lie beyond h8).

        Raises ``ValueError`` (python-chess's) for a text that is no standard UCI move.
        """
        return FairyMove.of(uci) if self.fairy else chess.Move.from_uci(uci)

    def board(self, fen: str | None = None) -> chess.Board:
        """A board of this variant at ``fen`` (default: the starting position).

        Raises ``ValueError`` (python-chess's) for a FEN the variant cannot read.
        """
        return self.board_type(self.starting_fen if fen is None else fen, chess960=self.chess960)

    def chess960_board(self, number: int) -> chess.Board:
        """Chess960 start position ``number`` (0-959, Scharnagl's numbering; 518 is standard)."""
        return self.board_type.from_chess960_pos(number)


STANDARD = Rules("standard", "", chess.Board)
_FAIRY = "Fairy-Stockfish (pyffish)"

_RULES = (
    STANDARD,
    Rules("chess960", "Chess960", chess.Board, chess960=True),
    Rules("crazyhouse", "Crazyhouse", chess.variant.CrazyhouseBoard, source="python-chess variant"),
    Rules("3check", "Three-check", chess.variant.ThreeCheckBoard, source="python-chess variant"),
    Rules("atomic", "Atomic", chess.variant.AtomicBoard, source="python-chess variant"),
    Rules("kingofthehill", "King of the Hill", chess.variant.KingOfTheHillBoard,
          source="python-chess variant"),
    Rules("antichess", "Antichess", chess.variant.AntichessBoard, source="python-chess variant"),
    Rules("horde", "Horde", chess.variant.HordeBoard, source="python-chess variant"),
    Rules("racingkings", "Racing Kings", chess.variant.RacingKingsBoard,
          source="python-chess variant"),
    Rules("capablanca", "capablanca", CapablancaBoard, source=_FAIRY),
    Rules("seirawan", "seirawan", SeirawanBoard, source=_FAIRY),
    Rules("makruk", "makruk", MakrukBoard, source=_FAIRY),
    Rules("shogi", "shogi", ShogiBoard, source=_FAIRY, drawing="shogi"),
    Rules("xiangqi", "xiangqi", XiangqiBoard, source=_FAIRY, drawing="xiangqi"),
)  # fmt: skip

# Every spelling a user, a PGN file or an engine may use, squeezed: "King of the Hill",
# "kingofthehill", "KOTH", "Three-check", "3check", "Fischerandom", "normal"...
_ALIASES: dict[str, Rules] = {}
for _rules in _RULES:
    for _alias in (_rules.name, _rules.pgn_name, _rules.uci_variant, _rules.xboard_variant,
                   *(() if _rules.chess960 else _rules.board_type.aliases)):  # fmt: skip
        _ALIASES.setdefault("".join(_alias.lower().split()).replace("-", ""), _rules)
_ALIASES.update({"fischerrandom": _RULES[1], "960": _RULES[1], "frc": _RULES[1]})


def variant_names() -> tuple[str, ...]:
    """The names ``--variant`` takes, standard chess first."""
    return tuple(rules.name for rules in _RULES)


def find_rules(name: str, key: str = "variant") -> Rules:
    """The rules called ``name`` (any usual spelling); ConfigError under ``key`` otherwise.

    A fairy variant's rules are pyffish's, an extra: it is loaded here, so that a
    configuration, an EPD file or a referee's ``inform`` that names such a variant meets a
    missing pyffish at once, as a :class:`~serialref.errors.MissingExtraError`, and never
    in the middle of a game.
    """
    rules = _ALIASES.get("".join(name.lower().split()).replace("-", ""))
    if rules is None:
        raise ConfigError(
            key, f"unknown variant {name!r}; known variants: {', '.join(variant_names())}"
        )
    if rules.fairy:
        try:
            load_pyffish()
        except ImportError as exc:
            raise missing_extra(exc, "pyffish", "fairy", f"the {rules.name} variant") from exc
    return rules


def rules_of_tags(tags: Mapping[str, str]) -> Rules:
    """The rules a game's PGN tags name: its ``Variant`` tag, standard chess without one."""
    return find_rules(tags["Variant"], "Variant") if "Variant" in tags else STANDARD
