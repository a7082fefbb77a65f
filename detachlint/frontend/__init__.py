"""The engine's front end: Python's first pass (``firstpass``), the textual pre-check
(``precheck``), the quiet code blanked before LibCST parses (``units``, for the selected rules'
``sites``) and the tree built from Python's for the screen (``fromast``). ``analysis/`` holds
what rules ask for."""
