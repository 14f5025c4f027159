"""Draw the extension's icon (images/icon.png, 128x128 RGBA) with nothing but the standard library.

A 4x4 grid of tiles (a kernel's blocks) on a dark square, one tile out of bounds in red, and a lens
ring over it. Run: python3 tools/make_icon.py
"""

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
BG, TILE, HOT, RING = (24, 32, 56), (76, 142, 218), (226, 74, 74), (240, 240, 240)


def pixel(x: float, y: float) -> tuple[int, int, int, int]:
    # rounded square background
    r = 22
    cx, cy = min(max(x, r), SIZE - r), min(max(y, r), SIZE - r)
    if math.hypot(x - cx, y - cy) > r:
        return (0, 0, 0, 0)
    color = BG
    # 4x4 tiles of 20 px with 4 px gaps, starting at 18
    gx, gy = (x - 18) / 24, (y - 18) / 24
    if 0 <= gx < 4 and 0 <= gy < 4 and (x - 18) % 24 < 20 and (y - 18) % 24 < 20:
        color = HOT if (int(gx), int(gy)) == (3, 3) else TILE
    # lens ring centred on the red tile
    d = math.hypot(x - 100, y - 100)
    if 15 <= d <= 21:
        color = RING
    return (*color, 255)


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + row for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main() -> None:
    rows = []
    for y in range(SIZE):
        row = bytearray()
        for x in range(SIZE):
            # 2x2 supersampling for smooth edges
            samples = [pixel(x + dx, y + dy) for dx in (0.25, 0.75) for dy in (0.25, 0.75)]
            alpha = sum(s[3] for s in samples) / 4
            if alpha == 0:
                row += bytes(4)
                continue
            opaque = [s for s in samples if s[3]]
            row += bytes(round(sum(s[i] for s in opaque) / len(opaque)) for i in range(3)) + bytes([round(alpha)])
        rows.append(bytes(row))
    out = Path(__file__).resolve().parents[1] / "images" / "icon.png"
    out.write_bytes(png(SIZE, SIZE, rows))
    print(out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
