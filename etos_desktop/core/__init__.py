"""Qt-free domain layer: may import the standard library and pure-Python packages, never PySide6, qasync or APScheduler."""
