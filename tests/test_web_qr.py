"""The QR encoder for the control link: what it draws, a real QR reader (OpenCV's) reads."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import cv2
import numpy as np
import pytest

from web import qr


def read_back(modules: list[list[bool]]) -> str:
    picture = np.array([[0 if on else 255 for on in row] for row in modules], np.uint8)
    picture = np.pad(picture, 4, constant_values=255)
    picture = cv2.resize(picture, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    text, _points, _ = cv2.QRCodeDetector().detectAndDecode(picture)
    return str(text)


@pytest.mark.parametrize(
    "text",
    [
        "a",
        "http://192.168.1.20:8000/?token=AbCdEfGhIjKlMnOpQrStUv",
        "http://[fe80::1]:8000/?token=" + "x" * 22,
        "z" * qr.MAX_BYTES,
    ],
)
def test_a_qr_reader_reads_back_the_text(text: str) -> None:
    modules = qr.encode(text)
    assert len(modules) in (21, 25, 29, 33, 37)
    assert read_back(modules) == text


def test_longer_text_is_refused() -> None:
    with pytest.raises(ValueError, match="too long"):
        qr.encode("z" * (qr.MAX_BYTES + 1))


def test_the_svg_and_text_forms() -> None:
    modules = qr.encode("hello")
    root = ET.fromstring(qr.to_svg(modules))
    assert root.tag.endswith("svg") and root.get("aria-label") == "QR code"
    lines = qr.to_text(modules).splitlines()
    assert len(lines) == (len(modules) + 4 + 1) // 2
    assert {len(line) for line in lines} == {len(modules) + 4}
