"""Decompression bombs for the secrets-audit reader: small files that ask for gigabytes.

Each builder returns the bytes of one bomb; `tests/audit/test_audit_inflate.py` plants them in a graded
workspace and `benchmarks/bench_audit.py` measures the host's peak memory grading them.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
import zlib

MIB = 1 << 20


def _entry_header(kind: int, size: int) -> bytes:
    out = bytearray([(kind << 4) | (size & 15)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def _ofs(offset: int) -> bytes:
    out = [offset & 0x7F]
    offset >>= 7
    while offset:
        offset -= 1
        out.insert(0, 0x80 | (offset & 0x7F))
        offset >>= 7
    return bytes(out)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def delta_bomb_pack(levels: int = 2) -> bytes:
    """A pack of a 64 KiB blob of zeros and `levels` deltas, each copying its base 8,192 times:
    a few kilobytes that resolve to 512 MiB (one level) or 4 TiB (two)."""
    base = b"\0" * 65536
    entries = [_entry_header(3, len(base)) + zlib.compress(base, 9)]
    offsets = [12]
    size = len(base)
    for _ in range(levels):
        target = size * 8192
        ops = bytearray()
        chunk = min(size, 0xFFFFFF)
        copies = target // chunk
        for _ in range(copies):
            # copy from offset 0: size bytes only (0 means 64 KiB)
            if chunk == 0x10000:
                ops.append(0x80)
            else:
                ops += bytes([0x80 | 0x70, chunk & 0xFF, (chunk >> 8) & 0xFF, (chunk >> 16) & 0xFF])
        delta = _varint(size) + _varint(target) + bytes(ops)
        at = offsets[-1] + len(entries[-1])
        entries.append(_entry_header(6, len(delta)) + _ofs(at - offsets[-1]) + zlib.compress(delta, 9))
        offsets.append(at)
        size = target
    body = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big") + b"".join(entries)
    return body + hashlib.sha1(body).digest()


def loose_bomb() -> bytes:
    """A loose blob that declares 10 bytes and inflates to 512 MiB."""
    d = zlib.compressobj(9)
    out = d.compress(b"blob 10\0")
    chunk = b"\0" * MIB
    for _ in range(512):
        out += d.compress(chunk)
    return out + d.flush()


def gzip_members_bomb() -> bytes:
    """A tiny gzip member, then one that inflates to 512 MiB (a reader of the first member alone misses it)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as f:
        chunk = b"\0" * MIB
        for _ in range(512):
            f.write(chunk)
    return gzip.compress(b"release notes\n") + buf.getvalue()


def zip_bomb() -> bytes:
    """A zip whose one member inflates to 512 MiB."""
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("zeros.bin", "w", force_zip64=True) as f,
    ):
        chunk = b"\0" * MIB
        for _ in range(512):
            f.write(chunk)
    return buf.getvalue()


BOMBS = {
    "delta_chain_pack": delta_bomb_pack,
    "loose_object": loose_bomb,
    "gzip_second_member": gzip_members_bomb,
    "zip_member": zip_bomb,
}
