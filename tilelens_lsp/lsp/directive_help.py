"""Editor help inside `# tilelens:` directives: completion, signature help and go to definition.

Pure functions from a document's text and a cursor (0-based line, 0-based column in characters) to
plain records; the server turns them into LSP. What a directive is, which lines continue it and which
functions are kernels come from `directives` (the parser's own answers), so help and diagnostics
agree. Nothing here evaluates a directive or knows LSP.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from tilelens_lsp.launches.kernels import find_kernels
from tilelens_lsp.launches.scanner import directive_blocks
from tilelens_lsp.launches.specs import DTYPE_ALIASES, DTYPES, canonical_dtype
from tilelens_lsp.model import CODE_TITLES

# What a directive may call (launches.specs.FUNCTIONS), with what completion and signature help show.
FUNCTION_HELP = {
    "cdiv": ("cdiv(a, b)", "ceiling division: the number of blocks of size b that cover a"),
    "min": ("min(a, b, ...)", "the smallest value"),
    "max": ("max(a, b, ...)", "the largest value"),
    "tensor": (
        "tensor(dtype, shape, strides=None, offset=0, storage=None, values=None)",
        "a tensor spec; any strided view of a larger storage",
    ),
    "i64": ("i64(value)", "an int scalar passed as a 64-bit argument"),
}
_SIGNATURES = {  # parameter names of each function, for signature help
    "cdiv": ("a", "b"),
    "min": ("a", "b", "..."),
    "max": ("a", "b", "..."),
    "i64": ("value",),
    "tensor": ("dtype", "shape", "strides=None", "offset=0", "storage=None", "values=None"),
    "values": ("LO", "HI"),
}
_PARAM_DOCS = {
    "tensor": (
        "a dtype: fp16, bf16, fp32, i32, ...",
        "a tuple of sizes: (M, K)",
        "elements to step per dimension (default: contiguous)",
        "elements from the storage's start to the view's first element",
        "elements in the storage (default: just what the view spans)",
        "(LO, HI): every element lies in [LO, HI); integer tensors only",
    ),
    "values": ("smallest value of any element", "one past the largest value of any element"),
}
TENSOR_KEYWORDS = ("strides", "offset", "storage", "values")
_TRANSFORMS = (
    ("T", "the transposed view of a 2-D tensor spec"),
    ("values", "values(LO, HI): every element of this integer tensor lies in [LO, HI)"),
)


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Item:
    """One completion: `kind` is kernel, parameter, dtype, name, function, attribute or code."""

    label: str
    kind: str
    detail: str = ""
    insert_text: str | None = None
    sort: int = 5  # lower sorts first


@dataclass(frozen=True)
class Signature:
    """A signature label; each parameter as (start, end) character offsets into it and its documentation."""

    label: str
    parameters: tuple[tuple[int, int, str], ...]
    active: int | None
    documentation: str = ""


@dataclass(frozen=True)
class Target:
    """A place in the document: 0-based line, 0-based start and end columns (characters)."""

    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str = ""
    default: str = ""
    constexpr: bool = False
    supplied_by: str = ""  # "@triton.autotune" or "@triton.heuristics" when a decorator sets it

    @property
    def label(self) -> str:
        text = self.name + (f": {self.annotation}" if self.annotation else "")
        return text + (f" = {self.default}" if self.default else "")


@dataclass(frozen=True)
class KernelInfo:
    name: str
    target: Target  # the name on its `def` line
    params: tuple[Param, ...]
    doc: str = ""

    def signature_label(self) -> str:
        return f"{self.name}[grid]({', '.join(p.label for p in self.params)})"


# ---------------------------------------------------------------- kernels of the file


@functools.lru_cache(maxsize=4)
def kernels(text: str) -> dict[str, KernelInfo]:
    """The launchable kernels of the file by name (helpers only other kernels call are left out)."""
    lines = _lines(text)
    defs = _function_defs(text)
    out: dict[str, KernelInfo] = {}
    for k in find_kernels(text):
        if k.is_helper or k.name in out:
            continue
        line_text = lines[k.line - 1] if k.line <= len(lines) else ""
        m = re.compile(rf"def\s+({re.escape(k.name)})\b").search(line_text, k.column - 1)
        start = m.start(1) if m else k.column - 1
        fn = defs.get((k.name, k.line)) or _header_def(lines, k.line)
        params = _params(fn) if fn is not None else tuple(Param(p) for p in k.params)
        doc = (ast.get_docstring(fn) or "") if fn is not None else ""
        out[k.name] = KernelInfo(
            k.name, Target(k.line - 1, start, start + len(k.name)), params, doc.strip().split("\n\n")[0]
        )
    return out


def _function_defs(text: str) -> dict[tuple[str, int], ast.FunctionDef]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {(n.name, n.lineno): n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _header_def(lines: list[str], line: int) -> ast.FunctionDef | None:
    """The `def` at 1-based `line` parsed from its header alone (the file around it does not parse);
    decorators are not read, so nothing is marked as supplied by one."""
    header: list[str] = []
    for text in lines[line - 1 : line + 40]:
        header.append(text)
        try:
            tree = ast.parse("\n".join(s.strip() for s in header) + "\n    pass")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        fn = tree.body[0] if tree.body else None
        return fn if isinstance(fn, ast.FunctionDef) else None
    return None


def _params(fn: ast.FunctionDef) -> tuple[Param, ...]:
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: dict[str, ast.expr] = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults) :], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    supplied = _decorator_supplied(fn)
    out = []
    for p in positional + a.kwonlyargs:
        annotation = _unparse(p.annotation)
        out.append(
            Param(
                p.arg,
                annotation,
                _unparse(defaults.get(p.arg)),
                annotation.split(".")[-1] == "constexpr",
                supplied.get(p.arg, ""),
            )
        )
    return tuple(out)


def _unparse(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError):
        return ""


def _decorator_supplied(fn: ast.FunctionDef) -> dict[str, str]:
    """Meta-parameters that `@triton.autotune` configs or `@triton.heuristics` set, read from literal
    dicts only (configs built by a function call are not followed)."""
    out: dict[str, str] = {}
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        name = _unparse(dec.func).split(".")[-1]
        if name == "autotune":
            configs = next((k.value for k in dec.keywords if k.arg == "configs"), dec.args[0] if dec.args else None)
            for config in getattr(configs, "elts", ()):
                if isinstance(config, ast.Call) and config.args and isinstance(config.args[0], ast.Dict):
                    for key in _string_keys(config.args[0]):
                        out.setdefault(key, "@triton.autotune")
        elif name == "heuristics":
            values = next((k.value for k in dec.keywords if k.arg == "values"), dec.args[0] if dec.args else None)
            if isinstance(values, ast.Dict):
                for key in _string_keys(values):
                    out.setdefault(key, "@triton.heuristics")
    return out


def _string_keys(d: ast.Dict) -> list[str]:
    return [k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


# ---------------------------------------------------------------- the directive under the cursor


_BREAK = re.compile(r"\r\n|\r|\n")
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[ \t]*tilelens:[ \t]*")


def _lines(text: str) -> list[str]:
    return _BREAK.split(text)


@dataclass(frozen=True)
class _Cursor:
    prefix: str  # the directive's text from its start to the cursor (continuation lines joined by \n)
    first_line: int  # 0-based line of the directive's first line
    line: int  # 0-based cursor line
    col: int  # 0-based cursor column, never left of the directive's text
    line_text: str  # the whole cursor line
    content_col: int  # 0-based column where the directive text starts on the cursor line


def _cursor(text: str, line: int, col: int) -> _Cursor | None:
    lines = _lines(text)
    if not 0 <= line < len(lines):
        return None
    line_text = lines[line]
    col = min(max(col, 0), len(line_text))
    for pieces in directive_blocks(text):
        if not pieces[0][0] - 1 <= line <= pieces[-1][0] - 1:
            continue
        earlier = [p[2] for p in pieces if p[0] - 1 < line]
        here = next((p for p in pieces if p[0] - 1 == line), None)
        if here is None:
            return None
        if col < here[1]:
            m = _DIRECTIVE_LINE.match(line_text)
            if m is None or col < m.end():
                return None  # on the `# tilelens:` marker itself
            col = here[1]
        return _Cursor("\n".join(earlier + [line_text[here[1] : col]]), pieces[0][0] - 1, line, col, line_text, here[1])
    m = _DIRECTIVE_LINE.match(line_text)  # a directive line with nothing on it yet, or a suppression
    if m is None or col < m.end():
        return None
    return _Cursor(line_text[m.end() : col], line, line, col, line_text, m.end())


# ---------------------------------------------------------------- scanning the text before the cursor


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<name>[^\W\d]\w*)
  | (?P<num>\d[\w.]*)
  | (?P<str>'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")
  | (?P<open_str>['"][^\n]*)
  | (?P<comment>\#[^\n]*)
  | (?P<op>\*\*|//|==|!=|<=|>=|.)
""",
    re.VERBOSE,
)
_IGNORE_OPEN = re.compile(r"ignore[ \t]*\[([^\]]*)$")
_OPERAND_BEFORE = frozenset({"=", ",", "+", "-", "*", "/", "//", "%", "**", ":", "(", "[", None})


