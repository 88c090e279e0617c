"""The git merge driver for leaf files: one memory edited by hand on two machines.

``ihmt sync`` declares it in the ``.gitattributes`` it writes (``layer0/*/*.txt
merge=ihmt-leaf``) and names its command in the clone's git config (git config is not
replicated, so ``--init`` and every sync set it)::

    "<python>" -m ihmt_mcp.sync._leaf_merge %O %A %B %P

git runs it inside ``git merge``, for a leaf both sides changed, while the sync holds the
store lock: it never opens the store (it would wait for that lock, or write under it).
It only decides which version the leaf file keeps, writes it into ``%A``, and stashes the
other version under ``.git/ihmt/leaf-merges/`` for the sync's locked step that follows
the merge (``Sync._settle_leaf_merges``): that step saves it as a memory of its own,
flagged OUTDATED by the leaf, through the store's notes. No text is lost and no conflict
marker is ever written.

Which version stays (the same choice whichever machine merges, from what both hold):

- the same text with two headers (one memory saved on two machines, or a header change):
  the file whose git blob id sorts first, nothing stashed;
- one side changed the text and the other only the header: the changed text;
- two different texts: the later edit, as far as git knows it: the commit time of the
  commit that brought each text (the sync that committed the edit, not the keystroke; a
  header rewritten since does not count); equal times fall back to the blob ids. The
  other version is stashed.

Exit status 0 is a clean merge; anything unexpected exits 1 with ``%A`` untouched, which
git reports as a conflict and the sync aborts with one line (never a marker in a leaf).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ihmt_store import ReplicaFile

__all__ = ["LEAF_MERGES", "main", "merge_leaf"]

LEAF_MERGES = Path("ihmt") / "leaf-merges"
"""Where the driver stashes the version a leaf did not keep, under the git folder."""
_text = ReplicaFile.text
"""A leaf file's text, without its header."""


def blob_id(data: bytes) -> str:
    """The git (SHA-1) blob id of ``data``: the order both machines break ties by."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _git(*args: str, input_data: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", *args],
        input=input_data,
        stdin=None if input_data is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.stdout if done.returncode == 0 else b""


def _blobs(names: list[str]) -> list[bytes | None]:
    """The content of each ``<commit>:<path>`` (None where there is none)."""
    out = _git("cat-file", "--batch", input_data="".join(f"{n}\n" for n in names).encode())
    found: list[bytes | None] = []
    at = 0
    for _ in names:
        end = out.find(b"\n", at)
        if end < 0:
            break
        head = out[at:end].split()
        if len(head) == 3 and head[1] == b"blob":
            size = int(head[2])
            found.append(out[end + 1 : end + 1 + size])
            at = end + 1 + size + 1
        else:
            found.append(None)
            at = end + 1
    return found + [None] * (len(names) - len(found))


def _text_committed_at(rev: str, path: str, text: bytes) -> int:
    """When ``text`` first came to ``path`` in ``rev``'s history: the commit time of the
    oldest of the latest commits holding that text (a header rewritten since, e.g. the
    checksum of a hand edit adopted, does not make the text newer); 0 when unknown."""
    if not rev:
        return 0
    listed = _git("log", "-n", "100", "--format=%H %ct", rev, "--", path).decode()
    entries = [line.split() for line in listed.splitlines() if len(line.split()) == 2]
    when = 0
    for (_commit, committed), data in zip(
        entries, _blobs([f"{c}:{path}" for c, _ in entries]), strict=True
    ):
        if data is None or _text(data) != text:
            break
        when = int(committed)
    return when


def _merged_commit() -> str:
    """The commit ``git merge`` is merging in (it names it in ``GITHEAD_<id>``)."""
    heads = [k[8:] for k in os.environ if re.fullmatch(r"GITHEAD_[0-9a-f]{40,64}", k)]
    return heads[0] if len(heads) == 1 else ""


def merge_leaf(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    path: str,
    *,
    ours_at: int = 0,
    theirs_at: int = 0,
) -> tuple[bytes, bytes | None]:
    """The bytes the leaf keeps and the version to save as another memory (or None).

    Args:
        base: the common ancestor's file (empty when both sides added it).
        ours_at, theirs_at: when each side's version was committed (0: unknown).
    """
    if _text(ours) == _text(theirs):
        return (ours if blob_id(ours) <= blob_id(theirs) else theirs), None
    if base:
        if _text(ours) == _text(base):
            return theirs, None
        if _text(theirs) == _text(base):
            return ours, None
    if ours_at != theirs_at:
        later_is_ours = ours_at > theirs_at
    else:
        later_is_ours = blob_id(ours) <= blob_id(theirs)
    return (ours, theirs) if later_is_ours else (theirs, ours)


def stash(git_dir: Path, path: str, kept: bytes, other: bytes, head: str) -> Path:
    """Write the version a leaf did not keep where the sync's next locked step finds it.

    The name follows from the leaf and the text, so a merge redone after a kill writes
    the same file again."""
    folder = git_dir / LEAF_MERGES
    folder.mkdir(parents=True, exist_ok=True)
    leaf_id = ReplicaFile.of(path).leaf_id or Path(path).stem
    record = {
        "leaf": leaf_id,
        "path": path,
        "kept": blob_id(kept),
        "other": base64.b64encode(other).decode("ascii"),
        "head": head,
    }
    target = folder / f"{leaf_id}-{blob_id(other)[:16]}.json"
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(record, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, target)
    return target


def _git_dir() -> Path:
    found = _git("rev-parse", "--absolute-git-dir").decode().strip()
    if not found:
        raise OSError("not in a git repository")
    return Path(found)


def main(argv: list[str] | None = None) -> int:
    """``%O %A %B %P``: merge into ``%A``; 0 when merged, 1 when git must stop."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4:
        sys.stderr.write("usage: python -m ihmt_mcp.sync._leaf_merge %O %A %B %P\n")
        return 2
    base_file, ours_file, theirs_file, path = args
    try:
        base = Path(base_file).read_bytes()
        ours = Path(ours_file).read_bytes()
        theirs = Path(theirs_file).read_bytes()
        head = _git("rev-parse", "-q", "--verify", "HEAD").decode().strip()
        kept, other = merge_leaf(
            base,
            ours,
            theirs,
            path,
            ours_at=_text_committed_at(head, path, _text(ours)),
            theirs_at=_text_committed_at(_merged_commit(), path, _text(theirs)),
        )
        if other is not None:
            stash(_git_dir(), path, kept, other, head)
        if kept is not ours:
            Path(ours_file).write_bytes(kept)
    except Exception as exc:  # noqa: BLE001 (any failure: git stops, %A stays ours)
        sys.stderr.write(f"ihmt leaf merge of {path} failed: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
