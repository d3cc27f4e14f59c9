from pathlib import Path

from hostapp.cli import main
from hostapp.eval.report import summary_lines, target_for
from hostapp.eval.runner import EVAL_TOWER_BASE, TUNING_TOWERS, _spec, plans


def test_eval_towers_are_disjoint_from_the_tuning_towers() -> None:
    for quick in (True, False):
        for family, plan in plans(quick).items():
            for i in range(plan.sessions):
                spec = _spec(family, plan, i)
                assert spec.tower_seed >= EVAL_TOWER_BASE
                assert spec.tower_seed not in TUNING_TOWERS
                assert _spec(family, plan, i, tuning=True).tower_seed in TUNING_TOWERS


def test_targets_follow_the_issue() -> None:
    assert target_for("single", "level_right") == (">=", 0.995)
    assert target_for("rapid", "level_right") == (">=", 0.98)
    assert target_for("acoustic:warm", "level_right") == (">=", 0.95)
    assert target_for("noisy", "latency_p95_s") == ("<=", 0.5)


def test_quick_eval_prints_every_number_and_writes_the_report(tmp_path: Path, capsys) -> None:
    out = tmp_path / "eval"
    status = main(["eval", "--quick", "--family", "single", "--jobs", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0
    line = next(x for x in captured.out.splitlines() if x.startswith("single "))
    assert "gain single with profile:" in captured.out
    for label in ("resting level right=", "cubes per landing right=", "missed landings=",
                  "false landings per hour=", "latency median", "latency p95", "real time"):
        assert label in line
    assert "1/1 sessions done" in captured.err
    report = (out / "README.md").read_text()
    assert "| single | 1 |" in report
    assert "| single:calibrated | 1 |" in report
    assert (out / "confusion_single.png").stat().st_size > 1000
    assert (out / "latency.png").stat().st_size > 1000


def test_summary_lines_of_nothing_is_empty() -> None:
    assert summary_lines({}) == []
