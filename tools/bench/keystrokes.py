"""What one keystroke costs the server on a large document, measured side by side in one run (issue 24, item 14).

A keystroke is one incremental didChange: the server applies it to its copy of the document
(lsp/documents.py) and moves the line maps of the analysed text (lsp/linemap.py, `follow_edits`).
Printed: milliseconds per keystroke for documents of growing size, and the ratio to the smallest,
for the line-by-line `apply_change` + `then` path (before) and `advance`'s splice path (now).
"""

from __future__ import annotations

import time

from tilelens_lsp.lsp import linemap
from tilelens_lsp.lsp.documents import Document, apply


def document(size: int) -> str:
    return "".join(f"    x{i} = tl.load(x_ptr + offs, mask=mask)  # comment {i}\n" for i in range(size // 50))


def per_keystroke(text: str, keys: int, fast: bool) -> float:
    doc, tracked = Document(text), linemap.start(text)
    middle = len(doc.starts) // 2
    t0 = 0.0
    for i in range(keys + 1):
        if i == 1:
            t0 = time.perf_counter()  # the first keystroke also finds the line starts: not timed
        change = {
            "range": {"start": {"line": middle, "character": 4 + i}, "end": {"line": middle, "character": 4 + i}},
            "text": "a",
        }
        apply(doc, change)
        if fast:
            tracked = linemap.advance(tracked, [change])
        else:
            new_text, step = linemap.apply_change(tracked.text, change)
            tracked = linemap.Tracked(tracked.base, new_text, tracked.map.then(step))
        tracked = linemap.resync(tracked, doc.text)
    return (time.perf_counter() - t0) / keys


def main() -> None:
    sizes = (100_000, 500_000, 2_000_000)
    print("document    lines   before ms/key   now ms/key   before/now")
    for size in sizes:
        text = document(size)
        before, now = per_keystroke(text, 10, False), per_keystroke(text, 10, True)
        print(
            f"{len(text) / 1e6:5.1f} MB  {text.count(chr(10)):7d}   {before * 1e3:10.1f}   {now * 1e3:10.1f}"
            f"   {before / now:8.1f}x"
        )


if __name__ == "__main__":
    main()
