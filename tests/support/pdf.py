"""Write small multi-page PDFs (PDF 1.4, Helvetica, one text block per page) for citation tests."""

from __future__ import annotations

from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A PDF whose page i shows the lines ``pages[i]`` (ASCII text), readable by pypdf."""
    objects: list[bytes] = []
    n = len(pages)
    font_id = 3 + 2 * n
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, lines in enumerate(pages):
        shown = " ".join(f"({_escape(line)}) Tj T*" for line in lines)
        content = f"BT /F1 11 Tf 14 TL 72 740 Td {shown} ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        data = content.encode("latin-1")
        objects.append(b"<< /Length " + str(len(data)).encode() + b" >>\nstream\n" + data + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def write_crafted_pdf(path: Path, kind: str) -> Path:
    """A PDF the reader cannot decode: ``unknown_filter`` (a content stream with ``/Filter /FooDecode``) or
    ``bad_encryption`` (``/Encrypt << /Filter /Standard /V 9 /R 9 >>``); pypdf raises NotImplementedError."""
    raw = write_pdf(path, [["This text is never read."]]).read_bytes()
    if kind == "unknown_filter":
        raw = raw.replace(b"<< /Length ", b"<< /Filter /FooDecode /Length ", 1)
    elif kind == "bad_encryption":
        raw = raw.replace(b"/Root 1 0 R >>", b"/Root 1 0 R /Encrypt << /Filter /Standard /V 9 /R 9 /O (o) "
                                             b"/U (u) /P -4 >> /ID [(i) (i)] >>")
    else:
        raise ValueError(f"unknown crafted PDF kind {kind!r}")
    path.write_bytes(raw)
    return path
