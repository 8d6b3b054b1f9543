"""The contracts between the packages: plain values and protocols that every package may
import.

- `live`: the live loop's events, its event bus and the `LiveApi` protocol the web page and
  the LEDs are handed.
- `calibration`: the calibration file (versioned JSON) and the pipeline's thresholds
  (`thresholds.json`).

A leaf: imports the standard library only, never another package of the project.
"""
