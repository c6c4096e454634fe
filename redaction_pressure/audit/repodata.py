"""The repository as data, on the host: unpack the runtime's archive, read git's object store.

Nothing here runs git or honours any repository configuration. `unpack` reads the tar the
runtime program `ARCHIVE` produced in memory (regular files only; names checked; sizes capped;
no member is written to disk). `read_history` parses every object of `.git/objects`, loose and
packed, reachable or not, with dulwich's pack reader (a well-kept pure-Python git library:
delta resolution and pack checksums are its job, not ours), and walks what refs, packed-refs,
reflogs, the index and stashes point at. Replacement refs, grafts and shallow files change
nothing: the walk follows the commits' own parent lines, so a missing parent (shallow), a
missing tree or blob, an object whose bytes do not hash to its name, or a damaged pack is
`corrupt`. A clean clone of such a repository would not reproduce it.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import zlib
from dataclasses import dataclass, field

try:
    from dulwich.ignore import IgnoreFilter, IgnoreFilterManager, read_ignore_patterns
    from dulwich.index import read_index_dict
except ImportError as exc:  # one line naming the fix, not a traceback into dulwich
    raise ImportError(
        f"secrets-audit needs the 'audit' extra ({(exc.name or 'dulwich').split('.')[0]} is missing): install the secrets-audit "
        "environment, or pip install 'redaction-pressure[audit]', or uv sync --extra audit"
    ) from None

from redaction_pressure.audit.inflate import Budget, Oversized, loose_object, pack_objects
from redaction_pressure.audit.leakscan import HISTORY_CORRUPT, HISTORY_MISSING, HISTORY_OK

MAX_INDEX_ENTRIES = 200_000
"""Index entries read for the objects they name (an index is a list of files: far more is no index)."""
SHA = re.compile(rb"\b[0-9a-f]{40}\b")
DERIVED = re.compile(r"(^|/)(__pycache__|\.pytest_cache)(/|$)|\.py[co]$")
"""Bytecode and test caches by name: derived when untracked (never read), counted when tracked."""


@dataclass
class Unpacked:
    present: bool = False
    tree: dict[str, bytes] = field(default_factory=dict)
    """Working-tree regular files (`.git` and files named as derived, `DERIVED`, excluded)."""
    derived: dict[str, bytes] = field(default_factory=dict)
    """Working-tree regular files named as derived: bytecode and test caches, unless tracked."""
    git: dict[str, bytes] = field(default_factory=dict)
    """Regular files under `.git/`, keyed by their path inside `.git`."""
    skipped: list[list[str]] = field(default_factory=list)
    """[path, why(, link target)] for what was not read: symlinks, special, huge, unreadable files."""
    derived_skipped: list[list[str]] = field(default_factory=list)
    """Like `skipped`, for paths named as derived (which count only if tracked)."""
    oversized: bool = False


def unpack(archive: bytes, max_bytes: int) -> Unpacked:
    """The archive's files in memory; raises ValueError on a malformed archive."""
    out = Unpacked()
    total = 0
    try:
        tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:")
    except tarfile.TarError as exc:
        raise ValueError(f"unreadable archive: {exc}") from exc
    with tar:
        for member in tar:
            if member.name == "m" and member.isfile() and member.size < (1 << 20):
                meta = json.loads(tar.extractfile(member).read())
                out.present = bool(meta.get("present"))
                out.skipped = [list(map(str, s)) for s in meta.get("skipped", [])][:200]
                out.derived_skipped = [list(map(str, s)) for s in meta.get("derived_skipped", [])][:200]
                out.oversized = bool(meta.get("oversized"))
                continue
            name = member.name
            parts = name.split("/")
            if not member.isfile() or parts[0] != "t" or len(parts) < 2 or any(p in ("", ".", "..") for p in parts[1:]):
                continue
            total += member.size
            if total > max_bytes:
                out.oversized = True
                break
            data = tar.extractfile(member).read()
            rel = "/".join(parts[1:])
            if parts[1] == ".git" and len(parts) > 2:
                out.git["/".join(parts[2:])] = data
            elif parts[1] != ".git":
                (out.derived if DERIVED.search(rel) else out.tree)[rel] = data
    return out


