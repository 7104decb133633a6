"""Input files as users have them: compressed (gzip, bzip2, xz, Zstandard), in UTF-16 or UTF-32 with a byte order
mark, or one JSON array of rows (pretty-printed or not) instead of one object per line.

Such a file is recognised by its first bytes, not by its name (``preds.jsonl.gz`` is read as gzip because it
begins with gzip's magic number ``1f 8b``; a gzip file named ``preds.jsonl`` is read as gzip too), and decoded once
into a plain UTF-8 file in a temporary folder, named as the input is without its compression ending
(``preds.jsonl.gz`` → ``preds.jsonl``). Every reader, engine and the run store then read that file as they read
any input (:mod:`goldeval.io.streams` does the same for stdin and FIFOs). A JSON array becomes one element per
line, so a row's number is its element's (1-based), and a message says ``preds.json element 3: …``.

What is recorded for the run: the input's own path and the sha256 of its bytes as they are on disk.

Source: the magic numbers of RFC 1952 (gzip), the bzip2 format (``BZh``), the xz file format 1.0.4 §2.1.1.1
(``FD 37 7A 58 5A 00``) and RFC 8878 §3.1.1 (Zstandard, ``28 B5 2F FD``); the byte order marks of the Unicode
Standard §23.8 (UTF-32 LE ``FF FE 00 00`` is checked before UTF-16 LE ``FF FE``).
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import json
import lzma
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from goldeval.errors import InputError

__all__ = ["Decoding", "COMPRESSIONS", "sniff", "decode_into", "compression_of", "encoding_of", "utf16_hint"]

#: magic number → compression name, checked in this order.
COMPRESSIONS: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
#: The file name endings of each compression, removed from the decoded file's name.
_ENDINGS = {"gzip": (".gz", ".gzip"), "bzip2": (".bz2",), "xz": (".xz",), "zstd": (".zst", ".zstd")}
#: byte order mark → Python codec, UTF-32 first (its little-endian mark begins with UTF-16's).
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_HEAD = 1 << 16
_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class Decoding:
    """What an input file needs before it can be read as plain UTF-8 rows.

    Attributes:
        compression: ``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zstd"`` or ``None``.
        encoding: The codec its byte order mark names (``"utf-16-le"`` …), or ``None`` (UTF-8).
        json_array: The (decompressed, decoded) text is one JSON array of objects, not one object per line.
        name: The decoded file's name: the input's, without its compression ending.
    """

    compression: str | None
    encoding: str | None
    json_array: bool
    name: str

    @property
    def kind(self) -> str:
        """How the run records it, e.g. ``"gzip, utf-16-le, json array"``."""
        return ", ".join(x for x in (self.compression, self.encoding, "json array" if self.json_array else None) if x)


def compression_of(head: bytes) -> str | None:
    """The compression whose magic number *head* begins with, else ``None``."""
    for magic, name in COMPRESSIONS:
        if head.startswith(magic):
            return name
    return None


def encoding_of(head: bytes) -> str | None:
    """The UTF-16 / UTF-32 codec whose byte order mark *head* begins with, else ``None`` (a UTF-8 mark is ``None``:
    every reader skips it)."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    return None


def utf16_hint(raw: bytes) -> str | None:
    """Advice for bytes that are not UTF-8 because they are UTF-16 or UTF-32 without a byte order mark (every other
    byte, or three of four, is NUL in ASCII text), else ``None``."""
    if len(raw) >= 4 and raw.count(0) * 2 >= len(raw.rstrip(b"\r\n")):
        order = "LE" if raw[0] != 0 else "BE"
        width = "32" if raw[:4].count(0) >= 3 else "16"
        return (f"the bytes look like UTF-{width} text without a byte order mark (NUL bytes between the letters). "
                f"Convert it: `iconv -f UTF-{width}{order} -t UTF-8`, or save it as UTF-8")
    return None


def _open_decompressed(path: str, compression: str | None) -> IO[bytes]:
    if compression == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile is a binary file object
    if compression == "bzip2":
        return bz2.open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    if compression == "zstd":
        import zstandard  # optional at import: loaded only for a Zstandard input (a dependency of goldeval)

        fh = open(path, "rb")  # noqa: SIM115 - closed with the reader (closefd)
        return zstandard.ZstdDecompressor().stream_reader(fh, closefd=True)
    return open(path, "rb")


def _read_head(fh: IO[bytes], n: int) -> bytes:
    out = b""
    while len(out) < n:
        block = fh.read(n - len(out))
        if not block:
            break
        out += block
    return out


def _looks_like_array(text: str) -> bool:
    """A JSON array of row objects: ``[`` then ``{`` or ``]`` (a TOML table header ``[gates]`` is not)."""
    body = text.lstrip("\ufeff \t\r\n")
    if not body.startswith("["):
        return False
    rest = body[1:].lstrip(" \t\r\n")
    return rest == "" or rest[0] in "{]"


def _decoded_name(path: str, compression: str | None) -> str:
    base = os.path.basename(path) or "input"
    if compression:
        for ending in _ENDINGS[compression]:
            if base.lower().endswith(ending) and len(base) > len(ending):
                return base[: -len(ending)]
    return base


