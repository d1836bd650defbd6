"""promrate.parse: what each entry carries, errors that do not stop the page, formats
picked from a Content-Type, bytes and str alike."""

import datetime
import math

import pytest

import promrate


def samples(entries):
    return [e for e in entries if isinstance(e, promrate.Sample)]


def test_a_bad_line_is_an_entry_and_the_rest_of_the_page_keeps_coming():
    page = 'a_total 1\nb_total{x="1" 2\nc_total NaNx\nd_total 4\n'
    entries = list(promrate.parse(page))
    errors = [e for e in entries if isinstance(e, promrate.ParseError)]
    assert [(e.line, e.column) for e in errors] == [(2, 15), (3, 9)]
    assert str(errors[0]) == "line 2, column 15: expected ',' or '}' after a label"
    assert errors[1].message == "invalid sample value 'NaNx'"
    assert isinstance(errors[0], ValueError)
    assert [s.name for s in samples(entries)] == ["a_total", "d_total"]
    assert [type(e).__name__ for e in entries] == ["Sample", "ParseError", "ParseError", "Sample"]


def test_errors_raise_stops_at_the_first_bad_line():
    with pytest.raises(promrate.ParseError) as raised:
        promrate.parse('a 1\nb{ 2\nc 3\n', errors="raise")
    assert (raised.value.line, raised.value.column) == (2, 4)
    with pytest.raises(ValueError, match="errors is 'yield' or 'raise'"):
        promrate.parse("a 1\n", errors="ignore")


def test_values_and_timestamps_as_written():
    page = "a NaN\nb +Inf\nc -Inf 1700000000123\nd 1e-3\n"
    a, b, c, d = samples(promrate.parse(page))
    assert math.isnan(a.value) and b.value == math.inf and c.value == -math.inf and d.value == 0.001
    assert (a.timestamp_ms, a.timestamp) == (None, None)
    assert c.timestamp_ms == 1_700_000_000_123
    assert c.timestamp == datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.timezone.utc)


def test_labels_are_an_unescaped_dict_in_page_order():
    [s] = samples(promrate.parse('x{path="/a\\"b\\\\c\\nd",code="200",empty=""} 1\n'))
    assert s.labels == {"path": '/a"b\\c\nd', "code": "200", "empty": ""}
    assert list(s.labels) == ["path", "code", "empty"]
    assert str(s) == 'x{path="/a\\"b\\\\c\\nd",code="200",empty=""} 1.0'


def test_repeated_label_sets_are_separate_dicts():
    # Samples in a row share strings and start from a copy of the previous dict: changing
    # one sample's labels changes no other.
    page = "".join(f'h_bucket{{engine="0",le="{le}"}} {n}\n' for n, le in enumerate(["0.1", "1", "+Inf"]))
    first, second, third = samples(promrate.parse(page))
    first.labels["engine"] = "changed"
    assert second.labels == {"engine": "0", "le": "1"} and third.labels == {"engine": "0", "le": "+Inf"}
    assert [s.value for s in (first, second, third)] == [0.0, 1.0, 2.0]


def test_a_label_set_seen_before_is_a_copy_of_its_own():
    # Label sets repeat across families and pages' histograms; each sample still owns its dict.
    page = 'a{engine="0",le="1"} 1\nb{engine="0"} 2\nc{engine="0",le="1"} 3\nd{x="\\n"} 4\ne{x="\\n"} 5\n'
    a, b, c, d, e = samples(promrate.parse(page))
    assert (a.labels, b.labels, c.labels) == ({"engine": "0", "le": "1"}, {"engine": "0"}, {"engine": "0", "le": "1"})
    assert (d.labels, e.labels) == ({"x": "\n"}, {"x": "\n"})
    c.labels["le"] = "2"
    e.labels.clear()
    assert a.labels == {"engine": "0", "le": "1"} and d.labels == {"x": "\n"}
    assert a.labels is not c.labels and d.labels is not e.labels


def test_label_values_with_and_without_escapes_repeat_correctly():
    page = 'a{v="x\\ny"} 1\na{v="x\\ny"} 2\nb{v="plain"} 3\nb{w="x\\ny"} 4\n'
    got = [(s.name, s.labels) for s in samples(promrate.parse(page))]
    assert got == [("a", {"v": "x\ny"}), ("a", {"v": "x\ny"}), ("b", {"v": "plain"}), ("b", {"w": "x\ny"})]


def test_quoted_names_with_escapes_are_unescaped_as_labels_are():
    # Text 1.0.0 and Prometheus 3: a quoted name holds escapes. Python sees the name, so
    # that a selector spelled with the same escapes matches it, and it writes back.
    page = '# TYPE "a\\"b" gauge\n{"a\\"b","x\\\\y"="v"} 1\n{"a\\"b","x\\\\y"="w"} 2\n'
    meta, first, second = list(promrate.parse(page))
    assert meta.name == 'a"b'
    assert (first.name, first.labels) == ('a"b', {"x\\y": "v"})
    assert second.name == 'a"b'
    assert promrate.Selector('{"a\\"b"}').matches(first)
    assert str(first) == '{"a\\"b","x\\\\y"="v"} 1.0'


