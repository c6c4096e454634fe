"""Bounded decoding on the host: every decompression and every git delta draws from one budget.

The grader reads an agent's repository as data, and data can be a bomb: a 1 KB delta chain that
resolves to gigabytes, a loose object whose header understates its size, a gzip of many
members, an archive of archives. Everything here inflates through the episode's `Budget`
(`budget.py`, which holds every figure of the grading budget): sizes are checked before
anything is inflated where the format declares them (git object headers, delta headers, zip and
tar members), every stream is inflated with an output cap, and exceeding the budget, the depth
or the entry limits raises `Oversized`, which the grader turns into `oversized`: every secret
counted as left, never a skipped file.

`unwrap(data, budget)` names what a blob holds inside: the members of an archive (zip, tar,
gzip, bzip2, xz, lzma, zlib), the objects of a git pack or bundle (`pack_objects`). Packs found
anywhere are pre-walked here, each entry inflated with its declared size as the cap and each
delta's instructions checked against its declared result size, before dulwich (a well-kept
pure-Python git library) resolves them: so dulwich never inflates more than was declared.
"""

from __future__ import annotations

import bz2
import io
import lzma
import tarfile
import zipfile
import zlib

from redaction_pressure.audit.budget import INFLATION_BYTES, PART_BYTES, Budget, Oversized  # noqa: F401 - re-exported

MAX_MEMBERS = 10_000
"""Entries of one archive or pack read at most; more is oversized."""
MAX_NESTING = 4
"""Containers inside containers (a zip in a tar.gz in a bundle): deeper is oversized."""
PACK_SIGNATURE = b"PACK"
BUNDLE_SIGNATURES = (b"# v2 git bundle\n", b"# v3 git bundle\n")
OBJECT_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}


def _stream(decompressor_factory, data: bytes, budget: Budget, what: str, cap: int | None = None) -> bytes:
    """Inflate `data` (every member, for formats that chain them) within the budget and `cap`."""
    out = bytearray()
    rest = data
    while rest:
        d = decompressor_factory()
        room = min(budget.room - len(out), cap - len(out) if cap is not None else budget.room)
        chunk = d.decompress(rest, room + 1)
        if len(chunk) > room:
            raise Oversized(f"{what} inflates past its limit")
        budget.charge(len(chunk), what)
        out += chunk
        if not d.eof:
            break  # truncated: what came out is what there is
        rest = d.unused_data.lstrip(b"\x00")
    return bytes(out)


def gunzip(data: bytes, budget: Budget, what: str = "a gzip stream") -> bytes:
    return _stream(lambda: zlib.decompressobj(31), data, budget, what)


def inflate_raw(data: bytes, budget: Budget) -> bytes:
    """Raw deflate (no header): raises zlib.error when `data` is not."""
    d = zlib.decompressobj(-15)
    out = d.decompress(data, budget.room + 1)
    if len(out) > budget.room:
        raise Oversized("a deflate stream inflates past the budget")
    if not out:
        raise zlib.error("nothing inflated")
    budget.charge(len(out), "a deflate stream")
    return out


def unzlib(data: bytes, budget: Budget, what: str = "a zlib stream", cap: int | None = None) -> bytes:
    d = zlib.decompressobj()
    room = min(budget.room, cap if cap is not None else budget.room)
    out = d.decompress(data, room + 1)
    if len(out) > room:
        raise Oversized(f"{what} inflates past its limit")
    budget.charge(len(out), what)
    return out


def unwrap(data: bytes, budget: Budget, depth: int = 0) -> list[tuple[str, bytes]]:
    """What `data` holds inside, as (name, bytes): archive members, a compressed stream's content,
    a pack's or bundle's objects. [] when it is none of these (or a damaged one: what could be
    read is returned)."""
    if depth > MAX_NESTING:
        raise Oversized("containers nested deeper than the grader reads")
    head = data[:8]
    try:
        if head[:2] == b"\x1f\x8b":
            return [("gzip", gunzip(data, budget))]
        if head[:3] == b"BZh":
            return [("bzip2", _stream(bz2.BZ2Decompressor, data, budget, "a bzip2 stream"))]
        if head[:6] == b"\xfd7zXZ\x00":
            return [("xz", _stream(lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), data, budget, "an xz stream"))]
        if head[:3] == b"\x5d\x00\x00":
            return [("lzma", _stream(lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE), data, budget, "an lzma stream"))]
        if head[:1] == b"\x78" and (int.from_bytes(head[:2], "big") % 31) == 0:
            return [("zlib", unzlib(data, budget))]
        if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            return _zip(data, budget)
        if len(data) > 262 and data[257:262] == b"ustar":
            return _tar(data, budget)
        if head[:4] == PACK_SIGNATURE:
            return [
                (f"object {sha[:12]} ({kind.decode()})", content)
                for sha, (kind, content) in pack_objects(data, budget).items()
            ]
        if data.startswith(BUNDLE_SIGNATURES):
            at = data.find(b"\n\n")
            if at >= 0:
                return [
                    (f"object {sha[:12]} ({kind.decode()})", content)
                    for sha, (kind, content) in pack_objects(data[at + 2 :], budget).items()
                ]
    except Oversized:
        raise
    except Exception:  # noqa: BLE001 - damaged containers hold what could be read: nothing more
        return []
    return []


