"""docs/python.md's session runs as written: its python code blocks, in order, in one namespace,
from the source tree's top folder, with the picture redirected to a temporary folder
(KVSIM_DOC_IMAGES, which the session reads)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs/python.md"


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_the_documented_session_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 3
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KVSIM_DOC_IMAGES", str(tmp_path))
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, "%s (python block %d)" % (DOC, i + 1), "exec"), namespace)
    picture = tmp_path / "python-ttft.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The printed table is the one the page shows.
    printed = capsys.readouterr().out
    shown = re.search(r"```python\nprint\(f\"\{'tier'.*?```\n\n```text\n(.*?)```", DOC.read_text(), re.S)
    assert shown, "the page shows the session's table after the block that prints it"
    assert shown.group(1) in printed
