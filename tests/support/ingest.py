"""PDFs made on the fly for the ingestion tests (no PDF is committed): guidance-like, encrypted, empty,
image-only and corrupt files, plus an embedder that fails like a backend with a bad credential."""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RUNNING_HEADER = "Contains Nonbinding Recommendations"


@dataclass
class PageSpec:
    """One page: an optional heading, then body lines (already broken as they should appear)."""

    heading: str | None = None
    lines: list[str] = field(default_factory=list)
    line_numbers: bool = False


def write_guidance_pdf(path: Path, pages: list[PageSpec], title: str = "Test Guidance") -> Path:
    """A guidance-like PDF: a running header, bold headings, body text, page numbers in the footer,
    optionally numbered lines in the left margin."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    width, height = letter
    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    c.setTitle(title)
    for number, page in enumerate(pages, start=1):
        c.setFont("Helvetica-Bold", 10)
        c.drawCentredString(width / 2, height - 36, RUNNING_HEADER)
        y = height - 90
        line_no = 1
        if page.heading:
            c.setFont("Helvetica-Bold", 15)
            c.drawString(72, y, page.heading)
            y -= 30
        c.setFont("Helvetica", 11)
        for line in page.lines:
            if page.line_numbers:
                c.drawRightString(50, y, str(line_no))
                line_no += 1
            c.drawString(72, y, line)
            y -= 15
        c.setFont("Helvetica", 10)
        c.drawCentredString(width / 2, 30, str(number))
        c.showPage()
    c.save()
    return path


def write_encrypted_pdf(path: Path) -> Path:
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    encrypt = pdfencrypt.StandardEncryption("user-secret", "owner-secret", canPrint=0)
    c = canvas.Canvas(str(path), encrypt=encrypt)
    c.drawString(72, 720, "Confidential text that needs a password to read.")
    c.showPage()
    c.save()
    return path


def write_image_only_pdf(path: Path) -> Path:
    """A scanned-looking page: one raster image, no text layer."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "SCANNED PAGE TEXT", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    buffer.seek(0)
    c = canvas.Canvas(str(path))
    c.drawImage(ImageReader(buffer), 72, 500, width=400, height=200)
    c.showPage()
    c.save()
    return path


def write_blank_pdf(path: Path, pages: int = 2) -> Path:
    """A valid PDF whose pages carry nothing at all."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for _ in range(pages):
        c.showPage()
    c.save()
    return path


def write_zero_byte_pdf(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def write_corrupt_pdf(path: Path, good: Path | None = None) -> Path:
    """A PDF header followed by garbage (or the first third of a good file: a truncated download)."""
    data = good.read_bytes()[: good.stat().st_size // 3] if good else b"%PDF-1.7\n" + bytes(range(256)) * 8
    path.write_bytes(data)
    return path


class FailingEmbedder:
    """Fails like an embedding backend whose API key is missing or wrong."""

    name = "failing"
    dim = 384

    def embed(self, texts):
        raise RuntimeError("401 Unauthorized: invalid API key")

    def embed_one(self, text):
        return self.embed([text])[0]


class CountingEmbedder:
    """Wraps a real embedder and counts the passages it embedded."""

    def __init__(self, inner):
        self.inner, self.passages = inner, 0
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts) -> np.ndarray:
        self.passages += len(texts)
        return self.inner.embed(texts)

    def embed_one(self, text):
        return self.embed([text])[0]


def prose(topic: str, n: int = 30) -> list[str]:
    """Body lines about ``topic`` that a reader can tell apart from other topics' lines."""
    return [f"Line {i} explains how {topic} records are reviewed, retained and reported to the agency."
            for i in range(1, n + 1)]


def page_overlap(chunk_text: str, page_texts: list[str]) -> list[float]:
    """Per page, the share of the chunk's words (4+ letters) that the page's own text holds.

    The chunk's page must score highest: the PDF's own per-page text is the judge."""
    from citestream.core.text_units import words

    wanted = {w for w in words(chunk_text) if len(w) >= 4}
    if not wanted:
        return [1.0 if chunk_text.strip() in " ".join(p.split()) else 0.0 for p in page_texts]
    return [len(wanted & set(words(p))) / len(wanted) for p in page_texts]


# --- hostile PDFs (issue 41): written byte by byte, so each is exactly the attack it names -------------------------

def _raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; 1 is the catalog), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _one_page_pdf(content: bytes, resources: bytes, size: tuple[float, float] = (612, 792), extra: list | None = None,
                  compress: bool = False) -> bytes:
    data, dictionary = (zlib.compress(content, 9), b"/Filter /FlateDecode") if compress else (content, b"")
    return _raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                     b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << %s >> /Contents 4 0 R >>"
                     % (*size, resources), _stream(dictionary, data), *(extra or [])])


