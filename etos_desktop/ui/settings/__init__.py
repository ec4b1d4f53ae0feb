"""The Settings dialog and its pages: the dialog shell, one module per page, and their controllers.

UI layer: imports PySide6, ``core``, ``services`` and the shared ``ui`` modules; ``page.py`` holds the
conventions every page follows.
"""
