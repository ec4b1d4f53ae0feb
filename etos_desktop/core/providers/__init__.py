"""Model providers: the chat and embedding protocols, presets, keys, the openai-backed implementation and the embedders."""
