"""What the options default to: the judged tool, the longest line, the context window.

Imported with the options at every pytest start, campaign or not (the plugin is
installed in the project's test dependencies): nothing here imports another
module of the package, and the modules that use these values (`events`,
`readers.base`, `occupancy`) take them from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolSpec:
    """Which tool is judged, and how its responses name the files they ship.

    ``explore`` is a substring of the judged tool's name; ``family`` a substring
    shared by every tool of the same server (a call to any of them is "explore
    again") and the name of its CLI (a Bash run of it contaminates an arm);
    ``marker`` a regular expression whose first group is a returned file's path.
    """

    explore: str = "codegraph_explore"
    family: str = "codegraph"
    marker: str = r"^\*\*`([^`]+)`\*\*"


#: Lines longer than this are corrupt: skipped without being held (``--explore-suff-max-line``).
MAX_LINE = 64 << 20
#: The nominal context window of the occupancy figures (``--explore-suff-window``).
DEFAULT_WINDOW = 200_000
