"""The live loop: camera frames -> readings -> settled boards -> moves -> referee -> events
for the web page, the LEDs and the record.

Pure cores: `settle` (when a board has come to rest), `infer` (what a settled board means
against the record), `table` (the game driven by boards and controls, as replayable ops).
Edges: `sources` (cameras, files, streams), `camera` (the vision pipeline adapter),
`store` (SQLite), `session` (the `contracts.live.LiveApi` the web page uses), `loop` (frame
loop and transcription), `leds` (the LED controller).
May import `contracts`, `referee`, `vision`, `calibration`, `firmware_bridge`; never `web`
(the web page is handed a session, not the other way round) or `lab`.
"""
