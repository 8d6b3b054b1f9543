"""The camera pipeline: frame -> observation (cells, bridges, confidence, occlusion).

Stages, each a function of (settings, image or measurements), one orchestrator
(`pipeline.read_board`, and `pipeline.BoardReader` for the live loop):
`locate` (board outline + grid, or ArUco markers) -> `geometry` (homography, camera pose,
parallax of raised things) -> `features` (top-down remap undoing lens distortion, box
means, light field from the border ring) -> `classify` (colours learned per image by
k-means, sub-box votes per cell) -> `bridges` (deck-coloured paths between tiles of one
colour) -> occlusion (border ring, unknown patches) -> `observation.Observation`.
`evaluate` measures accuracy and speed on `synth` frames (`ponte eval vision`).

May import numpy and OpenCV, and `calibration` for the calibration format. Must not import
`referee`, `web`, `firmware_bridge` or `ponte`: legality is judged downstream.
"""
