"""A pool worker keeps to the installed packages it imported, spreads over the packages by the work
each has left, and pays a new package's import only when that shortens the run (worker/affinity.py).
The pool's own test of it, with real workers and imports, is in test_fork_branch.py."""

from __future__ import annotations

from tilelens_lsp.worker.affinity import Affinity, Pace


def test_a_worker_takes_the_first_file_that_costs_it_no_import():
    a = Affinity()
    assert a.hold("w1", "gems") and not a.hold("w1", "gems")  # the first module pays the import, the next not
    assert a.choose("w1", [("fla", 9), (None, 5), ("gems", 1)]) == 1  # workspace code costs nobody an import
    assert a.choose("w1", [("fla", 9), ("gems", 1)]) == 1
    assert Affinity(shared=True).choose("w1", [("fla", 9), ("gems", 1)]) == 0  # a branch imported all for all


def test_a_stopped_worker_holds_nothing_and_pays_its_imports_again():
    a = Affinity()
    a.hold("w1", "gems")
    a.hold("w2", "gems")
    a.forget("w1")
    assert a.holders("gems") == 1 and not a.free("w1", "gems") and a.hold("w1", "gems")


def test_new_workers_spread_over_the_packages_by_their_weight_per_worker():
    a = Affinity()
    cands = [("gems", 8), ("gems", 8), ("fla", 6), ("liger", 2)]
    picks = []
    for w in range(5):
        i = a.choose(w, cands)
        assert i is not None
        picks.append(cands[i][0])
        a.hold(w, cands[i][0])
    # gems' 16 per worker on it plus one: 16, 8; then fla's 6 beats 16 / 3; then 16 / 3 and 16 / 4
    # beat fla's 6 / 2 and liger's 2
    assert picks == ["gems", "gems", "fla", "gems", "gems"]


def test_a_worker_waits_rather_than_import_a_package_whose_workers_have_little_left():
    a = Affinity()
    a.hold("w1", "fla")
    a.hold("w2", "gems")
    a.record("fla", 10.5, 1, opened=True)  # a 10 s import and a launch
    a.record("fla", 0.5, 1, opened=False)
    a.record("gems", 2.5, 1, opened=True)
    assert a.paces["fla"].rate() == 0.5 and a.paces["fla"].import_cost() == 10.0
    # w2 is done with gems; fla has 4 launches left for w1: 2 s, against a 10 s import
    assert a.choose("w2", [("fla", 4)]) is None
    assert a.choose("w2", [("fla", 4)], must=True) == 0  # nothing else is running: somebody must
    assert a.choose("w2", [("fla", 40)]) == 0  # 20 s left for w1: worth the import


def test_an_import_still_in_flight_is_judged_by_the_imports_timed_so_far():
    a = Affinity()
    a.hold("w1", "a")
    a.hold("w2", "b")
    a.record("a", 1.51, 1, opened=True)
    a.record("a", 0.01, 1, opened=False)
    # b's first module has not come back: a's 1.5 s import and its pace stand in for it
    assert a.choose("w1", [("b", 3)]) is None
    assert Affinity().choose("w1", [("b", 3)]) == 0  # nothing timed at all: spread


def test_a_pace_without_units_after_the_import_knows_the_import_only():
    pace = Pace()
    assert pace.rate() is None and pace.import_cost() is None
    pace.add(4.0, 1, opened=True)
    pace.add(6.0, 1, opened=True)
    assert pace.rate() is None and pace.import_cost() == 5.0


def _timed(a: Affinity, package: str, rate: float, import_seconds: float) -> None:
    a.record(package, import_seconds + rate, 1, opened=True)
    a.record(package, rate, 1, opened=False)


def test_a_worker_moves_to_a_package_whose_timed_work_per_worker_outlasts_its_own_by_more_than_the_import():
    a = Affinity()
    for w in ("w1", "w2", "w3"):
        a.hold(w, "fla")
    a.hold("w4", "gems")
    _timed(a, "fla", 0.1, 3.0)  # fla: 0.1 s per unit of weight
    _timed(a, "gems", 2.0, 3.0)  # gems: 2 s per unit, 20 times fla's
    cands = [("fla", 30), ("gems", 20)]
    # fla: 3 s left for each of 3 workers; gems: 40 s left for one, 20 s each with w1 on it: 17 s more than the 3 s import
    assert a.choose("w1", cands) == 1
    assert a.choose("w1", [("fla", 30), ("gems", 4)]) == 0  # gems: 4 s each with w1, less than 1 s + the import
    assert Affinity(shared=True).choose("w1", cands) == 0  # a branch: no import to weigh, the heaviest file first


def test_a_worker_keeps_to_its_package_until_both_are_timed():
    a = Affinity()
    a.hold("w1", "fla")
    a.hold("w2", "gems")
    assert a.choose("w1", [("fla", 30), ("gems", 2000)]) == 0  # nothing timed: weights alone never move it


def test_a_timed_import_is_the_import_even_when_the_first_part_held_the_slowest_launch():
    pace = Pace()
    pace.add(26.0, 8, opened=True, imported=10.0)  # a 10 s import, then a 16 s launch (fused MoE)
    pace.add(1.0, 4, opened=False, imported=0.1)
    assert pace.import_cost() == 10.0
    assert pace.rate() == (16.0 + 0.9) / 12  # both parts' launches count toward the pace
    untimed = Pace()
    untimed.add(26.0, 8, opened=True)
    untimed.add(0.9, 4, opened=False)
    assert untimed.import_cost() == 26.0 - 0.225 * 8  # inferred: the slow launch counts as import
