"""Model providers: the protocol, presets, keys, and the openai-backed implementation."""
