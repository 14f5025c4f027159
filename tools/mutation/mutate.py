"""Mutation testing of the TTIR reader and both engines: does the test suite notice a broken rule?

    .venv/bin/python tools/mutation/mutate.py [--jobs 2] [--only NAME ...] [--list] [--out FILE]

Each entry of MUTATIONS reverts or breaks one non-trivial rule of the TTIR reader (`tilelens_lsp/ttir/`),
the engines (`tilelens_lsp/engines/`) or a client by replacing one exact snippet (which must occur
exactly once). For each one
the package is copied to a temporary folder, the snippet replaced there, and the fast test selection

    pytest -x -q tests/conformance tests/unit -p no:cacheprovider

runs with `PYTHONPATH=<copy>` (so the copy shadows the editable install; the `mutation_probe` plugin
proves it, module by module) and `TILELENS_CACHE_DIR=off` (no cached result can hide the mutation).
A mutation is caught when pytest exits non-zero. An unmutated copy runs first: it must pass (it also
warms the conformance oracle cache, which is keyed by kernel and launch, not by the product).

Mutations judged semantically equivalent carry the reason in `equivalent`; they still run, but a
survivor among them is not a miss. The final line is
`mutation: N mutations, K caught, E equivalent, catch rate K/(N-E)`.

Not part of the regular pytest run (minutes per mutation); `test_mutation_list.py` only checks that
every snippet still occurs exactly once, so the list cannot rot silently.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE = REPO / "tilelens_lsp"
SELECTION = ["-x", "-q", "tests/conformance", "tests/unit", "-p", "no:cacheprovider"]
MAX_JOBS = 2


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # relative to the package folder
    original: str  # must occur exactly once in the file
    mutated: str
    description: str
    equivalent: str | None = None  # why the mutation cannot change any observable result
    gap: str | None = None  # for a known survivor: a test that would catch it


M = Mutation
MUTATIONS: list[Mutation] = [
    # ------------------------------------------------------------ integer semantics (engines/values.py, enumerate/arith.py)
    M(
        "divsi-floor",
        "engines/values.py",
        '"arith.divsi": (tdiv, False),',
        '"arith.divsi": (floordiv, False),',
        "arith.divsi rounds toward -inf (Python //) instead of truncating toward zero",
        gap="conformance kernel reading x_ptr + (offs - 1) // 2 (half-pixel upsample: lane 0 reads element 0)",
    ),
    M(
        "remsi-python-sign",
        "engines/values.py",
        '"arith.remsi": (trem, False),',
        '"arith.remsi": (lambda a, b, w: np.where(b == 0, 0, a % np.where(b == 0, 1, b)), False),',
        "arith.remsi takes the divisor's sign (Python %) instead of the dividend's",
        gap="conformance kernel reading x_ptr + 3 + (offs - 3) % 4 (remainders -3..3)",
    ),
    M(
        "divui-signed",
        "engines/values.py",
        '"arith.divui": (udiv, False),',
        '"arith.divui": (tdiv, False),',
        "arith.divui divides the signed values instead of the unsigned ones",
        gap=(
            "conformance kernel with key = (offs - 16).to(tl.uint32, bitcast=True) reading x_ptr + 16 + (key // 65536) % 16"
        ),
    ),
    M(
        "shrui-arithmetic",
        "engines/values.py",
        '"arith.shrui": (shrui, False),',
        '"arith.shrui": (lambda a, b, w: a >> np.clip(b, 0, 63), False),',
        "arith.shrui shifts in the sign bit (behaves like shrsi)",
        gap="same kernel reading x_ptr + (key >> 28) (15 for wrapped lanes)",
    ),
    M(
        "wraparound-removed",
        "engines/values.py",
        "    half = 1 << (bits - 1)\n    return ((a + half) & ((1 << bits) - 1)) - half",
        "    return a",
        "results of sub-64-bit integer ops no longer wrap to their width (i32 wraparound removed)",
        gap=(
            "conformance kernel masking with the sign of a wrapping i32 hash: keep = (offs * -1640531535 >= 0) & (offs < n)"
        ),
    ),
    M(
        "cmpi-unsigned-as-signed",
        "engines/enumerate/arith.py",
        'if pred.startswith("u"):',
        "if False:",
        "arith.cmpi ult/ule/ugt/uge compare the signed values",
        gap="conformance kernel with a one-compare window mask: (offs - start).to(tl.uint32, bitcast=True) < length",
    ),
    M(
        "extui-as-extsi",
        "engines/enumerate/arith.py",
        'HANDLERS[_name] = _cast("zext")',
        'HANDLERS[_name] = _cast("sext")',
        "arith.extui / index_castui sign-extend instead of zero-extending",
        gap="conformance kernel loading x_ptr + offs.to(tl.uint8) over 512 lanes (a ring of 256 slots)",
    ),
    M(
        "extsi-i1-not-all-ones",
        "engines/enumerate/arith.py",
        "a = -a  # sign-extending an i1 true gives all ones",
        "pass",
        "arith.extsi of an i1 true gives 1 instead of -1",
        equivalent="unreachable from Triton's TTIR: the frontend casts bools with sign_extend=False (extui), "
        "`tl.where(c, -1, 0)` stays an arith.select, and no corpus or probe kernel yields an "
        "extsi of an i1",
    ),
    M(
        "trunci-no-wrap",
        "engines/enumerate/arith.py",
        "        return [IntV(wrap(a, ty.bits), ty.bits)]\n",
        "        return [IntV(a, ty.bits)]\n",
        "arith.trunci (and the other casts) keep the value instead of wrapping it to the new width",
        gap="conformance kernel loading x_ptr + 128 + offs.to(tl.int8) over 256 lanes",
    ),
    # ------------------------------------------------------------ width obligations (enumerate/graph.py, address_slice.py)
    M(
        "width-check-disabled",
        "engines/enumerate/graph.py",
        "        if id(op) not in self.slice:\n            return wrap(exact, bits)",
        "        if True:\n            return wrap(exact, bits)",
        "no width obligation is ever recorded (int32 overflow detection off)",
    ),
    M(
        "width-range-unsigned",
        "engines/enumerate/graph.py",
        "lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1",
        "lo, hi = -(1 << bits), (1 << bits) - 1",
        "the width obligation accepts values up to 2**bits (one bit too wide)",
    ),
    M(
        "width-check-ignores-pred",
        "engines/enumerate/graph.py",
        "        bad = ((full < lo) | (full > hi)) & self.pred_like(ctx, full.ndim - 1)\n",
        "        bad = (full < lo) | (full > hi)\n",
        "width obligations also fail on programs that do not run this code (inactive loop/branch lanes)",
        gap=(
            "unit test: `if pid < 2: store(x_ptr + pid * STRIDE + arange)` with grid (4,), STRIDE=2**30 must give no TL003"
        ),
    ),
    M(
        "slice-ignores-loop-carried",
        "engines/enumerate/address_slice.py",
        "        for src in carried.get(key, []):",
        "        for src in []:",
        "the address slice does not follow loop-carried values or induction variables to their sources",
        gap="bug-corpus kernel: off += stride in a loop, stride=2**30, 4 rows; expect TL003 on the += line",
    ),
    # ------------------------------------------------------------ shapes and the driver (enumerate/arith.py, graph.py)
    M(
        "expand-dims-axis-off-by-one",
        "engines/enumerate/arith.py",
        "return np.expand_dims(a, op.axis + 1)",
        "return np.expand_dims(a, op.axis)",
        "tt.expand_dims forgets the leading program axis (axis off by one)",
    ),
    M(
        "trans-identity",
        "engines/enumerate/arith.py",
        "return np.transpose(a, [0] + [o + 1 for o in order])",
        "return a",
        "tt.trans does not transpose",
    ),
    M(
        "trans-order-ignored",
        "engines/enumerate/arith.py",
        "order = list(op.order) if op.order is not None else list(range(a.ndim - 1))[::-1]",
        "order = list(range(a.ndim - 1))[::-1]",
        "tt.trans ignores its `order` attribute and always reverses the axes",
        gap=("conformance kernel storing tl.permute(tile, (0, 2, 1)) with mask tl.permute(mask, (0, 2, 1)), ragged M != N"),
    ),
    M(
        "splat-not-materialized",
        "engines/enumerate/arith.py",
        "return np.broadcast_to(a.reshape(a.shape[:1] + (1,) * len(ty.shape)), a.shape[:1] + ty.shape)",
        "return a.reshape(a.shape[:1] + (1,) * len(ty.shape))",
        "tt.splat leaves size-1 axes instead of the result shape",
        gap=(
            "conformance kernel with bias = tl.load(b_ptr + offs * 0, mask=mask) (crashes the mutant: needs refusals pinned)"
        ),
    ),
    M(
        "broadcast-identity",
        "engines/enumerate/arith.py",
        "return np.broadcast_to(a, a.shape[:1] + ty.shape)",
        "return a",
        "tt.broadcast keeps the operand's shape",
        gap=(
            "conformance kernel with idx = tl.reshape(tl.broadcast_to(rows[:, None], (R, 4)), (4 * R,)) (crash: "
            "needs refusals pinned)"
        ),
    ),
    M(
        "make-range-start-ignored",
        "engines/enumerate/arith.py",
        "np.arange(start, end, dtype=np.int64)[None]",
        "np.arange(0, end - start, dtype=np.int64)[None]",
        "tt.make_range starts at 0 whatever its `start`",
        gap="conformance kernel loading with cols = tl.arange(BLOCK, 2 * BLOCK)",
    ),
    M(
        "program-id-y-z-swapped",
        "engines/enumerate/arith.py",
        "    return [IntV(g.pid(op.program_axis).copy(), 32)]",
        "    return [IntV(g.pid((0, 2, 1)[op.program_axis]).copy(), 32)]",
        "tt.get_program_id y reads the z coordinate and z the y coordinate",
    ),
    M(
        "grid-order-x-slowest",
        "engines/enumerate/graph.py",
        "self._pids = [idx % gx, (idx // gx) % gy, idx // (gx * gy)]",
        "self._pids = [idx // (gy * self.m.grid[2]), (idx // self.m.grid[2]) % gy, idx % self.m.grid[2]]",
        "programs are enumerated with x slowest instead of x fastest",
        equivalent="another bijection of the linear program index onto (x, y, z): the same programs run, "
        "so footprints and obligations are the same set; only which of several out-of-bounds "
        "programs is named first can change, and any of them is a correct witness",
    ),
    M(
        "last-chunk-not-first",
        "engines/enumerate/graph.py",
        "order = itertools.chain((n_chunks - 1,), range(n_chunks - 1))",
        "order = iter(range(n_chunks))",
        "program batches run in plain order instead of the last batch first",
        gap=(
            "unit test: unmasked tail store, grid (4096,), BLOCK=1024, enumeration_budget=3<<19: TL001 must "
            "still be reported"
        ),
    ),
    # ------------------------------------------------------------ pointers and records (enumerate/memory.py, recording.py)
    M(
        "addptr-no-pointee-scaling",
        "engines/enumerate/memory.py",
        "return [p.plus(off.a.astype(np.int64, copy=False) * p.pointee)]",
        "return [p.plus(off.a.astype(np.int64, copy=False))]",
        "tt.addptr adds the offset in bytes instead of elements (pointee size dropped)",
    ),
    M(
        "record-mask-ignored",
        "engines/enumerate/recording.py",
        "lane_mask = mask.a if isinstance(mask, IntV) else np.ones((1,) * len(shape), dtype=bool)",
        "lane_mask = np.ones((1,) * len(shape), dtype=bool)",
        "a known mask is ignored: every lane of a masked access is recorded",
    ),
    M(
        "record-pred-ignored",
        "engines/enumerate/recording.py",
        "        pred = self.pred_like(ctx, len(shape) - 1)\n",
        "        pred = np.ones((1,) * len(shape), dtype=bool)\n",
        "accesses are recorded for programs that do not run them (control predicate ignored)",
    ),
    M(
        "unknown-mask-exact",
        "engines/enumerate/recording.py",
        "        if isinstance(mask, Opaque):\n            exact = False\n",
        "        if isinstance(mask, Opaque):\n",
        "a data-dependent mask no longer makes the footprint inexact",
    ),
    M(
        "unknown-mask-bound-dropped",
        "engines/enumerate/recording.py",
        "            exact = False\n            mask = mask.bound\n",
        "            exact = False\n            mask = None\n",
        "a data-dependent mask loses the bound of its known conjuncts (e.g. `offs < n`): every lane may run",
    ),
    M(
        "oob-upper-off-by-one-elements",
        "engines/enumerate/recording.py",
        "if site.oob is None and (elems.min() < info.lo or elems.max() >= info.hi):",
        "if site.oob is None and (elems.min() < info.lo or elems.max() > info.hi):",
        "element path: an access to the element just past the storage is not looked at as out of bounds",
    ),
    M(
        "oob-upper-off-by-one-rows",
        "engines/enumerate/recording.py",
        "if site.oob is None and (starts.min() < info.lo or ends.max() > info.hi):",
        "if site.oob is None and (starts.min() < info.lo or ends.max() > info.hi + 1):",
        "contiguous-row path: a row ending one element past the storage is not looked at as out of bounds",
    ),
    M(
        "rows-mask-prefix-unchecked",
        "engines/enumerate/recording.py",
        "                if not (line[..., 1:] <= line[..., :-1]).all():\n                    return False\n",
        "",
        "contiguous-row fast path: a mask that is not a prefix of the row (holes, suffixes) is read as "
        "a prefix of the same length",
    ),
    M(
        "rows-contiguity-unchecked",
        "engines/enumerate/recording.py",
        "            if len(known) != len(steps) or sum(known) != size:\n",
        "            if len(known) != len(steps) or sum(known) == 0:\n",
        "contiguous-row fast path: a strided row is taken as contiguous",
    ),
    # ------------------------------------------------------------ control flow (enumerate/control.py)
    M(
        "for-trip-count-floor",
        "engines/enumerate/control.py",
        "np.maximum(0, -((lbv - ubv) // stv))",
        "np.maximum(0, (ubv - lbv) // stv)",
        "scf.for trip count rounds down: the last partial step is dropped (off by one)",
    ),
    M(
        "for-iv-ignores-step",
        "engines/enumerate/control.py",
        "inner[iv] = IntV(wrap((lb.a + t * step.a) if uniform else (lbv + t * stv), lb.bits), lb.bits)",
        "inner[iv] = IntV(wrap((lb.a + t) if uniform else (lbv + t), lb.bits), lb.bits)",
        "scf.for induction variable advances by 1 instead of by its step",
    ),
    M(
        "for-body-ignores-active",
        "engines/enumerate/control.py",
        "yielded = g.eval_block(body, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))",
        "yielded = g.eval_block(body, inner, Ctx(ctx.pred, ctx.iters + (t,), ctx.exact, ctx.stack))",
        "a program whose loop has finished still runs the later iterations of the body",
    ),
    M(
        "for-blend-ignored",
        "engines/enumerate/control.py",
        "values = [blend(active, new, old, op) for new, old in zip(yielded, values)]",
        "values = list(yielded)",
        "loop-carried values of finished programs keep changing (active predicate not blended)",
        gap=(
            "conformance kernel using a loop's final value after the loop: pos += 2 for k in range(pid + 1); "
            "load x_ptr + pos + arange"
        ),
    ),
    M(
        "for-iter-args-misbound",
        "engines/enumerate/control.py",
        "        for name, v in zip(carried, values):\n            inner[name] = v",
        "        for name, v in zip(carried, values[::-1]):\n            inner[name] = v",
        "scf.for iter_args are bound to the carried values in reverse order",
    ),
    M(
        "if-then-pred-ignored",
        "engines/enumerate/control.py",
        "Ctx(ctx.pred & c, ctx.iters, ctx.exact, ctx.stack)",
        "Ctx(ctx.pred, ctx.iters, ctx.exact, ctx.stack)",
        "scf.if then-branch runs for every program, whatever the condition",
    ),
    M(
        "if-else-pred-ignored",
        "engines/enumerate/control.py",
        "Ctx(ctx.pred & ~c, ctx.iters, ctx.exact, ctx.stack)",
        "Ctx(ctx.pred, ctx.iters, ctx.exact, ctx.stack)",
        "scf.if else-branch runs for every program (predicate not applied to the else branch)",
    ),
    M(
        "if-results-then-only",
        "engines/enumerate/control.py",
        "return [blend(c, t, e, op) for t, e in zip(then_v, else_v)]",
        "return [t for t, e in zip(then_v, else_v)]",
        "scf.if results are always the then-branch's values",
        gap=(
            "conformance kernel: if pid > 0: lo = pid * BLOCK - 1 (+ a store) else: lo = 0 (+ a store); load "
            "x_ptr + lo + arange"
        ),
    ),
    M(
        "data-branch-exact",
        "engines/enumerate/control.py",
        "sides.append(g.eval_block(block, inner, Ctx(ctx.pred, ctx.iters, False, ctx.stack)))",
        "sides.append(g.eval_block(block, inner, Ctx(ctx.pred, ctx.iters, ctx.exact, ctx.stack)))",
        "accesses under a branch on loaded data are reported as exact",
        gap=(
            "conformance kernel: if tl.load(flag_ptr + pid) > 0: copy the block (the oracle skips about half the programs)"
        ),
    ),
    M(
        "while-wrap-unwatched",
        "engines/enumerate/graph.py",
        "if id(op) in self.watch and id(op) not in self.wraps:",
        "if False:",
        "an int32 wrap on a while loop's condition path goes unnoticed: the loop runs to WHILE_LIMIT",
    ),
    M(
        "while-wrap-grace-forever",
        "engines/enumerate/control.py",
        "                self.deadline = t + WRAP_GRACE",
        "                self.deadline = WHILE_LIMIT",
        "a wrapped while loop is followed to WHILE_LIMIT instead of WRAP_GRACE trips after the wrap",
    ),
    M(
        "while-state-without-counter",
        "engines/enumerate/control.py",
        "state = (np.asarray(active), *(np.asarray(v.a) for v in values))",
        "state = (np.asarray(active),)",
        "a while loop's repeated state ignores its counter: every loop that runs twice looks non-terminating",
    ),
    M(
        "while-stops-when-one-program-leaves",
        "engines/enumerate/control.py",
        "        if not c.any():\n            if t == 0:",
        "        if not c.all():\n            if t == 0:",
        "scf.while stops as soon as one program's condition is false instead of when all are",
    ),
    M(
        "while-results-not-blended",
        "engines/enumerate/control.py",
        "final = forwarded if final is None else [blend(leaving, f, old, op) for f, old in zip(forwarded, final)]",
        "final = forwarded",
        "scf.while results are the last iteration's values for every program, not each program's own exit",
        equivalent="carried values of a program that left are frozen by the carried-value blend, and the "
        "before-region is a pure function of them, so its later forwarded values equal those "
        "at the program's exit",
    ),
    M(
        "while-body-ignores-condition",
        "engines/enumerate/control.py",
        "yielded = g.eval_block(after, inner, Ctx(c, ctx.iters + (t,), ctx.exact, ctx.stack))",
        "yielded = g.eval_block(after, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))",
        "scf.while body also runs, once more, for programs whose condition just became false",
        gap="conformance kernel: unmasked grid-stride while loop with uneven trip counts, grid (3,), n=160, BLOCK=32",
    ),
    M(
        "call-args-misbound",
        "engines/enumerate/control.py",
        "inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}",
        "inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands[1::-1] + op.operands[2:])}",
        "tt.call binds the callee's first two parameters to each other's arguments",
        gap=(
            "already wrong on helper_noinline.py, but as an out-of-vocabulary refusal, which the conformance "
            "test tolerates: pin the expected refusals"
        ),
    ),
    # ------------------------------------------------------------ reader (ttir/reader.py)
    M(
        "result-count-not-expanded",
        "ttir/reader.py",
        'out.extend(f"{name}#{i}" for i in range(int(count)))',
        "out.append(name)",
        "`%x:3 = ...` defines one result instead of %x#0, %x#1, %x#2",
    ),
    M(
        "loc-not-stripped",
        "ttir/reader.py",
        'return (line[:idx] + (" " + suffix if suffix else "")).rstrip(), body[:end]',
        "return line, body[:end]",
        "the trailing `loc(...)` stays in the op text (types and attributes are read through it)",
    ),
    M(
        "for-bindings-as-operands",
        "ttir/reader.py",
        "operands = [o for o in operands if o not in bound]",
        "operands = operands",
        "scf.for/while: the induction variable and iter_args names are read as operands",
    ),
    M(
        "alignment-check-disabled",
        "ttir/reader.py",
        "    mlir_module.walk(visit)",
        "    return",
        "the parsed ops are never compared with the MLIR bindings' walk",
    ),
    M(
        "alignment-operand-count-ignored",
        "ttir/reader.py",
        "(b[1] != p[1] and not _operand_count_exempt(p[0]))",
        "False",
        "the alignment check compares op names and result counts but not operand counts",
    ),
    # ------------------------------------------------------------ the affine summary (engines/affine/)
    M(
        "affine-fusion-ignores-constraints",
        "engines/affine/box.py",
        "            if coef[a] and coef[b] == coef[a] * ext[a] and (C[:, b] == C[:, a] * ext[a]).all():\n",
        "            if coef[a] and coef[b] == coef[a] * ext[a]:\n",
        "two variables fuse even when a constraint sees them in another ratio",
    ),
    M(
        "affine-implied-constraint-off-by-one",
        "engines/affine/box.py",
        "keep = ~(lo >= 0).all(axis=0)",
        "keep = ~(lo >= -1).all(axis=0)",
        "a constraint violated at one corner of the box is dropped as implied",
    ),
    M(
        "affine-upper-bound-off-by-one",
        "engines/affine/box.py",
        "hi[:, v] = np.minimum(hi[:, v], K[:, j] // (-a) + 1)",
        "hi[:, v] = np.minimum(hi[:, v], K[:, j] // (-a))",
        "a single-variable upper bound excludes its last value",
    ),
    M(
        "affine-lower-bound-floor",
        "engines/affine/box.py",
        "lo[:, v] = np.maximum(lo[:, v], -(K[:, j] // a))",
        "lo[:, v] = np.maximum(lo[:, v], (-K[:, j]) // a)",
        "a single-variable lower bound rounds down instead of up",
    ),
    M(
        "affine-lattice-unchecked",
        "engines/affine/box.py",
        "        if not (blocks == blocks[:, :1] + np.arange(n, dtype=np.int64)[None, :, None] * d).all():\n            return None",
        "        pass",
        "program constants are factored into a lattice without checking every block",
    ),
    M(
        "affine-division-without-divisibility",
        "engines/affine/handlers.py",
        "if all(x % d == 0 for x in a.k.values()):",
        "if True:",
        "a division of a lane form divides its coefficients even when they are not multiples",
    ),
    M(
        "affine-induction-step-dropped",
        "engines/affine/control.py",
        "    return int(d.reshape(-1)[0])",
        "    return 0",
        "a loop-carried pointer is taken as loop-invariant",
    ),
    M(
        "affine-trip-constraint-dropped",
        "engines/affine/control.py",
        "ctx.cons + (Form(trips - 1, {t: -1}, (), 64),) if T > 1 else ctx.cons",
        "ctx.cons",
        "every program runs the longest program's trip count",
    ),
    M(
        "affine-while-inclusive-bound-ignored",
        "engines/affine/control.py",
        'return names.index(a), bound, 1 if cmp.predicate == "sle" else 0',
        "return names.index(a), bound, 0",
        "a grid-stride `while iv <= bound` is counted as `iv < bound`: its last trip is missed",
    ),
    M(
        "affine-hidden-variable-worst-value",
        "engines/affine/box.py",
        "best = ext[h] - 1 if (signs > 0).any() else 0",
        "best = 0",
        "a variable only constraints see is fixed at 0 even where its largest value is loosest",
    ),
    M(
        "affine-min-region-flipped",
        "engines/affine/handlers.py",
        "# a wins where a <= b: b - a >= 0\n                    a_wins = Form(b.c - a.c, coeffs((b.k, 1), (a.k, -1)), shape, 64)",
        "# a wins where a <= b: b - a >= 0\n                    a_wins = Form(a.c - b.c, coeffs((a.k, 1), (b.k, -1)), shape, 64)",
        "a lane-varying minimum picks the larger value on each region",
    ),
    M(
        "affine-select-else-region-not-negated",
        "engines/affine/forms.py",
        "falses = [side + tuple(cons[:i]) + (negate(cons[i]),) for i in range(len(cons))]",
        "falses = [side + tuple(cons[:i]) + (cons[i],) for i in range(len(cons))]",
        "a select on a lane condition takes its else value where the condition holds",
    ),
    M(
        "affine-slt-as-sle",
        "engines/affine/handlers.py",
        '"slt": (one(neg),)',
        '"slt": (neg,)',
        "a < b is summarized as a <= b",
    ),
    # ------------------------------------------------------------ control-flow graphs (early returns)
    M(
        "cfg-entry-block-only",
        "engines/enumerate/graph.py",
        '        if cfg.is_graph(body):\n            return cfg.run(body, env, ctx, self)\n        return self.eval_block(body.blocks[0], env, ctx)\n\n    def eval_block(self, block: Block, env: dict[str, Value], ctx: Ctx) -> list[Value]:\n        term = self.eval_ops(block, env, ctx)\n        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):\n            return [self.get(env, o) for o in term.operands]\n        if term is not None and term.successors:\n            raise',
        '        if False:\n            return cfg.run(body, env, ctx, self)\n        return self.eval_block(body.blocks[0], env, ctx)\n\n    def eval_block(self, block: Block, env: dict[str, Value], ctx: Ctx) -> list[Value]:\n        term = self.eval_ops(block, env, ctx)\n        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):\n            return [self.get(env, o) for o in term.operands]\n        if False:\n            raise',
        "the enumeration evaluates only the entry block of a function body (the bug that hid every access "
        "after an early return)",
    ),
    M(
        "cfg-cond-br-ignored",
        "ttir/cfg.py",
        "c = np.broadcast_to(c, (P,))",
        "c = np.ones(P, dtype=bool)",
        "a program-uniform cf.cond_br always takes its first successor",
    ),
    M(
        "cfg-false-edge-not-negated",
        "ttir/cfg.py",
        "(m & ~c, must[i] & ~c)",
        "(m & c, must[i] & c)",
        "the false successor of a cf.cond_br runs for the programs of the true one",
    ),
    M(
        "cfg-data-branch-always-taken",
        "ttir/cfg.py",
        "choices = [(m, none), (m, none)]",
        "choices = [(m, m), (none, none)]",
        "a branch on loaded data is taken for certain (its other successor never runs)",
    ),
    M(
        "cfg-may-reach-skipped",
        "ttir/cfg.py",
        "        m = may[i]\n        if not m.any():",
        "        m = may[i]\n        if not must[i].any():",
        "a block only some paths reach (after a data-dependent branch) is skipped as unreachable",
    ),
    M(
        "cfg-join-overlap-blended",
        "engines/enumerate/graph.py",
        "        if (total > 1).any():  # edges chosen by loaded data overlap: either value may arrive\n",
        "        if False:  # edges chosen by loaded data overlap: either value may arrive\n",
        "a block argument reached by overlapping data-dependent edges takes one edge's value",
    ),
    M(
        "ptr-choice-drops-candidate",
        "engines/enumerate/table.py",
        "    for side, pick in ((a, True), (b, False)):",
        "    for side, pick in ((a, True),):",
        "a pointer select keeps only its first candidate",
    ),
    M(
        "ptr-choice-lanes-not-negated",
        "engines/enumerate/table.py",
        "            c = c if pick else ~c",
        "            c = c",
        "both candidates of a pointer select are taken on the lanes that pick the first",
    ),
    M(
        "accounting-off",
        "engines/accounting.py",
        "    missing = [op for ctx, op in wanted.items() if ctx not in seen]",
        "    missing = []",
        "the run-time check that every reachable memory op was examined is disabled",
    ),
    M(
        "reader-blocks-flattened",
        "ttir/reader.py",
        "                if blocks[-1].ops or blocks[-1].label:",
        "                if False:",
        "the reader ignores block labels and puts every op of a body in one block",
    ),
    M(
        "affine-branch-condition-ignored",
        "engines/affine/summary.py",
        "        return np.broadcast_to(value.pred, (self.P,))",
        "        return np.ones(self.P, dtype=bool)",
        "the affine summary takes every program-uniform branch",
    ),
    # ------------------------------------------------------------ value ranges, views, races
    M(
        "range-add-upper-from-lower",
        "engines/ranges.py",
        "        return RangeV(alo + blo, ahi + bhi, bits, undef, src)",
        "        return RangeV(alo + blo, ahi + blo, bits, undef, src)",
        "a sum of intervals takes its upper end from the other operand's lower end",
    ),
    M(
        "range-mul-corners-unordered",
        "engines/ranges.py",
        "        lo, hi = corners.min(axis=0), corners.max(axis=0)",
        "        lo, hi = corners[0], corners[3]",
        "a product of intervals takes lo·lo and hi·hi as its ends (wrong for negative factors)",
    ),
    M(
        "range-slt-decided-by-lower-ends",
        "engines/ranges.py",
        '"slt": (ahi < blo, alo >= bhi)',
        '"slt": (alo < blo, alo >= bhi)',
        "a < b is taken as always true when only the lower ends compare",
    ),
    M(
        "range-span-exact",
        "engines/enumerate/recording.py",
        "        site = self._site(op, kind, ptr.arg, ctx)\n        site.exact = False\n        site.tagged = None",
        "        site = self._site(op, kind, ptr.arg, ctx)\n        site.tagged = None",
        "an address from a declared-range index is reported as exact (a TL002 becomes a definite TL001)",
    ),
    M(
        "view-check-off",
        "engines/views.py",
        "    if inside.all():\n        return None",
        "    if True:\n        return None",
        "accesses outside their view are never reported",
    ),
    M(
        "race-store-overlap-ignored",
        "clients/race.py",
        "        hit = np.flatnonzero(stores.starts[1:] < reach[:-1])",
        "        hit = np.flatnonzero(stores.starts[1:] < stores.starts[:-1])",
        "two programs storing the same element are not seen",
    ),
    M(
        "race-load-program-ignored",
        "clients/race.py",
        "    same = (run_id[safe_lo] == run_id[safe_hi]) & (stores.progs[safe_lo] == loads.progs)\n",
        "    same = run_id[safe_lo] == run_id[safe_hi]\n",
        "a load of an element another program stores counts as the same program's",
    ),
    M(
        "race-quick-proof-ignores-double-stores",
        "clients/race.py",
        "    return total == union and not _loads_meet_stores(sites, lo, hi)",
        "    return not _loads_meet_stores(sites, lo, hi)",
        "the quick no-race proof accepts stores whose runs cover some element twice",
    ),
    M(
        "race-deferred-runs-never-filled",
        "clients/race.py",
        "                site.fill_tagged()  # the per-program runs an engine left until they were needed",
        "                pass",
        "per-program runs an engine deferred are read as none: two stores that each keep programs apart never race",
    ),
    M(
        "programs-apart-ignores-repeated-bases",
        "engines/affine/footprints.py",
        "    if bases.size > 1 and not (bases[1:] != bases[:-1]).all():\n        return False",
        "    bases = np.unique(bases)",
        "two programs with one base (storing the same elements) are proven apart",
    ),
    # ------------------------------------------------------------ guards, trip counts and lane races (issue 23)
    M(
        "guard-if-wrong-edge",
        "engines/enumerate/control.py",
        "for polarity, block in ((True, then_b), (False, else_b)):",
        "for polarity, block in ((False, then_b), (True, else_b)):",
        "a data branch narrows its then-side by the else-side's facts and back (a guard on the wrong edge)",
    ),
    M(
        "guard-if-kept-after-join",
        "engines/enumerate/control.py",
        '            inner = dict(env)\n            if cond.why == "data":',
        '            inner = env\n            if cond.why == "data":',
        "a data branch's narrowed values stay in the environment after the if",
    ),
    M(
        "guard-cfg-kept-after-join",
        "ttir/cfg.py",
        "over = narrowed.get(i, {}) if edges_in[i] <= 1 else {}",
        "over = narrowed.get(i, {})",
        "an early-return edge's narrowing is kept in a block that other edges reach too",
    ),
    M(
        "guard-cfg-into-shared-env",
        "ttir/cfg.py",
        "benv = {**env, **over} if over else env",
        "benv = env.update(over) or env",
        "a block's narrowed values are written into the environment every later block shares",
    ),
    M(
        "guard-cfg-wrong-edge",
        "ttir/cfg.py",
        "edge_values(term, pol, benv, ctx)} for pol in (True, False)]",
        "edge_values(term, pol, benv, ctx)} for pol in (False, True)]",
        "cf.cond_br's true successor gets the false edge's narrowing and back",
    ),
    M(
        "guard-lane-origins-unchecked",
        "engines/enumerate/guards.py",
        "            if not _same(want, a, shape):\n                return False",
        "            if False:\n                return False",
        "a lane fact reaches an address through any lanes (a transposed index keeps its guard)",
    ),
    M(
        "guard-impossible-lanes-kept-wrong",
        "engines/enumerate/guards.py",
        "return mask_and(mask, IntV(~impossible, 1))",
        "return mask_and(mask, IntV(impossible, 1))",
        "the lanes where a guard cannot hold are the only ones kept",
    ),
    M(
        "relational-strictness-off-by-one",
        "engines/linear.py",
        "bound = index.c - k * fact.c + k * slack\n",
        "bound = index.c - k * fact.c + k * (slack - 1)\n",
        "a relational guard's bound one step tighter than its comparison: `o_t <= eos - bos` reads as safe",
    ),
    M(
        "relational-any-sign",
        "engines/linear.py",
        "        valid = k > 0\n",
        "        valid = k != 0\n",
        "a negative multiple of a guard bounds the address from above (it bounds it from below)",
    ),
    M(
        "relational-lower-bound-one-high",
        "engines/enumerate/relational.py",
        "np.maximum(lo, -np.broadcast_to(bottom[0], shape))",
        "np.maximum(lo, -np.broadcast_to(bottom[0], shape) + ptr.pointee)",
        "the relational low end one element too high: a backwards row one below the sequence reads as safe",
    ),
    M(
        "relational-impossible-lanes-kept-wrong",
        "engines/enumerate/relational.py",
        "mask_and(mask, IntV(~impossible, 1))",
        "mask_and(mask, IntV(impossible, 1))",
        "the lanes where a relational bound falls below the low end are the only ones kept",
    ),
    M(
        "refine-sle-strict",
        "engines/ranges.py",
        '    elif pred == "sle":\n        hi = np.minimum(hi, yhi)',
        '    elif pred == "sle":\n        hi = np.minimum(hi, yhi - 1)',
        "x <= y narrows x below y (as x < y would): the off-by-one guard reads as safe",
    ),
    M(
        "refine-ne-any-end",
        "engines/ranges.py",
        "        point = ylo == yhi  # only a known value can be removed, and only at an end\n",
        "        point = np.ones(np.broadcast_shapes(ylo.shape, yhi.shape), bool)\n",
        "x != y removes y's low end from x even when y is not one known value",
    ),
    M(
        "snap-skips-gaps-wrongly",
        "engines/ranges.py",
        "    lo = np.maximum(r.lo, los[i])",
        "    lo = np.maximum(r.lo, his[i])",
        "a narrowed low end snaps to the top of its declared interval instead of its bottom",
    ),
    M(
        "for-ranged-trips-from-low-end",
        "engines/enumerate/control.py",
        "most = np.where(ctx.pred, np.maximum(0, -((lblo - ubhi) // stv)), 0)",
        "most = np.where(ctx.pred, np.maximum(0, -((lblo - ublo) // stv)), 0)",
        "a ranged loop runs as many trips as its lowest end allows, not its highest",
    ),
    M(
        "for-ranged-iv-below-end",
        "engines/enumerate/control.py",
        "lo, hi = trips.lblo + t * trips.stv, np.minimum(trips.lbhi + t * trips.stv, trips.ubhi - 1)",
        "lo, hi = trips.lblo + t * trips.stv, np.minimum(trips.lbhi + t * trips.stv, trips.ubhi - 1 - trips.stv)",
        "a ranged loop's induction variable is kept a step below its highest end",
    ),
    M(
        "while-settled-after-one",
        "engines/enumerate/control.py",
        "        if all(_same_value(a, b) for a, b in zip(grown, carried)) and (go == active).all():",
        "        if True:",
        "a data-dependent while loop stops after one more iteration, settled or not",
    ),
    M(
        "reduce-range-sum-of-lows",
        "engines/enumerate/control.py",
        "    out = RangeV(fn(v.lo), fn(v.hi), v.bits)",
        "    out = RangeV(fn(v.lo), fn(v.lo), v.bits)",
        "a reduction of a ranged tensor keeps only the sum (max, min) of its low ends",
    ),
    M(
        "lane-race-values-ignored",
        "engines/enumerate/recording.py",
        "            differ = dup & (vals[1:] != vals[:-1])",
        "            differ = dup & False",
        "lanes storing different known values to one element are taken as storing the same",
    ),
    M(
        "lane-race-classes-ignored",
        "engines/enumerate/recording.py",
        "            dup = dup & (keys[1:] != keys[:-1])",
        "            dup = dup & False",
        "lanes of one store whose values may differ (per-lane loads) are taken as storing one value",
    ),
    M(
        "lane-race-fp16-exact-too-far",
        "engines/enumerate/lanevalues.py",
        '    "f16": 11,',
        '    "f16": 12,',
        "integers past 2**11 are taken as exact in fp16 (2049 rounds to 2048: a TL005 of values that are equal)",
    ),
    M(
        "lane-race-masked-off-lanes-one-value",
        "engines/enumerate/lanevalues.py",
        "        off = -1 - np.arange(on.size, dtype=np.int64).reshape(on.shape)",
        "        off = np.zeros(on.shape, dtype=np.int64)",
        "lanes a load without `other` masked off are taken as holding one value (they hold undefined data)",
    ),
    M(
        "lane-race-loop-assumption-unchecked",
        "engines/enumerate/lanevalues.py",
        "            keep = {n for n, y in zip(names, yielded.operands) if n in live and self.uniform(y, inside, depth)}",
        "            keep = live",
        "a loop's carried value that starts as one value is taken as one value whatever the loop yields",
    ),
    M(
        "lane-race-masked-load-without-other-uniform",
        "engines/enumerate/lanevalues.py",
        "            return ptr_ok and len(op.operands) > 2 and all(self.uniform(o, assumed, d) for o in op.operands[1:3])",
        "            return ptr_ok",
        "a masked load of one address without `other` is taken as one value (its masked-off lanes are undefined)",
    ),
    M(
        "possible-race-lanes-merged",
        "clients/race.py",
        "            key = prog * (1 << 24) + (lanes + 1) if by_lane else prog",
        "            key = prog",
        "two lanes of one program whose bounds meet are not a possible race",
    ),
    M(
        "possible-race-ignored",
        "clients/race.py",
        "    hit = np.flatnonzero(reach[:-1] > runs.starts[1:])",
        "    hit = np.flatnonzero(reach[:-1] < reach[:-1])",
        "stores of different programs or lanes whose bounds meet are not a possible race",
    ),
    # ------------------------------------------------------------ TL100's example launch (suggest.py, synth.py)
    M(
        "suggest-grid-every-axis",
        "suggest.py",
        "    axes = [2 if a in used else 1 for a in range(3)]",
        "    axes = [2 for a in range(3)]",
        "the suggested grid spans axes the kernel never reads a program id of (its programs race)",
    ),
    M(
        "suggest-no-read-back",
        "suggest.py",
        '    if errors:\n        return "", errors[0].message',
        '    if False:\n        return "", errors[0].message',
        "a suggestion the file's own scanner rejects is offered anyway",
    ),
    M(
        "synth-strides-not-row-major",
        "compile/synth.py",
        "            out[p] = value\n            value *= INT_VALUE",
        "            out[p] = INT_VALUE",
        "every stride of a tensor gets the same placeholder value (rows alias)",
    ),
    # ------------------------------------------------------------ the grid engine (engines/grid/)
    M(
        "grid-rem-as-div",
        "engines/grid/handlers.py",
        '        return [_divmod(g, op, a, b, shape, bits, "rem")]',
        '        return [_divmod(g, op, a, b, shape, bits, "div")]',
        "the grid engine drops its `%` case: a remainder is evaluated as the quotient",
    ),
    M(
        "grid-unconfirmed-definite",
        "engines/grid/witness.py",
        '                "exact": False,\n',
        '                "exact": True,\n                "confirmed": True,\n',
        "a grid bound that leaves the storage, confirmed by no concrete run, is reported as definite (TL001)",
    ),
    M(
        "grid-narrow-by-one",
        "engines/grid/graph.py",
        "                        hi = np.minimum(hi, rest // (-k))",
        "                        hi = np.minimum(hi, rest // (-k) - 1)",
        "a mask atom narrows a variable's upper bound by one too many (the last lane a program runs is lost)",
    ),
    M(
        "grid-interval-end-by-one",
        "engines/grid/graph.py",
        "        s.add_intervals(elo, ehi + 1)",
        "        s.add_intervals(elo, ehi)",
        "a grid footprint's per-lane interval ends one element early (the inclusive bound taken as exclusive)",
    ),
    M(
        "grid-split-recombined-short",
        "engines/grid/graph.py",
        "            rng[v] = (_maximum(qlo * m + rlo, vlo), _minimum(qhi * m + rhi, vhi))",
        "            rng[v] = (_maximum(qlo * m + rlo, vlo), _minimum(qhi * m + rhi, vhi) - 1)",
        "a quotient and remainder folded back into their variable lose its last value (the last program)",
    ),
    M(
        "grid-split-pair-short",
        "engines/grid/graph.py",
        "        r_top = np.minimum(rh, last - q * m)",
        "        r_top = np.minimum(rh, last - q * m - 1)",
        "a quotient and remainder bounded together miss the remainder of the last program",
    ),
    M(
        "grid-residue-case-missing",
        "engines/grid/graph.py",
        "                for r0 in range(lo, hi + 1)",
        "                for r0 in range(lo, hi)",
        "an access split by a remainder's values leaves out its last value (those programs go unbounded)",
    ),
    M(
        "grid-or-as-and",
        "engines/grid/handlers.py",
        "        cases = () if da is None or db is None or len(da) + len(db) > MAX_DISJUNCTS else da + db",
        "        cases = () if da is None or db is None else both(da, db)",
        "an `a | b` mask or guard narrows as `a & b` (the lanes only one side lets through are lost)",
    ),
    M(
        "grid-relational-slack-tight",
        "engines/grid/relational.py",
        "                u = linear.upper(index, fact, 0, box)\n",
        "                u = linear.upper(index, fact, -1, box)\n",
        "the grid engine reads an atom `a >= 0` as `a >= 1`: `o_t <= eos - bos` bounds a row below eos (reads as safe)",
    ),
    M(
        "grid-relational-dead-lanes-wrong",
        "engines/grid/graph.py",
        "                        live = live & ~dead\n",
        "                        live = live & dead\n",
        "the lanes where the grid engine's relational ends cross are the only ones kept",
    ),
    M(
        "grid-residue-width-last-only",
        "clients/race.py",
        "    return radix_apart(rest, ivs[-1][1] - min(lo for lo, _ in ivs) + 1)",
        "    return radix_apart(rest, ivs[-1][1] - ivs[-1][0] + 1)",
        "programs told apart per remainder are spread by the last remainder's span, not the hull of all of them",
    ),
    M(
        "widened-condition-always-false",
        "engines/enumerate/arith.py",
        '    return RangeV(zero, may, ty.bits) if kind == "zext" else RangeV(-may, zero, ty.bits)\n',
        "    return RangeV(zero, zero, ty.bits)\n",
        "a comparison of loaded data widened to an integer counts as 0 wherever it may hold",
    ),
    M(
        "remainder-one-quotient-any",
        "engines/ranges.py",
        "        if ((alo >= 0) & (alo // b.a == ahi // b.a)).all():\n",
        "        if (alo >= 0).all():\n",
        "the remainder of any non-negative range is taken as the remainders of its ends",
    ),
    M(
        "pinned-race-any-element",
        "engines/pinned.py",
        "        if lo < hi:\n            return int(lo)\n",
        "        if True:\n            return int(lo)\n",
        "two programs evaluated at one declared value meet at the first pair of runs, overlapping or not",
    ),
    M(
        "running-sum-own-term-only",
        "engines/ranges.py",
        "    before_lo, before_hi = before(x[0]), before(x[1])\n",
        "    before_lo, before_hi = before(own[0]), before(own[1])\n",
        "a lane's fact narrows every term of a running sum, not its own alone",
    ),
    M(
        "running-sum-lane-shape",
        "engines/ranges.py",
        "        return np.broadcast_to(a, shape).astype(dtype)\n",
        "        return np.asarray(a).astype(dtype)\n",
        "a running sum of a bound that stands for every lane is taken over that one bound",
    ),
    M(
        "exclusive-sum-any-subtrahend",
        "engines/ranges.py",
        '    if name == "arith.subi" and ta is not None and ta[0] is b:',
        '    if name == "arith.subi" and ta is not None:',
        "a running sum less any value, not only its own term, is taken as the exclusive sum",
    ),
    M(
        "exclusive-sum-start-ignored",
        "engines/ranges.py",
        "                return (ta[0], ta[1] + b[0], ta[2] + b[1])\n",
        "                return (ta[0], ta[1], ta[2])\n",
        "a start added to a running sum is dropped from the exclusive sum it leaves",
    ),
    M(
        "histogram-count-one-short",
        "engines/enumerate/control.py",
        "    return [RangeV(zeros, zeros + n, ty.bits, total=n if len(ty.shape) == 1 else None)]\n",
        "    return [RangeV(zeros, zeros + n - 1, ty.bits, total=n - 1 if len(ty.shape) == 1 else None)]\n",
        "a histogram's bin counts one lane fewer than its input has",
    ),
    M(
        "exclusive-sum-total-leaves-no-room",
        "engines/ranges.py",
        "        before_hi = np.maximum(np.minimum(before_hi, total - own_lo), before_lo)\n",
        "        before_hi = np.maximum(np.minimum(before_hi, total - own_lo - 1), before_lo)\n",
        "the terms before a lane of counts summing to a total leave one more than its own term's room",
    ),
    M(
        "gather-index-unchecked",
        "engines/enumerate/control.py",
        '    if (ilo < 0).any() or (ihi >= n).any() or getattr(index, "undef", None) is not None:\n',
        "    if False:\n",
        "a gather whose index may leave its source is bounded by the source's lanes",
    ),
    M(
        "gather-hull-first-lane",
        "engines/grid/handlers.py",
        "    hi = np.broadcast_to(shi, full).max(axis=axis, keepdims=True)\n",
        "    hi = np.broadcast_to(shi, full).min(axis=axis, keepdims=True)\n",
        "a gathered lane is bounded by the source's lowest high end, not its highest",
    ),
    M(
        "widened-i1-any-width",
        "engines/values.py",
        '    return len(parts) > 1 and parse_type(split_top(parts[-1], " to ")[0]).elem == "i1"\n',
        "    return True\n",
        "any integer cast of unknown data is taken as 0 or 1, not only an i1 widened",
    ),
    M(
        "truth-fact-any-polarity",
        "engines/enumerate/guards.py",
        '    itself = [Fact(name, "eq", TRUE, group, chain, shape)] if truths is not None and polarity and truths(name) else []\n',
        '    itself = [Fact(name, "eq", TRUE, group, chain, shape)] if truths is not None and truths(name) else []\n',
        "an i1 conjunct is taken as true where its condition does not hold too",
    ),
    M(
        "lane-meeting-note-across-programs",
        "clients/race.py",
        "    return a_site == b_site and a_key >> 24 == b_key >> 24\n",
        "    return a_site == b_site\n",
        "two programs meeting at counts of conditions are a note, not a possible race",
    ),
    M(
        "min-operands-not-compared",
        "engines/enumerate/relational.py",
        '        rights = [(f.other, ()), *guards.extreme_operands(forms.defs, f.other, "arith.minsi")]\n',
        "        rights = [(f.other, ())]\n",
        "a comparison with a minimum relates nothing (the enumeration)",
    ),
    M(
        "grid-min-operands-not-compared",
        "engines/grid/handlers.py",
        '    rights = _extreme_sides(g, defs, op.operands[1], env, ctx, "arith.minsi")\n',
        "    rights = [g.get(env, op.operands[1])]\n",
        "a comparison with a minimum gives no atoms (the grid engine)",
    ),
    M(
        "min-on-the-smaller-side",
        "engines/enumerate/relational.py",
        '        lefts = [(f.name, ()), *guards.extreme_operands(forms.defs, f.name, "arith.maxsi")]\n',
        '        lefts = [(f.name, ()), *guards.extreme_operands(forms.defs, f.name, "arith.minsi")]\n',
        "min(a, b) < y is taken for a < y and b < y (the enumeration)",
    ),
    M(
        "grid-min-on-the-smaller-side",
        "engines/grid/handlers.py",
        '    lefts = _extreme_sides(g, defs, op.operands[0], env, ctx, "arith.maxsi")\n',
        '    lefts = _extreme_sides(g, defs, op.operands[0], env, ctx, "arith.minsi")\n',
        "min(a, b) < y gives the atoms of a < y and b < y (the grid engine)",
    ),
    M(
        "stopped-enumeration-findings-dropped",
        "pipeline/launch.py",
        "        if shown - {(d.code, d.line) for d in result.diagnostics}:\n",
        "        if False:\n",
        "a race the enumeration showed before its budget stopped it gives way to the grid engine's bounds",
    ),
    M(
        "projection-extrapolates-growing-loops",
        "engines/enumerate/graph.py",
        "        later = this_chunk * self.programs_after // max(self.P, 1) if alike else 0\n",
        "        later = this_chunk * self.programs_after // max(self.P, 1)\n",
        "a loop that grows with the program is charged to every program at its last programs' cost",
    ),
    # ------------------------------------------------------------ races past per-program arrays (affine summary)
    M(
        "symbolic-apart-any-axis",
        "engines/affine/footprints.py",
        "        if any(not off.k.get(v) for v in moving):\n",
        "        if False:\n",
        "an address that a program axis does not move is taken to keep programs apart",
    ),
    M(
        "symbolic-apart-first-site-only",
        "clients/race.py",
        "            if mine[0].apart_form is not None and all(s.apart_form == mine[0].apart_form for s in mine):\n",
        "            if mine[0].apart_form is not None:\n",
        "one access keeping programs apart is taken for all the accesses to its argument",
    ),
    # ------------------------------------------------------------ loop trips with loaded bounds (enumerate/relational.py)
    M(
        "trip-iv-without-its-steps",
        "engines/enumerate/relational.py",
        "                return linear.combine(start, self.steps(name, trip))\n",
        "                return start\n",
        "a ranged loop's induction variable is taken as its start on every trip, not its start plus t steps",
        gap=(
            "a kernel whose out-of-bounds trip can only be a later one: with independent declared ranges trip 0 "
            "reaches the same element (a start just below the end), so the corpus's twins show it at trip 0"
        ),
    ),
    M(
        "trip-end-not-split",
        "engines/enumerate/relational.py",
        '        for end, shaping in [(trip.ub, ()), *guards.extreme_operands(forms.defs, trip.ub, "arith.minsi")]:\n',
        "        for end, shaping in [(trip.ub, ())]:\n",
        "a trip below a minimum of ends is not taken to be below each of them",
    ),
    M(
        "ranged-division-two-corners",
        "engines/ranges.py",
        "            corners = np.stack(np.broadcast_arrays(fn(alo, blo), fn(alo, bhi), fn(ahi, blo), fn(ahi, bhi)))\n",
        "            corners = np.stack(np.broadcast_arrays(fn(alo, bhi), fn(ahi, blo)))\n",
        "a division by a declared range is bounded by the smallest over the largest and back, as for dividends >= 0",
    ),
    M(
        "most-trips-end-not-split",
        "engines/enumerate/relational.py",
        '        for end, shaping in [(ub, ()), *guards.extreme_operands(forms.defs, ub, "arith.minsi")]:\n',
        "        for end, shaping in [(ub, ())]:\n",
        "a loop's trips are not bounded through the operands of the minimum that ends it",
    ),
]


# ---------------------------------------------------------------- list hygiene


def check_list(package: Path = PACKAGE) -> list[str]:
    """Problems with MUTATIONS against the sources in `package` (empty when every mutation applies)."""
    problems = []
    names = [m.name for m in MUTATIONS]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"duplicate mutation name {dup!r}")
    for m in MUTATIONS:
        path = package / m.file
        if not path.is_file():
            problems.append(f"{m.name}: {m.file} does not exist")
            continue
        source = path.read_text(encoding="utf-8")
        n = source.count(m.original)
        if n != 1:
            problems.append(f"{m.name}: the original snippet occurs {n} times in {m.file} (must be exactly once)")
            continue
        if m.original == m.mutated:
            problems.append(f"{m.name}: the mutated snippet equals the original")
            continue
        try:
            compile(source.replace(m.original, m.mutated), str(path), "exec")
        except SyntaxError as exc:
            problems.append(f"{m.name}: the mutated {m.file} does not compile: {exc}")
    return problems


# ---------------------------------------------------------------- running


@dataclass
class Outcome:
    mutation: Mutation | None  # None: the unmutated baseline
    rc: int | None  # None: timed out
    seconds: float
    first_failure: str
    import_check: str  # "ok" or what went wrong
    tail: str
    conformance: str = ""  # the conformance suite's summary line, when it got that far


def _pytest_command() -> list[str]:
    # -P: the working directory (the repository root, holding the real package) is not put on sys.path
    return [sys.executable, "-P", "-m", "pytest", *SELECTION]


def run_one(mutation: Mutation | None, source_pkg: Path, timeout: float, log_dir: Path | None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="tilelens-mutant-") as tmp:
        root = Path(tmp)
        copy = root / "tilelens_lsp"
        shutil.copytree(source_pkg, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if mutation is not None:
            target = copy / mutation.file
            source = target.read_text(encoding="utf-8")
            if source.count(mutation.original) != 1:
                raise SystemExit(f"mutation {mutation.name}: snippet no longer occurs exactly once in {mutation.file}")
            target.write_text(source.replace(mutation.original, mutation.mutated), encoding="utf-8")
        probe = root / "probe.json"
        env = dict(os.environ)
        extra = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
        env["PYTHONPATH"] = os.pathsep.join([str(root), str(HERE)] + extra)
        env["TILELENS_CACHE_DIR"] = "off"
        env["TILELENS_MUTATION_PROBE"] = str(probe)
        env.pop("TILELENS_CONFORMANCE_NO_CACHE", None)
        cmd = _pytest_command() + ["-p", "mutation_probe"]
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc = None
            out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        seconds = time.monotonic() - start
        import_check = _check_probe(probe, copy, mutation, rc)
    first = next((f"{m.group(1)} {m.group(2)}" for m in re.finditer(r"^(FAILED|ERROR) (\S+)", out, re.M)), "")
    if not first and rc not in (0, None):
        first = next((line.strip() for line in out.splitlines() if "Error" in line), f"pytest exit {rc}")[:100]
    if log_dir is not None:
        name = mutation.name if mutation else "baseline"
        (log_dir / f"{name}.log").write_text(out, encoding="utf-8")
    summary = next((line.strip() for line in out.splitlines() if line.startswith("conformance: ")), "")
    return Outcome(mutation, rc, seconds, first, import_check, "\n".join(out.splitlines()[-15:]), summary)


def _check_probe(probe: Path, copy: Path, mutation: Mutation | None, rc: int | None) -> str:
    if rc is None:
        return "ok (timed out: not probed)"
    if not probe.is_file():
        return "no probe file (pytest did not reach the end of its session)"
    modules = json.loads(probe.read_text(encoding="utf-8"))
    if "tilelens_lsp" not in modules:
        return "tilelens_lsp was never imported"
    outside = sorted(n for n, f in modules.items() if f and not Path(f).resolve().is_relative_to(copy.resolve()))
    if outside:
        return f"imported from outside the mutated copy: {', '.join(outside)} ({modules[outside[0]]})"
    if mutation is not None:
        mod = "tilelens_lsp." + mutation.file[:-3].replace("/", ".")
        if mod not in modules:
            return f"the mutated module {mod} was never imported"
    return "ok"


def verdict(o: Outcome) -> str:
    if o.rc == 0:
        return "equivalent" if o.mutation and o.mutation.equivalent else "SURVIVED"
    return "caught (timeout)" if o.rc is None else "caught"


def product_version() -> str:
    """HEAD and the package files that differ from it when the snapshot was taken (read-only git calls)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "tilelens_lsp"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    changed = sorted(line[3:] for line in dirty if line.strip())
    return head + (f" + uncommitted changes to {', '.join(changed)}" if changed else "")


