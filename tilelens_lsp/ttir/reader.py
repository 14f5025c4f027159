"""TTIR reader: the printed module → a tree of ops with operands, result types and attributes.

Attributes the MLIR bindings cannot expose (predicates, ranges, constants, axes) are read from the
printed text; the structure is checked op by op against the bindings' own walk (names, operand and
result counts). Any disagreement is the refusal `reader-misalignment`, never a silent misread.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from functools import cached_property

from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import attrs
from tilelens_lsp.ttir.types import Type, parse_type, split_top, symbol_name

__all__ = [
    "Block",
    "Func",
    "Module",
    "Op",
    "Region",
    "Successor",
    "Type",
    "check_alignment",
    "parse_module",
    "parse_type",
    "split_top",
    "symbol_name",
    "walk",
    "walk_region",
]

_RESULTS = re.compile(r"^((?:%[\w$.\-]+(?::\d+)?)(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*)\s*=\s*")
_SSA = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_SUCCESSOR = re.compile(r"\^([\w$.\-]+)")
_OP_NAME = re.compile(r"^[\w.$\-]+")
_BINDING = re.compile(r"(%[\w$.\-]+(?:#\d+)?)\s*=(?!=)")  # `%iv = ...`, `%a = %x` in an scf header
_FUNC = re.compile(
    r"^tt\.func\s+(?:public\s+|private\s+|nested\s+)?"
    r'@([\w$.\-]+|"(?:[^"\\]|\\.)*")\((.*)\)\s*(?:->\s*(.*?))?\s*'
    r"(?:attributes\s*\{(.*)\})?\s*\{$"
)


@dataclass
class Op:
    name: str
    results: list[str]
    operands: list[str]
    text: str  # the op's header text without results and loc
    loc: str  # the loc body (`#loc12`, `"x"(#loc3)`, ...)
    result_types: list[Type]
    regions: list["Region"] = field(default_factory=list)
    line_no: int = 0  # line in the printed module, for messages
    tail: str = ""  # text after a region-closing brace (generic form types)
    successors: list["Successor"] = field(default_factory=list)  # `cf.br` / `cf.cond_br` targets

    # typed attributes, each parsed from `text` on first use (see `attrs`)

    @cached_property
    def int_constant(self) -> attrs.IntConstant | None:
        """`arith.constant`: its integer value(s); None for a float constant."""
        return attrs.int_constant(self.text, self.result_types[0])

    @cached_property
    def range_bounds(self) -> tuple[int, int]:
        """`tt.make_range`: (start, end)."""
        return attrs.range_bounds(self.text)

    @cached_property
    def predicate(self) -> str:
        """`arith.cmpi`: `eq`, `slt`, `ult`, ..."""
        return attrs.predicate(self.text)

    @cached_property
    def program_axis(self) -> int:
        """`tt.get_program_id` / `tt.get_num_programs`: 0, 1 or 2 for x, y, z."""
        return attrs.program_axis(self.text)

    @cached_property
    def axis(self) -> int:
        """`tt.expand_dims`: the new axis."""
        return attrs.axis(self.text)

    @cached_property
    def order(self) -> tuple[int, ...] | None:
        """`tt.trans`: the permutation; None when none is printed (the reverse of the axes)."""
        return attrs.order(self.text)

    @cached_property
    def for_header(self) -> attrs.ForHeader:
        """`scf.for`: the induction variable and the iter_args the body binds."""
        return attrs.for_header(self.text)

    @cached_property
    def callee(self) -> str:
        """`tt.call`: the called function's name."""
        return attrs.callee(self.text)


@dataclass(frozen=True)
class Successor:
    """A branch target: the block's label and the values passed to its arguments."""

    label: str
    operands: tuple[str, ...]


@dataclass
class Block:
    args: list[str]
    ops: list[Op]
    label: str = ""  # `bb3` for `^bb3(...)`; "" for an unlabelled entry block


@dataclass
class Region:
    """One or more blocks. A function body is a control-flow graph of blocks (Triton lowers an early
    `return` to `cf.cond_br` between blocks); the regions of `scf` ops hold one block each."""

    blocks: list[Block]

    def block(self, label: str) -> Block | None:
        return next((b for b in self.blocks if b.label == label), None)


@dataclass
class Func:
    name: str
    args: list[tuple[str, Type]]
    body: Region
    public: bool
    loc: str
    noinline: bool = False


@dataclass
class Module:
    funcs: dict[str, Func]
    entry: str
    text: str


# ---------------------------------------------------------------- helpers


