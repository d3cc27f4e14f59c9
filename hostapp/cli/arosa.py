"""``towerear arosa``: replay a scripted game; list, export and delete saved games."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hostapp.games.arosa.script import replay_file
from hostapp.journal import delete_game, export_game, list_games


def register(subparsers: Any) -> None:
    """Add the ``arosa`` subcommand and its ``replay`` and ``games`` actions."""
    parser = subparsers.add_parser("arosa", help="Mord im Arosa: replay scripts, saved games")
    actions = parser.add_subparsers(dest="arosa_command", metavar="ACTION", required=True)

    replay = actions.add_parser(
        "replay", help="play a scripted game through the rules engine, print the final state"
    )
    replay.add_argument("script", type=Path, metavar="SCRIPT.json")
    replay.set_defaults(func=run_replay)

    games = actions.add_parser("games", help="list, export or delete saved games")
    games.add_argument("--dir", type=Path, default=None, help="journal directory (default: data)")
    which = games.add_mutually_exclusive_group()
    which.add_argument("--export", metavar="GAME", help="print a saved game as JSON")
    which.add_argument("--delete", metavar="GAME", help="delete a saved game")
    games.set_defaults(func=run_games)


def run_replay(args: argparse.Namespace) -> int:
    """Print the final state of the script as one JSON object; errors exit 2 via the CLI."""
    result = replay_file(args.script)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def run_games(args: argparse.Namespace) -> int:
    """List saved games (or export / delete one)."""
    if args.export:
        sys.stdout.write(json.dumps(export_game(args.export, args.dir), indent=1) + "\n")
        return 0
    if args.delete:
        delete_game(args.delete, args.dir)
        print(f"deleted {args.delete}")
        return 0
    for info in list_games(args.dir):
        state = f"damaged: {info.problem}" if info.problem else f"{info.n_events} events"
        if info.torn_tail:
            state += " (torn last record, dropped on resume)"
        print(f"{info.game_id}  {info.kind:<10} {info.created}  {state}  {info.title}")
    return 0
