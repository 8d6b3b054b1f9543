"""The camera pipeline: frame -> observation (cells, bridges, confidence, occlusion).

May import numpy and OpenCV, and `calibration` for the calibration format. Must not import
`referee`, `web`, `firmware_bridge` or `ponte`: legality is judged downstream.
"""
