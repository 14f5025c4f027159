"""TTIR reader: the printed module → a tree of ops with operands, result types and attributes.

Attributes the MLIR bindings cannot expose (predicates, ranges, constants, axes) are read from the
printed text; the structure is checked op by op against the bindings' own walk (names, operand and
result counts). Any disagreement is the refusal `reader-misalignment`, never a silent misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tilelens_lsp.refusal import Refusal

_RESULTS = re.compile(r"^((?:%[\w$.\-]+(?::\d+)?)(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*)\s*=\s*")
_SSA = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_FUNC = re.compile(r'^tt\.func\s+(?:public\s+|private\s+|nested\s+)?@([\w$.\-]+|"(?:[^"\\]|\\.)*")\((.*)\)\s*(?:->\s*(.*?))?\s*'
                   r"(?:attributes\s*\{(.*)\})?\s*\{$")


@dataclass(frozen=True)
class Type:
    """`shape` is () for scalars; `elem` is `i32`, `f16`, `ptr<f16>`, `bptr<f16>` (block pointer), ..."""

    shape: tuple[int, ...]
    elem: str

    @property
    def is_int(self) -> bool:
        return self.elem[:1] == "i" and self.elem[1:].isdigit()

    @property
    def bits(self) -> int:
        return int(self.elem[1:]) if self.is_int else 0

    @property
    def is_ptr(self) -> bool:
        return self.elem.startswith("ptr<")

    @property
    def pointee(self) -> str:
        return self.elem[4:-1] if self.elem.startswith("ptr<") else ""


@dataclass
class Op:
    name: str
    results: list[str]
    operands: list[str]
    text: str                     # the op's header text without results and loc
    loc: str                      # the loc body (`#loc12`, `"x"(#loc3)`, ...)
    result_types: list[Type]
    regions: list["Region"] = field(default_factory=list)
    line_no: int = 0              # line in the printed module, for messages
    tail: str = ""                # text after a region-closing brace (generic form types)


@dataclass
class Block:
    args: list[str]
    ops: list[Op]


@dataclass
class Region:
    blocks: list[Block]


@dataclass
class Func:
    name: str
    args: list[tuple[str, Type]]
    body: Block
    public: bool
    loc: str
    noinline: bool = False


@dataclass
class Module:
    funcs: dict[str, Func]
    entry: str
    text: str


# ---------------------------------------------------------------- helpers


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` at bracket depth 0 (`([{<`; the `>` of `->` closes nothing). Jumps from one
    bracket or separator to the next (a hot path of the reader: every op's types go through it)."""
    pattern = _SPLITTERS.get(sep)
    if pattern is None:
        pattern = _SPLITTERS[sep] = re.compile(r"[(\[{<)\]}>]|" + re.escape(sep))
    parts, depth, start = [], 0, 0
    for m in pattern.finditer(text):
        tok = m.group()
        if tok == sep:
            if depth == 0:
                parts.append(text[start:m.start()])
                start = m.end()
        elif tok in "([{<":
            depth += 1
        elif not (tok == ">" and m.start() > 0 and text[m.start() - 1] == "-"):
            depth -= 1
    parts.append(text[start:])
    return parts


_SPLITTERS: dict[str, re.Pattern] = {}


def symbol_name(text: str) -> str:
    """`@name` or `@"quoted name"` (Triton 3.6 quotes mangled noinline names) without `@` and quotes."""
    text = text.strip().lstrip("@")
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return text[1:-1]
    return text


def parse_type(text: str) -> Type:
    t = text.strip()
    if t.startswith("tensor<") and t.endswith(">"):
        inner = t[7:-1]
        # dims are leading `NxMx` groups; the element type is the rest
        dims: list[int] = []
        rest = inner
        while True:
            m = re.match(r"^(\d+)x", rest)
            if not m:
                break
            dims.append(int(m.group(1)))
            rest = rest[m.end():]
        elem = parse_type(rest.split(",")[0]).elem  # drop encodings
        return Type(tuple(dims), elem)
    if t.startswith("!tt.ptr<") and t.endswith(">"):
        inner = t[8:-1].split(",")[0].strip()
        if inner.startswith("tensor<"):
            return Type((), "bptr<" + inner + ">")
        return Type((), "ptr<" + parse_type(inner).elem + ">")
    if t.startswith("!tt.tensordesc<"):
        return Type((), "tdesc<" + t[15:-1] + ">")
    return Type((), t)


def _strip_loc(line: str) -> tuple[str, str]:
    """Split `... loc(BODY)` at the last top-level ` loc(`."""
    idx = line.rfind(" loc(")
    while idx >= 0:
        body = line[idx + 5:]
        depth, end = 1, -1
        for j, c in enumerate(body):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    end = j
                    break
        if end >= 0 and body[end + 1:].strip() in ("", "{"):
            suffix = body[end + 1:].strip()
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


