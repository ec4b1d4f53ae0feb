"""Declarative settings schema, settings store and data locations."""