def sniff(path: str | os.PathLike[str], *, rows: bool = True) -> Decoding | None:
    """What the regular file *path* needs before it is read as plain UTF-8 rows, or ``None`` when nothing.

    Args:
        path: An input file.
        rows: The file holds rows (a JSON array is then read as rows); ``False`` for a document (a TOML definition
            of done, a results JSON), which is only decompressed and decoded.

    Returns:
        A :class:`Decoding`, or ``None`` for a plain (UTF-8) file, and for a file that cannot be opened (its reader
        says why).

    Raises:
        InputError: the file begins with a compression's magic number and cannot be decompressed (truncated,
            corrupt), naming the compression and what to do.
    """
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    compression = compression_of(head)
    try:
        with _open_decompressed(p, compression) as fh:
            head = _read_head(fh, _HEAD)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        raise InputError(_corrupt(p, compression, exc)) from None
    except Exception as exc:  # zstandard.ZstdError is no OSError
        if compression == "zstd":
            raise InputError(_corrupt(p, compression, exc)) from None
        raise
    encoding = encoding_of(head)
    json_array = False
    if rows:
        text = head.decode(encoding or "utf-8", "replace") if encoding is None else _decode_head(head, encoding)
        json_array = _looks_like_array(text)
    if compression is None and encoding is None and not json_array:
        return None
    return Decoding(compression, encoding, json_array, _decoded_name(p, compression))


def _decode_head(head: bytes, encoding: str) -> str:
    dec = codecs.getincrementaldecoder(encoding)("replace")
    text = dec.decode(head)
    return text.lstrip("\ufeff")


def _corrupt(path: str, compression: str | None, exc: BaseException) -> str:
    tool = {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t", "zstd": "zstd -t"}.get(compression or "", "")
    return (f"{path}: begins as a {compression} file but cannot be decompressed ({exc}). The file may be truncated or "
            f"damaged: check it with `{tool} {os.path.basename(path)}`, or give the uncompressed file.")


def _text_blocks(fh: IO[bytes], encoding: str | None) -> Iterator[str]:
    dec = codecs.getincrementaldecoder(encoding or "utf-8")("strict")
    first = True
    while True:
        block = fh.read(_BLOCK)
        text = dec.decode(block or b"", final=not block)
        if first:
            text = text.lstrip("\ufeff") if encoding else text
            first = False
        if text:
            yield text
        if not block:
            return


def decode_into(path: str | os.PathLike[str], decoding: Decoding, folder: str) -> str:
    """Write the plain UTF-8 form of *path* into *folder* and return its path (``folder/decoding.name``).

    Args:
        path: The input file. decoding: What :func:`sniff` found. folder: An empty folder the caller removes.

    Returns:
        The decoded file's path: the decompressed bytes, re-encoded from UTF-16/32 to UTF-8, and a JSON array
        written one element per line (element *n* on line *n*).

    Raises:
        InputError: the file cannot be decompressed, is not valid in the encoding its byte order mark names, or is a
            JSON array that is broken (where it breaks, as element, line and column of the file, and what to do).
    """
    p = os.fspath(path)
    target = os.path.join(folder, decoding.name)
    try:
        with _open_decompressed(p, decoding.compression) as src, open(target, "wb") as out:
            if decoding.encoding is None and not decoding.json_array:
                shutil.copyfileobj(src, out, _BLOCK)
            elif not decoding.json_array:
                for text in _text_blocks(src, decoding.encoding):
                    out.write(text.encode("utf-8", "surrogatepass"))
            else:
                text = "".join(_text_blocks(src, decoding.encoding))  # one JSON document: read whole
                _array_to_lines(text, p, out)
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: its byte order mark says {decoding.encoding or 'UTF-8'}, but byte {exc.start} is not valid "
                         f"in it ({exc.reason}). Save the file again in one encoding (UTF-8 is best).") from None
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        raise InputError(_corrupt(p, decoding.compression, exc)) from None
    except Exception as exc:  # zstandard.ZstdError is no OSError
        if decoding.compression == "zstd":
            raise InputError(_corrupt(p, decoding.compression, exc)) from None
        raise
    return target


def _array_to_lines(text: str, name: str, out: IO[bytes]) -> None:
    """Each element of the JSON array *text* on a line of its own, as written (its literals untouched, so that the
    row reader applies its own rules to each): line breaks between tokens become spaces (a JSON string holds none)."""
    decoder = json.JSONDecoder()
    ws = " \t\r\n"
    i = len(text) - len(text.lstrip("\ufeff" + ws))
    i += 1  # the '['
    n = 0

    def where(pos: int) -> str:
        line = text.count("\n", 0, pos) + 1
        return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"

    while True:
        while i < len(text) and text[i] in ws:
            i += 1
        if i < len(text) and text[i] == "]" and n == 0:
            i += 1
            break
        try:
            _, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: read as one JSON array of rows, element {n + 1} ({where(i)}) is not valid JSON "
                             f"({exc.msg} at {where(exc.pos)}). Fix the file, or write one JSON object per line "
                             "(JSONL).") from None
        except RecursionError:
            raise InputError(f"{name}: element {n + 1} ({where(i)}) is nested too deep to read (over 1,000 levels). "
                             "Flatten the row.") from None
        n += 1
        out.write(text[i:end].replace("\r", " ").replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n")
        i = end
        while i < len(text) and text[i] in ws:
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "]":
            i += 1
            break
        got = repr(text[i:i + 20]) if i < len(text) else "the end of the file"
        raise InputError(f"{name}: read as one JSON array of rows, element {n} ends at {where(i)}, where a ',' or ']' "
                         f"was expected and {got} was found. Fix the file, or write one JSON object per line (JSONL).")
    rest = text[i:].strip(ws)
    if rest:
        raise InputError(f"{name}: read as one JSON array of rows, but text follows its closing ']' at {where(i)} "
                         f"({rest[:20]!r}). A file holds one array, or one JSON object per line (JSONL).")
    if n == 0:
        raise InputError(f"{name}: an empty JSON array ([]): no rows. Give the file that holds the rows.")


def new_folder() -> str:
    """A new temporary folder for decoded inputs (the caller removes it)."""
    return tempfile.mkdtemp(prefix="goldeval-decoded-")
