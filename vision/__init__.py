"""The camera pipeline: frame -> observation (cells, bridges, confidence, occlusion).

Stages, each a function of (settings, image or measurements), one orchestrator
(`pipeline.read_board`, and `pipeline.BoardReader` for the live loop):
`locate` (board outline + grid, or ArUco markers) -> `geometry` (homography, camera pose,
parallax of raised things) -> `features` (top-down remap undoing lens distortion, box
means, light field from the border ring, texture and tile edges) -> `classify` (colours
learned per image by k-means, sub-box votes per cell) -> `learned` (a cell network and a
bridge network over features measured against the learned colours; `bridges` keeps the
threshold rules used when the model files are missing) -> a second look through the
picture at what those networks are unsure of (`patches`: a small convolutional network over
a cell's patch; `decks`: one over a candidate bridge's deck) -> occlusion (border against
the bare border, hidden cells) -> `observation.Observation`. The networks' weights are in
`models/` (or the folder `PONTE_MODELS` names, see `learned`); the lab (`lab.train`,
`lab.train_patches`, `lab.train_decks`) fits them on generated scenes. `bend` finds the
printed grid's crossings and says how far a grid lies from them, and fits a radial lens to
them: the calibration uses it to lay a grid that misses the lines through them (a shadow
across the outline, a wide-angle lens).

May import numpy, OpenCV and threadpoolctl, and `contracts` for the calibration format.
Must not import `referee`, `calibration`, `web`, `firmware_bridge`, `ponte` or `lab`:
legality is judged downstream.
"""
