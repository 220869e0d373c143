"""The docs' parts made from the code are current: the flow diagram (``flow.FLOW``, docs/architecture.md) and the
settings table (``config.Settings``, docs/settings.md); the README stays short and links them. When one fails, run
``make readme`` (``citestream readme``) and commit the pages."""

from __future__ import annotations

import pytest

from citestream.cli.flow import flow_mermaid, flow_text
from citestream.cli.readme import BLOCKS, PAGES, block, refreshed
from citestream.cli.settings import reference
from citestream.config import PROJECT_ROOT, Settings
from citestream.flow import FLOW

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
WHERE = {name: page for page, names in PAGES.items() for name in names}


def _page(name: str) -> str:
    return (PROJECT_ROOT / WHERE[name]).read_text(encoding="utf-8")


def test_every_block_has_one_page():
    assert sorted(WHERE) == sorted(BLOCKS)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_page_copy_is_what_the_code_makes(name):
    assert block(_page(name), name) is not None, f"{WHERE[name]} has no '{name}' markers"
    assert block(_page(name), name) == BLOCKS[name][1](), f"{WHERE[name]}'s '{name}' is stale: run `make readme`"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_refreshing_a_current_page_changes_nothing(page):
    text = (PROJECT_ROOT / page).read_text(encoding="utf-8")
    assert refreshed(text, PAGES[page]) == text


def test_the_readme_is_short_and_links_the_generated_pages():
    assert len(README.splitlines()) <= 250
    for page in PAGES:
        assert f"]({page}" in README, f"README.md does not link {page}"


def test_every_setting_is_in_the_reference_with_its_environment_name():
    names = [name for name, _, _ in reference()]
    assert names == [f"CITESTREAM_{field.upper()}" for field in Settings.model_fields]


def test_the_flow_shows_every_stage_and_topic_of_the_table():
    text, mermaid = flow_text(), flow_mermaid()
    for step in FLOW:
        assert f"stages.{step.run.__name__}" in text
        assert f"s_{step.stage} --> t_{step.sink.replace('.', '_')}" in mermaid
        assert f"t_{step.source.replace('.', '_')} --> s_{step.stage}" in mermaid
