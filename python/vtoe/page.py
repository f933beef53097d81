"""Self-contained HTML pages: the machinery of ``vtoe report`` (vtoe/report.py), for any page
that shows tables and matplotlib figures (a run, a sweep, the paper's reproduction, a study).

A page is one HTML file with everything in it: the style sheet inline, every figure a PNG in a
``data:`` URI, no script, no link to anything outside the file, so it can be mailed, archived
in CI, or opened with no network::

    from vtoe.page import Page
    page = Page("my study")
    sec = page.section("Throughput", intro="Goodput of each VM against the message size.")
    fig, ax = page.figure()                  # a matplotlib figure (Agg backend)
    ax.plot([1, 2], [3, 4])
    sec.add_figure(fig, alt="goodput against message size")   # rendered to PNG now, and closed
    sec.add_table(["vm", "Mbit/s"], [["a", 941.5]])
    sec.add_pre(open("scenario.yaml").read(), summary="scenario.yaml")
    page.write("out/x/report.html")

The page is deterministic: the same content gives the same bytes (the PNGs carry no date).
:func:`require_matplotlib` is the one place that checks for matplotlib: a page without it is
an error naming what is missing and how to get it, never a page with its figures left out.
"""
from __future__ import annotations

import base64
import html
import io
import sys
from pathlib import Path
from typing import Iterable, Sequence

DPI = 100


class MissingDependency(RuntimeError):
    """A package the page needs is not importable; the message names it and the interpreter."""


