"""The bounds of ``climbrl serve``: everything one request can size has a limit here (issue 51).

Each bound is named in the error a request past it gets, and listed in ``docs/play.md``. The
search agents' own bounds (``S``, ``K``, ``belief``) hold everywhere, not only here
(:mod:`climbrl.agents.spec_options`), as does Dou Dizhu's ``max_redeals``
(:mod:`climbrl.games.doudizhu.rules`).
"""

from __future__ import annotations

MAX_BODY_BYTES = 1 << 20
"""A request body (an uploaded record, a new game, a move): read in pieces, and the request
refused (413) as soon as it passes this size, without reading the rest."""

MAX_RECORD_MOVES = 1000
"""Moves of an uploaded or stored game record (a Dou Dizhu game with its three redeals has fewer
than 700): a record is replayed move by move and each frame shows every hand, so the work and
the answer grow with it."""

GAMES_PER_CLIENT = 20
"""Games in progress per browser (its ``climbrl_client`` cookie; requests without one share a
single allowance): a browser's 21st game closes its own oldest, never another browser's."""

MAX_GAMES = 200
"""Games in progress in all: past it, the least recently used game of the browser holding the
most games is closed (so one browser's flood closes its own games first)."""

DECISION_SECONDS = 30.0
"""Time for one decision of a search or a trained policy (they run in worker processes): past
it the worker is stopped and the request refused (503), the game as it was."""

MATCH_SECONDS = 600.0
"""Time for one replay of a pipeline match's game (the chunk of deals holding it), in a worker
process that the page shows the progress of and may cancel."""

WORKERS = 2
"""Worker processes for agents' decisions (and one more for match replays): requests beyond
them wait their turn, at most :data:`WAIT_SECONDS`."""

WAIT_SECONDS = 30.0
"""How long a request waits for a free worker before it is refused as busy (503)."""

MAX_MATCH_DEALS = 100_000
"""Deals a pipeline match record may name (the champion's records hold 1,000)."""
