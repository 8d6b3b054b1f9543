"""The live loop: camera frames -> observations -> settled boards -> moves -> referee ->
events for the web page, the LEDs and the record. `api` is its contract with watchers."""
