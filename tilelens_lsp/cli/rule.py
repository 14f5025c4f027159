"""`tilelens-lsp rule TLxxx` (and `rule --all`): what a diagnostic code means, as `ruff rule` prints it.

The text is the code's section of docs/diagnostics.md, both made from the one table of codes
(diagnostics.py). It starts no worker and imports nothing of Triton.
"""

from __future__ import annotations

import sys

from tilelens_lsp.diagnostics import CODES, Code, close_codes, lookup


def add_parser(sub) -> None:
    p = sub.add_parser("rule", help="print what a diagnostic code means and how to fix it (rule TL001; rule --all)")
    p.add_argument("code", nargs="?", help="a code such as TL001")
    p.add_argument("--all", action="store_true", help="print every code")


def render(code: Code) -> str:
    """The code's documentation for a terminal: its section with a title line and the link."""
    body = code.markdown().split("\n", 2)[2]  # drop the `### TLxxx` heading and its blank line
    return f"# {code.code}: {code.title} ({code.severity})\n\n{body}\nDocumentation: {code.url}\n"


def run_rule(args) -> int:
    if args.all:
        if args.code:
            print("tilelens-lsp: rule takes a code or --all, not both", file=sys.stderr)
            return 2
        sys.stdout.write("\n".join(render(c) for c in CODES.values()))
        return 0
    if not args.code:
        print(
            "tilelens-lsp: rule needs a code (e.g. tilelens-lsp rule TL001) or --all; codes: " + ", ".join(CODES),
            file=sys.stderr,
        )
        return 2
    code = lookup(args.code)
    if code is None:
        close = close_codes(args.code)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        print(f"tilelens-lsp: unknown code {args.code!r}{hint} (codes: {', '.join(CODES)})", file=sys.stderr)
        return 2
    sys.stdout.write(render(code))
    return 0
