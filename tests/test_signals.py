"""Which signals a run takes over: only those nobody else handles (signals._ours)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from dsh_conformance import signals


@pytest.fixture
def sigint() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_default_sigint_becomes_an_interrupt_and_is_given_back(sigint: None) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signals.reset()
    with signals.interruptible():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signals.received() == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signals.reset()


@pytest.mark.parametrize("handler", [signal.SIG_IGN, lambda signum, frame: None])
def test_an_ignored_or_handled_sigint_is_left_alone(sigint: None, handler: object) -> None:
    """``nohup``, a background shell job or an embedding host chose what SIGINT does."""
    signal.signal(signal.SIGINT, handler)  # type: ignore[arg-type]
    with signals.interruptible():
        assert signal.getsignal(signal.SIGINT) is handler
    assert signal.getsignal(signal.SIGINT) is handler
