"""The diagnostic codes: one table that everything saying what a code means reads.

Each `Code` holds its severity (and the LSP and SARIF levels that follow from it), its title, a
one-line summary, what it means and how to fix it (SARIF `fullDescription` and `help`), the longer
details of docs/diagnostics.md and `tilelens-lsp rule`, and the anchor its `codeDescription` and
`helpUri` link to. `model.SEVERITY`/`CODE_TITLES`, the CLI's SARIF rules, `tilelens-lsp rule` and
the codes section of docs/diagnostics.md (`tools/gen_diagnostics_docs.py`) are derived from it; the
README's table of codes is checked against it by a test.

It holds data only: it decides no verdict and does not know which client emits which code.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

# where `codeDescription` and SARIF's `helpUri` point: the codes section of docs/diagnostics.md
DOCS_URL = "https://github.com/tilelens/tilelens-lsp/blob/main/docs/diagnostics.md"
# the project itself (SARIF's `informationUri`)
README_URL = "https://github.com/tilelens/tilelens-lsp/blob/main/README.md"

SEVERITIES = ("error", "warning", "information", "hint")
# LSP's DiagnosticSeverity numbers (the protocol's enum: 1 Error ... 4 Hint)
LSP_SEVERITY = {"error": 1, "warning": 2, "information": 3, "hint": 4}
SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


@dataclass(frozen=True)
class Code:
    code: str
    severity: str
    title: str
    summary: str  # one line: the README's table of codes
    description: str  # what it means (SARIF fullDescription)
    fix: str  # what to do about it (SARIF help, after the description)
    details: str = ""  # more for the reader of the docs: witness, scope, edge cases (Markdown)

    @property
    def lsp_severity(self) -> int:
        return LSP_SEVERITY[self.severity]

    @property
    def sarif_level(self) -> str:
        return SARIF_LEVEL[self.severity]

    @property
    def anchor(self) -> str:
        """The anchor of the code's section in docs/diagnostics.md (GitHub's, for `### TL001`)."""
        return self.code.lower()

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.anchor}"

    def markdown(self) -> str:
        """The code's section of docs/diagnostics.md, also what `tilelens-lsp rule` prints."""
        parts = [
            f"### {self.code}",
            "",
            f"**{self.title[0].upper()}{self.title[1:]}** ({self.severity}). {self.description}",
            "",
        ]
        if self.details:
            parts += [self.details, ""]
        parts += [f"**How to fix.** {self.fix}", ""]
        return "\n".join(parts)


