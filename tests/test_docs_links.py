"""Every relative link of the README, ARCHITECTURE.md and docs/ lands on a file of this repository and,
where it names an anchor, on a heading of that file (the README was split into docs/; links must follow)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]


def _anchors(path: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)  # nor do code spans (`KERNEL[GRID](ARGS)`)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_every_relative_link_resolves():
    broken = []
    for doc in DOCS:
        for link in _links(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = (doc.parent / path).resolve() if path else doc
            if not target.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {link}")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
                broken.append(f"{doc.relative_to(ROOT)}: {link} (no such heading)")
    assert broken == []


def test_nothing_cites_a_design_file_the_repository_does_not_have():
    files = [
        *DOCS,
        *(ROOT / "tilelens_lsp").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "tools").rglob("*.py"),
        *(ROOT / "editors").rglob("*.md"),
    ]
    citing = [
        f.relative_to(ROOT).as_posix()
        for f in files
        if "node_modules" not in f.parts and re.search(r"DESIGN(\.md| §)", f.read_text(encoding="utf-8", errors="replace"))
    ]
    assert citing == []
