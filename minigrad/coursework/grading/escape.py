"""Make student-supplied text inert before an instructor's tool shows it.

Two places can act on text instead of showing it:

- a terminal (``minigrad check``'s output, ``cat report.txt``): control
  characters drive it.  ``\\x1b[2J\\x1b[H`` clears the screen, and what follows
  ("score: 5 / 5") looks like the grader's own line.  ``printable`` writes every
  C0 control character but the newline, DEL and every C1 control character as
  a visible escape (``\\x1b``), and a byte of a name that is not UTF-8 as
  ``\\xe9``;
- a spreadsheet (gradebook.csv, similarity.csv): a cell starting with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return is read as a formula.
  ``csv_cell`` prepends a single quote, as OWASP's "CSV Injection" page
  recommends (the csv module doubles quotes and quotes cells with separators).
"""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escaped(character, keep_bytes=False):
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:            # a byte that was not UTF-8, kept by surrogateescape
        return character if keep_bytes else f"\\x{code - 0xDC00:02x}"
    if character == "\n" or not (code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF):
        return character
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text, keep_bytes=False):
    """``text`` with control characters (C0 but newline, DEL, C1) and undecodable bytes written as escapes.

    ``keep_bytes``: leave undecodable bytes as they are (a file written with errors="surrogateescape")."""
    text = str(text)
    if text.isprintable():   # the common case, fast: no control character and no surrogate
        return text
    return "".join(_escaped(c, keep_bytes) for c in text)


def csv_cell(value):
    """A spreadsheet cell that is read as text, never as a formula (OWASP), with control characters escaped
    and a name's bytes kept as they are; numbers pass as they are."""
    if not isinstance(value, str):
        return value
    return "'" + printable(value, keep_bytes=True) if value.startswith(FORMULA_STARTS) else printable(value, True)
