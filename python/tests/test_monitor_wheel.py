"""The monitor as a wheel: the `vllm-monitor` wheel (examples/vllm_monitor/pyproject.toml,
maturin's `bin` bindings) installs the `vllm_monitor` binary into a fresh virtual
environment's bin/, which runs: `--version`, and a short run on the built-in simulator.

The wheel is the one `VLLM_MONITOR_WHEEL` names (CI builds it once), else it is built here
with maturin (a release build: minutes)."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import venv

import pytest

from conftest import REPO

CRATE = REPO / "examples" / "vllm_monitor"


def crate_version():
    return re.search(r'^version = "([^"]+)"', (CRATE / "Cargo.toml").read_text(), re.M).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    given = os.environ.get("VLLM_MONITOR_WHEEL")
    if given:
        return pathlib.Path(given)
    # The maturin beside this Python (a venv's, not on PATH unless activated), else PATH's.
    beside = pathlib.Path(sys.executable).with_name("maturin")
    maturin = str(beside) if beside.is_file() else shutil.which("maturin")
    if maturin is None:
        pytest.skip("needs maturin (pip install maturin) or VLLM_MONITOR_WHEEL=path/to/the.whl")
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run([maturin, "build", "--release", "-m", str(CRATE / "Cargo.toml"), "-o", str(out)], check=True)
    [built] = out.glob("vllm_monitor-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh virtual environment with only the wheel installed; its bin/vllm_monitor."""
    env = tmp_path_factory.mktemp("venv")
    venv.create(env, with_pip=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check"]
    subprocess.run(pip + [str(wheel)], check=True)
    return env / "bin" / "vllm_monitor"


def test_the_wheel_is_named_for_the_crate_and_any_python(wheel):
    # One wheel for every Python 3: the binary does not link Python.
    assert re.fullmatch(rf"vllm_monitor-{re.escape(crate_version())}-py3-none-[\w.]+\.whl", wheel.name), wheel.name


def test_version_from_the_venvs_bin(installed):
    out = subprocess.run([str(installed), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"vllm_monitor {crate_version()}"


def test_a_short_simulated_run_from_the_venvs_bin(installed):
    out = subprocess.run(
        [str(installed), "--simulate", "--duration", "4s", "--interval", "1s", "--plain"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "--simulate given: monitoring the built-in simulator"
    assert any(line.split()[:1] == ["elapsed"] for line in lines), out.stdout
    rows = [line for line in lines if re.match(r"\s+\d+\.\ds\s", line)]
    assert rows, out.stdout
    assert lines[-1].startswith("summary: 4 s"), out.stdout


def test_bad_arguments_exit_2_from_the_venvs_bin(installed):
    out = subprocess.run([str(installed), "--interval", "10ms"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == "", out
