import json
from pathlib import Path

import numpy as np
import pytest

from hostapp.cli import main
from hostapp.eval.sessions import SessionSpec, record_session
from hostapp.protocol import Piezo, encode_frame
from hostapp.protocol.cobs import CobsError, cobs_decode
from hostapp.protocol.codec import decode_body
from hostapp.protocol.constants import FRAME_DELIMITER, PIEZO

CONTRACT = {
    "landing": ["event", "t", "t_decided", "floor", "cubes", "confidence"],
    "removal": ["event", "t", "t_decided", "floor", "cubes", "confidence"],
    "lift": ["event", "t", "t_decided", "exposed"],
    "closed": ["event", "t", "t_decided"],
    "disturbance": ["event", "t", "t_decided"],
}


@pytest.fixture(scope="module")
def wrapped_recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """30 s of throws on a simulated tower whose device clock wraps after 10 s."""
    path = tmp_path_factory.mktemp("detect") / "wrap.bin"
    spec = SessionSpec("single", 4, 44, 30.0, clock_offset_us=2**32 - 10_000_000)
    return path, record_session(spec, path)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    status = main(argv)
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    return status, lines, captured.err


def test_detect_prints_contract_json_lines_across_a_clock_wrap(
    wrapped_recording: tuple[Path, list[dict]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, truth = wrapped_recording
    status, events, err = _run(["detect", str(path)], capsys)
    assert status == 0
    assert "damage: none" in err
    for e in events:
        assert list(e)[: len(CONTRACT[e["event"]])] == CONTRACT[e["event"]]
    decided = [e["t_decided"] for e in events]
    assert decided == sorted(decided)
    landings = [e for e in events if e["event"] == "landing"]
    expected = [(round(e["t"], 1), e["level"]) for e in truth if e["event"] == "landing"]
    assert len(expected) >= 3
    # Every truth landing, also those after the wrap at 10 s, on the right floor.
    assert [e["floor"] for e in landings] == [lv for _, lv in expected]
    for e, (t, _) in zip(landings, expected, strict=True):
        assert abs(e["t"] - t) < 0.5 and e["t_decided"] >= e["t"]
    assert any(t > 12.0 for t, _ in expected)


def test_detect_reads_a_recording_that_begins_mid_frame(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _ = wrapped_recording
    whole = _run(["detect", str(path)], capsys)[1]
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes()[1001:])  # no HELLO, first frame cut in half
    status, events, err = _run(["detect", str(cut)], capsys)
    assert status == 0
    # The contract allows it: counted, but no damage.
    assert "damage: none; partial_start=1" in err
    # Same landings (stream time starts a few ms later, rates are measured).
    assert [e["floor"] for e in events if e["event"] == "landing"] == [
        e["floor"] for e in whole if e["event"] == "landing"
    ]


def test_detect_counts_damage_and_still_exits_0(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _ = wrapped_recording
    data = bytearray(path.read_bytes())
    for i in range(5000, len(data), 40_000):
        data[i] ^= 0x10  # bit errors
    del data[200_000:230_000]  # a lost chunk
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(bytes(data))
    status, events, err = _run(["detect", str(damaged)], capsys)
    assert status == 0
    assert "crc_errors=" in err or "framing_errors=" in err
    assert any(e["event"] == "landing" for e in events)


def test_detect_carries_on_through_bytes_of_an_earlier_time_spliced_in(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Bytes from seconds earlier in the session, spliced in the middle with
    # no HELLO: the device clock seems to restart. Stream time carries on
    # from there, nothing crashes, and the throws after the splice are found.
    path, _ = wrapped_recording
    data = path.read_bytes()
    n = len(data)
    spliced = tmp_path / "spliced.bin"
    spliced.write_bytes(data[: 6 * n // 10] + data[n // 10 : n // 4] + data[6 * n // 10 :])
    status, events, err = _run(["detect", str(spliced)], capsys)
    assert status == 0
    assert "clock_restarts=1" in err
    decided = [e["t_decided"] for e in events]
    assert decided == sorted(decided)
    clean_status, clean, _ = _run(["detect", str(path)], capsys)
    assert clean_status == 0
    late = [e for e in clean if e["event"] == "landing" and e["t"] > 20.0]
    assert late
    # the spliced seconds push the stream on by their length, but not the floors
    floors = [e["floor"] for e in events if e["event"] == "landing"]
    assert floors[-len(late) :] == [e["floor"] for e in late]


@pytest.mark.parametrize("jump_us", [1 << 31, -(1 << 26)])
def test_detect_drops_a_lone_frame_whose_clock_is_wrong_and_crc_right(
    jump_us: int,
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One PIEZO frame in the middle re-encoded with its clock 36 min ahead
    # (or 67 s back) and a valid CRC, as damage gives once in 65,536 frames:
    # it is dropped, and every event keeps its time.
    path, _ = wrapped_recording
    frames = path.read_bytes().split(FRAME_DELIMITER)
    middle = len(frames) // 2
    k = next(k for k in range(middle, len(frames)) if frames[k][:1] and _is_piezo(frames[k]))
    raw = cobs_decode(frames[k])
    seq = int.from_bytes(raw[1:3], "little")
    msg = decode_body(raw[0], raw[3:-2])
    assert isinstance(msg, Piezo)
    odd = Piezo((msg.t_us + jump_us) % 2**32, np.array(msg.samples))
    frames[k] = encode_frame(odd, seq)[:-1]
    damaged = tmp_path / "odd_clock.bin"
    damaged.write_bytes(FRAME_DELIMITER.join(frames))
    status, events, err = _run(["detect", str(damaged)], capsys)
    assert status == 0
    assert "clock_outliers=1" in err and "clock_restarts" not in err
    clean = _run(["detect", str(path)], capsys)[1]
    assert [(e["event"], e.get("floor")) for e in events] == [
        (e["event"], e.get("floor")) for e in clean
    ]
    assert [e["t"] for e in events] == pytest.approx([e["t"] for e in clean], abs=0.01)


def _is_piezo(frame: bytes) -> bool:
    try:
        return cobs_decode(frame)[0] == PIEZO
    except CobsError:
        return False


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "does not exist"), (b"", "is empty"), (b"\x01\x02garbage" * 50, "no decodable")],
)
def test_unusable_files_exit_2_with_one_line(
    content: bytes | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.bin"
    if content is not None:
        path.write_bytes(content)
    status, events, err = _run(["detect", str(path)], capsys)
    assert status == 2 and events == []
    assert err.count("\n") == 1 and message in err


def test_bad_calibration_file_exits_2(
    wrapped_recording: tuple[Path, list[dict]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = wrapped_recording
    cal = tmp_path / "cal.json"
    cal.write_text('{"cube_mass_g": -3}')
    status, _, err = _run(["detect", str(path), "--calibration", str(cal)], capsys)
    assert status == 2 and err.count("\n") == 1 and "calibration" in err


def test_detect_hears_the_landings_on_a_level_whose_load_cell_reads_nothing(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.broken_sensors import with_broken_sensor

    path, truth = wrapped_recording
    # Level 5's cell stuck at one reading (a broken bridge wire).
    stuck = with_broken_sensor(path, tmp_path / "stuck.bin", load_level=5)
    status, events, err = _run(["detect", str(stuck)], capsys)
    assert status == 0
    assert "the load cell of level 5 read nothing" in err
    expected = sorted(
        round(e["t"], 1) for e in truth if e["event"] == "landing" and e["level"] == 5
    )
    heard = sorted(e["t"] for e in events if e["event"] == "landing" and e["floor"] == 5)
    assert len(expected) >= 2 and len(heard) == len(expected)
    assert all(abs(a - b) < 0.5 for a, b in zip(heard, expected, strict=True))
    # Intact, nothing is said about dead cells.
    assert "read nothing" not in _run(["detect", str(path)], capsys)[2]


def test_detect_takes_a_load_cell_never_plugged_in_for_dead_not_for_a_lifted_module(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.broken_sensors import with_broken_sensor

    path, truth = wrapped_recording
    # Level 5's valid bit is 0 from the first reading on: no module was
    # lifted (the tower is closed when a recording begins), its cell is absent.
    unplugged = with_broken_sensor(path, tmp_path / "unplugged.bin", load_level=5,
                                   unplugged=True)
    status, events, err = _run(["detect", str(unplugged)], capsys)
    assert status == 0
    assert not [e for e in events if e["event"] in ("lift", "closed")]
    assert "the load cell of level 5 read nothing" in err
    expected = sorted(e["t"] for e in truth if e["event"] == "landing")
    landed = sorted(e["t"] for e in events if e["event"] == "landing")
    # Every landing still reported, level 5's by ear from the first one on.
    assert len(landed) == len(expected)
    assert all(abs(a - b) < 0.5 for a, b in zip(landed, expected, strict=True))


def test_detect_names_a_contact_microphone_that_hears_nothing(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.broken_sensors import with_broken_sensor

    path, truth = wrapped_recording
    # Level 5's disc unglued: its channel sits at the bias.
    deaf = with_broken_sensor(path, tmp_path / "deaf.bin", piezo_level=5)
    status, events, err = _run(["detect", str(deaf)], capsys)
    assert status == 0
    assert "the disc of level 5 heard none of its plate's landings" in err
    # The load cells still count every landing there.
    expected = [e["level"] for e in truth if e["event"] == "landing"]
    assert [e["floor"] for e in events if e["event"] == "landing"] == expected


def test_detect_names_a_ground_loops_hum_and_hears_through_it(
    wrapped_recording: tuple[Path, list[dict]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.broken_sensors import with_hum

    path, truth = wrapped_recording
    hummed = with_hum(path, tmp_path / "hum.bin", amplitudes={3: 6.0, 5: 3.0, 7: 1.5})
    status, events, err = _run(["detect", str(hummed)], capsys)
    assert status == 0
    assert "mains hum on the contact microphones at 150, 250, 350 Hz, filtered out" in err
    assert json.loads(err.split("detector ", 1)[1].splitlines()[0])["hum_hz"] == [
        150.0, 250.0, 350.0]
    expected = [e["level"] for e in truth if e["event"] == "landing"]
    assert [e["floor"] for e in events if e["event"] == "landing"] == expected
    # Without hum nothing is named.
    status, _, err = _run(["detect", str(path)], capsys)
    assert "mains hum" not in err


@pytest.mark.parametrize("factor", [1.25, 2.0])
def test_detect_reads_a_device_that_polls_its_load_cells_faster_than_they_convert(
    factor: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.device_cadence import polled_faster

    path = tmp_path / "rounds.bin"
    truth = record_session(SessionSpec("single", 4, 45, 40.0), path)
    polled = polled_faster(path, tmp_path / "polled.bin", factor)
    status, events, _ = _run(["detect", str(polled)], capsys)
    assert status == 0
    expected = [(e["t"], e["level"]) for e in truth if e["event"] == "landing"]
    landings = [(e["t"], e["floor"]) for e in events if e["event"] == "landing"]
    # Before session 25, one reading in five (or every other one) stale on
    # every channel left no window whole: no landing at all.
    assert len(expected) >= 4
    assert [lv for _, lv in landings] == [lv for _, lv in expected]
    assert all(abs(a - b) < 0.5 for (a, _), (b, _) in zip(landings, expected, strict=True))
