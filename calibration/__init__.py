"""The code that makes calibrations, and examples; the format itself is
`contracts.calibration`.

May import numpy, OpenCV, `contracts` and (to find the board) `vision`. Must not import
`referee`, `web`, `firmware_bridge`, `ponte` or `lab`.
"""