@dataclass
class History:
    state: str
    objects: list[tuple[str, bytes]] = field(default_factory=list)
    """(label, raw content) of every object in the store."""
    commits: dict[str, dict] = field(default_factory=dict)
    """Reachable commits: sha -> {"message", "author_time", "tree": {path: blob sha}}."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    reason: str = ""
    names: list[tuple[str, bytes]] = field(default_factory=list)
    """(label, raw content) of every commit, tag and tree object: messages, authors, names."""


LOOSE = re.compile(r"objects/([0-9a-f]{2})/([0-9a-f]{38})")
PACKED = re.compile(r"objects/pack/[^/]+\.pack")
STORE = re.compile(r"objects/(?:[0-9a-f]{2}/[0-9a-f]{38}|pack/[^/]+\.(?:pack|idx|rev|bitmap|keep|mtimes))")
"""Files of the object store git itself reads; anything else under .git is scanned as a file."""


def _loose(git: dict[str, bytes], budget: Budget) -> tuple[dict[str, tuple[bytes, bytes]], list[str]]:
    import hashlib

    objects: dict[str, tuple[bytes, bytes]] = {}
    bad: list[str] = []
    for path, data in git.items():
        m = LOOSE.fullmatch(path)
        if not m:
            continue
        sha = m.group(1) + m.group(2)
        try:
            kind, content = loose_object(data, budget)
            if hashlib.sha1(kind + b" " + str(len(content)).encode() + b"\x00" + content).hexdigest() != sha:
                raise ValueError("hash mismatch")
        except (zlib.error, ValueError):
            bad.append(sha)
            continue
        objects[sha] = (kind, content)
    return objects, bad


def _packed(git: dict[str, bytes], budget: Budget) -> tuple[dict[str, tuple[bytes, bytes]], list[str]]:
    objects: dict[str, tuple[bytes, bytes]] = {}
    bad: list[str] = []
    for path, data in git.items():
        if not PACKED.fullmatch(path):
            continue
        try:
            found = pack_objects(data, budget)
            budget.count_objects(len(found))
            objects.update(found)
        except Oversized:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of a pack is a corrupt repository
            bad.append(f"{path}: {type(exc).__name__}")
    return objects, bad


def _alternates(git: dict[str, bytes]) -> list[str]:
    """Object directories the store borrows from outside the repository (git would read them)."""
    import posixpath

    outside = []
    for name in ("objects/info/alternates", "objects/info/http-alternates"):
        for line in git.get(name, b"").decode("utf-8", "replace").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            resolved = posixpath.normpath(posixpath.join(".git/objects", line))
            if line.startswith("/") or "://" in line or resolved.startswith(".."):
                outside.append(line[:200])
    return outside


def _parse_tree(content: bytes) -> list[tuple[str, str, str]]:
    """(mode, name, sha) entries of a raw tree object."""
    out = []
    at = 0
    while at < len(content):
        space = content.index(b" ", at)
        nul = content.index(b"\x00", space)
        mode = content[at:space].decode()
        name = content[space + 1 : nul].decode("utf-8", "replace")
        out.append((mode, name, content[nul + 1 : nul + 21].hex()))
        at = nul + 21
    return out


def _ref_targets(git: dict[str, bytes]) -> set[str]:
    """Every object id a ref, packed-ref, reflog, stash, HEAD-like file or the index names."""
    starts: set[str] = set()
    for path, data in git.items():
        if path == "packed-refs":
            # "SHA name" and "^SHA" (peeled) lines: the object is the line's first field; a name
            # may hold a SHA too (git-filter-repo's refs/replace/<old commit>), which is no target.
            starts |= {m.decode() for m in re.findall(rb"^\^?([0-9a-f]{40})\b", data, re.M)}
        elif (
            path.startswith("refs/")
            or path.startswith("logs/")
            or path in ("HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD")
        ):
            starts |= {m.decode() for m in SHA.findall(data)}
    index = git.get("index", b"")
    if index[:4] == b"DIRC" and len(index) > 12:
        count = int.from_bytes(index[8:12], "big")
        at = 12
        version = int.from_bytes(index[4:8], "big")
        for _ in range(min(count, MAX_INDEX_ENTRIES)):
            if at + 62 > len(index):
                break
            starts.add(index[at + 40 : at + 60].hex())
            name_end = index.find(b"\x00", at + 62)
            if name_end < 0 or version >= 4:
                break
            entry = name_end - at + 1
            at += entry + (-entry % 8)
    starts.discard("0" * 40)
    return starts


def read_history(git: dict[str, bytes], budget: Budget | None = None) -> History:
    """The object store and the commits reachable from every ref-like starting point. Raises
    `Oversized` when the objects would inflate past `budget`."""
    budget = Budget() if budget is None else budget
    if "HEAD" not in git or not any(p.startswith("objects/") for p in git):
        return History(HISTORY_MISSING, reason=".git is missing or holds no object store")
    loose, bad_loose = _loose(git, budget)
    budget.count_objects(len(loose))
    packed, bad_packs = _packed(git, budget)
    objects = {**packed, **loose}
    labels = [(f"object {sha[:12]} ({kind.decode()})", content) for sha, (kind, content) in objects.items()]
    history = History(HISTORY_OK, objects=labels)
    history.names = [
        (label, content)
        for (label, content), (kind, _) in zip(labels, objects.values(), strict=True)
        if kind != b"blob"
    ]
    outside = _alternates(git)
    if outside:
        history.state = HISTORY_CORRUPT
        history.reason = f"the object store borrows objects from outside the repository: {outside[0]}"
        return history
    if bad_loose or bad_packs:
        history.state = HISTORY_CORRUPT
        history.reason = f"damaged objects: {', '.join((bad_loose + bad_packs)[:5])}"
        return history
    if "shallow" in git and git["shallow"].strip():
        history.state = HISTORY_CORRUPT
        history.reason = "a shallow file cuts the history"
        return history
    missing: list[str] = []
    seen: set[str] = set()
    todo = sorted(_ref_targets(git))
    trees: dict[str, dict[str, str]] = {}

    def flatten(sha: str, prefix: str, depth: int = 0) -> dict[str, str]:
        if sha not in objects or objects[sha][0] != b"tree" or depth > 64:
            missing.append(sha)
            return {}
        files: dict[str, str] = {}
        for mode, name, child in _parse_tree(objects[sha][1]):
            if mode.startswith("4"):
                files.update(flatten(child, f"{prefix}{name}/", depth + 1))
            elif mode.startswith("16"):
                continue  # a submodule's commit lives in another repository
            else:
                if child not in objects:
                    missing.append(child)
                files[prefix + name] = child
        return files

    while todo:
        sha = todo.pop()
        if sha in seen:
            continue
        seen.add(sha)
        if sha not in objects:
            missing.append(sha)
            continue
        kind, content = objects[sha]
        if kind == b"commit":
            head, _, message = content.partition(b"\n\n")
            tree, parents, author_time = "", [], ""
            for line in head.split(b"\n"):
                key, _, rest = line.partition(b" ")
                if key == b"tree":
                    tree = rest.decode()
                elif key == b"parent":
                    parents.append(rest.decode())
                elif key == b"author":
                    author_time = rest.rsplit(b" ", 2)[-2].decode() if rest.count(b" ") >= 2 else ""
            if tree not in trees:
                trees[tree] = flatten(tree, "")
            history.commits[sha] = {
                "message": message.decode("utf-8", "replace").strip(),
                "author_time": author_time,
                "tree": trees[tree],
            }
            todo += parents
        elif kind == b"tag":
            m = re.match(rb"object ([0-9a-f]{40})", content)
            if m:
                todo.append(m.group(1).decode())
        elif kind == b"tree":
            flatten(sha, "")
    if missing:
        history.state = HISTORY_CORRUPT
        history.reason = f"missing objects: {', '.join(sorted(set(missing))[:5])}"
    history.blobs = {sha: content for sha, (kind, content) in objects.items() if kind == b"blob"}
    return history


class _TreeIgnores(IgnoreFilterManager):
    """dulwich's git-compliant ignore rules over the in-memory working tree (never the disk)."""

    def __init__(self, tree: dict[str, bytes], exclude: bytes) -> None:
        global_filters = [IgnoreFilter(read_ignore_patterns(io.BytesIO(exclude)))] if exclude else []
        super().__init__("", global_filters, False)
        self._tree = tree
        self._dirs = {"/".join(p.split("/")[:i]) for p in tree for i in range(1, p.count("/") + 1)}

    def _load_path(self, path: str) -> IgnoreFilter | None:
        key = f"{path}/.gitignore" if path else ".gitignore"
        data = self._tree.get(key)
        return IgnoreFilter(read_ignore_patterns(io.BytesIO(data)), False, path=key) if data is not None else None

    def _is_dir(self, path: str) -> bool:
        return path.endswith("/") or path in self._dirs


