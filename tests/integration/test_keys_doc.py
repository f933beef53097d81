"""docs/keys.md is `vtoe keys --format markdown` below its header: the page cannot drift."""
import subprocess

from integration_paths import ROOT


def test_keys_page_is_the_programs_output(vtoe):
    page = (ROOT / "docs" / "keys.md").read_text()
    marker = "\n---\n\n"
    assert marker in page, "docs/keys.md lost the line that separates its header from the table"
    table = page[page.index(marker) + len(marker):]
    out = subprocess.run([str(vtoe.bin), "keys", "--format", "markdown"], capture_output=True,
                         text=True, check=True).stdout
    assert table == out, ("docs/keys.md differs from `vtoe keys --format markdown`; regenerate "
                          "the table below the header line")
