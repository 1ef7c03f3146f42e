"""The grader <-> worker wire format: a small JSON header, then raw array bytes.  No pickle.

One message on a pipe:

    4 bytes      the header's length in bytes, big-endian
    header       UTF-8 JSON: an object with any small fields, plus
                 "arrays": [{"shape": [2, 3], "dtype": "<f8"}, ...]
    array bytes  each array's raw C-order bytes, one after the other

Either side reads exactly the bytes the header announces.  ``read_message``
trusts nothing: a header that is too long, nested deeper than MAX_NESTING
(counted before parsing: the JSON parser recurses), not UTF-8 or not JSON, a
dtype outside ``DTYPES``, a negative, too-large or too-deep shape, or a pipe
that ends early raise ProtocolError.
The grader checks the returned arrays' shapes, dtypes and values itself
(grading/grader.py); this module only frames them.

Imported by both processes: it needs the standard library and NumPy only.
"""
import itertools
import json
import re
import struct

import numpy

MAX_HEADER = 1 << 20          # 1 MB of JSON is far more than any request or reply needs
MAX_PAYLOAD = 512 << 20       # 512 MB of array bytes in one message
MAX_DIMS = 32                 # NumPy refuses more than 64; no check needs more than a few
MAX_NESTING = 16              # a header is an object of lists of objects: 4 levels; 200,000 crashed the parser
STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
BRACKETS = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
DTYPES = ("<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "|b1")
# A reply's "failure" when the student's code failed: the grader decides on it, never on the reply's "message"
NOT_IMPLEMENTED = "not implemented"   # it raised NotImplementedError (worker.py keeps the same two words)
RAISED = "raised"                     # anything else


class ProtocolError(Exception):
    """A message that breaks the format: the worker is not trusted to keep it."""


class PipeClosed(ProtocolError):
    """The pipe ended before (or inside) a message: the other process is gone."""


def _dtype_text(array):
    return array.dtype.newbyteorder("<").str if array.dtype.byteorder == ">" else array.dtype.str


def encode(header, arrays=()):
    """The bytes of one message: ``header`` (a dict, JSON-able) and ``arrays`` (NumPy arrays)."""
    arrays = [numpy.asarray(a, order="C") for a in arrays]   # ascontiguousarray would make a 0-d array 1-d
    for a in arrays:
        if _dtype_text(a) not in DTYPES:
            raise ProtocolError(f"cannot send an array of dtype {a.dtype}: only numbers and booleans travel")
    arrays = [a.astype(_dtype_text(a), copy=False) for a in arrays]   # little-endian on the wire
    header = dict(header, arrays=[{"shape": list(a.shape), "dtype": a.dtype.str} for a in arrays])
    text = json.dumps(header, allow_nan=True).encode("utf-8")
    if len(text) > MAX_HEADER:
        raise ProtocolError(f"header of {len(text)} bytes is over the {MAX_HEADER} allowed")
    return b"".join([struct.pack(">I", len(text)), text] + [a.tobytes() for a in arrays])


def write_message(stream, header, arrays=()):
    """Send one message on a binary file object (a pipe)."""
    stream.write(encode(header, arrays))
    stream.flush()


def _read_exactly(stream, size):
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise PipeClosed(f"the pipe closed {left} bytes before the end of a message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def nesting(text):
    """How deep the brackets of a JSON text nest (outside strings), without parsing it."""
    brackets = [BRACKETS[b] for b in STRINGS.sub(b"", text) if b in BRACKETS]
    return max(itertools.accumulate(brackets), default=0)


def read_message(stream, max_payload=MAX_PAYLOAD):
    """Receive one message: (header dict, list of arrays).  Raises ProtocolError on anything malformed."""
    (length,) = struct.unpack(">I", _read_exactly(stream, 4))
    if length > MAX_HEADER:
        raise ProtocolError(f"a header of {length} bytes (at most {MAX_HEADER})")
    text = _read_exactly(stream, length)
    depth = nesting(text)
    if depth > MAX_NESTING:
        raise ProtocolError(f"a header nested {depth} deep (at most {MAX_NESTING})")
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ProtocolError(f"the header is not JSON: {str(error)[:200]}")
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise ProtocolError("the header is not an object with an 'arrays' list")
    layouts, total = [], 0
    for entry in header.pop("arrays"):
        if not isinstance(entry, dict) or entry.get("dtype") not in DTYPES:
            raise ProtocolError(f"an array of unsupported dtype: {entry!r:.100}")
        shape = entry.get("shape")
        # every dimension counted, zeros as 1: NumPy refuses a 0-size shape whose other dimensions overflow
        if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(type(d) is int and d >= 0 for d in shape)
                and numpy.prod([max(d, 1) for d in shape], dtype=numpy.float64) <= max_payload):
            raise ProtocolError(f"an array of invalid shape: {shape!r:.100}")
        dtype = numpy.dtype(entry["dtype"])
        size = int(numpy.prod(shape, dtype=numpy.float64)) * dtype.itemsize
        total += size
        if total > max_payload:
            raise ProtocolError(f"more than {max_payload} bytes of arrays in one message")
        layouts.append((tuple(shape), dtype, size))
    payload = _read_exactly(stream, total)   # all the arrays' bytes in one read
    arrays, offset = [], 0
    for shape, dtype, size in layouts:
        arrays.append(numpy.frombuffer(payload, dtype=dtype, count=size // dtype.itemsize, offset=offset)
                      .reshape(shape).copy())
        offset += size
    return header, arrays