_TABLE = (
    Code(
        "TL001",
        "error",
        "out-of-bounds access",
        "a load or store provably leaves its tensor's storage",
        "Some mask-true lane of some program provably reads or writes outside the storage of its pointer "
        "argument for the declared launch.",
        "Mask the access (`mask=offs < n`) or size the grid so every program stays inside the tensor. The "
        "message names a witness: the program id, the lane, the loop iteration and the element that falls "
        "outside the storage.",
        "The witness names the program id, the lane index per dimension, the loop iteration(s) and the "
        "element. The storage is the view's storage (`tensor(..., storage=)`): a strided view that reads "
        "past its own shape but inside its storage is not an error (that is TL004).",
    ),
    Code(
        "TL002",
        "warning",
        "possible out-of-bounds access",
        "only a bound of an access is known, and it leaves the storage",
        "Only a bound of the access is known (for example the mask depends on loaded data), and that bound "
        "leaves the storage of the pointer argument.",
        "Check that the data-dependent mask or index really keeps the access inside the tensor; declare "
        "value ranges of index tensors (`i32[N].values(0, M)`) to get an exact answer, or suppress the line "
        "with `# tilelens: ignore[TL002]` once you have checked it.",
        "A definite TL001 needs a witness evaluated concretely; a bound that leaves the storage without one "
        "is this warning. The message names the index value or the bound that leaves the storage. Where the "
        "address comes from the one tensor of the launch with declared values, its witness is the program "
        "evaluated again with every element of that tensor at the end of its range: `when slot_mapping holds "
        "960000, writes element 983040000` is what that data does, not an end of the bound (a block `slot // "
        "16` and an offset `slot % 16` taken apart would give an element no single slot reaches).",
    ),
    Code(
        "TL003",
        "error",
        "integer overflow in address arithmetic",
        "an i32 (or narrower) value that feeds an address overflows",
        "An integer operation of 32 bits or fewer that feeds an address gives a value outside its width for "
        "the declared launch, for example `pid * stride` past 2**31 - 1.",
        "Compute the offset in 64 bits: cast the program id or row index first (`pid.to(tl.int64) * "
        "stride`). The message names the overflowing value and the program that computes it; where the "
        "value comes from a loaded index at the end of its declared range (`i32[T].values(0, V)` times a "
        "row stride), it also names the loaded value that gives it (`when ids_ptr holds 599999`).",
        "64-bit arithmetic is not flagged. The editor's quick fix *Compute in 64 bits* inserts the cast.",
    ),
    Code(
        "TL004",
        "warning",
        "access outside its view",
        "an access stays in the storage but leaves its declared view",
        "The access stays inside its argument's storage but touches elements the declared view does not "
        "cover (a slice of a larger tensor read past its own extent): memory-safe, so no sanitizer sees it, "
        "but it reads or writes a neighbour's data.",
        "Mask the access by the view's own extent (the slice's width, not the parent's). The message names "
        "the program, lane and element outside the view.",
        "A slice `x[:, :48]` of a 64-column tensor read 64 columns wide reads the parent's columns 48..63. "
        "Checked for views that do not cover their whole storage (`tensor(..., strides=, offset=, "
        "storage=)`). Witness as for TL001.",
    ),
    Code(
        "TL005",
        "error",
        "race between programs",
        "two programs access one element, one of them storing, without an atomic (or two lanes store it)",
        "One program stores an element without an atomic and another program of the same launch loads or "
        "stores that element without an atomic; programs run in no fixed order, so the result depends on "
        "scheduling. Two lanes of one store that write one element with different values race too: the "
        "GPU defines no winner.",
        "Give each program its own output elements (check the grid and the tile strides), or combine partial "
        "results with an atomic (`tl.atomic_add`) as split-K reductions do. The message names the element "
        "and both programs and lines.",
        "Decided exactly from each program's footprint (the interpreter runs programs one after another and "
        "never shows it; compute-sanitizer's racecheck covers shared memory only). Atomics are excluded. "
        "Where it cannot be decided (a kernel that takes an `atomic_cas` lock, a launch too large to split "
        "per program) there is no TL005 and the launch's hover says so (`notes` in the JSON), never a "
        "guess; where the footprints are only bounds, an overlap is TL006.",
    ),
    Code(
        "TL006",
        "warning",
        "possible race",
        "footprints known only as bounds may overlap between programs",
        "The footprints of a plain store of one program and a plain access of another are known only as "
        "bounds (they depend on loaded data), and those bounds overlap for some data in the declared value "
        "ranges: the programs may race. Also two lanes of one store that may write one element with values "
        "not known exactly: the message says whether they depend on loaded data, are computed per lane (float "
        "arithmetic, a conversion that rounds) or are values the analysis does not follow (carried by a loop).",
        "Check that the data really gives each program its own elements (a histogram needs `tl.atomic_add`), "
        "narrow the declared value ranges, or suppress the line with `# tilelens: ignore[TL006]` once you "
        "have checked it.",
        "TL005 stays the definite verdict, with a witness evaluated concretely; TL006 is what a bound can say. "
        "At sizes where the footprints are one bound over every program (the grid engine), or past what the "
        "race check keeps per lane, a store addressed through the launch's one tensor of declared values is "
        "decided by two programs evaluated with every element of that tensor at one value of its range: "
        "where they store one element, that is the TL006 and its witness (`programs (0, 0, 0) and (1, 0, 0) "
        "both store element 491518976 of cache_ptr ... when every element of slots_ptr holds 479999`); where "
        "they do not, the launch keeps its note that races were not checked.",
    ),
    Code(
        "TL010",
        "error",
        "Triton compile error",
        "Triton could not compile the launch, or the module failed to import",
        "Triton could not compile the kernel for the declared launch, or the module failed to import in the "
        "analysis worker.",
        "Read the compile error at the line Triton names; for an import error install the missing package "
        "into the Python that runs the worker (setting `interpreter`, `check --python`).",
        "Reported at the line Triton names (with the call stack of inlined helpers), or at the import line "
        "for a failed import. A kernel that Triton refuses before compiling it (its cache key rejects a plain "
        "Python function the kernel references, `Unsupported function referenced`) is reported at its launch, "
        "as a real launch of it fails there.",
    ),
    Code(
        "TL020",
        "error",
        "bad launch directive",
        "a `# tilelens:` directive or toml launch could not be evaluated",
        "A `# tilelens:` launch directive (or a launch table in a toml) could not be evaluated: syntax, an "
        "unknown kernel or name, a wrong number of arguments, an unknown dtype.",
        'Fix the directive as the message says; where it suggests a name ("did you mean"), the editor\'s '
        "quick fix applies it. Other launches are still analysed.",
        "Reported on the directive's own line; it never stops the other launches.",
    ),
    Code(
        "TL030",
        "information",
        "not analyzed",
        "part of a launch was not analysed; the message names the refusal kind",
        "Part of the launch was not analysed, and the message names why (the refusal kind, such as "
        "indirect-address or control-flow). A refusal is never a clean verdict.",
        "Nothing is wrong with the kernel; tilelens could not model it. Declaring value ranges for index "
        "tensors (`.values(LO, HI)`) removes indirect-address refusals.",
        "The refusal kinds: `indirect-address` (an address built from loaded data), `data-dependent-bound`, "
        "`control-flow`, `call`, `inline-asm`, `out-of-vocabulary` (an op the model does not know feeds an "
        "address), `pointer-provenance`, `reader-misalignment`, `launch-too-large` (a launch outside the "
        "affine summary whose enumeration would exceed the budget and that the grid engine does not answer "
        "either; definite findings made before are still "
        "reported), `non-terminating` (a while loop whose condition's values come back to an earlier state, so it "
        "never ends on the device; findings made before are still reported), `wrapped-loop` (a while loop whose "
        "condition's int32 arithmetic wrapped and which was still running 256 trips later; findings made "
        "before are still reported), `unvisited` (a memory op the evaluation never examined and could not prove "
        "unreachable), `tensor-descriptor` (a descriptor gather or scatter, on a target whose TTIR keeps "
        "descriptors), `ranged-tensor-written` (the kernel stores to a tensor whose declared value range "
        "its loads would rely on), `nested-check` (`check_launch` called while tilelens imports the caller's "
        "module to analyse it: a module-level call in a script; the call that started the analysis gets the "
        "verdicts).",
    ),
    Code(
        "TL040",
        "warning",
        "untested Triton release",
        "the installed Triton release is not a tested one",
        "The installed Triton release is not one tilelens has been tested with.",
        "Install a tested Triton release, or set TILELENS_IR_ALLOW_UNTESTED_TRITON=1 to analyse anyway.",
        "`check` exits 2. The tested releases are listed in `tilelens_lsp/releases.py` (3.6, 3.7, 3.8, 3.9).",
    ),
    Code(
        "TL050",
        "warning",
        "worker crash or timeout",
        "the analysis worker crashed, timed out, ran out of memory, or a client failed",
        "The analysis worker crashed, ran past its timeout or out of memory, or one IR client failed on one launch.",
        "Raise the worker timeout (`workerTimeout`, `check --timeout`) or memory limit (`memoryLimitMb`) for "
        "very large launches; report a crash with the file that causes it.",
        "A launch whose client failed is `refused`, never `analyzed`; `check` exits 1. A fresh worker serves "
        "the next request.",
    ),
    Code(
        "TL060",
        "information",
        "unused suppression",
        "a `# tilelens: ignore` comment silences nothing",
        "A `# tilelens: ignore` comment silences nothing on its line: the codes it names are not reported "
        "there (or are not tilelens codes).",
        "Remove the comment, or the codes it names that no longer occur.",
        "Only reported when every launch of the file was analysed to the end, so a refusal or a crash never "
        "makes a suppression look unused.",
    ),
    Code(
        "TL100",
        "hint",
        "kernel without a declared launch",
        "a `@triton.jit` kernel has no declared launch, so it was not analysed",
        "A `@triton.jit` kernel in the file has no declared launch, so it was not analysed.",
        "Declare an example launch in a comment, e.g. `# tilelens: my_kernel[(4,)](fp32[4096], 4096, "
        "BLOCK=1024)`, or in a toml launch table: `tilelens-lsp suggest FILE` prints one that compiles for "
        "each such kernel, and `tilelens-lsp capture -- COMMAND` records the launches a real run makes.",
        "Reported on the kernel's `def` line; the editor's quick fix *Declare an example launch* writes a "
        "launch that compiles as written.",
    ),
)

CODES: dict[str, Code] = {c.code: c for c in _TABLE}


def lookup(code: str) -> Code | None:
    return CODES.get(code.upper())


def close_codes(code: str) -> list[str]:
    """Known codes that look like `code` (a typo, a missing digit), best first."""
    return difflib.get_close_matches(code.upper(), list(CODES), n=3, cutoff=0.6)


def codes_markdown() -> str:
    """The codes section of docs/diagnostics.md, as `tools/gen_diagnostics_docs.py` writes it."""
    return "\n".join(c.markdown() for c in CODES.values())
