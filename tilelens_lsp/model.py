"""Records that cross stage and process boundaries: declared launches and analysis results.

They are plain frozen data with `to_json`/`from_json` that round-trip exactly; no behaviour hides
in them. The JSON shapes are a public contract (CLI `--format json`, documented in docs/cli.md, and the worker protocol).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Union

from tilelens_lsp.diagnostics import CODES, DOCS_URL

# ---------------------------------------------------------------- diagnostic codes

# derived from the one table of codes (diagnostics.py); kept here because every record reads them
SEVERITY = {code: c.severity for code, c in CODES.items()}
CODE_TITLES = {code: c.title for code, c in CODES.items()}


def code_url(code: str) -> str:
    """The documentation of `code` (the CLI's SARIF and the server's `codeDescription` link to it)."""
    return CODES[code].url if code in CODES else DOCS_URL


def _to_json(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


class Record:
    """Mixin: JSON in field order, loaded back by the field types named in `_nested`."""

    _nested: dict[str, type[Record]] = {}
    _tuples: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {f.name: _to_json(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, data: dict[str, Any]):
        kwargs: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if f.name not in data:
                continue
            value = data[f.name]
            nested = cls._nested.get(f.name)
            if nested is not None and value is not None:
                if isinstance(value, list):
                    value = tuple(nested.from_json(v) for v in value)
                else:
                    value = nested.from_json(value)
            elif f.name in cls._tuples and value is not None:
                value = _tuplify(value)
            kwargs[f.name] = value
        return cls(**kwargs)


def value_intervals(values: Any) -> tuple[tuple[int, int], ...]:
    """A declared value set as sorted disjoint half-open intervals: `(LO, HI)` or `((LO, HI), ...)`."""
    if not values:
        return ()
    if isinstance(values[0], int):
        return ((int(values[0]), int(values[1])),)
    return tuple((int(lo), int(hi)) for lo, hi in values)


def format_values(values: Any) -> str:
    """A declared value set as the directive writes it: `[0, 10)`, or `{-100} ∪ [0, 10)`."""
    parts = [f"{{{lo:,}}}" if hi == lo + 1 else f"[{lo:,}, {hi:,})" for lo, hi in value_intervals(values)]
    return " ∪ ".join(parts)


def _tuplify(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    return value


# ---------------------------------------------------------------- declared launches


@dataclass(frozen=True)
class TensorSpec(Record):
    """A fake tensor: a strided view into a storage of `storage` elements, `offset` elements in."""

    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    storage: int = 0
    # every element lies in [LO, HI) (integer tensors); a union of intervals is a tuple of pairs
    # ((LO, HI), ...), sorted and disjoint (a point v is the pair (v, v + 1)): `value_intervals` reads both
    values: tuple[int, int] | tuple[tuple[int, int], ...] | None = None
    _tuples = frozenset({"shape", "strides", "values"})

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass(frozen=True)
class ScalarSpec(Record):
    """A scalar argument. `kind` is `int`, `i64` (forced 64-bit), `float`, `bool`, `str`, `none` or
    `dtype` (a dtype-valued constexpr, `value` its directive name such as `bf16`)."""

    kind: str
    value: Any


@dataclass(frozen=True)
class DescriptorSpec(Record):
    """A host-side tensor descriptor (`triton.tools.tensor_descriptor.TensorDescriptor`) over `tensor`: its
    shape and strides are the tensor's, `block` the tile each descriptor load or store moves."""

    tensor: TensorSpec
    block: tuple[int, ...]
    padding: str = "zero"  # what a load reads outside the shape: zero | nan
    _nested = {"tensor": TensorSpec}
    _tuples = frozenset({"block"})


@dataclass(frozen=True)
class TupleSpec:
    """A tuple argument (per-rank pointer tuples): its items, each an argument of its own."""

    items: tuple["ArgSpec", ...]

    def to_json(self) -> dict[str, Any]:
        return {"items": [arg_to_json(a) for a in self.items]}


ArgSpec = Union[TensorSpec, ScalarSpec, DescriptorSpec, TupleSpec]
_ARG_TYPES = {TensorSpec: "tensor", ScalarSpec: "scalar", DescriptorSpec: "descriptor", TupleSpec: "tuple"}


def arg_to_json(arg: ArgSpec) -> dict[str, Any]:
    data = arg.to_json()
    data["type"] = _ARG_TYPES[type(arg)]
    return data


def arg_from_json(data: dict[str, Any]) -> ArgSpec:
    data = dict(data)
    kind = data.pop("type")
    if kind == "tuple":
        return TupleSpec(tuple(arg_from_json(a) for a in data["items"]))
    if kind == "descriptor":
        return DescriptorSpec.from_json(data)
    return TensorSpec.from_json(data) if kind == "tensor" else ScalarSpec.from_json(data)


