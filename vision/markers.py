"""Optional ArUco markers at the board's corners: the printable sheet and their detection.

Four markers of OpenCV's 4x4 dictionary (ids 0..3) lie just outside the board's corners.
The quadrilateral of their inner corners (the corner of each marker nearest the board's
centre) is the board outline; the grid is then found inside it as without markers.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.errors import BoardNotFound

DICTIONARY = cv2.aruco.DICT_4X4_50
MARKER_IDS = (0, 1, 2, 3)


def _dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(DICTIONARY)


def marker_sheet(marker_px: int = 400, dpi: int = 150) -> np.ndarray:
    """A printable A4 sheet (grey image) with the four corner markers, labelled."""
    width, height = int(8.27 * dpi), int(11.69 * dpi)
    sheet = np.full((height, width), 255, np.uint8)
    margin = (width - 2 * marker_px) // 3
    for i, marker_id in enumerate(MARKER_IDS):
        marker = cv2.aruco.generateImageMarker(_dictionary(), marker_id, marker_px, borderBits=1)
        col, row = i % 2, i // 2
        x = margin + col * (marker_px + margin)
        y = margin + row * (marker_px + 2 * margin)
        sheet[y : y + marker_px, x : x + marker_px] = marker
        label = f"ponte marker {marker_id}: cut out, lay at a board corner (any order)"
        cv2.putText(sheet, label, (x - margin // 2, y + marker_px + 40),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.55, 0, 1, cv2.LINE_AA)
    return sheet


def find_marker_outline(image: np.ndarray) -> np.ndarray:
    """The quadrilateral of the four markers' inner corners (any visual order), or BoardNotFound."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    detector = cv2.aruco.ArucoDetector(_dictionary(), cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        raise BoardNotFound("no ArUco corner markers found")
    found = {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}
    wanted = [found[i] for i in MARKER_IDS if i in found]
    if len(wanted) < 4:
        raise BoardNotFound(f"found {len(wanted)} of the 4 ArUco corner markers")
    centres = np.array([m.mean(axis=0) for m in wanted])
    middle = centres.mean(axis=0)
    inner = [m[np.argmin(np.linalg.norm(m - middle, axis=1))] for m in wanted]
    return np.array(inner, np.float64)