@dataclass
class _Tok:
    kind: str  # name, num, str, op, group (a closed bracket pair)
    value: str
    frame: "_Frame | None" = None  # for a group: the frame it closed


@dataclass
class _Frame:
    char: str  # "(" or "[", or "" for the statement level
    kind: str  # stmt, launch, grid, shape, call, paren, subscript
    name: str = ""  # the kernel of a launch or grid, the function of a call
    positional: int = 0  # arguments before the current one that were positional
    commas: int = 0
    keywords: list[str] = field(default_factory=list)
    arg: list[_Tok] = field(default_factory=list)  # the current argument's tokens so far


@dataclass
class _Scan:
    stack: list[_Frame]  # stack[0] is the statement level
    word: str  # the identifier being typed (may be empty)
    bound_here: list[str]  # names bound by earlier statements of this directive
    in_number: bool = False  # the cursor ends a number: nothing to complete, signature help still


def _scan(prefix: str) -> _Scan | None:
    """The bracket frames open at the end of `prefix`; None inside a string or comment, or after a
    mismatched bracket."""
    stack = [_Frame("", "stmt")]
    bound: list[str] = []
    tokens = list(_TOKEN.finditer(prefix))
    for i, m in enumerate(tokens):
        kind, value = m.lastgroup or "op", m.group()
        last = i == len(tokens) - 1
        if kind == "ws":
            continue
        if kind in ("open_str", "comment"):
            if last:
                return None
            continue
        frame = stack[-1]
        if kind != "op":
            frame.arg.append(_Tok(kind, value))
        elif value in "([":
            stack.append(_open(value, frame))
        elif value in ")]":
            if len(stack) == 1 or stack[-1].char != {")": "(", "]": "["}[value]:
                return None
            closed = stack.pop()
            stack[-1].arg.append(_Tok("group", closed.kind, closed))
        elif value == "," and len(stack) > 1:
            frame.commas += 1
            if not _keyword_of(frame):
                frame.positional += 1
            frame.arg = []
        elif value == ";" and len(stack) == 1:
            bound += _bindings(frame.arg)
            stack[0] = _Frame("", "stmt")
        elif value == "=" and len(frame.arg) == 1 and frame.arg[0].kind == "name" and len(stack) > 1:
            frame.keywords.append(frame.arg[0].value)
            frame.arg.append(_Tok("op", value))
        else:
            frame.arg.append(_Tok("op", value))
    word = ""
    arg = stack[-1].arg
    if arg and arg[-1].kind == "name" and prefix and (prefix[-1].isalnum() or prefix[-1] == "_"):
        word = arg.pop().value
    in_number = bool(arg and arg[-1].kind == "num" and prefix and prefix[-1].isalnum())
    return _Scan(stack, word, bound, in_number)