def _strip_loc(line: str) -> tuple[str, str]:
    """Split `... loc(BODY)` at the last top-level ` loc(`."""
    idx = line.rfind(" loc(")
    while idx >= 0:
        body = line[idx + 5 :]
        depth, end = 1, -1
        for j, c in enumerate(body):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    end = j
                    break
        if end >= 0 and body[end + 1 :].strip() in ("", "{"):
            suffix = body[end + 1 :].strip()
            return (line[:idx] + (" " + suffix if suffix else "")).rstrip(), body[:end]
        idx = line.rfind(" loc(", 0, idx)
    return line, ""


def _expand_results(spec: str) -> list[str]:
    out: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if ":" in part:
            name, count = part.split(":")
            out.extend(f"{name}#{i}" for i in range(int(count)))
        else:
            out.append(part)
    return out


def _result_types(name: str, text: str, count: int, parts: list[str] | None = None) -> list[Type]:
    """The result types of op `name` from its header `text` (`parts`: `text` split at ` : ` already)."""
    if count == 0:
        return []
    if name == "arith.constant" and text.strip() in ("true", "false"):
        return [Type((), "i1")] * count  # MLIR prints a boolean constant without its type
    parts = split_top(text, " : ") if parts is None else parts
    if len(parts) < 2:
        return [Type((), "?")] * count
    return list(_types_after_colon(name, " : ".join(parts[1:]).strip(), count))


@functools.lru_cache(maxsize=4096)
def _types_after_colon(name: str, tys: str, count: int) -> tuple[Type, ...]:
    """The result types an op of `name` prints as `tys` (memoized: most ops of a module repeat a few
    (op, types) pairs; `Type` is immutable)."""
    if (
        name.startswith(("scf.", "tt.call"))
        or "->" in tys
        and name not in ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans", "tt.split")
    ):
        arrow = split_top(tys, " -> ")
        if len(arrow) >= 2:
            tys = arrow[-1].strip()
            if tys.startswith("(") and tys.endswith(")"):
                tys = tys[1:-1]
            return tuple(parse_type(t) for t in split_top(tys, ", "))[:count]
    arrow = split_top(tys, " -> ")
    if len(arrow) >= 2:
        return (parse_type(arrow[-1]),) * count
    to = split_top(tys, " to ")
    if len(to) >= 2:
        return (parse_type(to[-1]),) * count
    listed = split_top(tys, ", ")
    if name == "arith.select":
        # `: tensor<8xi1>, tensor<8xf32>` with a tensor condition: the result has the last type
        return (parse_type(listed[-1]),) * count
    first = parse_type(listed[0])
    if name in ("arith.cmpi", "arith.cmpf"):
        first = Type(first.shape, "i1")
    if name == "tt.load" and first.elem.startswith("ptr<"):
        first = Type(first.shape, first.elem[4:-1])
    if name == "tt.load" and first.elem.startswith("bptr<"):
        inner = parse_type(first.elem[5:-1])
        first = inner
    if name in ("tt.atomic_rmw", "tt.atomic_cas") and first.elem.startswith("ptr<"):
        first = Type(first.shape, first.elem[4:-1])
    return (first,) * count


def _region_result_types(header: str, count: int) -> list[Type]:
    """`scf.for ... -> (t1, t2)  : i32` and `scf.if %c -> (t1)`: the types after the arrow."""
    arrow = split_top(header, " -> ")
    if len(arrow) < 2:
        return [Type((), "?")] * count
    tys = split_top(arrow[-1], " : ")[0].strip()
    if tys.startswith("(") and tys.endswith(")"):
        tys = tys[1:-1]
    return [parse_type(t) for t in split_top(tys, ", ")][:count]


