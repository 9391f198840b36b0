"""The advance's tree difference equals libgit2's full diff, on narrow and wide trees alike."""

from __future__ import annotations

from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headd.head.version import changed_blobs


def _tree(repo: pygit2.Repository, files: dict[str, bytes]) -> pygit2.Tree:
    nested: dict = {}
    for path, data in files.items():
        node = nested
        *dirs, name = path.split("/")
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = repo.create_blob(data)

    def build(node: dict) -> pygit2.Oid:
        tb = repo.TreeBuilder()
        for name, child in node.items():
            if isinstance(child, dict):
                tb.insert(name, build(child), pygit2.GIT_FILEMODE_TREE)
            else:
                tb.insert(name, child, pygit2.GIT_FILEMODE_BLOB)
        return tb.write()

    tree = repo[build(nested)]
    assert isinstance(tree, pygit2.Tree)
    return tree


def _reference(old: pygit2.Tree, new: pygit2.Tree) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for delta in old.diff_to_tree(new).deltas:
        if delta.old_file.path:
            out.setdefault(delta.old_file.path, None)
        if delta.status != pygit2.GIT_DELTA_DELETED:
            out[delta.new_file.path] = str(delta.new_file.id)
    return out


_names = st.sampled_from(["a", "b", "c", "d"])
_paths = st.lists(_names, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".html")
_files = st.dictionaries(_paths, st.binary(max_size=3), max_size=12)


def _consistent(files: dict[str, bytes]) -> dict[str, bytes]:
    """Drop paths that would need one name to be both a file and a folder."""
    out: dict[str, bytes] = {}
    for path in sorted(files, key=len):
        parts = path.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if any(p in out for p in prefixes) or any(k.startswith(path + "/") for k in out):
            continue
        out[path] = files[path]
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=_files, after=_files, wide=st.booleans())
def testchanged_blobs_equal_a_full_diff(tmp_path: Path, before, after, wide) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    before, after = _consistent(before), _consistent(after)
    if wide:  # a folder wider than the native-diff threshold, with one file changed
        for i in range(300):
            before[f"w/n{i:03}.html"] = b"x"
            after[f"w/n{i:03}.html"] = b"y" if i == 7 else b"x"
    old, new = _tree(repo, before), _tree(repo, after)
    got = {
        path: None if oid is None else str(oid)
        for path, oid in changed_blobs(repo, old, new).items()
    }
    assert got == _reference(old, new)
