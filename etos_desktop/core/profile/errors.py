"""Errors of the profile: each has a stable ``code`` the UI maps to words.

::

    InvalidInput (core.errors)
    ├── ProfileTooLong          the text is over 4,000 characters (params: length, limit)
    ├── ProfilePinsTooLong      pinned lines over 1,000 characters together (params: length, limit)
    ├── ProfileStale            the profile changed since the editor loaded it (params: revision_id)
    └── RevisionNotFound        no such revision (params: revision_id)
    EtosError (core.errors)
    └── ProfileRejected         a refresh's reply broke the output rules (params: reason)

A secret in the user's own text is refused with the write checks' ``MemorySecret``
(``core.text.checks``).
"""

from __future__ import annotations

from etos_desktop.core.errors import EtosError, InvalidInput


class ProfileTooLong(InvalidInput):
    """The profile's text is longer than the limit."""

    code = "profile_too_long"


class ProfilePinsTooLong(InvalidInput):
    """The pinned lines together are longer than their limit."""

    code = "profile_pins_too_long"


class ProfileStale(InvalidInput):
    """The profile changed (a refresh, another edit) since the text being saved was loaded."""

    code = "profile_stale"


class RevisionNotFound(InvalidInput):
    """No profile revision has this id."""

    code = "profile_revision_not_found"


class ProfileRejected(EtosError):
    """The model's profile broke the output rules; the old profile is kept.

    ``params["reason"]``: ``"empty"``, ``"incomplete"``, ``"no_sections"`` or ``"too_long"``.
    """

    code = "profile_rejected"