def _result_types(name: str, text: str, count: int) -> list[Type]:
    if count == 0:
        return []
    parts = split_top(text, " : ")
    if len(parts) < 2:
        return [Type((), "?")] * count
    tys = " : ".join(parts[1:]).strip()
    if name.startswith(("scf.", "tt.call")) or "->" in tys and name not in ("tt.splat", "tt.broadcast",
                                                                           "tt.expand_dims", "tt.reshape",
                                                                           "tt.trans"):
        arrow = split_top(tys, " -> ")
        if len(arrow) >= 2:
            tys = arrow[-1].strip()
            if tys.startswith("(") and tys.endswith(")"):
                tys = tys[1:-1]
            return [parse_type(t) for t in split_top(tys, ", ")][:count]
    arrow = split_top(tys, " -> ")
    if len(arrow) >= 2:
        return [parse_type(arrow[-1])] * count
    to = split_top(tys, " to ")
    if len(to) >= 2:
        return [parse_type(to[-1])] * count
    first = parse_type(split_top(tys, ", ")[0])
    if name in ("arith.cmpi", "arith.cmpf"):
        first = Type(first.shape, "i1")
    if name == "tt.load" and first.elem.startswith("ptr<"):
        first = Type(first.shape, first.elem[4:-1])
    if name == "tt.load" and first.elem.startswith("bptr<"):
        inner = parse_type(first.elem[5:-1])
        first = inner
    if name in ("tt.atomic_rmw", "tt.atomic_cas") and first.elem.startswith("ptr<"):
        first = Type(first.shape, first.elem[4:-1])
    return [first] * count


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
        for part in split_top(m.group(2), ", "):
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
        ops = self.parse_ops()
        return Func(symbol_name(m.group(1)), args, Block([a for a, _ in args], ops), "public" in header.split("@")[0],
                    "", noinline)

    def parse_ops(self) -> list[Op]:
        """Ops up to the closing `}` of the current block (consumed)."""
        ops: list[Op] = []
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            line = raw.strip()
            if line.startswith("}"):
                return ops
            self.i += 1
            if not line or line.startswith("//"):
                continue
            if line.startswith("^"):
                continue  # block label inside a single-block region
            ops.append(self.parse_op(line))
        raise self.fail("unterminated region")

    def parse_op(self, line: str) -> Op:
        line_no = self.i
        body, loc = _strip_loc(line)
        results: list[str] = []
        m = _RESULTS.match(body)
        if m:
            results = _expand_results(m.group(1))
            body = body[m.end():]
        generic = body.startswith('"')
        if generic:
            name = body[1:body.index('"', 1)]
            rest = body[body.index('"', 1) + 1:]
        else:
            m_name = re.match(r"^[\w.$\-]+", body)
            name = m_name.group(0) if m_name else body.partition(" ")[0]
            rest = body[len(name):].lstrip(" ")
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
        operand_text = split_top(header, " : ")[0] if not name.startswith("scf.") else header
        operands = _SSA.findall(operand_text)
        if name in ("scf.for", "scf.while"):
            # `%iv = %lb to %ub step %s iter_args(%a = %x, ...)`: the iv and iter_arg names are not operands
            operands = [o for o in operands if not self._is_binding(header, o)]
        if name in ("scf.for", "scf.if") and results:
            types = _region_result_types(header, len(results))
        else:
            types = _result_types(name, tail if generic and tail else header, len(results))
        return Op(name, results, operands, header, loc, types, regions, line_no, tail)

    @staticmethod
    def _is_binding(header: str, name: str) -> bool:
        return re.search(re.escape(name) + r"\s*=(?!=)", header) is not None

    def parse_regions(self) -> tuple[list[Region], str]:
        regions: list[Region] = []
        while True:
            block_args: list[str] = []
            if self.i < len(self.lines) and self.lines[self.i].strip().startswith("^"):
                label = self.lines[self.i].strip()
                block_args = re.findall(r"(%[\w$.\-]+):", label)
                self.i += 1
            ops = self.parse_ops()
            regions.append(Region([Block(block_args, ops)]))
            closing = self.lines[self.i].strip()
            self.i += 1
            after = closing[1:].strip()
            if after.endswith("{") and (after.startswith("else") or after.startswith(", {")
                                        or after.startswith("do")):
                continue
            if after.startswith(", {") or after == "{":
                continue
            return regions, after


def parse_module(text: str) -> Module:
    return _Parser(text).parse_module()


def walk(block: Block):
    """Ops in post-order (nested ops before their parent), as MLIR's default walk visits them."""
    for op in block.ops:
        for region in op.regions:
            for b in region.blocks:
                yield from walk(b)
        yield op


def check_alignment(module: Module, mlir_module) -> None:
    """Compare the parsed ops with the bindings' walk; raise Refusal on the first disagreement."""
    bound: list[tuple[str, int, int]] = []

    def visit(op) -> None:
        name = op.get_name()
        if name == "builtin.module" or (name == "scf.yield" and op.get_num_operands() == 0):
            return  # implicit terminators are not printed
        bound.append((name, op.get_num_operands(), op.get_num_results()))

    mlir_module.walk(visit)
    parsed: list[tuple[str, int, int]] = []
    for func in module.funcs.values():
        for op in walk(func.body):
            if op.name == "scf.yield" and not op.operands:
                continue  # printed or not, an empty terminator carries nothing
            parsed.append((op.name, len(op.operands), len(op.results)))
        parsed.append(("tt.func", 0, 0))
    bound_ops = [b for b in bound if b[0] != "tt.func"]
    parsed_ops = [p for p in parsed if p[0] != "tt.func"]
    if len(bound_ops) != len(parsed_ops):
        raise Refusal("reader-misalignment",
                      f"the bindings walk {len(bound_ops)} ops, the text reader read {len(parsed_ops)}", "")
    for index, (b, p) in enumerate(zip(bound_ops, parsed_ops)):
        if b[0] != p[0] or b[2] != p[2] or (b[1] != p[1] and not _operand_count_exempt(p[0])):
            raise Refusal("reader-misalignment",
                          f"op #{index}: bindings see {b[0]} ({b[1]} operands, {b[2]} results), "
                          f"the text reader read {p[0]} ({p[1]} operands, {p[2]} results)", "")


def _operand_count_exempt(name: str) -> bool:
    # ops whose printed form names values that are not operands (regions' captured values)
    return name in ("tt.reduce", "tt.scan", "tt.map_elementwise")
