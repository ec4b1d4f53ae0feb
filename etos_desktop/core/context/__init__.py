"""Context assembly: a pure function from state to the exact request plus a trace."""