# ---------------------------------------------------------------- parsing


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.i = 0

    def fail(self, message: str) -> Refusal:
        return Refusal("reader-misalignment", f"TTIR line {self.i + 1}: {message}", "")

    def parse_module(self) -> Module:
        funcs: dict[str, Func] = {}
        entry = ""
        while self.i < len(self.lines):
            line = self.lines[self.i].strip()
            self.i += 1
            if not line.startswith("tt.func"):
                continue
            func = self.parse_func(line)
            funcs[func.name] = func
            if func.public and not entry:
                entry = func.name
        if not entry:
            raise self.fail("no public tt.func in the module")
        return Module(funcs, entry, "\n".join(self.lines))

    def parse_func(self, header: str) -> Func:
        m = _FUNC.match(header)
        if not m:
            raise self.fail(f"unreadable function header: {header[:120]}")
        args: list[tuple[str, Type]] = []
        for part in split_top(_argument_list(m.group(2)), ", "):
            part = part.strip()
            if not part:
                continue
            am = re.match(r"^(%[\w$.\-]+):\s*(.*)$", part)
            if not am:
                raise self.fail(f"unreadable function argument: {part[:80]}")
            ty, _ = _strip_loc(" " + am.group(2))
            ty = re.sub(r"\s*\{.*\}\s*$", "", ty)
            args.append((am.group(1), parse_type(ty)))
        noinline = "noinline = true" in (m.group(4) or "")
        blocks = self.parse_blocks()
        blocks[0].args = [a for a, _ in args]
        return Func(symbol_name(m.group(1)), args, Region(blocks), "public" in header.split("@")[0], "", noinline)

    def parse_blocks(self) -> list[Block]:
        """The blocks of a region up to its closing `}` (not consumed). A `^label(args):` line starts
        a block; the first block may have no label (a function's entry block)."""
        blocks = [Block([], [])]
        while self.i < len(self.lines):
            line = self.lines[self.i].strip()
            if line.startswith("}"):
                return blocks
            self.i += 1
            if not line or line.startswith("//"):
                continue
            if line.startswith("^"):
                label, args = _block_label(line)
                if blocks[-1].ops or blocks[-1].label:
                    blocks.append(Block(args, [], label))
                else:
                    blocks[-1] = Block(args, [], label)
                continue
            blocks[-1].ops.append(self.parse_op(line))
        raise self.fail("unterminated region")

    def parse_op(self, line: str) -> Op:
        line_no = self.i
        body, loc = _strip_loc(line)
        results: list[str] = []
        m = _RESULTS.match(body)
        if m:
            results = _expand_results(m.group(1))
            body = body[m.end() :]
        generic = body.startswith('"')
        if generic:
            name = body[1 : body.index('"', 1)]
            rest = body[body.index('"', 1) + 1 :]
        else:
            m_name = _OP_NAME.match(body)
            name = m_name.group(0) if m_name else body.partition(" ")[0]
            rest = body[len(name) :].lstrip(" ")
        opens_region = body.endswith("{")
        regions: list[Region] = []
        tail = ""
        if opens_region:
            regions, tail = self.parse_regions()
            if not loc:
                tail_body, loc = _strip_loc(" " + tail)
                tail = tail_body
        header = rest[:-1].rstrip() if opens_region else rest
        if generic and tail:
            header = header + " " + tail.lstrip("}) ").lstrip()
        colon = split_top(header, " : ")
        operand_text = colon[0] if not name.startswith("scf.") else header
        operands = _SSA.findall(operand_text)
        successors = _successors(header) if name.startswith("cf.") else []
        if name in ("scf.for", "scf.while"):
            # `%iv = %lb to %ub step %s iter_args(%a = %x, ...)`: the iv and iter_arg names are not operands
            bound = set(_BINDING.findall(header))
            operands = [o for o in operands if o not in bound]
        if name in ("scf.for", "scf.if") and results:
            types = _region_result_types(header, len(results))
        else:
            types = (
                # a region op's types follow its closing `})`: `}) : (tensor<8x32xf32>) -> tensor<8xf32>`
                _result_types(name, tail.lstrip("}) "), len(results), ["", tail.lstrip("}) ").lstrip(": ")])
                if generic and tail
                else _result_types(name, header, len(results), colon)
            )
        return Op(name, results, operands, header, loc, types, regions, line_no, tail, successors)

    def parse_regions(self) -> tuple[list[Region], str]:
        regions: list[Region] = []
        while True:
            regions.append(Region(self.parse_blocks()))
            closing = self.lines[self.i].strip()
            self.i += 1
            after = closing[1:].strip()
            if after.endswith("{") and (after.startswith("else") or after.startswith(", {") or after.startswith("do")):
                continue
            if after.startswith(", {") or after == "{":
                continue
            return regions, after


def _argument_list(text: str) -> str:
    """The arguments of a function header whose `(...)` the header pattern matched greedily: up to
    the parenthesis that closes the first one (`(%a: i32 loc(...)) -> (i32, i32)` returns a tuple)."""
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return text[:i]
            depth -= 1
    return text


def _block_label(line: str) -> tuple[str, list[str]]:
    """`^bb3(%2: i32 loc(unknown)):  // 2 preds: ...` → ("bb3", ["%2"])."""
    head = line.split("//")[0].strip()
    m = re.match(r"^\^([\w$.\-]+)", head)
    return (m.group(1) if m else ""), re.findall(r"(%[\w$.\-]+):", head)


