"""python/README.md's examples run (the package's page on PyPI). Examples with `>>>` run
as doctests, in one namespace as a reader's session; the live loop
runs as a script against a local test server that is down for the fifth scrape and whose
counter restarts after it, with its endless loop cut to nine scrapes."""

import doctest
import http.server
import re
import subprocess
import sys
import threading

import pytest

from conftest import REPO


def package_readme():
    return (REPO / "python" / "README.md").read_text()


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_doctests(name, blocks):
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {}
    examples = 0
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"{name} block {i + 1}", name, 0)
        test.globs = globs  # one namespace, as a reader's session
        examples += len(test.examples)
        runner.run(test, clear_globs=False)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {name}'s examples failed (printed above)"
    return examples


def test_the_packages_readme_examples_run():
    blocks = [b for b in python_blocks(package_readme()) if ">>>" in b]
    assert len(blocks) == 4
    assert run_doctests("python/README.md", blocks) >= 19


class RestartingServer(http.server.BaseHTTPRequestHandler):
    """A vLLM-like page whose counter grows 100 tokens per scrape; the fifth scrape finds
    the server restarting (503), and from the sixth its counter begins again from 0:
    whatever the time between scrapes."""

    scrapes = 0

    def do_GET(self):
        type(self).scrapes += 1
        n = type(self).scrapes
        if n == 5:
            self.send_error(503, "restarting")
            return
        tokens = 100 * n if n < 5 else 100 * (n - 5)
        body = f'# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine="0"}} {tokens}\n'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), RestartingServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/metrics"
    httpd.shutdown()
    httpd.server_close()


def test_the_live_loop_runs_through_a_restart(server):
    [script] = [b for b in python_blocks(package_readme()) if ">>>" not in b]
    for old, new in [
        ('"http://localhost:8000/metrics"', repr(server)),
        ("while True:", "for _ in range(9):"),
        ("time.sleep(1)", "time.sleep(0.2)"),
    ]:
        assert script.count(old) == 1, old
        script = script.replace(old, new)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("no value yet: 1 scrape(s) from"), lines
    assert lines[4] == "scrape failed: HTTP Error 503: restarting", lines
    assert lines[5] == "restart: vllm:generation_tokens_total {'engine': '0'}", lines
    rates = [float(line.split()[0]) for line in lines if line.endswith(" tok/s")]
    assert len(rates) == 7 and all(rate > 0 for rate in rates), lines