def test_a_composite_value_prints_as_its_openmetrics_2_line():
    page = "# TYPE foo histogram\nfoo{m=\"a\"} {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,+Inf:17]} st@1520430000.123\n# EOF\n"
    [_, s, _] = promrate.parse(page, format="openmetrics-2.0.0")
    assert str(s) == 'foo{m="a"} {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,+Inf:17]} st@1520430000.123'
    [_, again, _] = promrate.parse(f"# TYPE foo histogram\n{s}\n# EOF\n", format="openmetrics-2.0.0")
    assert again.composite.buckets == s.composite.buckets and again.start_timestamp_ms == s.start_timestamp_ms


def test_metadata_entries():
    page = "# HELP up Whether\\nit is up.\n# TYPE up gauge\n# a comment\nup 1\n"
    help_, type_, comment, _ = promrate.parse(page)
    assert (help_.kind, help_.name, help_.value) == ("help", "up", "Whether\nit is up.")
    assert (type_.kind, type_.name, type_.value) == ("type", "up", "gauge")
    assert (comment.kind, comment.name, comment.value) == ("comment", None, "a comment")


def test_openmetrics_by_name_and_by_content_type():
    page = b'# TYPE a_seconds counter\n# UNIT a_seconds seconds\na_seconds_total 1 1.5 # {trace="x"} 0.5 2\n# EOF\n'
    for fmt in ("openmetrics", "application/openmetrics-text; version=1.0.0; charset=utf-8"):
        entries = list(promrate.parse(page, format=fmt))
        assert [getattr(e, "kind", type(e).__name__) for e in entries] == ["type", "unit", "Sample", "eof"]
        sample = entries[2]
        assert sample.timestamp_ms == 1500
        assert (sample.exemplar.labels, sample.exemplar.value, sample.exemplar.timestamp_ms) == ({"trace": "x"}, 0.5, 2000)
    # A Content-Type that is not OpenMetrics reads the text format: `# EOF` is a comment there.
    assert [getattr(e, "kind", type(e).__name__) for e in promrate.parse(page, format="text/plain; version=0.0.4")][-1] == "comment"


def test_strict_openmetrics_and_line_by_line():
    page = "# TYPE a counter\na_total 1\n# TYPE a counter\n# EOF\n"
    strict = [e for e in promrate.parse(page, format="openmetrics") if isinstance(e, promrate.ParseError)]
    assert [e.message for e in strict] == ["metric family 'a': metadata must come before the family's samples"]
    assert not any(isinstance(e, promrate.ParseError) for e in promrate.parse(page, format="openmetrics", strict=False))


def test_a_family_clash_says_what_to_pass_in_python():
    page = "# TYPE a counter\n# TYPE a gauge\na 1\n# EOF\n"
    clash = [e for e in promrate.parse(page, format="openmetrics") if isinstance(e, promrate.ParseError)]
    assert clash and all("::" not in e.message for e in clash), [e.message for e in clash]


def test_pages_as_bytes_must_be_utf8_and_others_are_refused():
    assert samples(promrate.parse("a 1\n".encode())) [0].value == 1.0
    with pytest.raises(ValueError, match="not UTF-8"):
        promrate.parse(b"a\xff 1\n")
    # Where, as a parse error says it: line and column (in characters) of the first bad byte.
    with pytest.raises(promrate.ParseError) as bad:
        promrate.parse('a 1\nb{x="é\xff"} 2\n'.encode("latin-1").replace(b"\xe9", "é".encode()))
    assert (bad.value.line, bad.value.column, str(bad.value)) == (2, 7, "line 2, column 7: not UTF-8")
    with pytest.raises(TypeError, match="str or bytes"):
        promrate.parse(42)


def test_entries_is_an_iterator_with_counts():
    entries = promrate.parse("# TYPE a counter\na_total 1\nb{ 2\n")
    assert repr(entries) == "<promrate.Entries: 1 sample, 1 metadata, 1 error; 3 entries left>"
    assert next(entries).kind == "type"
    assert repr(entries).endswith("; 2 entries left>")
    rest = list(entries)
    assert [type(e).__name__ for e in rest] == ["Sample", "ParseError"]
    assert list(entries) == []


def test_a_vllm_page(vllm_page):
    entries = list(promrate.parse(vllm_page))
    got = samples(entries)
    assert len(got) == 466
    tokens = [s for s in got if s.name == "vllm:generation_tokens_total"]
    assert len(tokens) == 1 and tokens[0].labels["engine"] == "0"
