"""Qt-free runtime services (scheduler, jobs); may import core and APScheduler, never PySide6."""
