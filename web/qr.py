"""A small QR code encoder for the control link: byte mode, error correction level L,
versions 1-5 (one error-correction block, up to 106 bytes), mask pattern 0.

Written for this project from the QR code standard (ISO/IEC 18004) so the host's screen can
show the link as a code a phone scans, with no extra dependency. Any mask is valid for a
reader; the standard's penalty-based choice only makes codes slightly easier to read.
"""

from __future__ import annotations

DATA_CODEWORDS = {1: 19, 2: 34, 3: 55, 4: 80, 5: 108}
"""Data codewords per version at level L."""
EC_CODEWORDS = {1: 7, 2: 10, 3: 15, 4: 20, 5: 26}
"""Error-correction codewords per version at level L (one block)."""
MAX_BYTES = DATA_CODEWORDS[5] - 2


def _gf_multiply(x: int, y: int) -> int:
    z = 0
    for i in range(7, -1, -1):
        z = (z << 1) ^ ((z >> 7) * 0x11D)
        z ^= ((y >> i) & 1) * x
    return z


def _rs_divisor(degree: int) -> list[int]:
    result = [0] * (degree - 1) + [1]
    root = 1
    for _ in range(degree):
        for j in range(degree):
            result[j] = _gf_multiply(result[j], root)
            if j + 1 < degree:
                result[j] ^= result[j + 1]
        root = _gf_multiply(root, 0x02)
    return result


def _rs_remainder(data: list[int], degree: int) -> list[int]:
    divisor = _rs_divisor(degree)
    result = [0] * degree
    for byte in data:
        factor = byte ^ result.pop(0)
        result.append(0)
        for i, coef in enumerate(divisor):
            result[i] ^= _gf_multiply(coef, factor)
    return result


def _codewords(data: bytes, version: int) -> list[int]:
    bits: list[int] = []

    def put(value: int, length: int) -> None:
        bits.extend((value >> i) & 1 for i in range(length - 1, -1, -1))

    put(0b0100, 4)
    put(len(data), 8)
    for byte in data:
        put(byte, 8)
    capacity = DATA_CODEWORDS[version] * 8
    put(0, min(4, capacity - len(bits)))
    put(0, (-len(bits)) % 8)
    words = [int("".join(map(str, bits[k : k + 8])), 2) for k in range(0, len(bits), 8)]
    pad = 0xEC
    while len(words) < DATA_CODEWORDS[version]:
        words.append(pad)
        pad ^= 0xEC ^ 0x11
    return words + _rs_remainder(words, EC_CODEWORDS[version])


def encode(text: str) -> list[list[bool]]:
    """The QR code of `text` (UTF-8) as rows of modules, True for dark.

    Raises ValueError if the text is longer than MAX_BYTES bytes.
    """
    data = text.encode("utf-8")
    version = next((v for v in DATA_CODEWORDS if len(data) + 2 <= DATA_CODEWORDS[v]), None)
    if version is None:
        raise ValueError(f"text too long for this QR encoder ({len(data)} > {MAX_BYTES} bytes)")
    size = 17 + 4 * version
    dark = [[False] * size for _ in range(size)]
    fixed = [[False] * size for _ in range(size)]

    def set_fixed(x: int, y: int, on: bool) -> None:
        dark[y][x] = on
        fixed[y][x] = True

    for i in range(size):
        set_fixed(6, i, i % 2 == 0)
        set_fixed(i, 6, i % 2 == 0)
    for cx, cy in ((3, 3), (size - 4, 3), (3, size - 4)):
        for dy in range(-4, 5):
            for dx in range(-4, 5):
                x, y = cx + dx, cy + dy
                if 0 <= x < size and 0 <= y < size:
                    ring = max(abs(dx), abs(dy))
                    set_fixed(x, y, ring not in (2, 4))
    if version >= 2:
        c = size - 7
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                set_fixed(c + dx, c + dy, max(abs(dx), abs(dy)) != 1)
    _format_bits(set_fixed, size, mask=0)

    words = _codewords(data, version)
    i = 0
    right = size - 1
    while right >= 1:
        if right == 6:
            right = 5
        for vert in range(size):
            for j in range(2):
                x = right - j
                upward = ((right + 1) & 2) == 0
                y = size - 1 - vert if upward else vert
                if not fixed[y][x] and i < len(words) * 8:
                    dark[y][x] = bool((words[i >> 3] >> (7 - (i & 7))) & 1)
                    i += 1
        right -= 2
    for y in range(size):
        for x in range(size):
            if not fixed[y][x] and (x + y) % 2 == 0:
                dark[y][x] = not dark[y][x]
    return dark


def _format_bits(set_fixed: object, size: int, mask: int) -> None:
    put = set_fixed
    assert callable(put)
    data = (1 << 3) | mask  # level L
    rem = data
    for _ in range(10):
        rem = (rem << 1) ^ ((rem >> 9) * 0x537)
    bits = ((data << 10) | rem) ^ 0x5412

    def bit(i: int) -> bool:
        return bool((bits >> i) & 1)

    for i in range(6):
        put(8, i, bit(i))
    put(8, 7, bit(6))
    put(8, 8, bit(7))
    put(7, 8, bit(8))
    for i in range(9, 15):
        put(14 - i, 8, bit(i))
    for i in range(8):
        put(size - 1 - i, 8, bit(i))
    for i in range(8, 15):
        put(8, size - 15 + i, bit(i))
    put(8, size - 8, True)


def to_svg(modules: list[list[bool]], scale: int = 6, border: int = 4) -> str:
    """The code as an SVG picture (one path of dark squares on white)."""
    size = len(modules)
    side = (size + 2 * border) * scale
    path = "".join(
        f"M{(x + border) * scale},{(y + border) * scale}h{scale}v{scale}h-{scale}z"
        for y, row in enumerate(modules)
        for x, on in enumerate(row)
        if on
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {side} {side}" '
        f'width="{side}" height="{side}" role="img" aria-label="QR code">'
        f'<rect width="{side}" height="{side}" fill="#fff"/>'
        f'<path d="{path}" fill="#000"/></svg>'
    )


def to_text(modules: list[list[bool]], border: int = 2) -> str:
    """The code drawn with half-block characters for a terminal with light text on a dark
    background (the usual one): lit characters are the light modules."""
    size = len(modules)

    def on(x: int, y: int) -> bool:
        return 0 <= x < size and 0 <= y < size and modules[y][x]

    lines = []
    for y in range(-border, size + border, 2):
        line = []
        for x in range(-border, size + border):
            top, bottom = on(x, y), on(x, y + 1)
            line.append(" " if top and bottom else "▄" if top else "▀" if bottom else "█")
        lines.append("".join(line))
    return "\n".join(lines)
