"""promrate.Selector: PromQL matchers over parsed samples, a histogram's family, errors
with a column."""

import pytest

import promrate


def one(line):
    [sample] = [e for e in promrate.parse(line) if isinstance(e, promrate.Sample)]
    return sample


def test_matchers():
    s = promrate.Selector('vllm:generation_tokens_total{engine=~"0|1", model_name!="b"}')
    assert s.matches(one('vllm:generation_tokens_total{engine="1",model_name="a"} 1'))
    assert not s.matches(one('vllm:generation_tokens_total{engine="2",model_name="a"} 1'))
    assert not s.matches(one('vllm:generation_tokens_total{engine="0",model_name="b"} 1'))
    assert not s.matches(one('vllm:prompt_tokens_total{engine="0"} 1'))
    # Escaped values compare unescaped, and a missing label matches like "".
    assert promrate.Selector('{path="/a\\"b"}').matches(one('req{path="/a\\"b"} 1'))
    assert promrate.Selector('up{job=""}').matches(one("up 1"))


def test_a_histograms_name_picks_its_parts():
    ttft = promrate.Selector('ttft_seconds{engine="0"}')
    page = 'ttft_seconds_bucket{engine="0",le="0.1"} 3\nttft_seconds_count{engine="0"} 3\nttft_seconds_count{engine="1"} 5\nttft_seconds_total_bucket 1\n'
    picked = [ttft.matches_family(s) for s in promrate.parse(page)]
    assert picked == [True, True, False, False]


def test_errors_have_a_column():
    with pytest.raises(promrate.SelectorError) as raised:
        promrate.Selector("rate(x[5m])")
    assert raised.value.column == 5
    assert "PromQL query, not a selector" in raised.value.message
    assert "tracker.evaluate(Query(selector, Estimator.RATE, window=..., by=[...]))" in raised.value.message
    with pytest.raises(promrate.SelectorError) as raised:
        promrate.Selector("x_total[5m]")
    assert "Query(selector, Estimator.RATE, window=...)" in raised.value.message and "::" not in raised.value.message
    with pytest.raises(promrate.SelectorError) as raised:
        promrate.Selector('up{job=~"("}')
    assert raised.value.column == 9 and isinstance(raised.value, ValueError)


def test_str_and_repr():
    s = promrate.Selector('up{job="a"}')
    assert (repr(s), str(s), s.metric_name) == ("Selector('up{job=\"a\"}')", 'up{job="a"}', "up")
