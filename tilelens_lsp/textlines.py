"""Lines as LSP and Python's tokenizer count them: a break is `\r\n`, `\r` or `\n`, nothing else.

`str.splitlines()` also breaks at `\v \f \x1c-\x1e \x85 U+2028 U+2029`; a form feed (PEP 8's page
break) or a U+2028 in a comment then shifts every line below it, so a diagnostic lands on the wrong
line, a suppression silences the wrong one and an edit deletes the wrong characters. Every module
that numbers lines splits with these functions instead. Pure, no I/O; nothing else is done here.
"""

from __future__ import annotations

import re

BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their breaks; a text ending in a break ends with an empty line."""
    return BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset in `text` where each line of `split_lines(text)` starts."""
    starts = [0]
    starts.extend(m.end() for m in BREAK.finditer(text))
    return starts
