"""The referee: the complete rules of Ponte del Diavolo as pure functions and values.

Pure: no OpenCV, Flask, serial, SQLite or file I/O (records are read from and written to
handles the caller opens). Imports nothing but the standard library.
"""