@dataclass(frozen=True)
class LaunchSpec:
    """One declared launch, fully evaluated: no expression is left for the worker to evaluate.

    `grid` is the grid when it does not depend on meta-parameters; otherwise `grid_expr` holds the
    lambda's body as source, evaluated by the whitelist evaluator once the config is known.
    """

    kernel: str
    line: int  # 1-based line of the directive (or of the toml table)
    args: tuple[ArgSpec, ...]
    kwargs: tuple[tuple[str, ArgSpec], ...]
    grid: tuple[int, ...] | None = None
    grid_expr: str | None = None  # body of `lambda meta: ...`
    grid_env: tuple[tuple[str, Any], ...] = ()  # names visible to grid_expr
    source: str = ""  # the directive text, for messages
    origin: str = "comment"  # comment | pyproject | tilelens.toml | config

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "line": self.line,
            "args": [arg_to_json(a) for a in self.args],
            "kwargs": [[k, arg_to_json(a)] for k, a in self.kwargs],
            "grid": list(self.grid) if self.grid is not None else None,
            "grid_expr": self.grid_expr,
            "grid_env": [[k, v] for k, v in self.grid_env],
            "source": self.source,
            "origin": self.origin,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "LaunchSpec":
        return cls(
            kernel=data["kernel"],
            line=data["line"],
            args=tuple(arg_from_json(a) for a in data["args"]),
            kwargs=tuple((k, arg_from_json(a)) for k, a in data["kwargs"]),
            grid=tuple(data["grid"]) if data.get("grid") is not None else None,
            grid_expr=data.get("grid_expr"),
            grid_env=tuple((k, v) for k, v in data.get("grid_env", [])),
            source=data.get("source", ""),
            origin=data.get("origin", "comment"),
        )


@dataclass(frozen=True)
class DirectiveError(Record):
    """A directive that could not be turned into a launch: TL020 on its own line."""

    line: int
    column: int
    message: str
    end_line: int = 0
    kernel: str | None = None


@dataclass(frozen=True)
class Suggestion(Record):
    """A compile-verified example launch of a kernel that has none (TL100's fix): the comment lines to
    insert above it, without indentation; or, with no lines, why none was found."""

    kernel: str
    lines: tuple[str, ...] = ()
    error: str = ""
    tried: int = 0

    _tuples = frozenset({"lines"})


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Frame(Record):
    """One frame of a source location stack; `path` is portable (workspace-relative, or `triton/...`: ttir/locs.py)."""

    path: str
    line: int
    column: int


@dataclass(frozen=True)
class Witness(Record):
    """A concrete lane that shows a violation: program id, lane index per dim, loop iteration(s)."""

    pid: tuple[int, int, int]
    lane: tuple[int, ...]
    iteration: tuple[int, ...] | None
    element: int | None = None
    value: int | None = None  # the overflowing value (TL003), or the declared index value (TL002)
    _tuples = frozenset({"pid", "lane", "iteration"})

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.iteration is not None and len(self.iteration) == 1:
            data["iteration"] = self.iteration[0]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Witness":
        data = dict(data)
        if isinstance(data.get("iteration"), int):
            data["iteration"] = [data["iteration"]]
        return super().from_json(data)


@dataclass(frozen=True)
class Diagnostic(Record):
    """A verdict in source terms. `line`/`column` are 1-based and refer to the analysed file."""

    code: str
    message: str
    line: int
    column: int = 1
    severity: str = ""
    stack: tuple[Frame, ...] = ()
    witness: Witness | None = None
    kind: str | None = None  # refusal kind for TL030, client name for TL050
    end_line: int | None = None
    end_column: int | None = None
    _nested = {"stack": Frame, "witness": Witness}

    def __post_init__(self) -> None:
        if not self.severity:
            object.__setattr__(self, "severity", SEVERITY[self.code])


@dataclass(frozen=True)
class Access(Record):
    """The footprint of one memory access (merged per op, line and pointer) for one launch."""

    op: str  # load | store | atomic
    line: int
    column: int
    pointer: str  # kernel parameter the address derives from
    dtype: str
    exact: bool
    elements: tuple[tuple[int, int], ...]  # sorted disjoint half-open intervals
    in_bounds: bool
    path: str = ""  # portable path of the innermost frame
    view_numel: int = 0  # elements of the declared view (shape product)
    storage: int = 0  # elements of the storage, from the view's start (offset removed)
    view_offset: int = 0
    element_size: int = 0
    touched: int = 0  # number of distinct elements touched
    contiguous: bool = False  # elements form one interval
    view_shape: tuple[int, ...] = ()
    view_strides: tuple[int, ...] = ()
    _tuples = frozenset({"elements", "view_shape", "view_strides"})


@dataclass(frozen=True)
class LaunchResult(Record):
    kernel: str
    line: int
    config: dict[str, Any]
    status: str  # analyzed | refused | compile-error | directive-error | crashed
    accesses: tuple[Access, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    grid: tuple[int, ...] = ()
    # declared ranges used, by pointer: [LO, HI], or [[LO, HI], ...] for a union
    value_ranges: dict[str, list] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what was not decided (e.g. races), shown in the hover
    engine: str = ""  # enumerate | affine | grid: what answered it ("" when nothing ran)
    origin: Frame | None = None  # where the launch is declared: the directive's or the toml table's line
    _nested = {"accesses": Access, "diagnostics": Diagnostic, "origin": Frame}
    _tuples = frozenset({"grid", "notes"})


@dataclass(frozen=True)
class FileResult(Record):
    path: str
    launches: tuple[LaunchResult, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())  # file-level: TL100, import errors
    # the absolute file behind each portable path of this result that is not the workspace's (an
    # installed package's `liger_kernel/ops/x.py`), as the worker found it
    absolute_paths: dict[str, str] = field(default_factory=dict)
    # the user's own files the import ran besides this one (helpers, their packages), absolute: a
    # change to one of them makes this result stale (the server re-analyses an open file on it)
    sources: tuple[str, ...] = ()
    _nested = {"launches": LaunchResult, "diagnostics": Diagnostic}
    _tuples = frozenset({"sources"})

    def all_diagnostics(self) -> list[Diagnostic]:
        out = list(self.diagnostics)
        for launch in self.launches:
            out.extend(launch.diagnostics)
        return out
