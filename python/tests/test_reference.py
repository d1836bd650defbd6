"""promrate.parse reads every real page as the reference parser, prometheus_client (the
version pinned in tests/py/requirements.txt), reads it: the same samples in the same order,
names, labels, values bit for bit (NaN and ±Inf included) and timestamps; a page it
rejects, promrate rejects too (tests/it/differential.rs checks the same from Rust against
golden files; this test runs the live parser)."""

import math
import struct
import sys
from importlib.metadata import version

import pytest

import promrate
from conftest import REPO, format_of, pages

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families as parse_text  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "py"))
from dump_samples import timestamp_ms  # noqa: E402  (the golden files' own conversion)


def pinned():
    for line in (REPO / "tests" / "py" / "requirements.txt").read_text().splitlines():
        if line.startswith("prometheus_client=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError("prometheus_client is pinned in tests/py/requirements.txt")


def bits(value):
    """A value's bits, every NaN as one (prometheus_client's NaN is float('nan'))."""
    return struct.pack("<d", math.nan if math.isnan(value) else value)


def reference(text, fmt):
    parse = parse_openmetrics if fmt == "openmetrics" else parse_text
    try:
        return [
            (s.name, dict(sorted(s.labels.items())), bits(float(s.value)), timestamp_ms(s.timestamp, fmt == "openmetrics"))
            for family in parse(text)
            for s in family.samples
        ]
    except Exception as e:  # the reference rejects the page
        return e


def ours(text, fmt):
    """promrate's samples, with the one rename prometheus_client's text parser makes: the
    samples of a counter family whose name lacks `_total` get it (as the Rust test does)."""
    renamed = set()
    rows = []
    for entry in promrate.parse(text, format=fmt):
        if isinstance(entry, promrate.ParseError):
            return entry
        if isinstance(entry, promrate.Metadata):
            if fmt == "text" and entry.kind == "type" and entry.value == "counter" and not entry.name.endswith("_total"):
                renamed.add(entry.name)
            continue
        name = entry.name + "_total" if entry.name in renamed else entry.name
        rows.append((name, dict(sorted(entry.labels.items())), bits(entry.value), entry.timestamp_ms))
    return rows


def test_the_reference_is_the_pinned_version():
    assert version("prometheus_client") == pinned()


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.name)
def test_same_samples_as_prometheus_client(path):
    text = path.read_text(encoding="utf-8")
    fmt = format_of(path.name)
    want, got = reference(text, fmt), ours(text, fmt)
    if isinstance(want, Exception):
        assert isinstance(got, promrate.ParseError), f"prometheus_client rejects it ({want}); promrate read {len(got)} samples"
        return
    assert not isinstance(got, promrate.ParseError), f"promrate rejects a page prometheus_client reads: {got}"
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


def test_every_page_and_sample_is_compared():
    read = rejected = samples = 0
    for path in pages():
        text = path.read_text(encoding="utf-8")
        want = reference(text, format_of(path.name))
        if isinstance(want, Exception):
            rejected += 1
        else:
            read += 1
            samples += len(want)
    assert read + rejected >= 18 and read >= 16, (read, rejected)
    assert samples >= 13_000, samples
