"""Tests for serialref.standby.channel: the handshake's messages, authenticated frames."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.errors import ProtocolError
from serialref.standby.channel import (
    MAX_PAYLOAD,
    PRIMARY_GREETING_SIZE,
    STANDBY_ANSWER_SIZE,
    TAG_SIZE,
    Channel,
    Frame,
    FrameKind,
    Side,
    new_nonce,
    primary_greeting,
    primary_proof,
    read_primary_greeting,
    read_primary_proof,
    read_standby_answer,
    standby_answer,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
NONCE_P = b"p" * 32
NONCE_S = b"s" * 32


def pair(
    key_p: bytes = KEY, key_s: bytes = KEY, nonce_s: bytes = NONCE_S
) -> tuple[Channel, Channel]:
    """The primary's and the standby's channel of one connection."""
    return (
        Channel(key_p, NONCE_P, nonce_s, side=Side.PRIMARY),
        Channel(key_s, NONCE_P, nonce_s, side=Side.STANDBY),
    )


def read_all(channel: Channel) -> list[Frame]:
    frames = []
    while (frame := channel.next_frame()) is not None:
        frames.append(frame)
    return frames


# ------------------------------------------------------------------ handshake


def test_a_handshake_with_the_same_key_proves_it_both_ways() -> None:
    nonce_p, nonce_s = new_nonce(), new_nonce()
    greeting = primary_greeting(nonce_p)
    assert len(greeting) == PRIMARY_GREETING_SIZE
    assert read_primary_greeting(greeting) == nonce_p
    answer = standby_answer(KEY, nonce_p, nonce_s)
    assert len(answer) == STANDBY_ANSWER_SIZE
    assert read_standby_answer(KEY, nonce_p, answer) == nonce_s
    read_primary_proof(KEY, nonce_p, nonce_s, primary_proof(KEY, nonce_p, nonce_s))


def test_nonces_are_fresh() -> None:
    assert len({new_nonce() for _ in range(100)}) == 100


def test_a_standby_with_another_key_is_found_out() -> None:
    answer = standby_answer(OTHER_KEY, NONCE_P, NONCE_S)
    with pytest.raises(ProtocolError, match="did not prove the replication key"):
        read_standby_answer(KEY, NONCE_P, answer)


def test_a_primary_with_another_key_is_found_out() -> None:
    with pytest.raises(ProtocolError, match="did not prove the replication key"):
        read_primary_proof(KEY, NONCE_P, NONCE_S, primary_proof(OTHER_KEY, NONCE_P, NONCE_S))


def test_an_answer_recorded_for_another_challenge_proves_nothing() -> None:
    recorded = standby_answer(KEY, NONCE_P, NONCE_S)
    with pytest.raises(ProtocolError, match="did not prove"):
        read_standby_answer(KEY, b"q" * 32, recorded)
    proof = primary_proof(KEY, NONCE_P, NONCE_S)
    with pytest.raises(ProtocolError, match="did not prove"):
        read_primary_proof(KEY, NONCE_P, b"t" * 32, proof)


def test_the_standby_s_tag_cannot_be_reflected_as_the_primary_s_proof() -> None:
    """A peer without the key that sends the standby's own tag back is not a primary."""
    answer = standby_answer(KEY, NONCE_P, NONCE_S)
    reflected = answer[-TAG_SIZE:]
    with pytest.raises(ProtocolError, match="did not prove"):
        read_primary_proof(KEY, NONCE_P, NONCE_S, reflected)


def test_a_greeting_is_read_only_when_complete_and_refused_at_its_first_wrong_byte() -> None:
    greeting = primary_greeting(NONCE_P)
    assert read_primary_greeting(greeting[:10]) is None
    assert read_primary_greeting(greeting[:-1]) is None
    with pytest.raises(ProtocolError, match="not a serialref primary") as caught:
        read_primary_greeting(b"GET ")
    assert caught.value.raw == "GET "
    with pytest.raises(ProtocolError, match="older serialref"):
        read_primary_greeting(b'serialref-primary 1 0\n{"event": ')


def test_an_old_standby_is_named_as_such() -> None:
    old = b"serialref-standby 1 0 e3b0c442\n".ljust(STANDBY_ANSWER_SIZE, b"x")
    with pytest.raises(ProtocolError, match="older serialref"):
        read_standby_answer(KEY, NONCE_P, old)


# ------------------------------------------------------------------ frames


