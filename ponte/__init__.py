"""The application shell: the `ponte` command and the pieces that join the packages.

`ponte` may import every other package of the project (referee, vision, calibration,
firmware_bridge, web); none of them imports `ponte`. Heavy imports (OpenCV, Flask, serial)
happen inside the command that needs them, so `ponte referee` starts quickly.
"""

__version__ = "0.1.0"
