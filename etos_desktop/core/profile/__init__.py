"""The user profile (DESIGN §7): sections, pins, the refresh rule and request, storage; Qt-free."""
