"""The calibration format (versioned JSON), the code that makes it, and examples.

May import numpy and OpenCV. Must not import `referee`, `web`, `firmware_bridge` or `ponte`.
"""
