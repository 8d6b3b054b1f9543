"""The local web page (Flask app factory, blueprints, templates, static files).

May import Flask and `referee` (to draw positions). It talks to the live loop only through
the API object handed to `create_app`; it never opens cameras, serial ports or files on a
request's say-so.
"""
