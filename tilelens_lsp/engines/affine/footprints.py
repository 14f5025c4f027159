"""Footprints of the affine summary's accesses: recording, per-program tags for races, witnesses.

A mixin of `AffineGraph`: an access becomes a box problem (`_problem`), solved by `box.box_image`; an
out-of-bounds site keeps the lowest program that shows it, and `fill_witnesses` enumerates just that
program (`AccessGraph.run_programs`) for the lane, iteration and element the enumeration would report.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tilelens_lsp.engines import views
from tilelens_lsp.engines.affine.box import box_image, factor, unique_rows
from tilelens_lsp.engines.affine.forms import Cond, Ctx, Form, NotAffine, Pieces, Ptr, parts_of
from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.values import ArgInfo, Opaque, SiteResult, opaque_address_refusal, radix_apart, same_values
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.values import LaunchModel

RACE_SHARE = 64  # per-program footprints for the race check get budget / this, in all
SOLVED_KEPT_BYTES = 64 << 20  # what the process keeps of solved images (problems and answers), across analyses


class SolvedImages:
    """Solved box problems, kept across analyses in one process, least recently used out first.

    A save that edits one line of a kernel leaves most of its accesses' problems as they were (same
    program rows, strides, extents and constraints, compared byte for byte): their images are taken
    from here instead of solved again, which is most of the summary's time on a large launch. Each
    answer keeps the work its solve spent, charged again on every use, so an analysis reaches the
    same budget verdict whether or not its images were kept. The arrays are read-only."""

    def __init__(self, limit: int = SOLVED_KEPT_BYTES) -> None:
        self.limit = limit
        self.kept: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
        self.size = 0

    def get(self, key: tuple) -> tuple[np.ndarray, np.ndarray, int] | None:
        hit = self.kept.get(key)
        if hit is not None:
            self.kept.move_to_end(key)
        return hit

    def put(self, key: tuple, starts: np.ndarray, ends: np.ndarray, work: int) -> None:
        size = _nbytes(key, starts, ends)
        if size > self.limit // 2 or key in self.kept:
            return
        starts.flags.writeable = False
        ends.flags.writeable = False
        self.kept[key] = (starts, ends, work)
        self.size += size
        while self.size > self.limit:
            old_key, (old_starts, old_ends, _) = self.kept.popitem(last=False)
            self.size -= _nbytes(old_key, old_starts, old_ends)


def _nbytes(key: tuple, starts: np.ndarray, ends: np.ndarray) -> int:
    return starts.nbytes + ends.nbytes + sum(len(part) for part in key if isinstance(part, bytes))


SOLVED = SolvedImages()


def programs_apart(bases: np.ndarray, coef: np.ndarray, ext: np.ndarray) -> bool:
    """No two programs touch one element: each program's base (in elements) is distinct, the bases form
    a lattice x0 + Σ i·d over a full box of program indices i, and the steps d with the lane and loop
    strides (extents > 1, stride 0 left out: those repeat an element within one program) form a mixed
    radix, so (i, v) -> base + coef·v is one-to-one on the whole box; masks only remove points from it."""
    bases = np.sort(bases)
    if bases.size > 1 and not (bases[1:] != bases[:-1]).all():
        return False
    lattice = factor(bases[:, None])
    if lattice is None:
        return False
    steps = [(int(d[0]), int(n)) for d, n in lattice[1]]
    steps += [(abs(int(c)), int(n)) for c, n in zip(coef, ext) if c != 0 and n > 1]
    return radix_apart(steps)


def kind_is_atomic(op: str) -> bool:
    return op == "atomic"


def lanes_injective(off: "Form | Pieces") -> bool:
    """Distinct lanes of one program get distinct addresses: the lane coefficients of the offset form
    a mixed radix over the lane extents (each step larger than everything the smaller ones reach)."""
    if not isinstance(off, Form) or off.side or any(v[0] == "q" for v in off.k):
        return False
    steps = []
    for axis, n in enumerate(off.shape):
        if n > 1:
            a = abs(off.k.get(f"L{axis}", 0))
            if a == 0:
                return False
            steps.append((a, n))
    return radix_apart(steps)


def same_lanes(ptr: Ptr, copied: Any) -> bool:
    """The stored value was loaded through an address that differs from the store's by one constant
    per program: lanes that store one element loaded one element, so they store one value."""
    if not isinstance(copied, Ptr) or copied.pointee != ptr.pointee:
        return False
    mine, theirs = parts_of(ptr.off), parts_of(copied.off)
    if len(mine) != len(theirs):
        return False
    for (g1, f1), (g2, f2) in zip(mine, theirs):
        if len(g1) != len(g2) or not all(_same_form(a, b, shift=False) for a, b in zip(g1, g2)):
            return False
        if not _same_form(f1, f2, shift=True):
            return False
    return True


def _same_form(a: Form, b: Form, shift: bool) -> bool:
    if a.k != b.k or a.shape != b.shape or len(a.side) != len(b.side):
        return False
    if not all(x is y or _same_form(x, y, shift=False) for x, y in zip(a.side, b.side)):
        return False
    if shift:  # a constant per program: lanes of one program keep their differences
        return True
    return same_values(np.asarray(a.c), np.asarray(b.c))


class OutOfBoundsFound(Exception):
    """A site left its storage while the summary's caller asked to hear of the first at once
    (`stop_at_oob`): it enumerates such a launch when it can, so the rest of the summary is moot."""


class SummaryFootprints:
    """The access-recording half of `AffineGraph`."""

    stop_at_oob = False  # raise OutOfBoundsFound at the first out-of-bounds site

    m: "LaunchModel"
    P: int
    sites: dict[tuple, SiteResult]
    pending: dict[tuple, int]
    symbolic_programs: bool
    probing: int
    to_tag: list
    to_image: list
    race_work: int
    work: int
    _images: dict[tuple, tuple[np.ndarray, np.ndarray]]
    unfollowable: Callable[[Any], bool]
    spend: Callable[[int], None]
    box: Callable[[Form], tuple[np.ndarray, np.ndarray]]
    var_extent: Callable[[str, tuple[int, ...]], int]

    # -- accesses

    def store_lanes_distinct(self, off: "Form | Pieces") -> bool:
        """Distinct lanes of a program store distinct elements: each piece's lanes do (`lanes_injective`)
        and the pieces' boxes are disjoint in every program."""
        if isinstance(off, Form):
            return lanes_injective(off)
        boxes = []
        for _, form in off.parts:
            if not lanes_injective(form):
                return False
            try:
                boxes.append(self.box(form))
            except NotAffine:
                return False
        for i in range(len(boxes)):
            for j in range(i):
                (alo, ahi), (blo, bhi) = boxes[i], boxes[j]
                if ((alo <= bhi) & (blo <= ahi)).any():
                    return False
        return True

    def refuse(self, op: Op, kind: str, ptr: Opaque, ctx: Ctx) -> None:
        """No engine computes this address: its site is refused as the enumeration refuses it, and the
        rest of the launch keeps its exact summary instead of an enumeration of every program."""
        if self.probing or not np.any(ctx.pred):
            return
        refused = self.sites.setdefault((id(op), ctx.stack, "?"), SiteResult(kind, "?", op.loc, ctx.stack))
        if refused.refusal is None:
            refused.refusal = opaque_address_refusal(kind, ptr, op.loc)

    def record(self, op: Op, kind: str, ptr: Any, mask: Any, ctx: Ctx, copied: Any = None) -> None:
        if isinstance(ptr, Opaque) and self.unfollowable(ptr):
            self.refuse(op, kind, ptr, ctx)
            return
        if not isinstance(ptr, Ptr):
            raise NotAffine("an address outside the affine fragment")
        if mask is not None and not isinstance(mask, Cond):
            raise NotAffine("a mask outside the affine fragment")
        if self.probing:
            return
        key = (id(op), ctx.stack, ptr.arg)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteResult(kind, ptr.arg, op.loc, ctx.stack)
        info = self.m.args[ptr.arg]
        if kind == "store" and not self.store_lanes_distinct(ptr.off) and not same_lanes(ptr, copied):
            # two lanes of one program may store one element: the enumeration compares their values
            raise NotAffine("a store whose lanes may write one element")
        pred = np.broadcast_to(ctx.pred, (self.P,))
        if mask is not None:
            pred = pred & np.broadcast_to(mask.pred, (self.P,))
        for guard, off in parts_of(ptr.off):  # a piecewise address: each region on its own
            cons = list(ctx.cons) + list(guard) + list(off.side)
            if mask is not None:
                cons += list(mask.cons) + [f for f in mask.side if all(f is not g for g in off.side)]
            self.to_image.append((key, site, off, cons, pred, info))

    def image_sites(self) -> None:
        """The footprints of the accesses recorded, in the order they were: once the whole launch is
        in the fragment. A launch that leaves it at a later op (a store whose lanes may meet, a value
        of too many pieces) then costs no footprint of its earlier loads, which is most of a summary's
        time where they are large (a convolution's element-wise window)."""
        for key, site, off, cons, pred, info in self.to_image:
            starts, ends = self.image(off, cons, pred, info)
            if starts.size:
                site.add_intervals(starts, ends)
                if (starts.min() < info.lo or ends.max() > info.hi) and key not in self.pending:
                    if self.stop_at_oob:
                        raise OutOfBoundsFound
                    self.pending[key] = self.witness_program(off, cons, pred, info)
                if info.view is not None and views.first_outside(starts, ends, info.view, info.lo, info.hi) is not None:
                    raise NotAffine("an access leaves its declared view: the enumeration finds its witness")
            self.to_tag.append((site, off, cons, pred, info))
        self.to_image.clear()

    def tag_for_races(self) -> None:
        """Per-program runs for the race check, once the launch is summarized: only for the arguments
        some program stores to (a tensor that is only read cannot race), within one budget for all
        (past it, races on that argument stay undecided and the launch says so)."""
        stored = {s.arg for s in self.sites.values() if s.op == "store"}
        for site, off, cons, pred, info in self.to_tag:
            if site.arg in stored:
                self._tag(site, off, cons, pred, info)
            else:
                site.tagged = None
        self.to_tag.clear()

    def _tag(self, site: SiteResult, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> None:
        """The image of each program's own row (no lattice folding, so each run keeps its program)."""
        if site.tagged is None or kind_is_atomic(site.op):
            return
        if self.symbolic_programs:
            self._tag_symbolic(site, off, cons, pred, info)
            return
        if not pred.any():
            return
        try:
            rows, programs, coef, ext, C = self._problem(off, cons, pred, info)
        except NotAffine:
            site.tagged = None
            return
        alone = site.deferred is None and not site.tagged and not site.programs_apart  # its first piece
        if alone and programs_apart(rows[:, 0], coef, ext):
            site.programs_apart = True
            site.deferred = lambda: self._fill_tags(site, rows, programs, coef, ext, C)
            return
        # a second piece of the site (another branch's address): the proof covered one piece only
        site.programs_apart = False
        site.fill_tagged()
        self._fill_tags(site, rows, programs, coef, ext, C)

    def _tag_symbolic(self, site: SiteResult, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> None:
        """Program ids are box variables here, so no program's own runs can be listed. What can still
        be shown: the site's one address keeps programs apart (`programs_apart` over every variable,
        each program axis among them with a stride of its own, so two programs always differ in a
        variable the address follows). Anything else leaves the site's races unchecked, saying why."""
        site.tagged = None
        first = not site.programs_apart and site.races_unchecked is None
        if first and pred.any() and self._symbolic_apart(off, cons, pred, info):
            site.programs_apart = True
            # the form and the lane shape its lane variables range over (loop and quotient variables
            # are named per loop and per division: one name, one extent)
            site.apart_form = (off.shape, tuple(np.asarray(off.c).reshape(-1).tolist()), tuple(sorted(off.k.items())))
            return
        site.programs_apart = False
        site.apart_form = None
        site.races_unchecked = (
            f"at {self.m.grid[0] * self.m.grid[1] * self.m.grid[2]:,} programs each program's footprint is not "
            "listed, and this access's address was not shown to keep programs apart"
        )

    def _symbolic_apart(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> bool:
        moving = [f"P{axis}" for axis, n in enumerate(self.m.grid) if n > 1]
        if any(not off.k.get(v) for v in moving):
            return False  # two programs apart along that axis address alike
        try:
            rows, _, coef, ext, _ = self._problem(off, cons, pred, info)
        except NotAffine:
            return False
        return programs_apart(rows[:, 0], coef, ext)

    def _fill_tags(
        self, site: SiteResult, rows: np.ndarray, programs: np.ndarray, coef: np.ndarray, ext: np.ndarray, C: np.ndarray
    ) -> None:
        def spend(work: int) -> None:
            self.race_work += int(work)
            if self.race_work > self.m.budget // RACE_SHARE:
                raise NotAffine("per-program footprints past the race budget")

        try:
            # rows times the extents of every variable but a unit-stride one bounds the runs it would
            # list: past the budget, give up before computing any (a 16384³ matmul's C tile stores)
            outer = np.prod(ext[coef != 1].astype(float)) * max(1, len(rows))
            if self.race_work + outer > self.m.budget // RACE_SHARE:
                raise NotAffine("per-program footprints past the race budget")
            starts, ends, progs = box_image(rows, coef, ext, C, spend, tags=programs, with_tags=True)
        except NotAffine:
            site.tagged = None
            return
        site.add_tagged(starts, ends, progs)

    def _problem(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo):
        """The access as a box problem in elements: per-program rows [base, constraint constants...],
        the programs they belong to, and the variables' strides, extents and constraint coefficients."""
        size = info.elem_size
        names = sorted(set(off.k) | {v for f in cons for v in f.k})
        ext = np.array([self.var_extent(v, off.shape) for v in names], dtype=np.int64)
        coef = np.array([off.k.get(v, 0) for v in names], dtype=np.int64)
        base = np.broadcast_to(off.c, (self.P,))[pred]
        if (coef % size).any() or (base % size).any():
            raise NotAffine("an address that is not a whole number of elements")
        cols = [base // size] + [np.broadcast_to(f.c, (self.P,))[pred] for f in cons]
        C = np.array([[f.k.get(v, 0) for v in names] for f in cons], dtype=np.int64).reshape(len(cons), len(names))
        return np.stack(cols, axis=1), np.flatnonzero(pred), coef // size, ext, C

    def image(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> tuple[np.ndarray, np.ndarray]:
        """Element intervals {off / size} over every program in `pred`, every point of the box of the
        variables, within the constraints."""
        empty = np.zeros(0, dtype=np.int64)
        if not pred.any():
            return empty, empty
        rows, _, coef, ext, C = self._problem(off, cons, pred, info)
        key = (rows.shape, rows.tobytes(), coef.tobytes(), ext.tobytes(), C.shape, C.tobytes())
        hit = self._images.get(key)  # loads and stores of one tile share their problem
        if hit is not None:
            return hit
        kept = SOLVED.get(key)
        if kept is not None:
            starts, ends, work = kept
            self.spend(work)
        else:
            before = self.work
            starts, ends = self._solve(rows, coef, ext, C)
            SOLVED.put(key, starts, ends, self.work - before)
        self._images[key] = out = (starts, ends)
        return out

    def _solve(self, rows: np.ndarray, coef: np.ndarray, ext: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = unique_rows(rows)
        self.spend(rows.size)
        lattice = factor(rows)
        if lattice is not None:
            x0, atoms = lattice
            rows = x0[None, :]
            for d, n in atoms:
                ext = np.append(ext, n)
                coef = np.append(coef, d[0])
                C = np.concatenate((C, d[1:, None]), axis=1)
        starts, ends = box_image(rows, coef, ext, C, self.spend)
        return starts, ends

    def witness_program(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> int:
        """The lowest program index whose part of this access leaves the argument's storage."""
        if self.symbolic_programs:
            raise NotAffine("an out-of-bounds access among symbolic programs: enumeration finds its witness")
        rows, programs, coef, ext, C = self._problem(off, cons, pred, info)
        order = np.lexsort(rows.T[::-1])  # stable: equal rows keep ascending programs
        rows, programs = rows[order], programs[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        self.spend(rows.size)
        lo, hi, tags = box_image(rows[first], coef, ext, C, self.spend, tags=programs[first], extremes=True)
        bad = (lo < info.lo) | (hi >= info.hi)
        if not bad.any():
            raise NotAffine("no program found for an out-of-bounds footprint")
        return int(tags[bad].min())

    def fill_witnesses(self) -> None:
        """Witnesses for the out-of-bounds sites: each from enumerating the one program found for it
        (lane, loop iteration and element exactly as the enumeration reports them)."""
        by_program: dict[int, list[tuple]] = {}
        for key, program in self.pending.items():
            by_program.setdefault(program, []).append(key)
        for program, keys in sorted(by_program.items()):
            one = AccessGraph(self.m)
            try:
                one.run_programs(program, 1, until=frozenset(keys))
            except Refusal as refusal:
                raise NotAffine(f"enumerating the witness program failed: {refusal}") from None
            for key in keys:
                site = one.sites.get(key)
                if site is None or site.oob is None:
                    raise NotAffine("the witness program does not reproduce the out-of-bounds access")
                self.sites[key].oob = site.oob
        self.pending.clear()
