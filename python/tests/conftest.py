"""Shared paths: the repository's test data (tests/data), read by the Python tests as the
Rust tests read it."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"


def pages():
    """Every real page (corpus/ and vllm/), sorted by file name, as tests/it/data.rs has them."""
    found = []
    for sub in ("corpus", "vllm"):
        for path in (DATA / sub).iterdir():
            if path.is_file() and path.suffix in (".txt", ".prom"):
                found.append(path)
    found.sort(key=lambda p: p.name)
    assert len(found) >= 18, f"only {len(found)} pages in tests/data"
    return found


def format_of(name):
    """The page's format by its file name, as tests/it/text_corpus.rs says."""
    return "openmetrics" if name.endswith(".om.txt") or "openmetrics" in name else "text"


@pytest.fixture
def vllm_page():
    return (DATA / "vllm" / "vllm-0.33-v1-single-t0.prom").read_text(encoding="utf-8")


os.environ.setdefault("PROMRATE_REPO", str(REPO))
