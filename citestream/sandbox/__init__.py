"""PDFs are opened only in child processes under resource limits.

pdfium parses whatever a PDF says: a few hundred kilobytes can inflate to
gigabytes of page objects, and a huge page renders to a bitmap of as many. So
neither the worker nor the page opens a PDF itself: ``pool`` hands the bytes to
a child (``child``) whose address space, CPU time and wall time are capped and
whose answers are checked against caps on pages, characters and page size
(``budget``). A PDF over a limit is refused with its reason; a child that dies
is replaced. This package imports nothing heavy, so a child starts in a
fraction of a second.
"""
