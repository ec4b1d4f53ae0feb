"""End-to-end encryption of sync files: a passphrase-derived key, AES-GCM files with a header.

The folder holds one plaintext header, ``sync.json``: format, version, a random folder id, the
scrypt salt and parameters, and a key check (an HKDF output of the key, so a wrong passphrase
is told apart from a damaged file before anything is read). It holds no secret: what it gives
an attacker (a way to test guesses offline) any ciphertext gives too, and scrypt makes each
guess cost ~32 MiB and ~0.1 s.

An update file is::

    magic "ETOSSYNC" | version (1 byte) | kind (1 byte) | device id (16) | seq (8, big-endian)
    | nonce (12) | AES-256-GCM ciphertext of zlib(update) with its 16-byte tag

The header bytes before the nonce and the folder id are the associated data, so a file moved
to another device's folder, renamed to another seq, or copied into another sync folder fails
authentication like a damaged one.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import os
import struct
import unicodedata
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from etos_desktop.core.sync.errors import SyncFileRejected, SyncFolderInvalid, WrongPassphrase

#: ``sync.json``'s ``format`` value.
FORMAT: Final = "etos-sync"
#: The header format this program writes and reads.
FORMAT_VERSION: Final = 1
#: The first bytes of every update file.
MAGIC: Final = b"ETOSSYNC"
#: The update-file layout version.
FILE_VERSION: Final = 1
#: ``kind`` byte of an update file (snapshots will get their own).
KIND_UPDATE: Final = 1

_PREFIX = struct.Struct(">8sBB16sQ")
_NONCE_BYTES: Final = 12
_TAG_BYTES: Final = 16
#: The shortest possible file: header, nonce and tag around an empty ciphertext.
MIN_FILE_BYTES: Final = _PREFIX.size + _NONCE_BYTES + _TAG_BYTES
_SALT_BYTES: Final = 16
_KEY_BYTES: Final = 32
_FILE_KEY_INFO: Final = b"etos-sync v1 file key"
_CHECK_INFO: Final = b"etos-sync v1 key check"
#: A decrypted update larger than this is refused (a zip bomb from a device with the key).
MAX_UPDATE_BYTES: Final = 512 * 1024 * 1024


@dataclass(frozen=True)
class KdfParams:
    """scrypt's cost parameters (RFC 7914): memory ``128 * n * r`` bytes.

    The default, ``n = 2**15, r = 8``, takes 32 MiB and about 0.1 s: once per sync pass.
    """

    n: int = 2**15
    r: int = 8
    p: int = 1


@dataclass(frozen=True)
class FolderHeader:
    """What ``sync.json`` holds: everything needed to derive the key, except the passphrase.

    Attributes:
        folder_id: A random id naming this sync folder (part of every file's associated data).
        salt: The scrypt salt, random per folder.
        kdf: The scrypt parameters.
        check: The key check: HKDF of the derived key, compared in constant time.
    """

    folder_id: uuid.UUID
    salt: bytes
    kdf: KdfParams
    check: bytes

    @classmethod
    def create(cls, passphrase: str, kdf: KdfParams | None = None) -> tuple[FolderHeader, SyncKey]:
        """Make a new folder's header (fresh folder id and salt) and the key it checks.

        Args:
            passphrase: The sync passphrase (normalised to NFC: devices type it alike).
            kdf: The scrypt parameters (tests use cheap ones).

        Returns:
            The header to write as ``sync.json`` and the key.
        """
        params = kdf or KdfParams()
        salt = os.urandom(_SALT_BYTES)
        master = _master_key(passphrase, salt, params)
        header = cls(uuid.uuid4(), salt, params, _derive(master, _CHECK_INFO))
        return header, SyncKey(_derive(master, _FILE_KEY_INFO), header.folder_id)

    def to_json(self) -> bytes:
        """The header as the bytes of ``sync.json``."""
        data = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "folder_id": str(self.folder_id),
            "kdf": {"name": "scrypt", "n": self.kdf.n, "r": self.kdf.r, "p": self.kdf.p},
            "salt": base64.b64encode(self.salt).decode("ascii"),
            "check": base64.b64encode(self.check).decode("ascii"),
        }
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, raw: bytes) -> FolderHeader:
        """Read ``sync.json``.

        Raises:
            SyncFolderInvalid: It is not JSON, not ours (``"foreign"``), of a newer format
                (``"newer_format"``) or missing a field (``"damaged"``).
        """
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise SyncFolderInvalid("sync.json is not JSON", reason="damaged") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SyncFolderInvalid("sync.json is another program's", reason="foreign")
        version = data.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise SyncFolderInvalid(
                f"sync.json has format version {version}", reason="newer_format", version=version
            )
        try:
            kdf = data["kdf"]
            if kdf["name"] != "scrypt":
                raise SyncFolderInvalid(
                    f"unknown key derivation {kdf['name']!r}", reason="newer_format"
                )
            params = KdfParams(n=_int(kdf["n"]), r=_int(kdf["r"]), p=_int(kdf["p"]))
            return cls(
                folder_id=uuid.UUID(str(data["folder_id"])),
                salt=base64.b64decode(str(data["salt"]), validate=True),
                kdf=params,
                check=base64.b64decode(str(data["check"]), validate=True),
            )
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise SyncFolderInvalid(f"sync.json is incomplete: {exc}", reason="damaged") from exc


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"not a positive integer: {value!r}")
    return value


def _master_key(passphrase: str, salt: bytes, kdf: KdfParams) -> bytes:
    secret = unicodedata.normalize("NFC", passphrase).encode("utf-8")
    return Scrypt(salt=salt, length=_KEY_BYTES, n=kdf.n, r=kdf.r, p=kdf.p).derive(secret)


def _derive(master: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=None, info=info).derive(master)


class SyncKey:
    """The file key of one sync folder; seals and opens update files.

    Never printed: its repr names the folder only.

    Args:
        file_key: The AES-256 key.
        folder_id: The folder the key belongs to (part of the associated data).
    """

    def __init__(self, file_key: bytes, folder_id: uuid.UUID) -> None:
        self._aead = AESGCM(file_key)
        self.folder_id = folder_id

    def __repr__(self) -> str:
        return f"<SyncKey folder={self.folder_id}>"

    @classmethod
    def derive(cls, passphrase: str, header: FolderHeader) -> SyncKey:
        """Derive the key of a folder from the passphrase and check it.

        Raises:
            WrongPassphrase: The key check in the header does not match.
        """
        master = _master_key(passphrase, header.salt, header.kdf)
        if not hmac.compare_digest(_derive(master, _CHECK_INFO), header.check):
            raise WrongPassphrase("the passphrase does not open this sync folder")
        return cls(_derive(master, _FILE_KEY_INFO), header.folder_id)

    def _prefix(self, device_id: uuid.UUID, seq: int) -> bytes:
        return _PREFIX.pack(MAGIC, FILE_VERSION, KIND_UPDATE, device_id.bytes, seq)

    def seal(self, update: bytes, *, device_id: uuid.UUID, seq: int) -> bytes:
        """Encrypt one update as the bytes of ``<device id>/<seq>.update``."""
        prefix = self._prefix(device_id, seq)
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, zlib.compress(update), prefix + self.folder_id.bytes)
        return prefix + nonce + sealed

    def open(self, blob: bytes, *, device_id: uuid.UUID, seq: int) -> bytes:
        """Decrypt the file ``<device id>/<seq>.update``.

        Raises:
            SyncFileRejected: Too short (``"truncated"``), not a sync file or named for another
                device or seq (``"foreign"``), of a newer layout (``"newer_format"``), or the
                authentication failed: wrong passphrase, damaged, another folder's
                (``"undecryptable"``), or it does not decompress (``"unreadable"``).
        """
        if len(blob) < MIN_FILE_BYTES:
            if not MAGIC.startswith(blob[: len(MAGIC)]):
                raise SyncFileRejected("not a sync file", reason="foreign")
            raise SyncFileRejected(f"{len(blob)} bytes: cut short", reason="truncated")
        magic, version, kind, device, file_seq = _PREFIX.unpack_from(blob)
        if magic != MAGIC:
            raise SyncFileRejected("not a sync file", reason="foreign")
        if version > FILE_VERSION or kind != KIND_UPDATE:
            raise SyncFileRejected(
                f"file version {version}, kind {kind}", reason="newer_format", version=version
            )
        if device != device_id.bytes or file_seq != seq:
            raise SyncFileRejected(
                "the file's header names another device or sequence number", reason="foreign"
            )
        nonce = blob[_PREFIX.size : _PREFIX.size + _NONCE_BYTES]
        aad = blob[: _PREFIX.size] + self.folder_id.bytes
        try:
            packed = self._aead.decrypt(nonce, blob[_PREFIX.size + _NONCE_BYTES :], aad)
        except InvalidTag as exc:
            raise SyncFileRejected(
                "authentication failed: another passphrase or folder, or damaged",
                reason="undecryptable",
            ) from exc
        try:
            inflater = zlib.decompressobj()
            update = inflater.decompress(packed, MAX_UPDATE_BYTES)
        except zlib.error as exc:
            raise SyncFileRejected(f"does not decompress: {exc}", reason="unreadable") from exc
        if inflater.unconsumed_tail or not inflater.eof:
            raise SyncFileRejected("too large or incomplete", reason="unreadable")
        return update
