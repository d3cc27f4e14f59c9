"""Crime Hotel engine tests, built from the rule text's own sentences."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hostapp.games.crimehotel import (
    ALL_SPACES,
    ROOMS,
    CrimeHotelError,
    CrimeHotelGame,
    Space,
    placement_order,
)
from hostapp.games.crimehotel.hotel import floor_of

FOUR = ["Ann", "Ben", "Cid", "Dora"]
THREE = ["Ann", "Ben", "Cid"]


def new_game(players: list[str] = FOUR, **rules: Any) -> CrimeHotelGame:
    return CrimeHotelGame.replay([{"type": "new_game", "players": players, "rules": rules}])


def test_hotel_has_27_rooms_and_39_guess_spaces() -> None:
    assert ROOMS == tuple(range(11, 20)) + tuple(range(21, 30)) + tuple(range(31, 40))
    assert len(ALL_SPACES) == 3 + 9 + 27
    assert Space.parse("r23") == Space("room", 23)
    assert Space.parse(" F2 ").code == "F2"
    for bad in ("F4", "C0", "R20", "X1", "R", ""):
        with pytest.raises(CrimeHotelError):
            Space.parse(bad)


@pytest.mark.parametrize(
    ("code", "points"),
    [("F2", 2), ("C7", 5), ("R27", 10), ("F1", 0), ("C3", 0), ("R28", 0)],
)
def test_guess_points(code: str, points: int) -> None:
    """"Richtige Etage = 2 SP / Richtige Spalte = 5 SP / Richtiges Zimmer = 10 SP"."""
    assert Space.parse(code).points(27) == points


@pytest.mark.parametrize(("players", "face_up"), [(FOUR, 2), (THREE, 8)])
def test_face_up_cards_per_player_count(players: list[str], face_up: int) -> None:
    """"An jeden Spieler werden sechs davon [...] Eine weitere Karte, das Zimmer des
    Mörders [...] Die letzten Karten werden offen auf die jeweiligen Fenster gelegt."
    """
    assert 27 - 6 * len(players) - 1 == face_up
    game = new_game(players)
    with pytest.raises(CrimeHotelError, match=f"{face_up} different cards"):
        game.apply({"type": "deal", "face_up": list(ROOMS[: face_up + 1])})
    game.apply({"type": "deal", "face_up": list(ROOMS[:face_up])})
    assert game.phase == "trick"
    assert len(game.candidates()) == 27 - face_up


def test_placement_order_highest_then_lowest_then_trick_order() -> None:
    """"Wer die höchste Karte gespielt hat, nimmt sich das Polizeiauto [...] Als
    nächstes folgt der Spieler mit der niedrigsten Karte [...] Alle weiteren
    Spieler folgen in ihrer Stichposition."
    """
    order = ("Ben", "Cid", "Dora", "Ann")
    cards = {"Ben": 24, "Cid": 29, "Dora": 13, "Ann": 21}
    result = placement_order(order, cards)
    assert [(p.player, p.role, p.reason) for p in result] == [
        ("Cid", "guess", "highest"),
        ("Dora", "guess", "lowest"),
        ("Ben", "help", "middle"),
        ("Ann", "help", "middle"),
    ]


def test_three_players_middle_takes_help() -> None:
    """"Die Felder des Pappspielplanes umfassen dann, für alle dazwischen Platzierten,
    weitere Aktionsmöglichkeiten" - with three players that is the one middle card.
    """
    result = placement_order(("Ann", "Ben", "Cid"), {"Ann": 15, "Ben": 31, "Cid": 22})
    assert [(p.player, p.role) for p in result] == [
        ("Ben", "guess"),
        ("Ann", "guess"),
        ("Cid", "help"),
    ]


def dealt(players: list[str] = FOUR, **rules: Any) -> CrimeHotelGame:
    game = new_game(players, **rules)
    face_up = [39, 38] if len(players) == 4 else [39, 38, 37, 36, 35, 34, 33, 32]
    game.apply({"type": "deal", "face_up": face_up, "leader": players[1]})
    return game


def test_highest_card_takes_police_car_and_leads_next_trick() -> None:
    """"Wer die höchste Karte gespielt hat, nimmt sich das Polizeiauto"; the
    police car holder (Startspieler) plays first.
    """
    game = dealt()
    assert game.trick_order() == ("Ben", "Cid", "Dora", "Ann")
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    assert game.police_car == "Dora"
    game.apply({"type": "guess", "player": "Dora", "space": "R25"})
    game.apply({"type": "guess", "player": "Ann", "space": "C5"})
    game.apply({"type": "help", "player": "Ben", "help": "look", "at": "Cid"})
    game.apply({"type": "help", "player": "Cid", "help": "none"})
    assert game.phase == "trick"
    assert game.trick_order() == ("Dora", "Ann", "Ben", "Cid")


def test_placing_fills_rooms_and_narrows_candidates() -> None:
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    # Cards on the table are seen even before they reach the hotel.
    assert not {21, 22, 29, 11} & set(game.candidates())
    assert len(game.candidates()) == 27 - 2 - 4
    game.apply({"type": "guess", "player": "Dora", "space": "R25"})
    inv = game.current
    assert inv is not None and inv.placed[29] == "Dora" and 22 not in inv.placed


def test_out_of_turn_and_wrong_duty_rejected() -> None:
    """"Die Positionen Erster und Letzter zwingen die jeweiligen Spieler nun zum Tippen"."""
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    with pytest.raises(CrimeHotelError, match="Dora's turn"):
        game.apply({"type": "guess", "player": "Ann", "space": "F1"})
    with pytest.raises(CrimeHotelError, match="must guess"):
        game.apply({"type": "help", "player": "Dora", "help": "bonus"})
    game.apply({"type": "guess", "player": "Dora", "space": "F1"})
    game.apply({"type": "guess", "player": "Ann", "space": "F2"})
    with pytest.raises(CrimeHotelError, match="police station"):
        game.apply({"type": "guess", "player": "Ben", "space": "F3"})


def test_middle_may_guess_when_configured() -> None:
    game = dealt(middle_may_guess=True)
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    game.apply({"type": "guess", "player": "Dora", "space": "F1"})
    game.apply({"type": "guess", "player": "Ann", "space": "F2"})
    game.apply({"type": "guess", "player": "Ben", "space": "F3"})
    assert [d.space.code for d in game.current.detectives] == ["F1", "F2", "F3"]  # type: ignore[union-attr]


def test_guess_space_must_be_free_unless_shared() -> None:
    """"setzt einen seiner Polizisten auf ein noch freies Feld am Rand des Hotels";
    "Ein Tipp-Feld darf doppelt besetzt werden."
    """
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    game.apply({"type": "guess", "player": "Dora", "space": "R25"})
    with pytest.raises(CrimeHotelError, match="taken"):
        game.apply({"type": "guess", "player": "Ann", "space": "R25"})
    game.apply({"type": "guess", "player": "Ann", "space": "C4"})
    game.apply({"type": "help", "player": "Ben", "help": "share"})
    game.apply({"type": "help", "player": "Cid", "help": "share"})
    # Ben's share lets him in later; then the space is full for Cid.
    game.apply({"type": "trick", "cards": {"Dora": 23, "Ann": 24, "Ben": 12, "Cid": 25}})
    assert [p.player for p in game.pending] == ["Cid", "Ben", "Dora", "Ann"]
    game.apply({"type": "guess", "player": "Cid", "space": "R27"})
    game.apply({"type": "guess", "player": "Ben", "space": "R25"})
    assert game.current.occupants(Space.parse("R25")) == ["Dora", "Ben"]  # type: ignore[union-attr]


def test_help_spaces_run_out() -> None:
    game = dealt(help_spaces={"bonus": 1, "look": 1})
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    game.apply({"type": "guess", "player": "Dora", "space": "F1"})
    game.apply({"type": "guess", "player": "Ann", "space": "F2"})
    game.apply({"type": "help", "player": "Ben", "help": "bonus"})
    with pytest.raises(CrimeHotelError, match="Every bonus space"):
        game.apply({"type": "help", "player": "Cid", "help": "bonus"})
    with pytest.raises(CrimeHotelError, match="Every move space"):
        game.apply({"type": "help", "player": "Cid", "help": "move", "from": "F1", "to": "F3"})


def test_move_help_moves_own_detective_only() -> None:
    """"Ein bereits im Hotel befindlicher Polizist darf versetzt werden." """
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    game.apply({"type": "guess", "player": "Dora", "space": "F1"})
    game.apply({"type": "guess", "player": "Ann", "space": "F2"})
    with pytest.raises(CrimeHotelError, match="no detective on F1"):
        game.apply({"type": "help", "player": "Ben", "help": "move", "from": "F1", "to": "F3"})
    game.apply({"type": "help", "player": "Ben", "help": "none"})
    game.apply({"type": "help", "player": "Cid", "help": "none"})
    game.apply({"type": "trick", "cards": {"Dora": 23, "Ann": 24, "Ben": 12, "Cid": 25}})
    game.apply({"type": "guess", "player": "Cid", "space": "R27"})
    game.apply({"type": "guess", "player": "Ben", "space": "R26"})
    game.apply({"type": "help", "player": "Dora", "help": "move", "from": "F1", "to": "C7"})
    inv = game.current
    assert inv is not None
    assert [(d.player, d.space.code) for d in inv.detectives][0] == ("Dora", "C7")


def test_cards_are_unique_and_not_on_the_board() -> None:
    game = dealt()
    with pytest.raises(CrimeHotelError, match="lies face up"):
        game.apply({"type": "trick", "cards": {"Ben": 39, "Cid": 22, "Dora": 29, "Ann": 11}})
    with pytest.raises(CrimeHotelError, match="only once"):
        game.apply({"type": "trick", "cards": {"Ben": 22, "Cid": 22, "Dora": 29, "Ann": 11}})
    with pytest.raises(CrimeHotelError, match="exactly one card"):
        game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29}})
    with pytest.raises(CrimeHotelError, match="not a room card"):
        game.apply({"type": "trick", "cards": {"Ben": 20, "Cid": 22, "Dora": 29, "Ann": 11}})


def test_rejected_event_leaves_state_unchanged() -> None:
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    before = game.summary()
    with pytest.raises(CrimeHotelError):
        game.apply({"type": "help", "player": "Dora", "help": "move", "from": "F1", "to": "F2"})
    assert game.summary() == before
    assert CrimeHotelGame.replay(game.events).summary() == before


def test_follow_suit_breach_is_flagged_only_when_provable() -> None:
    """"Ab dann muss die gezeigte Etage weiter ausgespielt werden. Ist keine passende
    Etagenkarte vorhanden, darf der Spieler eine andere Karte ausspielen."
    """
    game = dealt()
    # Ann does not follow floor 2: she claims to hold no floor-2 card.
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    for event in (
        {"type": "guess", "player": "Dora", "space": "F1"},
        {"type": "guess", "player": "Ann", "space": "F2"},
        {"type": "help", "player": "Ben", "help": "none"},
        {"type": "help", "player": "Cid", "help": "none"},
    ):
        game.apply(event)
    inv = game.current
    assert inv is not None and inv.violations == []
    # Leading with any card is free; Ann's floor-2 card later proves the breach.
    game.apply({"type": "trick", "cards": {"Dora": 13, "Ann": 23, "Ben": 14, "Cid": 15}})
    assert [(v.player, v.floor, v.card) for v in inv.violations] == [("Ann", 2, 23)]


def test_swap_clears_follow_suit_claims() -> None:
    """"Karten dürfen getauscht werden": a blind swap changes the hand, so an earlier
    claim to lack a floor proves nothing afterwards.
    """
    game = dealt()
    game.apply({"type": "trick", "cards": {"Ben": 21, "Cid": 22, "Dora": 29, "Ann": 11}})
    game.apply({"type": "guess", "player": "Dora", "space": "F1"})
    game.apply({"type": "guess", "player": "Ann", "space": "F2"})
    game.apply({"type": "help", "player": "Ben", "help": "swap", "with": "Ann"})
    game.apply({"type": "help", "player": "Cid", "help": "none"})
    game.apply({"type": "trick", "cards": {"Dora": 13, "Ann": 23, "Ben": 14, "Cid": 15}})
    assert game.current.violations == []  # type: ignore[union-attr]


class Table:
    """A real deal of the 27 cards played legally, to drive whole games."""

    def __init__(self, players: list[str], seed: int) -> None:
        self.players = players
        self.rng = random.Random(seed)

    def deal(self) -> tuple[dict[str, list[int]], int, list[int]]:
        cards = list(ROOMS)
        self.rng.shuffle(cards)
        hands = {p: sorted(cards[6 * i : 6 * i + 6]) for i, p in enumerate(self.players)}
        n = 6 * len(self.players)
        return hands, cards[n], cards[n + 1 :]

    def play_trick(self, game: CrimeHotelGame, hands: dict[str, list[int]]) -> dict[str, int]:
        order = game.trick_order()
        led = self.rng.choice(hands[order[0]])
        trick = {order[0]: led}
        for player in order[1:]:
            follow = [c for c in hands[player] if floor_of(c) == floor_of(led)]
            trick[player] = self.rng.choice(follow or hands[player])
        for player, card in trick.items():
            hands[player].remove(card)
        return trick

    def place(self, game: CrimeHotelGame) -> None:
        while game.phase == "place":
            due = game.pending[0]
            inv = game.current
            assert inv is not None
            if due.role == "guess":
                free = [s for s in ALL_SPACES if not inv.occupants(s)]
                space = self.rng.choice(free)
                game.apply({"type": "guess", "player": due.player, "space": space.code})
            else:
                kinds = [k for k in ("bonus", "look") if inv.help_taken(k) < 2]
                kind = self.rng.choice(kinds) if kinds else "none"
                event: dict[str, Any] = {"type": "help", "player": due.player, "help": kind}
                if kind == "look":
                    event["at"] = next(p for p in self.players if p != due.player)
                game.apply(event)


@pytest.mark.parametrize(("players", "seed"), [(FOUR, 1), (THREE, 2), (FOUR, 3)])
def test_full_game_of_three_investigations(players: list[str], seed: int) -> None:
    """"Es werden insgesamt fünf Runden für einen Durchgang gespielt. Nach drei
    Durchgängen endet das Spiel. Dann gewinnt der Spieler mit den meisten Siegpunkten."
    "Die letzte Karte wird direkt von der Hand aufs Hotel platziert. Nun wird
    geschaut, welches Feld am Ende frei bleibt - das Zimmer des Mörders."
    """
    table = Table(players, seed)
    game = new_game(players, bonus_points=4)
    expected = dict.fromkeys(players, 0)
    for number in range(1, 4):
        hands, murderer, face_up = table.deal()
        game.apply({"type": "deal", "face_up": face_up})
        for _ in range(5):
            game.apply({"type": "trick", "cards": table.play_trick(game, hands)})
            table.place(game)
            assert murderer in game.candidates()
        assert game.phase == "last_cards"
        game.apply({"type": "last_cards", "cards": {p: hands[p][0] for p in players}})
        assert game.candidates() == (murderer,)
        wrong = next(r for r in ROOMS if r != murderer)
        with pytest.raises(CrimeHotelError, match="entered wrongly"):
            game.apply({"type": "reveal", "card": wrong})
        game.apply({"type": "reveal", "card": murderer})
        inv = game.investigations[-1]
        assert inv.number == number and inv.violations == []
        for player in players:
            guessed = sum(d.space.points(murderer) for d in inv.detectives if d.player == player)
            bonus = sum(4 for h in inv.helps if h.player == player and h.kind == "bonus")
            expected[player] += guessed + (bonus if guessed else 0)
    assert game.phase == "over"
    assert game.totals() == expected
    best = max(expected.values())
    assert game.winners() == tuple(p for p in players if expected[p] == best)
    assert CrimeHotelGame.replay(game.events).summary() == game.summary()
    with pytest.raises(CrimeHotelError, match="not possible now"):
        game.apply({"type": "deal", "face_up": [11, 12]})


def test_bonus_paid_only_with_a_right_guess() -> None:
    """"Es gibt Sonderpunkte bei mindestens einem korrekten Tipp." """
    game = dealt(bonus_points=3)  # face up 38, 39; the murderer is in 29
    tricks = [
        {"Ben": 21, "Cid": 31, "Dora": 11, "Ann": 26},  # Ben and Ann take the bonus
        {"Cid": 32, "Dora": 12, "Ann": 17, "Ben": 37},  # Ben guesses column 9
        {"Ben": 22, "Cid": 33, "Dora": 13, "Ann": 27},
        {"Cid": 34, "Dora": 14, "Ann": 18, "Ben": 23},
        {"Cid": 35, "Dora": 15, "Ann": 19, "Ben": 24},
    ]
    wrong = iter(["F1", "C1", "C2", "C3", "R11", "R12", "R13", "R14", "R15", "R16"])
    for cards in tricks:
        game.apply({"type": "trick", "cards": cards})
        while game.phase == "place":
            due = game.pending[0]
            inv = game.current
            assert inv is not None
            if due.role == "guess":
                space = "C9" if due.player == "Ben" else next(wrong)
                game.apply({"type": "guess", "player": due.player, "space": space})
            else:
                kind = "bonus" if inv.help_taken("bonus") < 2 else "none"
                game.apply({"type": "help", "player": due.player, "help": kind})
    game.apply({"type": "last_cards", "cards": {"Ben": 25, "Cid": 36, "Dora": 16, "Ann": 28}})
    game.apply({"type": "reveal", "card": 29})
    scores = game.investigations[0].scores
    assert scores is not None
    assert (scores["Ben"].bonus, scores["Ben"].total) == (3, 8)
    assert (scores["Ann"].bonus, scores["Ann"].total) == (0, 0)
    assert game.totals() == {"Ann": 0, "Ben": 8, "Cid": 0, "Dora": 0}
    assert game.current.violations == []  # type: ignore[union-attr]


def test_winners_on_a_tie() -> None:
    game = new_game(THREE)
    assert game.winners() == ("Ann", "Ben", "Cid")


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"type": "new_game", "players": ["A", "B"]}, "3 or 4 players"),
        ({"type": "new_game", "players": ["A", "A", "B"]}, "name of their own"),
        ({"type": "new_game", "players": FOUR, "rules": {"bonus_points": -1}}, "bonus"),
        ({"type": "new_game", "players": FOUR, "rules": {"help_spaces": {"fly": 1}}}, "fly"),
        ({"type": "new_game", "players": FOUR, "rules": {"colour": 1}}, "colour"),
        ({"type": "new_game", "players": FOUR, "rules": 2.5}, "settings must be"),
        ({"type": "new_game", "players": FOUR, "rules": ["bonus_points"]}, "settings must be"),
        ({"type": "new_game", "players": FOUR, "rules": {"middle_may_guess": "no"}},
         "true or false"),
        ({"type": "deal", "face_up": [11, 12]}, "must start with a new_game"),
    ],
)
def test_bad_setup_rejected(event: dict[str, Any], message: str) -> None:
    with pytest.raises(CrimeHotelError, match=message):
        CrimeHotelGame().apply(event)
