"""Markdown sections: where each heading's section starts and ends, and its heading path.

CommonMark headings are recognised: ATX (``## Install``) and setext (a text line underlined with
``===`` or ``---``), never inside fenced code blocks (````` or ``~~~``); a leading YAML front matter
block (``---`` ... ``---``) is not a heading. A section runs from its heading line to the next heading
(of any level) and carries the path of headings above it, e.g. ``Guide > Install > Linux``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PATH_SEPARATOR = " > "
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(r"^ {0,3}(?:[-+*>]|\d+[.)])(?:[ \t]|$)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`|\*)")


@dataclass(frozen=True)
class Section:
    """One section: characters ``[start, end)`` of the document text (from its heading line on)."""

    start: int
    end: int
    path: tuple[str, ...]   # heading texts from the top level down to this section's own heading
    heading_end: int        # end of the heading line(s); == start for text before the first heading


def clean_heading(text: str) -> str:
    """Heading text without Markdown markup: links keep their text, emphasis/code markers go."""
    return " ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", text)).split())


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset of the line's first character, line without its newline)."""
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _front_matter_end(lines: list[tuple[int, str]]) -> int:
    """Index of the first line after a leading ``---`` ... ``---`` block (0 when there is none)."""
    if not lines or lines[0][1].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i][1].strip() in ("---", "..."):
            return i + 1
    return 0


def _headings(text: str) -> list[tuple[int, int, int, str]]:
    """(start offset, end of heading offset, level, cleaned text) of every heading, in order."""
    lines = _lines(text)
    found: list[tuple[int, int, int, str]] = []
    fence: str | None = None
    paragraph = False  # the previous line is paragraph text (a setext underline may follow)
    for i in range(_front_matter_end(lines), len(lines)):
        offset, line = lines[i]
        fenced = _FENCE.match(line)
        if fence is not None:
            if fenced and fenced.group(1)[0] == fence[0] and len(fenced.group(1)) >= len(fence):
                fence = None
            continue
        if fenced:
            fence, paragraph = fenced.group(1), False
            continue
        atx = _ATX.match(line)
        if atx:
            found.append((offset, offset + len(line), len(atx.group(1)), clean_heading(atx.group(2) or "")))
            paragraph = False
            continue
        setext = _SETEXT.match(line)
        if setext and paragraph:
            prev_offset, prev = lines[i - 1]
            level = 1 if setext.group(1)[0] == "=" else 2
            found.append((prev_offset, offset + len(line), level, clean_heading(prev)))
            paragraph = False
            continue
        paragraph = bool(line.strip()) and not _LIST_OR_QUOTE.match(line)
    return found


def sections(text: str) -> list[Section]:
    """The document's sections in order; text before the first heading is a section with an empty path.

    Sections cover the text without gaps: ``sections[i].end == sections[i + 1].start``.
    """
    heads = _headings(text)
    out: list[Section] = []
    if not heads or heads[0][0] > 0:
        out.append(Section(0, heads[0][0] if heads else len(text), (), 0))
    stack: list[tuple[int, str]] = []
    for n, (start, heading_end, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = heads[n + 1][0] if n + 1 < len(heads) else len(text)
        out.append(Section(start, end, tuple(t for _, t in stack if t), heading_end))
    return out


def section_path(path: tuple[str, ...]) -> str | None:
    """``Guide > Install > Linux`` (None for the text before the first heading)."""
    return PATH_SEPARATOR.join(path) if path else None
