"""``climbrl serve``: play the lab's agents in a browser (issue 27).

Layers inside, bottom to top: :mod:`.presenters` (each game's cards and moves as the page shows
them, and why a selection is not a legal move), :mod:`.reasoning` (what an agent thought of its
legal moves), :mod:`.table` (one game with a person at it: agents' turns, the event log, the
person's view, built from the person's observation only), :mod:`.replay` (a finished game or a
recorded one, step by step with every hand), :mod:`.catalog` (the agents a person may pick) and
:mod:`.app` (the FastAPI application and its routes). The page itself is plain HTML, CSS and
JavaScript under ``static/``, served by the application: no CDN, it works offline.
"""
