"""Export a finished card game: JSON for the record, HTML to print as a score sheet.

Both take the engine's ``summary()`` (and the event list for JSON), so the
export is exactly what the engine scored. Files are written atomically: a
crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from hostapp.errors import TowerearError
from hostapp.i18n import os_reason, tr


class ExportError(TowerearError):
    """A score sheet or game export could not be written."""


def _write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ExportError(
            tr("Cannot write into {path}: {reason}.", path=path.parent, reason=os_reason(exc))
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ExportError(
            tr("Cannot write {path}: {reason}.", path=path, reason=os_reason(exc))
        ) from exc


def game_json(summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    """The game as one JSON document: the scored summary and every event."""
    return json.dumps(
        {"summary": summary, "events": list(events)}, ensure_ascii=False, indent=2
    )


def write_json(path: Path, summary: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
    """Write :func:`game_json` to ``path``."""
    _write_atomic(path, game_json(summary, events) + "\n")


def write_html(path: Path, summary: Mapping[str, Any]) -> None:
    """Write :func:`score_sheet_html` to ``path``."""
    _write_atomic(path, score_sheet_html(summary))


_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #111; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #444; padding: 0.35em 0.8em; text-align: center; }
th { background: #e8e8e8; }
td.name { text-align: left; font-weight: bold; }
tr.winner td { background: #fff3b0; }
.small { font-size: 0.9em; color: #333; }
@media print { body { margin: 1cm; } }
"""


def _page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html><head><meta charset="utf-8">',
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
            f"<h1>{escape(title)}</h1>",
            *body,
            "</body></html>",
            "",
        ]
    )


def _table(header: Sequence[str], rows: Sequence[tuple[Sequence[str], bool]]) -> str:
    cells = "".join(f"<th>{escape(h)}</th>" for h in header)
    lines = [f"<table><tr>{cells}</tr>"]
    for row, highlight in rows:
        first, *rest = row
        tds = f'<td class="name">{escape(first)}</td>' + "".join(
            f"<td>{escape(c)}</td>" for c in rest
        )
        row_class = ' class="winner"' if highlight else ""
        lines.append(f"<tr{row_class}>{tds}</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def _winner_line(winners: Sequence[str]) -> str:
    if not winners:
        return f"<p>{escape(tr('The game is not finished.'))}</p>"
    if len(winners) == 1:
        return f"<p><b>{escape(tr('Winner: {name}', name=winners[0]))}</b></p>"
    names = ", ".join(winners)
    return f"<p><b>{escape(tr('Tie between {names}', names=names))}</b></p>"


def score_sheet_html(summary: Mapping[str, Any]) -> str:
    """A printable HTML score sheet for a Crime Hotel, mugshot or score-pad summary."""
    game = summary.get("game")
    if game == "crime-hotel":
        return _crime_hotel_sheet(summary)
    if game == "mugshots":
        return _mugshots_sheet(summary)
    if game == "mugshots-pad":
        return _pad_sheet(summary)
    raise ExportError(tr("There is no score sheet for a game of kind {game!r}.", game=game))


def _crime_hotel_sheet(summary: Mapping[str, Any]) -> str:
    players: list[str] = summary["players"]
    winners: list[str] = summary["winners"]
    investigations = summary["investigations"]
    header = [tr("Player")]
    header += [tr("Investigation {n}", n=inv["number"]) for inv in investigations]
    header.append(tr("Total"))
    rows = []
    for player in players:
        points = [str(inv["scores"].get(player, {}).get("total", "")) for inv in investigations]
        rows.append(([player, *points, str(summary["totals"][player])], player in winners))
    body = [_table(header, rows), _winner_line(winners)]
    for inv in investigations:
        room = inv["murderer_room"]
        title = tr("Investigation {n}", n=inv["number"])
        where = tr("murderer's room {room}", room=room) if room else tr("not finished")
        body.append(f"<h2>{escape(title)}: {escape(where)}</h2>")
        detail_rows = []
        for player in players:
            score = inv["scores"].get(player)
            if score is None:
                continue
            guesses = ", ".join(f"{code} ({pts})" for code, pts in score["guesses"]) or "-"
            detail_rows.append(([player, guesses, str(score["bonus"]), str(score["total"])], False))
        body.append(
            _table([tr("Player"), tr("Guesses (points)"), tr("Bonus"), tr("Points")], detail_rows)
        )
        if inv["follow_suit_violations"]:
            breach = "{player} did not follow floor {floor} but later played {card}"
            items = "".join(
                f"<li>{escape(tr(breach, **v))}</li>" for v in inv["follow_suit_violations"]
            )
            body.append(f'<ul class="small">{items}</ul>')
    rules = summary["rules"]
    body.append(
        '<p class="small">'
        + escape(tr("Bonus per bonus space: {points} points.", points=rules["bonus_points"]))
        + "</p>"
    )
    return _page(tr("Crime Hotel: score sheet"), body)


def _mugshots_sheet(summary: Mapping[str, Any]) -> str:
    players: list[str] = summary["players"]
    winners: list[str] = summary["winners"]
    rows = []
    for player in players:
        cards = len(summary["archive"][player])
        score = summary["scores"][player]
        rows.append(([player, str(cards), str(score - cards), str(score)], player in winners))
    header = [tr("Player"), tr("Archived cards"), tr("Goal points"), tr("Points")]
    body = [_table(header, rows), _winner_line(winners)]
    turns = summary["turns"]
    body.append(
        '<p class="small">'
        + escape(tr("{n} turns played, {won} of them successful.", n=len(turns),
                    won=sum(1 for t in turns if t["success"])))
        + "</p>"
    )
    return _page(tr("Mugshots: score sheet"), body)


def _pad_sheet(summary: Mapping[str, Any]) -> str:
    players: list[str] = summary["players"]
    winners: list[str] = summary["winners"]
    rows = [([p, str(summary["scores"][p])], p in winners) for p in players]
    body = [_table([tr("Player"), tr("Archived cards")], rows), _winner_line(winners)]
    return _page(tr("Mugshots: score sheet"), body)
