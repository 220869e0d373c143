"""The README's parts made from the code are current: the flow diagram (``flow.FLOW``) and the settings table
(``config.Settings``). When one fails, run ``make readme`` (``citestream readme``) and commit the README."""

from __future__ import annotations

import pytest

from citestream.cli.flow import flow_mermaid, flow_text
from citestream.cli.readme import BLOCKS, block, refreshed
from citestream.cli.settings import reference
from citestream.config import PROJECT_ROOT, Settings
from citestream.flow import FLOW

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_readme_copy_is_what_the_code_makes(name):
    assert block(README, name) is not None, f"README.md has no '{name}' markers"
    assert block(README, name) == BLOCKS[name][1](), f"README.md's '{name}' is stale: run `make readme`"


def test_refreshing_a_current_readme_changes_nothing():
    assert refreshed(README) == README


def test_every_setting_is_in_the_reference_with_its_environment_name():
    names = [name for name, _, _ in reference()]
    assert names == [f"CITESTREAM_{field.upper()}" for field in Settings.model_fields]


def test_the_flow_shows_every_stage_and_topic_of_the_table():
    text, mermaid = flow_text(), flow_mermaid()
    for step in FLOW:
        assert f"stages.{step.run.__name__}" in text
        assert f"s_{step.stage} --> t_{step.sink.replace('.', '_')}" in mermaid
        assert f"t_{step.source.replace('.', '_')} --> s_{step.stage}" in mermaid
