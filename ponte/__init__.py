"""The application shell: the `ponte` command and the pieces that join the packages.

`ponte` may import every other runtime package of the project (contracts, referee, vision,
calibration, firmware_bridge, web); none of them imports `ponte`. Heavy imports (OpenCV,
Flask, serial) happen inside the command that needs them, so `ponte referee` starts quickly.
The commands that generate, train or measure (`ponte eval`, `ponte bench`) import `lab`
inside the command, and say how to install it when it is missing (`ponte.cli.lab_module`).
"""

__version__ = "0.1.0"
