"""The suite's loopback ports come from outside the kernel's range for outgoing ports."""

from __future__ import annotations

import random
import socket

from bench.ports import _bindable, ephemeral_low, free_port


def test_a_free_port_is_below_the_range_outgoing_connections_draw_from() -> None:
    ports = {free_port() for _ in range(50)}
    assert all(1024 < port < ephemeral_low() for port in ports)
    assert len(ports) > 1  # picked at random, so two workers rarely try the same one


def test_a_port_someone_listens_on_is_not_taken_for_free() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", free_port()))
        listener.listen()
        assert _bindable(listener.getsockname()[1]) == 0


def test_a_seeded_random_module_does_not_make_two_picks_alike() -> None:
    """Hypothesis seeds ``random`` alike in every worker: the picks must not follow it."""
    state = random.getstate()
    try:
        random.seed(0)
        first = [free_port() for _ in range(5)]
        random.seed(0)
        second = [free_port() for _ in range(5)]
    finally:
        random.setstate(state)
    assert first != second
