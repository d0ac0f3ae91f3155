"""What one ``hedge reproduce SEED`` run produces: a table "published | hedge | difference |
why", the readings chosen where the paper's setup is ambiguous, and the figures written.

Every seed module returns a :class:`Reproduction`; the command renders it as text (stdout),
``table.md`` and ``reproduction.json`` in the seed's output folder, and ``hedge reproduce
all`` gathers them into one HTML page.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Row:
    """One compared figure."""

    quantity: str    # what is compared, with its setting: "job time, window vs Default (−%)"
    published: str   # the paper's figure as printed, with where: "−22% (Fig. 7)"; "-" if none
    hedge: str       # hedge's figure from this run, in the same unit
    difference: str  # hedge − published in that unit, or "agrees" / "n/a"
    why: str         # the reason for a difference larger than noise; "" when within noise


@dataclass
class Reproduction:
    """The result of reproducing one seed."""

    seed: str                 # "window", "chronos", ...
    title: str                # the paper's title
    citation: str             # authors, venue, year
    rows: list[Row] = field(default_factory=list)
    readings: list[str] = field(default_factory=list)  # choices where the setup is ambiguous
    figures: list[str] = field(default_factory=list)   # file names in the seed's folder
    notes: list[str] = field(default_factory=list)     # assumptions the figures rest on
