"""Conversations: the chat service (send, assemble, stream, persist) and their titles; Qt-free."""
