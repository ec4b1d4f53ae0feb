"""Long-term memory, session summaries and the user profile (later issues)."""
