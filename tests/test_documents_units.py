"""Without a store: Markdown sections, chunk locations (lines, pages, records), safe upload names and the
streaming multipart sink."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from app.documents.locations import location_label, location_of, trailer_fields
from app.documents.uploads import UploadRejected, UploadSink, safe_name
from ingest.chunk import chunk_document, chunk_spans, chunk_text
from ingest.load import load_file
from ingest.markdown import sections
from tests.support.pdf import write_pdf

FIX = Path(__file__).parent / "fixtures" / "ingest"


# -- Markdown sections ------------------------------------------------------------------------
def test_markdown_sections_follow_the_heading_tree() -> None:
    text = ("---\ntitle: x\n---\nIntro line.\n\n# Guide\n\nStart here.\n\n## Install\n\nSteps.\n\n"
            "### Linux\n\nRun `apt-get install neorag`.\n\n```sh\n# not a heading\n```\n\n"
            "Windows **notes**\n--------\n\nUse the installer.\n\n# FAQ #\n\nAsk.\n")
    found = [(s.path, text[s.start:s.end].strip().splitlines()[0]) for s in sections(text)]
    assert found == [((), "---"), (("Guide",), "# Guide"), (("Guide", "Install"), "## Install"),
                     (("Guide", "Install", "Linux"), "### Linux"),
                     (("Guide", "Windows notes"), "Windows **notes**"), (("FAQ",), "# FAQ #")]
    spans = sections(text)
    assert spans[0].start == 0 and spans[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(spans, spans[1:], strict=False))
    assert "# not a heading" in text[spans[3].start:spans[3].end]  # fenced code stays in Linux


def test_markdown_chunks_carry_heading_paths_and_never_span_two_sections(tmp_path: Path) -> None:
    body = " ".join(f"Sentence {i} explains a detail of the install step." for i in range(12))
    path = tmp_path / "guide.md"
    path.write_text(f"# Guide\n\n## Install\n\n### Linux\n\n{body}\n\n### macOS\n\nUse brew.\n",
                    encoding="utf-8")
    doc = load_file(path).docs[0]
    chunks = chunk_document(doc, 200, 40)
    assert {c.section for c in chunks} == {"Guide > Install > Linux", "Guide > Install > macOS"}
    assert len([c for c in chunks if c.section.endswith("Linux")]) >= 3  # type: ignore[union-attr]
    assert chunks[0].text.startswith("Sentence 0") and all("#" not in c.text for c in chunks)
    assert chunks[0].embed_text == "Guide > Install > Linux\n\n" + chunks[0].text
    assert chunks[0].location == {"line_start": 7, "line_end": 7}  # the heading line is not part of the text
    assert all("brew" not in c.text for c in chunks if c.section.endswith("Linux"))  # type: ignore[union-attr]
    plain = chunk_document(doc, 200, 40, markdown_sections=False)
    assert all(c.section is None and c.embed_text == c.text for c in plain)
    assert any("macOS" in c.text and "Sentence" in c.text for c in plain)  # plain chunks cross headings


# -- locations --------------------------------------------------------------------------------
def test_text_chunks_cite_the_lines_they_came_from(tmp_path: Path) -> None:
    rnd = random.Random(3)
    words = ["alpha", "beta.", "Gamma!", "delta?", "epsilon", "zeta", "eta,", "theta."]
    lines = ["", "", ""] + [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 14))) for _ in range(80)]
    path = tmp_path / "notes.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    file_lines = path.read_text(encoding="utf-8").split("\n")
    doc = load_file(path).docs[0]
    chunks = chunk_document(doc, 120, 30)
    assert len(chunks) > 10
    for c in chunks:
        loc = c.location
        assert loc is not None and 4 <= loc["line_start"] <= loc["line_end"] <= len(file_lines)
        cited = " ".join(file_lines[loc["line_start"] - 1:loc["line_end"]]).split()
        words, first, last = c.text.split(), file_lines[loc["line_start"] - 1].split(), \
            file_lines[loc["line_end"] - 1].split()
        # the chunk's words are the cited lines' words, starting on the first line and ending on the last
        starts = [i for i in range(len(cited) - len(words) + 1) if cited[i:i + len(words)] == words]
        assert any(i < len(first) and i + len(words) > len(cited) - len(last) for i in starts), c.location


def test_chunk_spans_agree_with_chunk_text() -> None:
    rnd = random.Random(5)
    units = ["One.", "Two words here!", "北京是首都。", "x" * 90, "Three?\n\n", "and more", "上海很大！"]
    for _ in range(200):
        text = " ".join(rnd.choice(units) for _ in range(rnd.randint(0, 60)))
        size = rnd.choice([40, 80, 200])
        spans = chunk_spans(text, size, size // 4)
        assert [t for t, _, _ in spans] == chunk_text(text, size, size // 4)
        for chunk, start, end in spans:
            assert text[start:end].startswith(chunk.split()[0][:2]) and 0 <= start < end <= len(text)


def test_pdf_chunks_cite_pages(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [["The boiler manual starts here."], [],
                                             ["Page three covers the pressure valve."],
                                             ["Page four covers the burner nozzle and the flue."]])
    doc = load_file(pdf).docs[0]
    by_page = {c.location["page"]: c.text for c in chunk_document(doc, 60, 0)}  # type: ignore[index]
    assert "boiler" in by_page[1] and "pressure valve" in by_page[3] and "burner" in by_page[4]
    merged = chunk_document(doc, 800, 0)
    assert merged[0].location == {"page": 1, "page_end": 4}


def test_json_chunks_cite_records(tmp_path: Path) -> None:
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text("\n".join(json.dumps({"title": f"T{i}", "text": f"Record {i} text."}) for i in range(3)))
    assert [c.location for d in load_file(jsonl).docs for c in chunk_document(d)] == \
        [{"record": 0}, {"record": 1}, {"record": 2}]
    hotpot = [c.location for d in load_file(FIX / "hotpotqa_questions.json").docs[:12]
              for c in chunk_document(d)]
    assert {"record": 0, "paragraph": 0} in hotpot and {"record": 0, "paragraph": 9} in hotpot
    corpus = [c.location for d in load_file(FIX / "hotpotqa_corpus.json").docs for c in chunk_document(d)]
    assert corpus[0] == {"record": 0} and {"record": 11} in corpus


def test_location_rendering() -> None:
    assert location_of({"page": 3, "page_end": 3}) == {"page": 3}
    assert location_label({"page": 3}) == "p. 3" and location_label({"page": 3, "page_end": 4}) == "pp. 3-4"
    assert location_label({"line_start": 12, "line_end": 30}) == "lines 12-30"
    assert location_label({"line_start": 7, "line_end": 7}) == "line 7"
    assert location_label({"record": 4}) == "record 4" and location_label(None) == ""
    assert trailer_fields({"line_start": 12, "line_end": 30}) == ", lines=12-30"
    assert trailer_fields({"page": 2}) == ", page=2" and trailer_fields({"record": 0}) == ", record=0"
    assert location_of({"line_start": None, "record": 0}) == {"record": 0} and location_of({}) is None


# -- uploads ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sent,stored", [
    ("report.pdf", "report.pdf"), ("../../etc/passwd.txt", "passwd.txt"), ("..\\..\\evil.MD", "evil.md"),
    (".hidden.md", "hidden.md"), ("a/b/", "upload"), ("", "upload"), ("na\x00me\n.txt", "name.txt"),
    ("Über uns – 2024.md", "Über uns _ 2024.md"), ("x" * 300 + ".jsonl", "x" * 114 + ".jsonl"),
    ("...", "upload"), ("notes", "notes"),
])
def test_safe_names(sent: str, stored: str) -> None:
    assert safe_name(sent) == stored


def _body(parts: list[tuple[str, str | None, bytes]], boundary: str = "XyZ") -> bytes:
    out = b""
    for name, filename, data in parts:
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        out += f"--{boundary}\r\nContent-Disposition: {disp}\r\nContent-Type: text/plain\r\n\r\n".encode()
        out += data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def _feed(sink: UploadSink, body: bytes, piece: int) -> None:
    for i in range(0, len(body), piece):
        sink.write(body[i:i + piece])


@pytest.mark.parametrize("piece", [1, 7, 4096])
def test_sink_streams_files_to_content_addressed_paths(tmp_path: Path, piece: int) -> None:
    a, b = b"First file. --XyZ inside is fine\r\n" * 50, b"# Second\n\nText."
    sink = UploadSink(tmp_path, "multipart/form-data; boundary=XyZ", 10_000, 5)
    _feed(sink, _body([("file", "../a.txt", a), ("file", "b.md", b)]), piece)
    saved = sink.finish()
    assert [s.name for s in saved] == ["a.txt", "b.md"] and [s.duplicate for s in saved] == [False, False]
    for item, data in zip(saved, (a, b), strict=True):
        assert item.path == tmp_path / hashlib.sha256(data).hexdigest()[:16] / item.name
        assert item.path.read_bytes() == data and item.bytes == len(data)
    again = UploadSink(tmp_path, "multipart/form-data; boundary=XyZ", 10_000, 5)
    _feed(again, _body([("file", "b.md", b)]), piece)
    assert again.finish()[0].duplicate is True
    assert list((tmp_path / ".incoming").iterdir()) == []


@pytest.mark.parametrize("parts,status,error", [
    ([("file", "big.txt", b"x" * 101)], 413, "too_large"),
    ([("file", "a.txt", b"1"), ("file", "b.txt", b"2"), ("file", "c.txt", b"3")], 413, "too_many_files"),
    ([("file", "tool.exe", b"MZ")], 415, "unsupported_type"),
    ([("file", "empty.txt", b"")], 422, "invalid_request"),
    ([("other", "a.txt", b"1")], 422, "invalid_request"),
    ([("file", None, b"1")], 422, "invalid_request"),
    ([], 422, "invalid_request"),
])
def test_sink_rejects_bad_parts_and_leaves_nothing(tmp_path: Path, parts: list, status: int,
                                                   error: str) -> None:
    sink = UploadSink(tmp_path, "multipart/form-data; boundary=XyZ", 100, 2)
    ok = [("file", "kept.txt", b"stored before the bad part")]
    with pytest.raises(UploadRejected) as info:
        _feed(sink, _body(ok + parts if parts else []), 5)
        sink.finish()
    sink.abort()
    assert info.value.status == status and info.value.body()["error"] == error
    assert info.value.body()["field"] == "file" and info.value.message
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_sink_refuses_other_content_types_and_broken_bodies(tmp_path: Path) -> None:
    for ctype in (None, "application/json", "multipart/form-data"):
        with pytest.raises(UploadRejected) as info:
            UploadSink(tmp_path, ctype, 100, 2)
        assert info.value.status == 415
    sink = UploadSink(tmp_path, "multipart/form-data; boundary=XyZ", 100, 2)
    with pytest.raises(UploadRejected) as info:
        head = b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc'
        _feed(sink, head, 4)
        sink.finish()
    assert info.value.status == 422
