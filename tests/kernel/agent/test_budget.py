"""IterationBudget: shared, thread-safe, never over its limit."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes.kernel.budget import IterationBudget


def test_consume_until_exhausted_and_refund() -> None:
    budget = IterationBudget(3)
    assert [budget.consume() for _ in range(4)] == [True, True, True, False]
    assert budget.exhausted and budget.used == 3 and budget.remaining == 0
    budget.refund()
    assert budget.remaining == 1 and budget.consume(2) is False and budget.consume() is True


def test_invalid_limit() -> None:
    with pytest.raises(ValueError):
        IterationBudget(0)


@given(limit=st.integers(1, 200), threads=st.integers(1, 8), per_thread=st.integers(0, 60))
def test_threads_never_take_more_than_the_limit(limit: int, threads: int, per_thread: int) -> None:
    budget = IterationBudget(limit)
    taken = [0] * threads

    def worker(index: int) -> None:
        for _ in range(per_thread):
            if budget.consume():
                taken[index] += 1

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sum(taken) == budget.used == min(limit, threads * per_thread)


def test_child_budgets_draw_from_the_parent() -> None:
    parent = IterationBudget(5)
    first, second = parent.child(3), parent.child(3)
    assert [first.consume() for _ in range(4)] == [True, True, True, False]  # its own limit
    assert [second.consume() for _ in range(3)] == [True, True, False]  # the parent's limit
    assert parent.exhausted and (first.used, second.used) == (3, 2)
    second.refund()
    assert parent.remaining == 1 and second.used == 1


@given(limit=st.integers(1, 40), children=st.integers(1, 5), child_limit=st.integers(1, 20))
def test_parent_and_children_never_exceed_the_parent_limit(limit: int, children: int, child_limit: int) -> None:
    parent = IterationBudget(limit)
    kids = [parent.child(child_limit) for _ in range(children)]

    def worker(budget: IterationBudget) -> None:
        while budget.consume():
            pass

    threads = [threading.Thread(target=worker, args=(k,)) for k in kids] + [threading.Thread(target=worker, args=(parent,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert parent.used == limit and sum(k.used for k in kids) <= limit
    assert all(k.used <= child_limit for k in kids)
