"""A large read's threads run on one CPU; the thread that ran it gets every CPU back."""

from __future__ import annotations

import os
import threading

import pytest

from flatfab import cpupin

ALLOWED = os.sched_getaffinity(0)


def _affinity_of_a_new_thread() -> set[int]:
    seen: list[set[int]] = []
    thread = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
    thread.start()
    thread.join()
    return seen[0]


def test_threads_started_in_a_large_read_share_one_cpu() -> None:
    with cpupin.threads_on_one_cpu(cpupin.MIN_DEVICES) as cpu:
        inside = _affinity_of_a_new_thread()
    if len(ALLOWED) < 2:  # nothing to choose between: nothing pinned
        assert cpu is None and inside == ALLOWED
    else:
        assert cpu in ALLOWED and inside == {cpu}
    assert os.sched_getaffinity(0) == ALLOWED
    assert _affinity_of_a_new_thread() == ALLOWED


def test_every_cpu_is_given_back_when_the_read_fails() -> None:
    with pytest.raises(RuntimeError), cpupin.threads_on_one_cpu(cpupin.MIN_DEVICES):
        raise RuntimeError("a read failed")
    assert os.sched_getaffinity(0) == ALLOWED


@pytest.mark.parametrize(("devices", "env"), [(cpupin.MIN_DEVICES - 1, None),
                                              (cpupin.MIN_DEVICES, "0")],
                         ids=["small-read", "turned-off"])
def test_small_or_opted_out_reads_are_not_pinned(devices: int, env: str | None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if env is not None:
        monkeypatch.setenv(cpupin.ENV, env)
    with cpupin.threads_on_one_cpu(devices) as cpu:
        assert cpu is None and _affinity_of_a_new_thread() == ALLOWED


def test_the_current_cpu_is_read_from_proc() -> None:
    assert cpupin._current_cpu() in ALLOWED