def _successors(header: str) -> list[Successor]:
    """`%c, ^bb1, ^bb3(%x, %y : i32, i32)` → the targets with the values they pass."""
    out: list[Successor] = []
    for part in split_top(header, ", "):
        part = part.strip()
        m = _SUCCESSOR.match(part)
        if not m:
            continue
        passed = part[m.end() :].strip()
        if passed.startswith("(") and passed.endswith(")"):
            passed = split_top(passed[1:-1], " : ")[0]
        else:
            passed = ""
        out.append(Successor(m.group(1), tuple(_SSA.findall(passed))))
    return out


def parse_module(text: str) -> Module:
    return _Parser(text).parse_module()


def walk(block: Block):
    """Ops in post-order (nested ops before their parent), as MLIR's default walk visits them."""
    for op in block.ops:
        for region in op.regions:
            for b in region.blocks:
                yield from walk(b)
        yield op


def walk_region(region: Region):
    for block in region.blocks:
        yield from walk(block)


def check_alignment(module: Module, mlir_module) -> None:
    """Compare the parsed ops with the bindings' walk: names, operand and result counts, the block
    each op sits in and that block's argument count; then every branch's targets. Raise Refusal on
    the first disagreement."""
    bound: list[tuple[str, int, int, int, int]] = []

    def visit(op) -> None:
        name = op.get_name()
        if name == "builtin.module" or (name == "scf.yield" and op.get_num_operands() == 0):
            return  # implicit terminators are not printed
        block = op.get_block()
        bound.append(
            (
                name,
                op.get_num_operands(),
                op.get_num_results(),
                block.id() if block is not None else 0,
                block.get_num_arguments() if block is not None else 0,
            )
        )

    mlir_module.walk(visit)
    parsed: list[tuple[str, int, int, int, int]] = []
    for func in module.funcs.values():
        _check_successors(func.body)
        for op, block in _walk_with_blocks(func.body):
            if op.name == "scf.yield" and not op.operands:
                continue  # printed or not, an empty terminator carries nothing
            # an unlabelled block of an scf region declares its arguments in the op's header (-1: unread)
            nargs = len(block.args) if block.label or block is func.body.blocks[0] else -1
            parsed.append((op.name, len(op.operands), len(op.results), id(block), nargs))
    bound_ops = [b for b in bound if b[0] != "tt.func"]
    if len(bound_ops) != len(parsed):
        raise Refusal(
            "reader-misalignment", f"the bindings walk {len(bound_ops)} ops, the text reader read {len(parsed)}", ""
        )
    blocks: dict[int, int] = {}  # bindings' block id -> the parsed block it must be, and back
    back: dict[int, int] = {}
    for index, (b, p) in enumerate(zip(bound_ops, parsed)):
        if b[0] != p[0] or b[2] != p[2] or (b[1] != p[1] and not _operand_count_exempt(p[0])):
            raise Refusal(
                "reader-misalignment",
                f"op #{index}: bindings see {b[0]} ({b[1]} operands, {b[2]} results), "
                f"the text reader read {p[0]} ({p[1]} operands, {p[2]} results)",
                "",
            )
        if blocks.setdefault(b[3], p[3]) != p[3] or back.setdefault(p[3], b[3]) != b[3] or p[4] not in (-1, b[4]):
            raise Refusal(
                "reader-misalignment",
                f"op #{index} ({p[0]}): the bindings and the text reader put it in different blocks "
                f"(block arguments: {b[4]} and {p[4]})",
                "",
            )


def _walk_with_blocks(region: Region):
    """(op, the block it sits in), in the bindings' post-order."""
    for block in region.blocks:
        for op in block.ops:
            for inner in op.regions:
                yield from _walk_with_blocks(inner)
            yield op, block


def _check_successors(region: Region) -> None:
    """Every branch target is a block of the same region, passed as many values as it takes."""
    for block in region.blocks:
        for op in block.ops:
            for succ in op.successors:
                target = region.block(succ.label)
                if target is None or len(target.args) != len(succ.operands):
                    raise Refusal(
                        "reader-misalignment",
                        f"TTIR line {op.line_no}: {op.name} targets ^{succ.label} "
                        f"({len(succ.operands)} values), which the region does not have with as many "
                        "arguments",
                        "",
                    )
            for inner in op.regions:
                _check_successors(inner)
        if block.ops and block.ops[-1].name.startswith("cf.") and not block.ops[-1].successors:
            raise Refusal("reader-misalignment", f"TTIR line {block.ops[-1].line_no}: a branch without targets", "")


def _operand_count_exempt(name: str) -> bool:
    # ops whose printed form names values that are not operands (regions' captured values)
    return name in ("tt.reduce", "tt.scan", "tt.map_elementwise")
