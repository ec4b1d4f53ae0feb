"""PySide6 user interface: windows, pages, models and controllers; imports core and services."""
