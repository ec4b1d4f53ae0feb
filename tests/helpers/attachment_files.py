"""Files to attach in tests, made here: a minimal valid PDF, texts in several encodings."""

from __future__ import annotations

import os
from pathlib import Path


def minimal_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose text is ``lines`` (ASCII, Helvetica), with a correct xref table.

    Written by hand (PDF 1.4: catalog, pages, page, font, content stream), so the tests need no
    PDF writer; ``pypdf`` extracts the lines back.
    """

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    shown = " ".join(f"({escape(line)}) Tj 0 -16 Td" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td {shown} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        "/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("ascii")
    xref = len(out)
    table = "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n{table}".encode("ascii")
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode("ascii")
    return out


def sparse_file(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no room on disk (a hole), for the size limits."""
    with path.open("wb") as handle:
        handle.truncate(size)
    assert os.path.getsize(path) == size
    return path