def tracked_paths(git: dict[str, bytes]) -> set[str] | None:
    """The paths in the index (dulwich's reader over the bytes read), or None when there is no
    readable index."""
    try:
        return {path.decode("utf-8", "surrogateescape") for path in read_index_dict(io.BytesIO(git["index"]))}
    except Exception:  # noqa: BLE001 - a missing or damaged index
        return None


def counted_derived(unpacked: Unpacked) -> tuple[dict[str, bytes], list[list[str]]]:
    """The files named as derived that count, and the skipped entries among them that count:
    those the index tracks (or under a tracked path, for a skipped folder). Untracked bytecode
    and test caches are derived and never count; with no readable index every one counts."""
    tracked = tracked_paths(unpacked.git)
    if tracked is None:
        return dict(unpacked.derived), list(unpacked.derived_skipped)
    folders = {"/".join(p.split("/")[:i]) for p in tracked for i in range(1, p.count("/") + 1)}
    files = {p: d for p, d in unpacked.derived.items() if p in tracked}
    skipped = [s for s in unpacked.derived_skipped if s[0] in tracked or s[0] in folders or s[0] == "."]
    return files, skipped


def local_files(tree: dict[str, bytes], git: dict[str, bytes], budget: Budget | None = None) -> set[str]:
    """Working-tree files that git neither tracks nor would add: untracked (not in the index) and
    ignored (`.gitignore` files at any level, `.git/info/exclude`; a file under an ignored
    folder is ignored). They are the developer's local environment, not the repository: a fresh
    clone does not have them. With no readable index nothing is local.

    Every file outside an ignored folder is charged to `budget`'s files (`Budget.count_files`,
    raising `Oversized`) before any is matched on its own, so the matching stays bounded too."""
    budget = Budget() if budget is None else budget
    tracked = tracked_paths(git)
    if tracked is None:
        budget.count_files(len(tree))
        return set()  # every file counts
    charged = 0
    try:
        ignores = _TreeIgnores(tree, git.get("info/exclude", b""))
        folder_ignored: dict[str, bool] = {}  # each folder asked once, however many files it holds

        def ignored_folder(folder: str) -> bool:
            if folder not in folder_ignored:
                folder_ignored[folder] = bool(ignores.is_ignored(folder))
            return folder_ignored[folder]

        local = set()
        undecided = []
        for path in tree:
            if path in tracked:
                continue
            parts = path.split("/")
            if any(ignored_folder("/".join(parts[:i]) + "/") for i in range(1, len(parts))):
                local.add(path)
            else:
                undecided.append(path)
        charged = len(tree) - len(local)
        budget.count_files(charged)
        return local | {path for path in undecided if ignores.is_ignored(path)}
    except Oversized:
        raise
    except Exception:  # noqa: BLE001 - malformed patterns: every file counts
        budget.count_files(len(tree) - charged)
        return set()