def _open(char: str, frame: _Frame) -> _Frame:
    arg = frame.arg
    prev = arg[-1] if arg else None
    if char == "[":
        if prev is not None and prev.kind == "name":
            if frame.kind == "stmt" and len(arg) == 1:
                return _Frame("[", "grid", prev.value)
            if canonical_dtype(prev.value):
                return _Frame("[", "shape", prev.value)
        return _Frame("[", "subscript")
    if prev is not None and prev.kind == "group" and prev.frame is not None and prev.frame.kind == "grid":
        return _Frame("(", "launch", prev.frame.name)
    if prev is not None and prev.kind == "name":
        dotted = len(arg) >= 2 and arg[-2].value == "."
        if dotted and prev.value == "values":
            return _Frame("(", "call", "values")
        if dotted and prev.value == "cdiv" and len(arg) >= 3 and arg[-3].value == "triton":
            return _Frame("(", "call", "cdiv")
        return _Frame("(", "call", "" if dotted else prev.value)
    return _Frame("(", "paren")


def _keyword_of(frame: _Frame) -> str | None:
    arg = frame.arg
    if len(arg) >= 2 and arg[0].kind == "name" and arg[1].value == "=":
        return arg[0].value
    return None


def _bindings(tokens: list[_Tok]) -> list[str]:
    """`A = ...` or `A, B = ...` at the start of a statement: the names it binds."""
    names: list[str] = []
    for i, tok in enumerate(tokens):
        if i % 2 == 0:
            if tok.kind != "name":
                return []
            names.append(tok.value)
        elif tok.value == "=":
            return names
        elif tok.value != ",":
            return []
    return []


