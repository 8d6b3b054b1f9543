"""The lab: what makes scenes, trains the networks and measures the system, apart from what
runs at the table.

May import every runtime package (`contracts`, `referee`, `vision`, `calibration`,
`firmware_bridge`, `web`, `ponte`); none of them imports `lab` at module level, and the
runtime wheel leaves it out. See `lab/README.md`.
"""