_HELVETICA = b"/Font << /F1 5 0 R >>"
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def write_inflating_pdf(path: Path, inflated_mb: int = 96) -> Path:
    """A decompression bomb: a ~200 kB page whose content stream inflates to ``inflated_mb`` MB of text operators
    (pdfium builds an object per operator: about 14 GB of memory for 96 MB, measured without a limit)."""
    repeats = inflated_mb * 1_000_000 // 16
    content = b"BT /F1 12 Tf 72 720 Td " + b"(ABCDEFGHIJ) Tj " * repeats + b"ET"
    path.write_bytes(_one_page_pdf(content, _HELVETICA, extra=[_FONT], compress=True))
    return path


def write_text_pdf(path: Path, chars: int = 2000, size: tuple[float, float] = (612, 792), font: int = 12) -> Path:
    """One page of ``size`` points holding ``chars`` characters of text (lines of 100 in a ``font``-point font)."""
    line = b"Cleaning validation of shared equipment sets residue limits that each batch record must state. "
    lines = [line[:100].ljust(100, b"x")] * (chars // 100)
    content = (b"BT /F1 %d Tf %d TL 36 %d Td " % (font, font + 2, int(size[1] - 72))
               + b"".join(b"(%s) ' " % text for text in lines))
    path.write_bytes(_one_page_pdf(content + b"ET", _HELVETICA, size, extra=[_FONT]))
    return path


def write_marked_line_pdf(path: Path, marks: int = 24_900) -> Path:
    """One page whose one line holds ``marks`` small raised digits, each after a letter: as many footnote marks as
    the page's character cap allows (about 1.1 MB; the sandbox reads it in under a second). The footnote-mark pass
    of ``ingest/layout.py`` cut and searched the whole line before every mark: 4.8 s of the worker's CPU for this
    page (issue 54)."""
    mark = b"/F1 8 Tf 3 Ts (1) Tj /F1 12 Tf 0 Ts (a) Tj "  # 8 pt, 3 pt above the line: raised and smaller
    content = b"BT /F1 12 Tf 36 400 Td (Marks) Tj " + mark * marks + b"ET"
    path.write_bytes(_one_page_pdf(content, _HELVETICA, extra=[_FONT]))
    return path


def write_ligature_pdf(path: Path) -> Path:
    """One line whose space after "suffi" and "fi" is drawn inside the glyph before it, as some PDFs draw a space
    after a ligature (the WHO's good distribution practices: "suffi cient", "fi rst"), with a footnote mark after the
    first word so split; "staff near" is spaced as words are."""
    inside = b"250"  # the next glyph moves back 250/1000 of the type size: the space starts inside the "i"
    content = (b"BT /F1 12 Tf 72 700 Td [(Keep a suffi) " + inside + b" ( cient)] TJ /F1 8 Tf 3 Ts (8) Tj "
               b"/F1 12 Tf 0 Ts [( supply of fi) " + inside + b" ( rst aid kits for the staff near the line.)] TJ ET")
    path.write_bytes(_one_page_pdf(content, _HELVETICA, extra=[_FONT]))
    return path


def write_slow_render_pdf(path: Path) -> Path:
    """A page painted by a function shading whose PostScript function runs 6,000 operators per pixel: quick to
    parse for its text (it has none), minutes of CPU to render at any useful size, with little memory."""
    function = b"{ pop " + b"dup mul 0.5 add 1 exch sub " * 2000 + b"dup dup }"
    path.write_bytes(_one_page_pdf(
        b"/S1 sh", b"/Shading << /S1 5 0 R >>",
        extra=[b"<< /ShadingType 1 /ColorSpace /DeviceRGB /Domain [0 1 0 1] /Matrix [612 0 0 792 0 0] "
               b"/Function 6 0 R >>", _stream(b"/FunctionType 4 /Domain [0 1 0 1] /Range [0 1 0 1 0 1]", function)]))
    return path


# The first page of a document of each issuer, as each sets it: who issues it (in the words and the capitals it
# uses), then the document's own title. ``issuer → (expected scope, cover lines)``.
COVERS: dict[str, tuple[str, list[str]]] = {
    "European Commission": ("EMA", [
        "EUROPEAN COMMISSION", "DIRECTORATE-GENERAL FOR HEALTH AND FOOD SAFETY",
        "Medicinal products - quality, safety and efficacy", "Brussels, 22 August 2022", "EudraLex",
        "The Rules Governing Medicinal Products in the European Union", "Volume 4",
        "EU Guidelines for Good Manufacturing Practice for Medicinal Products for Human and Veterinary Use",
        "Annex 1 Manufacture of Sterile Medicinal Products"]),
    "EMA": ("EMA", [
        "25 January 2024", "EMA/CHMP/QWP/123456/2023", "Committee for Medicinal Products for Human Use (CHMP)",
        "Guideline on the quality of water for pharmaceutical use", "Official address Domenico Scarlattilaan 6",
        "An agency of the European Union", "(c) European Medicines Agency, 2024. Reproduction is authorised."]),
    "ICH": ("ICH", [
        "INTERNATIONAL COUNCIL FOR HARMONISATION OF TECHNICAL REQUIREMENTS FOR PHARMACEUTICALS FOR HUMAN USE",
        "ICH HARMONISED GUIDELINE", "QUALITY RISK MANAGEMENT", "Q9(R1)", "Final version",
        "Adopted on 18 January 2023"]),
    "FDA": ("FDA", [
        "Sterile Drug Products Produced by Aseptic Processing", "Guidance for Industry",
        "U.S. Department of Health and Human Services", "Food and Drug Administration",
        "Center for Drug Evaluation and Research (CDER)", "September 2004", "Pharmaceutical CGMPs"]),
    "MHRA": ("MIXED", [
        "Medicines & Healthcare products Regulatory Agency", "'GXP' Data Integrity Guidance and Definitions",
        "Revision 1: March 2018"]),
    "WHO": ("MIXED", [
        "(c) World Health Organization 2014", "WHO Technical Report Series No. 986, 2014", "Annex 2",
        "WHO good manufacturing practices for pharmaceutical products: main principles"]),
    "PIC/S": ("MIXED", [
        "PHARMACEUTICAL INSPECTION CONVENTION", "PHARMACEUTICAL INSPECTION CO-OPERATION SCHEME", "PE 009-17 (Intro)",
        "25 August 2023", "GUIDE TO GOOD MANUFACTURING PRACTICE FOR MEDICINAL PRODUCTS", "(c) PIC/S August 2023"]),
    "Health Canada": ("MIXED", [
        "Health Canada", "Sante Canada", "Good manufacturing practices guide for drug products (GUI-0001)",
        "Date issued: February 28, 2018"]),
    "TGA": ("MIXED", [
        "Australian Government", "Department of Health and Aged Care", "Therapeutic Goods Administration",
        "Australian regulatory guidelines for prescription medicines", "Version 1.1, June 2023"]),
    "PMDA": ("MIXED", [
        "Pharmaceuticals and Medical Devices Agency", "Office of Manufacturing Quality for Drugs",
        "Questions and answers on the GMP ministerial ordinance", "Tokyo, April 2022"]),
    "Swissmedic": ("MIXED", [
        "Swissmedic, Swiss Agency for Therapeutic Products", "Guidance document",
        "Authorisation of human medicinal products with known active pharmaceutical ingredient",
        "Valid from: 1 January 2024"]),
}


def write_cover_pdf(path: Path, cover: list[str], body: list[str], author: str = "") -> Path:
    """A document whose first page is ``cover`` (large, centred, as a title page is set) and whose second page is
    ``body`` text; ``author`` goes into the PDF's document information."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    width, height = A4
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    if author:
        c.setAuthor(author)
    y = height - 100
    for line in cover:
        c.setFont("Helvetica-Bold", 13)
        c.drawCentredString(width / 2, y, line)
        y -= 28
    c.showPage()
    c.setFont("Helvetica", 11)
    y = height - 90
    for line in body:
        c.drawString(72, y, line)
        y -= 15
    c.showPage()
    c.save()
    return path


def write_table_pdf(path: Path, lead: str, header: list[str], rows: list[list[str]], after: str) -> Path:
    """One page: a sentence, a table whose header row is bold and whose cells stand at fixed columns far apart (each
    row drawn as one string with wide spaces, so pdfium emits it as one line, as table rows often come), then a
    sentence."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("Vera", "Vera.ttf"))  # embedded fonts (reportlab ships them): pdfium reads the
    pdfmetrics.registerFont(TTFont("VeraBd", "VeraBd.ttf"))  # bold one's weight, which it does not for Helvetica
    c = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    y = 700
    c.setFont("Vera", 11)
    c.drawString(72, y, lead)
    y -= 30
    for font, cells in [("VeraBd", header), *(("Vera", row) for row in rows)]:
        text = c.beginText(72, y)
        text.setFont(font, 11)
        for i, cell in enumerate(cells):
            text.setTextOrigin(72 + 190 * i, y)  # one text object: pdfium reads the row as one line
            text.textOut(cell)
        c.drawText(text)
        y -= 16
    y -= 14
    c.setFont("Vera", 11)
    c.drawString(72, y, after)
    c.showPage()
    c.save()
    return path
