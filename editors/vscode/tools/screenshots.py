"""Playwright driver for tools/screenshots.sh: captures the README screenshots from a live
code-server session that runs the TileLens extension against the real language server.

Usage: python screenshots.py URL WORKSPACE OUT_DIR [CHROMIUM]

URL is the code-server address (loopback), WORKSPACE the folder it serves (a copy of samples/),
OUT_DIR where diagnostics.png, hover.png, codelens-quickfix.png, declare-launch.png
(the TL100 quick fix) and declare-launch-applied.png are written. Nothing here
edits a picture: each PNG is the browser's own screenshot of the page (only re-encoded smaller).
Every step waits for what it shows (diagnostics, hover, code lens, quick-fix menu) and fails
loudly if it does not appear, so a missing feature is never captured as if it worked.
"""

import os
import re
import sys
import time

from playwright.sync_api import sync_playwright

VIEWPORT = {"width": 1400, "height": 850}
LONELY = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)
"""
ANALYSIS_TIMEOUT_S = 120  # the first analysis compiles Triton kernels on the host


def wait_until(what, check, timeout_s=30.0, step_s=0.5):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step_s)
    raise SystemExit(f"screenshots: timed out after {timeout_s:.0f} s waiting for {what}")


def status_text(page):
    texts = page.locator("footer .statusbar-item").all_inner_texts()
    return next((t.strip() for t in texts if "TileLens" in t), "")


def run_command(page, name):
    page.keyboard.press("F1")
    page.wait_for_selector(".quick-input-widget:visible")
    page.keyboard.type(name)
    time.sleep(0.8)
    page.keyboard.press("Enter")
    time.sleep(0.8)


def open_file(page, name):
    page.keyboard.press("Control+p")
    page.wait_for_selector(".quick-input-widget:visible")
    page.keyboard.type(name)
    time.sleep(1.0)
    page.keyboard.press("Enter")
    page.wait_for_selector(f'.tab.active[aria-label^="{name}"]', timeout=15000)
    time.sleep(0.5)


def wait_for_analysis(page, errors):
    """Status item reads 'TileLens: N errors' and the editor shows N error squiggles."""
    wait_until(
        f"'TileLens: {errors} errors' in the status bar",
        lambda: re.search(rf"TileLens: {errors} errors?\b", status_text(page)),
        ANALYSIS_TIMEOUT_S,
    )
    wait_until(f"{errors} error squiggles", lambda: page.locator(".squiggly-error").count() >= errors)
    wait_until("code lens above the kernels", lambda: page.locator(".codelens-decoration").count() > 0)
    time.sleep(1.0)


def goto_line(page, line, column):
    page.keyboard.press("Control+g")
    page.wait_for_selector(".quick-input-widget:visible")
    page.keyboard.type(f"{line}:{column}")
    page.keyboard.press("Enter")
    time.sleep(0.5)


def text_box(page, line_text, word):
    """Screen box of the first `word` on the editor line containing `line_text` (Monaco renders
    spaces as no-break spaces and merges tokens into spans: measure the text with a DOM Range)."""
    line = page.locator(".monaco-editor .view-line", has_text=line_text).first
    line.wait_for(timeout=15000)
    return line.evaluate(
        """(el, word) => {
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                const i = n.textContent.indexOf(word);
                if (i < 0) continue;
                const r = document.createRange();
                r.setStart(n, i);
                r.setEnd(n, i + word.length);
                const b = r.getBoundingClientRect();
                return {x: b.x, y: b.y, width: b.width, height: b.height};
            }
            return null;
        }""",
        word,
    )


def shoot(page, path):
    page.screenshot(path=path)
    print(f"screenshots: wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


def main():
    url, workspace, out_dir = sys.argv[1:4]
    chromium = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/chromium"
    os.makedirs(out_dir, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/?folder={workspace}")
        page.wait_for_selector(".monaco-workbench .part.editor", timeout=120000)
        wait_until("the status bar", lambda: page.locator("footer .statusbar-item").count() > 3, 60)
        time.sleep(3)
        run_command(page, "Notifications: Clear All Notifications")

        # 1. Diagnostics: buggy_kernels.py with its three errors and the Problems panel.
        open_file(page, "buggy_kernels.py")
        wait_for_analysis(page, 3)
        page.keyboard.press("Control+Shift+m")
        wait_until(
            "TL001 and TL003 rows in the Problems panel",
            lambda: (
                lambda t: "TL001" in t and "TL003" in t
            )(" ".join(page.locator(".markers-panel .monaco-list-row").all_inner_texts())),
        )
        run_command(page, "Notifications: Clear All Notifications")
        # A lower panel (three rows fit) and the editor scrolled to the kernels: both bugs in view.
        sash = page.locator(".part.panel").bounding_box()
        page.mouse.move(700, sash["y"] + 1)
        page.mouse.down()
        page.mouse.move(700, sash["y"] + 120, steps=8)
        page.mouse.up()
        goto_line(page, 9, 1)  # the cursor sits on a line without a diagnostic
        editor = page.locator(".part.editor .monaco-editor").first.bounding_box()
        page.mouse.move(editor["x"] + 400, editor["y"] + 100)
        page.mouse.wheel(0, 140)
        page.mouse.move(5, VIEWPORT["height"] / 2)
        time.sleep(1.0)
        shoot(page, os.path.join(out_dir, "diagnostics.png"))
        page.keyboard.press("Control+j")  # hide the panel again
        time.sleep(0.5)

        # 2. Code lens + quick fix: the TL003 line of row_sum_kernel, Ctrl+. opened.
        goto_line(page, 27, 17)
        # Go to Line centres line 27: scroll back to the top so both kernels' code lenses show.
        editor = page.locator(".part.editor .monaco-editor").first.bounding_box()
        page.mouse.move(editor["x"] + 400, editor["y"] + 100)
        page.mouse.wheel(0, -2000)
        page.mouse.move(5, VIEWPORT["height"] / 2)
        time.sleep(0.8)
        page.keyboard.press("Control+.")
        menu = wait_until(
            "the quick-fix menu with 'Compute in 64 bits'",
            lambda: (
                lambda t: t if "64 bits" in t else ""
            )(" ".join(page.locator(".action-widget:visible").all_inner_texts())),
            20,
        )
        print("screenshots: quick-fix menu:", menu.replace("\n", " | "), flush=True)
        lenses = wait_until(
            "a 'tilelens: 1 launch ... error' code lens",
            lambda: (
                lambda t: t if any("launch" in x and "error" in x for x in t) else None
            )(page.locator(".codelens-decoration").all_inner_texts()),
        )
        print("screenshots: code lens:", lenses, flush=True)
        time.sleep(1.0)
        shoot(page, os.path.join(out_dir, "codelens-quickfix.png"))
        page.keyboard.press("Escape")

        # 3. Hover: the footprint of a load in vector_add.py (a clean file).
        page.keyboard.press("Control+b")  # hide the side bar: room for the hover's table
        open_file(page, "vector_add.py")
        wait_until(
            "'TileLens: clean' for vector_add.py",
            lambda: "TileLens: clean" in status_text(page),
            ANALYSIS_TIMEOUT_S,
        )
        wait_until("code lens", lambda: page.locator(".codelens-decoration").count() > 0)
        box = text_box(page, "tl.load(x_ptr", "load")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        hover = wait_until(
            "the TileLens hover",
            lambda: (
                lambda t: t if "load" in t.lower() and ("element" in t or "bytes" in t or "x_ptr" in t) else ""
            )(" ".join(page.locator(".monaco-hover:visible").all_inner_texts())),
            20,
        )
        print("screenshots: hover text:", hover.replace("\n", " | ")[:400], flush=True)
        time.sleep(1.0)
        shoot(page, os.path.join(out_dir, "hover.png"))
        page.mouse.move(5, VIEWPORT["height"] / 2)

        # 4. TL100: a kernel without a launch; Ctrl+. offers "Declare an example launch", which the
        # server resolves (it compiles the launch first); applied and saved, the file is analysed.
        with open(os.path.join(workspace, "scale.py"), "w") as f:
            f.write(LONELY)
        open_file(page, "scale.py")
        wait_until("the 'no launch declared' code lens",
                   lambda: any("no launch declared" in t for t in page.locator(".codelens-decoration").all_inner_texts()),
                   ANALYSIS_TIMEOUT_S)
        goto_line(page, 6, 5)
        page.keyboard.press("Control+.")
        menu = wait_until(
            "the quick-fix menu with 'Declare an example launch'",
            lambda: (
                lambda t: t if "Declare an example launch" in t else ""
            )(" ".join(page.locator(".action-widget:visible").all_inner_texts())),
            20,
        )
        print("screenshots: TL100 menu:", menu.replace("\n", " | "), flush=True)
        time.sleep(1.0)
        shoot(page, os.path.join(out_dir, "declare-launch.png"))
        page.keyboard.press("Enter")   # the preferred fix is selected first
        wait_until("the inserted launch", lambda: page.locator(".view-line", has_text="scale_kernel[(").count() > 0,
                   ANALYSIS_TIMEOUT_S)
        page.keyboard.press("Control+s")
        wait_until("the '1 launch' code lens after saving",
                   lambda: any("1 launch" in t for t in page.locator(".codelens-decoration").all_inner_texts()),
                   ANALYSIS_TIMEOUT_S)
        goto_line(page, 1, 1)
        time.sleep(1.0)
        shoot(page, os.path.join(out_dir, "declare-launch-applied.png"))

        browser.close()


if __name__ == "__main__":
    main()
