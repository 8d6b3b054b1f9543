"""LEDs at the table: the microcontroller firmware (`firmware/`) and the host's serial driver.

May import pyserial and the standard library. Must not import `vision`, `web` or `ponte`;
it receives plain values describing what the LEDs should show.
"""
