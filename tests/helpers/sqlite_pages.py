"""Reads an SQLite file's pages to tell *where* some bytes sit: inside which table's live rows.

A test that deletes something must show its bytes are gone from the file, except inside the
rows that may keep them. Grepping the file is not enough (the bytes may be legitimately in a kept
row), and asking SQL is not enough (freed pages and deleted cells are invisible to it). This
walks every b-tree from ``sqlite_schema`` (file format: https://sqlite.org/fileformat2.html) and
returns the byte spans of each table's and index's live cell payloads, overflow pages included;
any other occurrence — free pages, free space inside pages, another table — is a leftover.
"""

from __future__ import annotations

from collections.abc import Iterator


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """An SQLite varint at ``pos``: (value, length)."""
    value = 0
    for i in range(8):
        byte = data[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i + 1
    return (value << 8) | data[pos + 8], 9


class SqliteFile:
    """The b-trees of one database file image.

    Args:
        data: The whole file (a checkpointed database: the WAL is not read).
    """

    def __init__(self, data: bytes) -> None:
        if data[:16] != b"SQLite format 3\x00":
            raise ValueError("not an SQLite database file")
        size = int.from_bytes(data[16:18], "big")
        self.page_size = 65536 if size == 1 else size
        self.usable = self.page_size - data[20]
        self.data = data

    def _page(self, pgno: int) -> tuple[int, int]:
        """(file offset of the page, offset of its b-tree header within the file)."""
        start = (pgno - 1) * self.page_size
        return start, start + (100 if pgno == 1 else 0)

    def _local(self, payload: int, *, table_leaf: bool) -> int:
        u = self.usable
        x = u - 35 if table_leaf else ((u - 12) * 64 // 255) - 23
        if payload <= x:
            return payload
        m = ((u - 12) * 32 // 255) - 23
        k = m + ((payload - m) % (u - 4))
        return k if k <= x else m

    def _payload(
        self, start: int, size: int, *, table_leaf: bool
    ) -> tuple[bytes, list[tuple[int, int]]]:
        """A cell's payload bytes and the file spans they occupy (local part, then overflow)."""
        local = self._local(size, table_leaf=table_leaf)
        spans = [(start, start + local)]
        parts = [self.data[start : start + local]]
        remaining = size - local
        if remaining > 0:
            pgno = int.from_bytes(self.data[start + local : start + local + 4], "big")
            while remaining > 0 and pgno:
                page_start, _ = self._page(pgno)
                take = min(remaining, self.usable - 4)
                spans.append((page_start + 4, page_start + 4 + take))
                parts.append(self.data[page_start + 4 : page_start + 4 + take])
                remaining -= take
                pgno = int.from_bytes(self.data[page_start : page_start + 4], "big")
        return b"".join(parts), spans

    def cells(self, root: int) -> Iterator[tuple[bytes, list[tuple[int, int]]]]:
        """Every live cell payload of the b-tree rooted at ``root``, with its file spans."""
        stack = [root]
        while stack:
            pgno = stack.pop()
            page_start, header = self._page(pgno)
            kind = self.data[header]
            count = int.from_bytes(self.data[header + 3 : header + 5], "big")
            interior = kind in (0x02, 0x05)
            pointers = header + (12 if interior else 8)
            if interior:
                stack.append(int.from_bytes(self.data[header + 8 : header + 12], "big"))
            for i in range(count):
                cell = page_start + int.from_bytes(
                    self.data[pointers + 2 * i : pointers + 2 * i + 2], "big"
                )
                if interior:
                    stack.append(int.from_bytes(self.data[cell : cell + 4], "big"))
                    cell += 4
                if kind == 0x05:
                    continue  # interior table cells hold only a rowid
                size, n = _varint(self.data, cell)
                cell += n
                if kind == 0x0D:
                    _rowid, n = _varint(self.data, cell)
                    cell += n
                yield self._payload(cell, size, table_leaf=kind == 0x0D)

    def schema(self) -> list[tuple[str, str, int]]:
        """``(type, name, root page)`` of every b-tree in ``sqlite_schema``."""
        out = []
        for payload, _spans in self.cells(1):
            values = _record(payload)
            kind, name, root = values[0], values[1], values[3]
            if isinstance(root, int) and root > 0:
                out.append((str(kind), str(name), root))
        return out

    def live_spans(self) -> dict[str, list[tuple[int, int]]]:
        """For each table and index (and ``sqlite_schema``), the file spans of its live cells."""
        spans: dict[str, list[tuple[int, int]]] = {"sqlite_schema": []}
        for _payload, cell_spans in self.cells(1):
            spans["sqlite_schema"].extend(cell_spans)
        for _kind, name, root in self.schema():
            spans[name] = [span for _p, s in self.cells(root) for span in s]
        return spans

    def owners(self, needle: bytes) -> list[str]:
        """Where each occurrence of ``needle`` is: a table or index name, or ``"leftover"``.

        An occurrence counts as inside a table only when all of it lies in one live cell span
        (an occurrence split across overflow pages is reported as a leftover, which a test then
        shows; texts in these tests are short enough to avoid it).
        """
        spans = self.live_spans()
        found = []
        start = self.data.find(needle)
        while start != -1:
            end = start + len(needle)
            owner = next(
                (
                    name
                    for name, ranges in spans.items()
                    if any(a <= start and end <= b for a, b in ranges)
                ),
                "leftover",
            )
            found.append(owner)
            start = self.data.find(needle, start + 1)
        return found


def _record(payload: bytes) -> list[object]:
    """The column values of a record (only what ``sqlite_schema`` needs: ints and text)."""
    header_size, n = _varint(payload, 0)
    types = []
    pos = n
    while pos < header_size:
        serial, n = _varint(payload, pos)
        types.append(serial)
        pos += n
    values: list[object] = []
    body = header_size
    widths = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8}
    for serial in types:
        if serial == 0:
            values.append(None)
        elif serial in (8, 9):
            values.append(serial - 8)
        elif serial in widths:
            width = widths[serial]
            raw = payload[body : body + width]
            values.append(int.from_bytes(raw, "big", signed=True) if serial != 7 else raw)
            body += width
        else:
            length = (serial - 12) // 2 if serial % 2 == 0 else (serial - 13) // 2
            raw = payload[body : body + length]
            values.append(raw.decode("utf-8", "replace") if serial % 2 else raw)
            body += length
    return values