# ---------------------------------------------------------------- names bound above


@dataclass(frozen=True)
class _Binding:
    name: str
    target: Target
    source: str


def _bound_above(text: str, before_line: int) -> dict[str, _Binding]:
    """Names that directives starting above 0-based `before_line` bind (the first binding wins)."""
    out: dict[str, _Binding] = {}
    for pieces in directive_blocks(text):
        if pieces[0][0] - 1 >= before_line:
            break
        block = "\n".join(p[2] for p in pieces)
        try:
            statements = ast.parse(block).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for stmt in statements:
            if not isinstance(stmt, ast.Assign):
                continue
            source = " ".join((ast.get_source_segment(block, stmt) or "").split())
            for target in stmt.targets:
                for n in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(n, ast.Name) and n.id not in out:
                        line, col, piece = pieces[min(n.lineno, len(pieces)) - 1]
                        start = col + len(piece.encode()[: n.col_offset].decode("utf-8", "ignore"))
                        out[n.id] = _Binding(n.id, Target(line - 1, start, start + len(n.id)), source)
    return out


# ---------------------------------------------------------------- completion


def complete(text: str, line: int, col: int) -> list[Item] | None:
    """Completions at the cursor, or None when the cursor is not where a directive takes a name."""
    cur = _cursor(text, line, col)
    if cur is None:
        return None
    suppression = _IGNORE_OPEN.match(cur.prefix)
    if suppression is not None:  # `# tilelens: ignore[TL001, |`: the codes not listed yet
        listed = set(re.findall(r"TL\d{3}", suppression.group(1)))
        return [Item(code, "code", title, sort=0) for code, title in CODE_TITLES.items() if code not in listed]
    scan = _scan(cur.prefix)
    if scan is None or scan.in_number:
        return None
    frame = scan.stack[-1]
    prev = frame.arg[-1] if frame.arg else None
    if prev is not None and prev.value == ".":
        return _attributes(frame.arg)
    if prev is not None and not (prev.kind == "op" and prev.value in _OPERAND_BEFORE):
        return None  # right after an operand: an operator comes next, not a name
    known = kernels(text)
    bound = _bound_above(text, cur.first_line)
    names = [Item(b.name, "name", b.source, sort=1) for b in bound.values()]
    names += [Item(n, "name", "bound earlier in this directive", sort=1) for n in scan.bound_here if n not in bound]
    functions = [Item(f, "function", sig, insert_text=f, sort=3) for f, (sig, _) in FUNCTION_HELP.items()]
    arg_start = prev is None

    if frame.kind == "stmt":
        if arg_start:
            return [Item(k.name, "kernel", k.signature_label(), sort=0) for k in known.values()]
        if not _binding_value(frame.arg):
            return None  # naming a new binding: nothing to complete
        return names + functions + (_dtypes() if prev is not None and prev.value in ("=", ",") else [])
    if frame.kind == "launch":
        if arg_start:
            return _keywords(known.get(frame.name), frame) + _dtypes() + names + functions
        keyword = _keyword_of(frame)
        if keyword and len(frame.arg) == 2:
            param = next((p for p in known[frame.name].params if p.name == keyword), None) if frame.name in known else None
            return (names + functions) if param is not None and param.constexpr else (_dtypes() + names + functions)
        return names + functions
    if frame.kind == "call" and frame.name == "tensor" and arg_start:
        if frame.commas == 0:
            return _dtypes()
        given = set(frame.keywords) | set((("dtype", "shape") + TENSOR_KEYWORDS)[: frame.positional])
        keywords = [
            Item(f"{k}=", "parameter", _PARAM_DOCS["tensor"][2 + i], insert_text=f"{k}=", sort=0)
            for i, k in enumerate(TENSOR_KEYWORDS)
            if k not in given
        ]
        return keywords + names + functions
    return names + functions


