"""The command that adds the ``embed`` extra to this installation, as it was installed.

A hint saying ``pip install 'headd[embed]'`` is wrong for most installs: from a checkout (the
Quickstart's editable ``.venv``) it would fetch a second headd from the index, under pipx or
``uv tool`` it would install into the wrong environment. The installation's own record
(``direct_url.json``, PEP 610) and its prefix say which case this is.
"""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from typing import Any
from urllib.parse import unquote, urlparse


def embed_install_hint() -> str:
    """One command line that installs the embed extra into the environment running headd."""
    prefix = sys.prefix.replace("\\", "/")
    if "/pipx/venvs/" in prefix:
        return "pipx install --force 'headd[embed]'"
    if "/uv/tools/" in prefix:
        return "uv tool install --force 'headd[embed]'"
    python = shlex.quote(sys.executable)
    checkout = _editable_checkout()
    if checkout is not None:
        return f"{python} -m pip install -e {shlex.quote(checkout + '[embed]')}"
    return f"{python} -m pip install 'headd[embed]'"


def _editable_checkout() -> str | None:
    """The directory headd is installed from in editable mode, else None."""
    # Every record of the name: a checkout's own ``headd.egg-info`` may come first on the path,
    # and only the installed one carries ``direct_url.json``.
    texts = [d.read_text("direct_url.json") for d in metadata.distributions(name="headd")]
    try:
        record: dict[str, Any] = next((json.loads(text) for text in texts if text), {})
    except ValueError:
        return None
    url = str(record.get("url", ""))
    if not (record.get("dir_info") or {}).get("editable") or not url.startswith("file://"):
        return None
    return unquote(urlparse(url).path)
