"""A second scene source: the board, its pieces, hands and the table ray-traced by POV-Ray.

Made apart from `lab.synth` (the project's own 2-D generator): its own models of the printed
board, the tiles and the arched bridge piece, its own hands, lights and camera, and no code
shared with it, so that a reading measured on these scenes is measured on scenes the camera
pipeline was never tuned on. Imports numpy, OpenCV and `referee` (positions are played with
the rules); needs the `povray` program (Debian package `povray`).

- `model`: what a scene holds, drawn from a seed (`random_table`, `random_scene`, `SETUPS`).
- `camera`: the camera, its projection and the a1 rule; `povray`: running POV-Ray.
- `scene`: a scene as POV-Ray text; `render`: trace, lens, exposure, noise, JPEG, truth.
- `stills`: a resumable set of still scenes with truth (`python -m lab.raytrace.stills`).
- `trainset`: the train split, a still set kept in the cache for the trainers'
  `--scenes-from` (`python -m lab.raytrace.trainset`).
"""

VERSION = "2"
"""Bumped whenever a change alters what a seed renders: caches and sets are keyed by it."""