def _binding_value(tokens: list[_Tok]) -> bool:
    """Whether `tokens` are `NAME (, NAME)* = ...`: the cursor is in the bound value."""
    return any(tok.value == "=" and tok.kind == "op" for tok in tokens) and bool(_bindings(tokens))


def _dtypes() -> list[Item]:
    items = [Item(d, "dtype", "Triton dtype: a tensor spec starts here, as in " + d + "[N]", sort=2) for d in DTYPES]
    items += [Item(a, "dtype", f"the same as {d}", sort=4) for a, d in DTYPE_ALIASES.items()]
    return items


def _keywords(kernel: KernelInfo | None, frame: _Frame) -> list[Item]:
    if kernel is None:
        return []
    covered = {p.name for p in kernel.params[: frame.positional]} | set(frame.keywords)
    out = []
    for p in kernel.params:
        if p.name in covered or p.supplied_by:
            continue
        what = "constexpr" if p.constexpr else (p.annotation or "runtime argument")
        out.append(Item(f"{p.name}=", "parameter", f"{kernel.name}: {p.label} ({what})", insert_text=f"{p.name}=", sort=0))
    return out


def _attributes(arg: list[_Tok]) -> list[Item] | None:
    before = arg[-2] if len(arg) >= 2 else None
    if before is None:
        return None
    if before.kind == "name" and before.value == "triton":
        return [Item("cdiv", "function", FUNCTION_HELP["cdiv"][0])]
    if (
        before.kind == "group"
        and before.frame is not None
        and (before.frame.kind == "shape" or before.frame.name in ("tensor", "values"))
    ):
        return [Item(name, "attribute", doc) for name, doc in _TRANSFORMS]
    return None


# ---------------------------------------------------------------- signature help


