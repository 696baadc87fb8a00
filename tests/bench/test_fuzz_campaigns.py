"""The fuzzing campaigns' record (tests/fixtures/fuzz/campaigns.json) and what README.md and
docs/fuzzing.md say about the fuzzer: the README's figures are the last campaign's, the docs name
every mutator, leg and finding class the tool has."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from fuzz import legs, mutators  # noqa: E402

CAMPAIGNS = json.loads((ROOT / "tests" / "fixtures" / "fuzz" / "campaigns.json").read_text())["campaigns"]
FIELDS = {"date", "seed", "cases", "complete", "seconds", "cases_per_s", "workers", "targets", "legs",
          "both_accept", "tflm_crash", "tflm_hang", "tflm_undefined", "crashes", "hangs", "raw_exceptions",
          "disagreements", "project_faults", "tflm_faults"}


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Reliability: differential fuzzing")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start:end if end > 0 else None].split())  # lines wrapped anywhere


def test_every_campaign_has_the_fields_and_adds_up():
    for c in CAMPAIGNS:
        assert FIELDS <= set(c), sorted(FIELDS - set(c))
        assert c["disagreements"] == c["project_faults"] + c["tflm_faults"]
        if "findings" in c:  # (the first campaign's are in findings.json, not listed here)
            assert c["disagreements"] == len(c["findings"]), "each disagreement is listed with what became of it"
            assert all(f["verdict"] in ("fixed", "tflm") and f["file"] for f in c["findings"])
        assert abs(c["cases_per_s"] - c["cases"] / c["seconds"]) <= 0.1 * c["cases_per_s"]


def test_the_readme_gives_the_last_campaign_s_figures():
    last, section = CAMPAIGNS[-1], _readme_section()
    numbers = {k: last[k] for k in ("cases", "both_accept", "tflm_crash", "tflm_hang", "tflm_undefined")}
    for key, value in numbers.items():
        assert f"{value:,}" in section, f"README's fuzzing section lacks {key} = {value:,}"
    assert f"seed {last['seed']}" in section
    assert f"{round(last['seconds'] / 60)} minutes" in section and f"{last['cases_per_s']} cases/s" in section
    assert f"{last['disagreements']} disagreement" in section
    if not last["complete"]:
        assert "stopped" in section


def test_the_docs_name_every_mutator_leg_and_class():
    docs = (ROOT / "docs" / "fuzzing.md").read_text()
    for name in [m.name for m in mutators.MUTATORS] + list(legs.LEGS):
        assert re.search(rf"\| `{re.escape(name)}` \|", docs), name
    for cls in ("mismatch", "stateful-mismatch", "tflm-refuses", "export-mismatch", "export-error"):
        assert f"`{cls}`" in docs, cls
