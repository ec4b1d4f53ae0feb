"""ETOS Desktop: a desktop companion chat app with a memory the user can see and control."""

__version__ = "0.1.0"
