"""Which printed PDF the site links: only one printed from the site as it is (``book.json``
beside it records the site key it was printed from and its SHA-256)."""

import json
from pathlib import Path

from claimbook import paths
from claimbook.atomic import write_text_atomically
from claimbook.pipeline.keys import file_digest

PDF = paths.BUILD_DIR / "pdf" / "book.pdf"


def record(pdf: Path, site_key: str) -> None:
    """Record that ``pdf`` was printed from the site whose key is ``site_key``."""
    text = json.dumps({"site_key": site_key, "sha256": file_digest(pdf)}, indent=1)
    write_text_atomically(pdf.with_suffix(".json"), text + "\n")


def current(pdf: Path, site_key: str) -> str:
    """``pdf``'s SHA-256 if printed from the site of key ``site_key`` and unchanged, else ""."""
    try:
        recorded = json.loads(pdf.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if isinstance(recorded, dict) and recorded.get("site_key") == site_key and pdf.is_file():
        if (digest := file_digest(pdf)) == recorded.get("sha256"):
            return digest
    return ""