def report(outcomes: list[Outcome], baseline: Outcome, wall: float, version: str = "") -> str:
    rows = [("mutation", "file", "result", "rc", "seconds", "first failure")]
    for o in outcomes:
        m = o.mutation
        rows.append(
            (m.name, m.file, verdict(o), "-" if o.rc is None else str(o.rc), f"{o.seconds:.0f}", o.first_failure or "-")
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        f"tilelens-lsp mutation run, {time.strftime('%Y-%m-%d %H:%M')}, selection: pytest {' '.join(SELECTION)}",
        f"product: {version or product_version()}",
        f"baseline (unmutated copy): rc {baseline.rc}, {baseline.seconds:.0f} s, import check: {baseline.import_check}",
        "",
    ]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    bad_imports = [o for o in outcomes if not o.import_check.startswith("ok")]
    survivors = [o for o in outcomes if o.rc == 0 and not o.mutation.equivalent]
    equivalent = [o for o in outcomes if o.rc == 0 and o.mutation.equivalent]
    wrongly_equivalent = [o for o in outcomes if o.rc != 0 and o.mutation.equivalent]
    lines.append("")
    lines.append("survivors:" if survivors else "survivors: none")
    for o in survivors:
        lines.append(f"  {o.mutation.name}: {o.mutation.description}")
        if o.conformance and baseline.conformance and o.conformance != baseline.conformance:
            # a launch the mutant breaks into a refusal is skipped, not failed, by the conformance test
            lines.append(f"      conformance differed from the baseline: {o.conformance}")
        if o.mutation.gap:
            lines.append(f"      would be caught by: {o.mutation.gap}")
    new_catches = [o for o in outcomes if o.rc != 0 and o.mutation.gap]
    for o in new_catches:
        lines.append(f"  NOTE {o.mutation.name} has a gap note but was caught: the note can go")
    lines.append("equivalent mutations:" if equivalent else "equivalent mutations: none")
    for o in equivalent:
        lines.append(f"  {o.mutation.name}: {o.mutation.equivalent}")
    for o in wrongly_equivalent:
        lines.append(f"  NOTE {o.mutation.name} is marked equivalent but was caught: it is counted as caught")
    for o in bad_imports:
        lines.append(f"  IMPORT CHECK FAILED for {o.mutation.name}: {o.import_check}")
    n = len(outcomes)
    k = sum(1 for o in outcomes if o.rc != 0)
    e = len(equivalent)
    rate = f"{k}/{n - e} = {100.0 * k / (n - e):.1f}%" if n > e else "n/a"
    lines.append(f"total wall time {wall / 60:.1f} min ({MAX_JOBS if n > 1 else 1} at a time)")
    lines.append(f"mutation: {n} mutations, {k} caught, {e} equivalent, catch rate {rate}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=MAX_JOBS, help=f"parallel pytest runs (at most {MAX_JOBS})")
    ap.add_argument("--only", nargs="*", default=None, help="run only these mutations")
    ap.add_argument("--list", action="store_true", help="print the mutations and exit")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per pytest run")
    ap.add_argument("--out", type=Path, default=HERE / "latest.txt", help="where to write the report")
    ap.add_argument("--logs", type=Path, default=None, help="folder for each run's full pytest output")
    ap.add_argument(
        "--tests",
        nargs="*",
        default=None,
        help="test paths to run instead of the fast selection (a quicker look at a few mutations; "
        "the report names the selection)",
    )
    args = ap.parse_args(argv)
    if args.tests:
        SELECTION[:] = ["-x", "-q", *args.tests, "-p", "no:cacheprovider"]

    # every run starts from one snapshot of the package, so edits made to the working tree while the
    # mutations run (minutes) cannot mix two versions of the product into one report
    version = product_version()
    snapshot_root = Path(tempfile.mkdtemp(prefix="tilelens-mutation-snapshot-"))
    snapshot = snapshot_root / "tilelens_lsp"
    shutil.copytree(PACKAGE, snapshot, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    try:
        return _main(args, snapshot, version)
    finally:
        shutil.rmtree(snapshot_root, ignore_errors=True)


def _main(args, snapshot: Path, version: str) -> int:
    problems = check_list(snapshot)
    if problems:
        print("mutation list does not match the sources:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    selected = MUTATIONS
    if args.only:
        unknown = set(args.only) - {m.name for m in MUTATIONS}
        if unknown:
            print(f"unknown mutations: {sorted(unknown)}", file=sys.stderr)
            return 2
        selected = [m for m in MUTATIONS if m.name in args.only]
    if args.list:
        for m in selected:
            print(f"{m.name:40} {m.file:36} {m.description}" + ("  [equivalent]" if m.equivalent else ""))
        return 0
    jobs = max(1, min(MAX_JOBS, args.jobs))
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    print(f"baseline: unmutated copy, {' '.join(_pytest_command())}", flush=True)
    baseline = run_one(None, snapshot, args.timeout, args.logs)
    print(f"baseline: rc {baseline.rc}, {baseline.seconds:.0f} s, import check: {baseline.import_check}", flush=True)
    if baseline.rc != 0 or baseline.import_check != "ok":
        print(
            "the unmutated copy must pass with the mutated-copy import verified; aborting:\n" + baseline.tail,
            file=sys.stderr,
        )
        return 2

    outcomes: dict[str, Outcome] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_one, m, snapshot, args.timeout, args.logs): m for m in selected}
        for fut in concurrent.futures.as_completed(futures):
            o = fut.result()
            outcomes[o.mutation.name] = o
            print(
                f"[{len(outcomes)}/{len(selected)}] {o.mutation.name}: {verdict(o)} ({o.seconds:.0f} s) {o.first_failure}",
                flush=True,
            )
    ordered = [outcomes[m.name] for m in selected]
    text = report(ordered, baseline, time.monotonic() - started, version)
    print(text, end="")
    args.out.write_text(text, encoding="utf-8")
    if any(not o.import_check.startswith("ok") for o in ordered):
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