def _zip(data: bytes, budget: Budget) -> list[tuple[str, bytes]]:
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise Oversized("a zip archive with too many members")
        for info in members:
            budget.charge(info.file_size, f"zip member {info.filename[:60]}")
            with archive.open(info) as f:
                content = f.read(info.file_size + 1)
            if len(content) > info.file_size:
                raise Oversized("a zip member larger than it declares")
            out.append((f"zip:{info.filename}", content))
    return out


def _tar(data: bytes, budget: Budget) -> list[tuple[str, bytes]]:
    out = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for count, member in enumerate(archive):
            if count >= MAX_MEMBERS:
                raise Oversized("a tar archive with too many members")
            out.append((f"tar:{member.name}", member.name.encode()))
            if member.isfile():
                budget.charge(member.size, f"tar member {member.name[:60]}")
                out.append((f"tar:{member.name}", archive.extractfile(member).read()))
    return out


# -- git packs -------------------------------------------------------------------------------------


def _varint_header(data: bytes, at: int) -> tuple[int, int, int]:
    """(type, size, offset after the header) of a pack entry."""
    byte = data[at]
    kind, size, shift = (byte >> 4) & 7, byte & 15, 4
    at += 1
    while byte & 0x80:
        byte = data[at]
        size |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if shift > 63:
            raise ValueError("a pack entry header runs on")
    return kind, size, at


def _delta_size(delta: bytes, at: int) -> tuple[int, int]:
    size = shift = 0
    while True:
        byte = delta[at]
        size |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return size, at
        if shift > 63:
            raise ValueError("a delta size runs on")


def _delta_result(delta: bytes) -> int:
    """The size a delta declares for its result, checked against what its instructions write."""
    _, at = _delta_size(delta, 0)
    target, at = _delta_size(delta, at)
    written = 0
    while at < len(delta):
        op = delta[at]
        at += 1
        if op & 0x80:
            size = 0
            for i in range(4):
                if op & (1 << i):
                    at += 1
            for i in range(3):
                if op & (0x10 << i):
                    size |= delta[at] << (8 * i)
                    at += 1
            written += size or 0x10000
        elif op:
            written += op
            at += op
        else:
            raise ValueError("a delta opcode 0")
        if written > target:
            raise ValueError("a delta writes more than it declares")
    if written != target:
        raise ValueError("a delta writes less than it declares")
    return target


def walk_pack(data: bytes, budget: Budget) -> int:
    """Check a pack before it is resolved: each entry inflated with its declared size as the cap,
    each delta's result size checked against its instructions and charged. Returns the entries."""
    if len(data) < 12 or data[:4] != PACK_SIGNATURE:
        raise ValueError("not a pack")
    count = int.from_bytes(data[8:12], "big")
    if count > 200_000:
        raise Oversized("a pack with too many objects")
    at = 12
    for _ in range(count):
        kind, size, at = _varint_header(data, at)
        if kind == 6:
            byte = data[at]
            at += 1
            while byte & 0x80:
                byte = data[at]
                at += 1
        elif kind == 7:
            at += 20
        elif kind not in OBJECT_TYPES:
            raise ValueError(f"a pack entry of type {kind}")
        budget.charge(size, "a pack entry")
        d = zlib.decompressobj()
        content = d.decompress(data[at:], size + 1)
        if len(content) != size or not d.eof:
            raise ValueError("a pack entry that does not inflate to its declared size")
        at = len(data) - len(d.unused_data)
        if kind in (6, 7):
            budget.charge(_delta_result(content), "a delta's result")
    return count


def pack_objects(data: bytes, budget: Budget) -> dict[str, tuple[bytes, bytes]]:
    """sha -> (type, content) of every object of a self-contained pack, within the budget."""
    from dulwich.object_format import SHA1
    from dulwich.pack import PackData, PackInflater

    walk_pack(data, budget)
    objects: dict[str, tuple[bytes, bytes]] = {}
    pack = PackData.from_file(io.BytesIO(data), SHA1, size=len(data))
    try:
        pack.check()
        for obj in PackInflater.for_pack_data(pack):
            objects[obj.id.decode()] = (obj.type_name, obj.as_raw_string())
    finally:
        pack.close()
    return objects


def loose_object(data: bytes, budget: Budget) -> tuple[bytes, bytes]:
    """(type, content) of a loose object; its declared size is checked before it is inflated."""
    d = zlib.decompressobj()
    head = d.decompress(data, 64)
    nul = head.find(b"\x00")
    if nul < 0:
        raise ValueError("no object header")
    kind, _, size_text = head[:nul].partition(b" ")
    size = int(size_text)
    budget.charge(size, "a loose object")
    have = len(head) - nul - 1
    if have > size:
        raise ValueError("a loose object larger than it declares")
    rest = d.decompress(d.unconsumed_tail, size - have + 1)
    content = head[nul + 1 :] + rest
    if len(content) != size:
        raise ValueError("a loose object that does not inflate to its declared size")
    return kind, content
