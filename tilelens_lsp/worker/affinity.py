"""Which installed package a pool worker takes its next file from.

A worker pays an installed package's import the first time it analyses a module of it (seconds for
a torch package: `import liger_kernel.ops` takes about 10 s in a fresh worker on a 16-core host), and
then keeps it. When no branch of the fork server imported the packages for every worker (a host
with a GPU), sixteen workers handed files in plain weight order would each import every package
of a corpus. So a worker keeps to the packages it imported, a worker that needs a new package takes
the one with the most work left per worker already on it, and a worker leaves its packages for one
that others have imported only when their share of what is left outweighs the import it would pay:
both measured, as the run goes, from the units the workers hand back.

Workspace modules (no installed package) cost no import of a package and go to anyone. This module
decides; worker/pool.py hands out the units and times them.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass
class Pace:
    """What a package's units took. Where a unit's worker timed its import (`imported`: the seconds
    until the module was imported and its launches listed), the import and the launches are apart;
    a unit that paid the import without that split (`unsplit`) says only their sum."""

    seconds: float = 0.0  # launches' seconds, of the units whose split is known or that paid no import
    weight: int = 0
    openings: int = 0  # units that paid the import
    import_seconds: float = 0.0  # timed imports
    unsplit_seconds: float = 0.0  # units that paid the import, their time not split
    unsplit_weight: int = 0

    def add(self, seconds: float, weight: int, opened: bool, imported: float | None = None) -> None:
        if opened:
            self.openings += 1
        if imported is not None:
            imported = min(max(0.0, imported), seconds)
            self.seconds += seconds - imported
            self.weight += weight
            if opened:
                self.import_seconds += imported
        elif opened:
            self.unsplit_seconds += seconds
            self.unsplit_weight += weight
        else:
            self.seconds += seconds
            self.weight += weight

    def merge(self, other: Pace) -> None:
        self.seconds += other.seconds
        self.weight += other.weight
        self.openings += other.openings
        self.import_seconds += other.import_seconds
        self.unsplit_seconds += other.unsplit_seconds
        self.unsplit_weight += other.unsplit_weight

    def rate(self) -> float | None:
        """Seconds per unit of weight of the launches alone; None before one came back apart from an
        import (a first unit's time is mostly the import, so its sum says little of the launches)."""
        if self.weight <= 0:
            return None
        return self.seconds / self.weight

    def import_cost(self) -> float | None:
        """The seconds an import of the package took, on average over the units that paid one: as
        timed where it was, else the unit's time less its launches at the package's rate (an estimate
        that a slow first launch inflates); None before any came back."""
        if not self.openings:
            return None
        inferred = max(0.0, self.unsplit_seconds - (self.rate() or 0.0) * self.unsplit_weight)
        return (self.import_seconds + inferred) / self.openings


class Affinity:
    """The packages each worker was handed modules of, each package's pace, and the choice of a
    worker's next file. `shared`: every worker has every package imported already (a branch)."""

    def __init__(self, shared: bool = False) -> None:
        self.shared = shared
        self.held: dict[Hashable, set[str]] = {}
        self.paces: dict[str, Pace] = {}

    def free(self, worker: Hashable, package: str | None) -> bool:
        """`worker` analyses a module of `package` without importing anything new."""
        return self.shared or package is None or package in self.held.get(worker, ())

    def hold(self, worker: Hashable, package: str | None) -> bool:
        """`worker` is handed a module of `package`: True when this is its first (it pays the import)."""
        if self.free(worker, package):
            return False
        assert package is not None
        self.held.setdefault(worker, set()).add(package)
        return True

    def record(self, package: str | None, seconds: float, weight: int, opened: bool, imported: float | None = None) -> None:
        """A unit of `weight` came back after `seconds`; `opened`: its worker imported the package for it;
        `imported`: the seconds until its module was imported, where the worker said (None: unknown)."""
        if package is None or weight <= 0:
            return
        self.paces.setdefault(package, Pace()).add(seconds, weight, opened, imported)

    def forget(self, worker: Hashable) -> None:
        """`worker` was stopped (killed): the process that replaces it imports its packages again."""
        self.held.pop(worker, None)

    def holders(self, package: str) -> int:
        return sum(package in held for held in self.held.values())

    def worth_opening(self, package: str, left: int) -> bool:
        """A worker new to `package` should take some of its `left` weight: nobody has imported the
        package, nothing has been timed yet (the workers are still spreading over the packages), or
        what each worker on it has left takes longer than the import. The package's own import and
        pace where they are known, else those of the packages timed so far."""
        holders = self.holders(package)
        cost, rate = self._estimates(package)
        if holders == 0 or cost is None or rate is None:
            return True
        return left * rate / holders > cost

    def _estimates(self, package: str) -> tuple[float | None, float | None]:
        """The import's seconds and the seconds per weight of `package`, each from the package where
        it was timed, else from all packages together."""
        own = self.paces.get(package, Pace())
        pooled = Pace()
        for pace in self.paces.values():
            pooled.merge(pace)
        cost = own.import_cost()
        rate = own.rate()
        return (pooled.import_cost() if cost is None else cost), (pooled.rate() if rate is None else rate)

    def _move(self, worker: Hashable, own: str | None, left: dict[str, int]) -> str | None:
        """A package `worker` should import rather than go on with `own`, which it holds: one whose
        work left per worker (itself added) outlasts what `own` has left per worker by more than the
        import. Packages still differ in seconds per unit of weight (the weight, read from the text,
        misses runtime loops and the engines' costs), so a first spread by weight can leave one
        package with most of the time and few workers; this moves workers over once their units
        have timed both. None: stay."""
        if self.shared or own is None or own not in left:
            return None
        _, rate = self._estimates(own)
        if rate is None:
            return None
        mine = left[own] * rate / max(1, self.holders(own))
        best, gain = None, 0.0
        for package, weight in left.items():
            if self.free(worker, package):
                continue
            cost, rate = self._estimates(package)
            if cost is None or rate is None:
                continue
            ahead = weight * rate / (1 + self.holders(package)) - mine - cost
            if ahead > gain:
                best, gain = package, ahead
        return best

    def choose(self, worker: Hashable, candidates: Sequence[tuple[str | None, int]], must: bool = False) -> int | None:
        """The index of the candidate (package, weight left), listed best first, that `worker` takes:
        the first that costs it no import (unless another package's timed work left outlasts it by
        more than the import: `_move`), else the first of the package with the most weight left per
        worker on it that is worth opening; None (wait) when none is, unless it `must` take one."""
        left: dict[str, int] = {}
        for package, weight in candidates:
            if package is not None:  # a workspace module is free to anyone
                left[package] = left.get(package, 0) + max(1, weight)
        first: dict[str | None, int] = {}  # each package's first candidate
        for i, (package, _) in enumerate(candidates):
            first.setdefault(package, i)
        for i, (package, _) in enumerate(candidates):
            if self.free(worker, package):
                move = self._move(worker, package, left)
                return i if move is None else first[move]
        ranked = sorted(left, key=lambda p: -left[p] / (1 + self.holders(p)))  # stable: ties in listed order
        for package in ranked:
            if must or self.worth_opening(package, left[package]):
                return first[package]
        return None
