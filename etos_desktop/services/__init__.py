"""Qt-free runtime services (the scheduler, when the jobs run, their run records); may import core and APScheduler, never PySide6."""
