"""Each pipeline stage's wall time, written by the stage and read by the report.

``python -m pipeline STAGE`` records, when the stage has finished, ``REPORTS/times/NAME.json``
(``NAME`` = the stage, with its learner: ``train-ppo``) holding the seconds from the start of its
process (imports, the Prefect flow and its server round trips included) to the end of its work,
and of them the stage function's own (``work_seconds``), so that what Prefect and the process
cost beside the work is seen stage by stage.
DVC keeps each file as an output of its stage (``cache: false``), so a stage that did not rerun
keeps its last measured time, and the report's "Stage times" table shows what every stage of the
study last took. The report stage itself is not timed (it cannot time itself in its own table).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TIMES = "times"
ORDER = ("seeds", "train", "evaluate", "deep", "baselines", "tournament", "behaviour")  # the timed stages


def stage_time_path(reports: Path, stage: str, learner: str | None = None) -> Path:
    return Path(reports) / TIMES / (f"{stage}-{learner}.json" if learner else f"{stage}.json")


def write_stage_time(reports: Path, stage: str, seconds: float, learner: str | None = None,
                     work_seconds: float | None = None) -> Path:
    """``seconds`` from the process's start; ``work_seconds`` of them the stage function's own (None:
    not measured), the rest being the process start, the imports and Prefect."""
    path = stage_time_path(reports, stage, learner)
    path.parent.mkdir(parents=True, exist_ok=True)
    work = {} if work_seconds is None else {"work_seconds": round(work_seconds, 3)}
    path.write_text(json.dumps({"stage": stage, "learner": learner, "seconds": round(seconds, 3), **work,
                                "finished": datetime.now(UTC).isoformat(timespec="seconds")}) + "\n")
    return path


def read_stage_times(reports: Path) -> list[dict[str, Any]]:
    """Every recorded stage time of a study, in pipeline order (then by name)."""
    rows = [json.loads(p.read_text()) for p in sorted((Path(reports) / TIMES).glob("*.json"))]

    def key(r: dict[str, Any]) -> tuple[int, str]:
        return (ORDER.index(r["stage"]) if r["stage"] in ORDER else len(ORDER), r.get("learner") or "")

    return sorted(rows, key=key)


def stage_time_lines(reports: Path) -> list[str]:
    """The report's "Stage times" section (nothing when no stage has recorded its time)."""
    rows = read_stage_times(reports)
    if not rows:
        return []
    total = sum(r["seconds"] for r in rows)
    all_timed = all(r.get("work_seconds") is not None for r in rows)
    lines = ["## Stage times", "",
             "Wall time of each stage's last run (`python -m pipeline STAGE`: from the start of its process, "
             "Prefect included, to the end of its work), as recorded in `times/`, and of it the stage's own "
             "work (the stage function, without the process start, the imports and Prefect). They add up to "
             "the study's time when its stages run one after another; `make run` runs the studies side by "
             "side (`pipeline/repro.py`), so its wall time is less than the two studies' sums together.", "",
             "| stage | learner | time | own work | start, imports, Prefect |", "|---|---|---|---|---|"]
    for r in rows:
        w = r.get("work_seconds")
        rest = "" if w is None else f"{r['seconds'] - w:.1f} s"
        lines.append(f"| {r['stage']} | {r.get('learner') or ''} | {_fmt(r['seconds'])} | "
                     f"{'' if w is None else _fmt(w)} | {rest} |")
    if all_timed:
        work = sum(r["work_seconds"] for r in rows)
        lines += [f"| **all stages** | | **{_fmt(total)}** | **{_fmt(work)}** | **{total - work:.0f} s** |", ""]
    else:
        lines += [f"| **all stages** | | **{_fmt(total)}** | | |", ""]
    return lines


def _fmt(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"