def require_matplotlib():
    """matplotlib with the Agg backend, or :class:`MissingDependency` naming the interpreter."""
    try:
        import matplotlib
    except ImportError as e:
        raise MissingDependency(
            f"matplotlib is missing for {sys.executable} ({e}): the report's figures need it; "
            "install it with `make venv` (build/venv) or `pip install 'matplotlib>=3.7'`") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def fmt(value, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` significant digits, the rest as text."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, float):
        if value != value:  # NaN
            return ""
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def png_data_uri(fig, dpi: int = DPI) -> tuple[str, int, int]:
    """(data URI, width px, height px) of a matplotlib figure as PNG, without a date in it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    width, height = (int(round(v)) for v in fig.get_size_inches() * dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), width, height


def file_data_uri(path) -> str:
    """A PNG, SVG, JPEG or GIF file as a data URI (figures another script has drawn)."""
    path = Path(path)
    kind = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg",
            ".jpeg": "image/jpeg", ".gif": "image/gif"}.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"{path}: not an image the page can embed (png, svg, jpg, gif)")
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1200px; padding: 0 1.2em 3em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; border-bottom: 2px solid #4c72b0; padding-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; }
nav { font-size: .9em; background: #f4f6fa; padding: .4em .8em; border-radius: 4px; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .88em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: right; vertical-align: top; }
th { background: #eef1f6; }
td.text, th.text { text-align: left; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; font-size: .85em; }
figure { margin: .8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { font-size: .85em; color: #555; }
.warn { background: #fff3cd; border-left: 4px solid #e0a800; padding: .4em .8em; }
.note { color: #555; font-size: .9em; }
.side { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1.2em;
        align-items: start; }
.side > div > h3 { margin-top: .3em; }
.holds { color: #1a7f37; } .fails { color: #b00020; font-weight: bold; }
details summary { cursor: pointer; }
"""


class Section:
    """A titled part of a page: its blocks in order. Every ``add_*`` returns the section."""

    def __init__(self, title: str, anchor: str, level: int = 2):
        self.title, self.anchor, self.level = title, anchor, level
        self.blocks: list[str] = []

    def add_html(self, text: str) -> "Section":
        self.blocks.append(text)
        return self

    def add_text(self, text: str, cls: str | None = None) -> "Section":
        attr = f' class="{cls}"' if cls else ""
        return self.add_html(f"<p{attr}>{esc(text)}</p>")

    def add_warning(self, text: str) -> "Section":
        return self.add_text(text, "warn")

    def add_note(self, text: str) -> "Section":
        return self.add_text(text, "note")

    def add_pre(self, text: str, summary: str | None = None, open_: bool = False) -> "Section":
        pre = f"<pre>{esc(text)}</pre>"
        if summary is not None:
            pre = (f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>"
                   f"{pre}</details>")
        return self.add_html(pre)

    def add_table(self, header: Sequence, rows: Iterable[Sequence], text_columns=(0,),
                  caption: str | None = None) -> "Section":
        """A table; columns listed in ``text_columns`` (indices) are left-aligned."""
        text_columns = set(text_columns)
        cls = lambda i: ' class="text"' if i in text_columns else ""  # noqa: E731
        out = ["<table>"]
        if caption:
            out.append(f"<caption>{esc(caption)}</caption>")
        out.append("<tr>" + "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(header))
                   + "</tr>")
        for row in rows:
            out.append("<tr>" + "".join(f"<td{cls(i)}>{esc(fmt(c))}</td>"
                                        for i, c in enumerate(row)) + "</tr>")
        out.append("</table>")
        return self.add_html("".join(out))

    def add_figure(self, fig, alt: str, caption: str | None = None, dpi: int = DPI,
                   tight: bool = True) -> "Section":
        """A matplotlib figure, drawn to PNG now and closed; ``tight``: fit the margins to the
        labels first (a third of the drawing time; a figure with margins set by
        ``subplots_adjust`` can skip it)."""
        import matplotlib.pyplot as plt

        if tight:
            fig.tight_layout()
        uri, width, height = png_data_uri(fig, dpi)
        plt.close(fig)
        return self.add_html(figure_html(uri, alt, caption, width, height))

    def add_image_file(self, path, alt: str, caption: str | None = None) -> "Section":
        """An image file another script drew, embedded as it is."""
        return self.add_html(figure_html(file_data_uri(path), alt, caption))

    def render(self) -> str:
        tag = f"h{self.level}"
        return (f'<section id="{esc(self.anchor)}"><{tag}>{esc(self.title)}</{tag}>'
                + "\n".join(self.blocks) + "</section>")


def figure_html(uri: str, alt: str, caption: str | None = None, width: int | None = None,
                height: int | None = None) -> str:
    size = f' width="{width}" height="{height}"' if width and height else ""
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="{uri}" alt="{esc(alt)}"{size}>{cap}</figure>'


def side_by_side(left: str, right: str) -> str:
    """Two columns of HTML (e.g. the paper's numbers beside vtoe's figure)."""
    return f'<div class="side"><div>{left}</div><div>{right}</div></div>'


class Page:
    """A page: a title, a few lines under it, and sections (listed in a contents bar)."""

    def __init__(self, title: str, subtitle: Sequence[str] = ()):
        self.title = title
        self.subtitle = list(subtitle)
        self.sections: list[Section] = []

    def section(self, title: str, intro: str | None = None) -> Section:
        anchor = "s" + str(len(self.sections) + 1)
        sec = Section(title, anchor)
        if intro:
            sec.add_text(intro)
        self.sections.append(sec)
        return sec

    @staticmethod
    def figure(width: float = 7.5, height: float = 3.4, ncols: int = 1, nrows: int = 1, **kw):
        """A new matplotlib figure and its axes (``plt.subplots``), Agg backend."""
        plt = require_matplotlib()
        return plt.subplots(nrows, ncols, figsize=(width, height), **kw)

    @property
    def figure_count(self) -> int:
        return sum(b.count("<img ") for s in self.sections for b in s.blocks)

    def render(self) -> str:
        nav = " ".join(f'<a href="#{s.anchor}">{esc(s.title)}</a>' for s in self.sections)
        sub = "".join(f"<p>{esc(line)}</p>" for line in self.subtitle)
        body = "\n".join(s.render() for s in self.sections)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{esc(self.title)}</title><style>{CSS}</style></head><body>"
                f"<h1>{esc(self.title)}</h1>{sub}<nav>{nav}</nav>\n{body}\n</body></html>\n")

    def write(self, path) -> Path:
        """Write the page (atomically: a reader never sees half a page)."""
        import os
        import tempfile

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self.render())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