@given(
    payloads=st.lists(st.binary(max_size=300), max_size=8),
    cut=st.integers(min_value=1, max_value=64),
)
def test_frames_arrive_whole_in_pieces_or_byte_by_byte(payloads: list[bytes], cut: int) -> None:
    primary, standby = pair()
    stream = b"".join(primary.seal(FrameKind.ENTRIES, payload) for payload in payloads)
    received: list[Frame] = []
    for start in range(0, len(stream), cut):
        standby.feed(stream[start : start + cut])
        received.extend(read_all(standby))
    assert received == [Frame(FrameKind.ENTRIES, payload) for payload in payloads]
    assert standby.unfinished == 0


def test_both_directions_are_authenticated_apart() -> None:
    primary, standby = pair()
    primary.feed(standby.seal(FrameKind.MIRROR, b"state"))
    assert read_all(primary) == [Frame(FrameKind.MIRROR, b"state")]
    reflected, standby = pair()
    standby.feed(reflected.seal(FrameKind.START, b"x"))
    primary.feed(reflected.seal(FrameKind.START, b"x"))  # its own frame, sent back to it
    assert read_all(standby) == [Frame(FrameKind.START, b"x")]
    with pytest.raises(ProtocolError, match="failed its authentication"):
        primary.next_frame()


@pytest.mark.parametrize("position", [0, 3, 4, 5, 20, -1])
def test_an_altered_byte_anywhere_fails_the_frame(position: int) -> None:
    """A longer length waits for bytes that are the next frame's: it fails then."""
    primary, standby = pair()
    frame = bytearray(primary.seal(FrameKind.ENTRIES, b'{"event": "MatchEnded"}\n'))
    frame[position] ^= 0x01
    standby.feed(bytes(frame) + primary.seal(FrameKind.HEARTBEAT))
    with pytest.raises(ProtocolError):
        read_all(standby)


def test_a_replayed_duplicated_or_reordered_frame_fails() -> None:
    primary, standby = pair()
    first = primary.seal(FrameKind.ENTRIES, b"one\n")
    second = primary.seal(FrameKind.ENTRIES, b"two\n")
    standby.feed(first)
    assert read_all(standby) == [Frame(FrameKind.ENTRIES, b"one\n")]
    standby.feed(first)  # duplicated
    with pytest.raises(ProtocolError, match="frame 1 failed"):
        standby.next_frame()
    _, standby = pair()
    standby.feed(second + first)  # reordered
    with pytest.raises(ProtocolError, match="frame 0 failed"):
        standby.next_frame()


def test_a_frame_from_another_connection_fails() -> None:
    """Another connection has another standby nonce, so another session key."""
    recorded, _ = pair(nonce_s=b"r" * 32)
    frame = recorded.seal(FrameKind.ENTRIES, b"entry\n")
    _, standby = pair()
    standby.feed(frame)
    with pytest.raises(ProtocolError, match="failed its authentication"):
        standby.next_frame()


def test_a_frame_sealed_with_another_key_fails() -> None:
    primary, standby = pair(key_p=OTHER_KEY)
    standby.feed(primary.seal(FrameKind.HEARTBEAT))
    with pytest.raises(ProtocolError, match="failed its authentication"):
        standby.next_frame()


def test_an_oversized_frame_is_refused_by_its_header_alone() -> None:
    standby = Channel(KEY, NONCE_P, NONCE_S, side=Side.STANDBY, max_payload=100)
    standby.feed((101).to_bytes(4, "big") + bytes([FrameKind.ENTRIES]))
    with pytest.raises(ProtocolError, match="a frame of 101 bytes, over the 100 allowed"):
        standby.next_frame()
    _, default = pair()
    default.feed(b"\xff\xff\xff\xff\x03")
    with pytest.raises(ProtocolError, match=f"over the {MAX_PAYLOAD} allowed"):
        default.next_frame()


def test_a_cut_frame_is_never_complete() -> None:
    primary, standby = pair()
    frame = primary.seal(FrameKind.ENTRIES, b"entry\n")
    standby.feed(frame[:-1])
    assert standby.next_frame() is None
    assert standby.unfinished == len(frame) - 1


def test_an_authenticated_frame_of_unknown_kind_is_refused() -> None:
    primary, standby = pair()
    standby.feed(primary.seal(99, b""))  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match="unknown kind 99"):
        standby.next_frame()


def test_nothing_over_the_largest_payload_is_sealed() -> None:
    primary, _ = pair()
    with pytest.raises(ValueError, match="over"):
        primary.seal(FrameKind.ENTRIES, bytes(MAX_PAYLOAD + 1))

