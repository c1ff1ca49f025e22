"""The least any Python bridge between a serial line and a UCI engine can cost a move.

    python bench/bridge_floor.py PORT --engine COMMAND [--nodes=N] [other client options, ignored]

``bench/overhead.py --floor`` runs this in place of ``serialref client``, under the same
referee, cables and engine relay, so that the client's figures can be read against the
floor of the language and the machine rather than against fixed numbers alone. Per move
it does only what no bridge can skip: one blocking read of the line, the position the
``respond`` names with its ``sm`` played (python-chess), ``position fen`` and ``go`` in
one write, the engine's lines read up to ``bestmove``, and the reply's SAN (python-chess)
in one write. It checks nothing, keeps no clock, cannot hear the referee while its engine
thinks and ignores every record but ``respond`` and ``disconnect``: it is a yardstick,
not a player.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import termios
from collections.abc import Iterator

import chess
import serial

SIGN_ON = f'{chess.Board().epd()} refreq sign_on; tcsi "" "Floor";\r\n'.encode()


def lines_of(fd: int) -> Iterator[bytes]:
    """Whole lines from ``fd`` (blocking reads) until it ends."""
    pending = b""
    while data := os.read(fd, 4096):
        *whole, pending = (pending + data).split(b"\n")
        yield from whole


def main() -> int:
    port_path = sys.argv[1]
    command = shlex.split(sys.argv[sys.argv.index("--engine") + 1])
    nodes = next((arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--nodes=")), "1")
    port = serial.Serial(port_path, exclusive=True)  # raw mode, as serialref client has it
    line = port.fileno()
    os.set_blocking(line, True)
    attributes = termios.tcgetattr(line)
    attributes[6][termios.VMIN], attributes[6][termios.VTIME] = 1, 0  # block for a byte
    termios.tcsetattr(line, termios.TCSANOW, attributes)
    engine = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert engine.stdin is not None and engine.stdout is not None
    to_engine, from_engine = engine.stdin.fileno(), lines_of(engine.stdout.fileno())
    for request, answer in ((b"uci\n", b"uciok"), (b"isready\n", b"readyok")):
        os.write(to_engine, request)
        next(text for text in from_engine if text.startswith(answer))
    os.write(line, SIGN_ON)
    for raw in lines_of(line):
        fen, side, castling, en_passant, operations = raw.decode().strip().split(" ", 4)
        if "refcom disconnect" in operations:
            break
        if "refcom respond" not in operations:
            continue
        board = chess.Board(f"{fen} {side} {castling} {en_passant} 0 1")
        _, sm, theirs = operations.partition(" sm ")
        if sm:
            board.push_san(theirs.split(";", 1)[0])
        os.write(to_engine, f"position fen {board.fen()}\ngo nodes {nodes}\n".encode())
        best = next(text for text in from_engine if text.startswith(b"bestmove"))
        move = chess.Move.from_uci(best.split()[1].decode())
        os.write(line, f"{board.epd()} refreq reply; sm {board.san(move)};\r\n".encode())
    engine.stdin.write(b"quit\n")
    return engine.wait()


if __name__ == "__main__":
    sys.exit(main())