def signature_help(text: str, line: int, col: int) -> Signature | None:
    """The signature of the launch (or directive function) whose parentheses hold the cursor."""
    cur = _cursor(text, line, col)
    if cur is None:
        return None
    scan = _scan(cur.prefix)
    if scan is None:
        return None
    for frame in reversed(scan.stack):
        if frame.kind == "launch":
            kernel = kernels(text).get(frame.name)
            if kernel is not None:
                return _kernel_signature(kernel, frame)
        elif frame.kind == "call" and frame.name in _SIGNATURES:
            return _function_signature(frame)
    return None


def _active(names: list[str], frame: _Frame) -> int:
    keyword = _keyword_of(frame)
    if keyword is not None:
        return names.index(keyword) if keyword in names else len(names)
    return frame.commas


def _kernel_signature(kernel: KernelInfo, frame: _Frame) -> Signature:
    label = kernel.signature_label()
    params = []
    at = len(kernel.name) + len("[grid](")
    for p in kernel.params:
        if p.supplied_by:
            doc = f"constexpr set by {p.supplied_by}: leave it out, every config is checked"
        elif p.constexpr:
            doc = "constexpr: compiled into the kernel; each value is its own compilation"
        else:
            doc = "runtime argument" + (f" ({p.annotation})" if p.annotation else "")
        params.append((at, at + len(p.label), doc))
        at += len(p.label) + 2
    constexprs = [p.name for p in kernel.params if p.constexpr]
    docs = [kernel.doc] if kernel.doc else []
    docs.append(
        f"defined on line {kernel.target.line + 1}" + (f"; constexpr: {', '.join(constexprs)}" if constexprs else "")
    )
    return Signature(label, tuple(params), _active([p.name for p in kernel.params], frame), "\n\n".join(docs))


def _function_signature(frame: _Frame) -> Signature:
    name = frame.name
    names = list(_SIGNATURES[name])
    label = (".values" if name == "values" else name) + f"({', '.join(names)})"
    docs = _PARAM_DOCS.get(name, ())
    params, at = [], label.index("(") + 1
    for i, n in enumerate(names):
        params.append((at, at + len(n), docs[i] if i < len(docs) else ""))
        at += len(n) + 2
    bare = [n.split("=")[0] for n in names]
    active = min(frame.commas, len(names) - 1) if name in ("min", "max") else _active(bare, frame)
    summary = FUNCTION_HELP.get(name, ("", _TRANSFORMS[1][1]))[1]
    return Signature(label, tuple(params), active, summary)


# ---------------------------------------------------------------- go to definition


def definition(text: str, line: int, col: int) -> Target | None:
    """Where the name under the cursor in a directive is defined: a kernel's `def`, or the directive
    line that binds a name."""
    cur = _cursor(text, line, col)
    if cur is None:
        return None
    start = end = min(max(col, cur.content_col), len(cur.line_text))
    while start > cur.content_col and (cur.line_text[start - 1].isalnum() or cur.line_text[start - 1] == "_"):
        start -= 1
    while end < len(cur.line_text) and (cur.line_text[end].isalnum() or cur.line_text[end] == "_"):
        end += 1
    word = cur.line_text[start:end]
    if not word or word[0].isdigit():
        return None
    kernel = kernels(text).get(word)
    followed_by_grid = cur.line_text[end:].lstrip().startswith("[")
    binding = _bound_above(text, cur.first_line).get(word)
    if kernel is not None and (followed_by_grid or binding is None):
        return kernel.target
    if binding is not None:
        return binding.target
    return _bound_in_directive(text, cur, word)


def _bound_in_directive(text: str, cur: _Cursor, word: str) -> Target | None:
    """A name bound by an earlier statement of the cursor's own directive (`N = 8; k[(N,)](...)`)."""
    for pieces in directive_blocks(text):
        if pieces[0][0] - 1 != cur.first_line:
            continue
        for number, col, piece in pieces:
            for m in re.finditer(rf"(?:^|;)\s*({re.escape(word)})\s*=(?!=)", piece):
                if (number - 1, col + m.start(1)) < (cur.line, cur.col):
                    return Target(number - 1, col + m.start(1), col + m.end(1))
    return None
