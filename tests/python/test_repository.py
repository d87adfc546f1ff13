"""The repository stands alone: nothing refers to files outside it, every citation of docs/conventions.md names a
section that exists, the test data of tests/data are the files their README describes, and the docs index lists
every page. Reads the source tree only (EMPRISM_SOURCE_DIR, or two levels above this file); runs no program.

Files examined: those git knows (tracked, or untracked and not ignored) when the tree is a git checkout, else every
file outside build directories, hidden directories and __pycache__; binary files (a NUL byte) are left out.
"""
import hashlib
import os
import re
import shutil
import subprocess

import pytest

# Built from parts, so that this file does not match itself.
OUTSIDE_REFERENCES = ("../" + "shared", "DESIGN" + ".md")
CITATION = re.compile(r"conventions(?:\.md)?\)?,?\s+(?:sections?|ss?\.)\s+((?:\d+(?:-\d+)?(?:,\s*|\s+and\s+)?)+)")
SECTION = re.compile(r"^## (\d+)\. \S", re.M)


def repository_files(root):
    """Paths (relative to root) of the repository's text files."""
    names = None
    if shutil.which("git") and os.path.exists(os.path.join(root, ".git")):
        proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              capture_output=True)
        if proc.returncode == 0:
            names = [n for n in proc.stdout.decode().split("\0") if n]
    if names is None:
        names = []
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__"
                       and not os.path.exists(os.path.join(top, d, "CMakeCache.txt"))]
            names += [os.path.relpath(os.path.join(top, f), root) for f in files]
    texts = {}
    for name in sorted(names):
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue  # deleted in the work tree
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" not in data[:8192]:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts


@pytest.fixture(scope="module")
def texts(source_dir):
    t = repository_files(source_dir)
    assert "docs/conventions.md" in t and "README.md" in t, f"not the repository root: {source_dir}"
    return t


def cited_sections(text):
    """(section number, the citation's text) for every citation of the conventions in `text`."""
    out = []
    for m in CITATION.finditer(text):
        for part in re.findall(r"\d+(?:-\d+)?", m.group(1)):
            lo, _, hi = part.partition("-")
            out += [(n, m.group(0)) for n in range(int(lo), int(hi or lo) + 1)]
    return out


def test_nothing_refers_outside_the_repository(texts):
    hits = [f"{name}:{i + 1}: {line.strip()}" for name, text in texts.items()
            for i, line in enumerate(text.splitlines()) if any(r in line for r in OUTSIDE_REFERENCES)]
    assert not hits, "references to files outside the repository:\n" + "\n".join(hits)


def test_citations_name_existing_sections(texts):
    sections = {int(n) for n in SECTION.findall(texts["docs/conventions.md"])}
    assert sections == set(range(1, len(sections) + 1)), f"sections not numbered 1..n: {sorted(sections)}"
    citations = [(name, n, c) for name, text in texts.items() for n, c in cited_sections(text)]
    assert len(citations) > 40, "the source comments cite docs/conventions.md; the pattern found too few"
    bad = [f"{name}: '{c}' (section {n})" for name, n, c in citations if n not in sections]
    assert not bad, f"citations of missing sections (there are 1..{max(sections)}):\n" + "\n".join(bad)


def test_citation_pattern_reads_every_form():
    text = ("(docs/conventions.md section 4) conventions.md sections 3 and 9; conventions.md s. 2, 7 "
            "(conventions s. 12, 13) docs/conventions.md ss. 1-3")
    assert [n for n, _ in cited_sections(text)] == [4, 3, 9, 2, 7, 12, 13, 1, 2, 3]


def test_data_files_match_their_readme(source_dir, texts):
    readme = texts["tests/data/README.md"]
    listed = dict((name, digest) for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.M))
    assert set(listed) == {"chroma_t_nersc.cfg", "pyquda_weak_field.lime"}, listed
    for name, digest in listed.items():
        path = source_dir / "tests" / "data" / name
        assert path.is_file(), f"missing {path}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{path} differs from tests/data/README.md"
    for licence in ("LICENSE.chroma", "LICENSE.pyquda"):
        assert licence in readme and (source_dir / "tests" / "data" / licence).is_file(), licence


def test_docs_index_lists_every_page(source_dir, texts):
    index = texts["docs/README.md"]
    pages = sorted(p.name for p in (source_dir / "docs").glob("*.md") if p.name != "README.md")
    assert pages, "no pages in docs/"
    missing = [p for p in pages if f"({p})" not in index]
    assert not missing, f"docs/README.md does not link {missing}"
