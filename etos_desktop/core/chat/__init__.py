"""The chat service: send, assemble, stream, persist."""
