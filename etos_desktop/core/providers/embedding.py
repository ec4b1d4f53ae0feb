"""The embedder protocol (the embedders themselves are in ``embedders.py``).

An embedder turns texts into L2-normalised float32 vectors. Its ``key`` names provider, model and
dimension; vectors made by different keys are never compared with each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy
import numpy.typing


class Embedder(Protocol):
    """Something that turns texts into unit vectors.

    Attributes:
        key: Identifies provider + model + dimension, e.g. ``"use-m3:512"`` or
            ``"openai:<base_url>:<model>:<dim>"``.
        dimension: The length of every vector this embedder returns.
    """

    key: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        """Embed ``texts``.

        Args:
            texts: The texts to embed, in order.

        Returns:
            An array of shape ``(len(texts), dimension)``; rows are L2-normalised.

        Raises:
            ProviderError: The embedding service failed or could not be reached.
        """
        ...
