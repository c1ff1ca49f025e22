"""The fairy variants the referee plays, each a :class:`FairyBoard` that names it.

Each says what Fairy-Stockfish calls it (``uci_variant``, which engines take as
``UCI_Variant`` too), its start position as Fairy-Stockfish writes it after a move
(shogi's with ``-`` for castling and en passant, so that every variant has the line's
four position fields; written out here, since asking pyffish would load it for every
program that merely lists the variants), and which of Fairy-Stockfish's optional game
ends (draws by repetition or move count) need no claim.
"""

from __future__ import annotations

from typing import ClassVar

from serialref.rules.fairy import FairyBoard

__all__ = [
    "CapablancaBoard",
    "MakrukBoard",
    "SeirawanBoard",
    "ShogiBoard",
    "XiangqiBoard",
]


class CapablancaBoard(FairyBoard):
    """Capablanca chess: 10x8, archbishop (A) and chancellor (C)."""

    uci_variant = xboard_variant = "capablanca"
    starting_fen = "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - 0 1"
    aliases: ClassVar[list[str]] = ["Capablanca", "Capablanca chess", "capa"]


class SeirawanBoard(FairyBoard):
    """Seirawan chess (S-chess): hawk (H) and elephant (E) gated in on a back-rank move."""

    uci_variant = xboard_variant = "seirawan"
    starting_fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[EHeh] w KQBCDFGkqbcdfg - 0 1"
    aliases: ClassVar[list[str]] = ["Seirawan", "S-chess", "schess", "Seirawan chess"]


class MakrukBoard(FairyBoard):
    """Makruk (Thai chess), with its counting rules (the count is kept in the en passant field)."""

    uci_variant = xboard_variant = "makruk"
    starting_fen = "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1"
    aliases: ClassVar[list[str]] = ["Makruk", "Thai chess"]

    def _draw_is_automatic(self) -> bool:
        """The count ran out (its limit is in the en passant field): drawn without a claim."""
        limit, counted = self._fen.split(" ")[3:5]
        return limit.isdigit() and int(counted) > int(limit)


class ShogiBoard(FairyBoard):
    """Shogi, on the line with the chess-style fields (castling and en passant are ``-``)."""

    uci_variant = xboard_variant = "shogi"
    starting_fen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL[] w - - 0 1"
    aliases: ClassVar[list[str]] = ["Shogi"]

    def _draw_is_automatic(self) -> bool:
        return True  # sennichite: the fourth repetition draws, shogi has no claims


class XiangqiBoard(FairyBoard):
    """Xiangqi (Chinese chess): perpetual check and chasing lose, stalemate loses."""

    uci_variant = xboard_variant = "xiangqi"
    starting_fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    aliases: ClassVar[list[str]] = ["Xiangqi", "Chinese chess"]
