"""Every Python snippet of python/README.md runs as written, against the installed wheel
(each in a fresh interpreter: the snippets start and stop engines of their own)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import List

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def snippets() -> List[str]:
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_the_readme_has_python_snippets() -> None:
    assert len(snippets()) >= 4


@pytest.mark.parametrize("index", range(len(snippets())))
def test_readme_snippet_runs(index: int) -> None:
    code = snippets()[index]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DCGM_LIB_PATH", "DCGM_SIM"))}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, "snippet %d:\n%s\n%s" % (index, code, r.stderr)
