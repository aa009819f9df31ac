"""``ragwarrant review sample``: a reproducible, blinded random draw, and labels read back."""

from __future__ import annotations

import csv
import io

import numpy as np
import orjson
import pytest
import yaml

from ragwarrant.cli import main
from ragwarrant.pipeline import run_job
from ragwarrant.review.queue import ReviewQueue, queue_tag
from ragwarrant.review.sample import Population, _allocation, draw
from tests.gates.test_ppi_gate import judge_favours_candidate

POP = Population(
    tuple(f"ex{i:03d}" for i in range(100)), tuple("a" if i < 80 else "b" for i in range(100))
)


def _draw(seed: int, stratify: bool = False, n: int = 20) -> ReviewQueue:
    return draw(POP, n=n, seed=seed, stratify=stratify, meta=("m", "base", "cand"), evidence=[])


def test_draw_is_reproducible_and_seeded():
    """The same seed gives the same queue; another seed another draw."""
    assert _draw(1) == _draw(1)
    assert [i.example_id for i in _draw(1).items] != [i.example_id for i in _draw(2).items]


def test_draw_is_uniform_without_replacement():
    """Over many seeds each example is drawn about n/N of the time, never twice in a draw."""
    counts = dict.fromkeys(POP.example_ids, 0)
    for seed in range(400):
        ids = [i.example_id for i in _draw(seed).items]
        assert len(set(ids)) == 20
        for e in ids:
            counts[e] += 1
    rates = np.array(list(counts.values())) / 400
    assert abs(rates.mean() - 0.2) < 1e-12 and rates.min() > 0.12 and rates.max() < 0.28


def test_blinding_shows_the_candidate_as_a_about_half_the_time():
    """The order of the two outputs is a fair coin per item; item ids carry no example id."""
    queue = _draw(3, n=100)
    first = sum(i.shown[0] == "candidate" for i in queue.items)
    assert 35 < first < 65
    tag = queue_tag(queue)
    assert all(i.item_id.startswith(f"{tag}-r") for i in queue.items)
    assert all(i.example_id not in i.item_id for i in queue.items)


def test_stratified_draw_is_proportional():
    """80/20 slices and n = 20: 16 and 4 items."""
    queue = _draw(4, stratify=True)
    slices = [i.slice for i in queue.items]
    assert (slices.count("a"), slices.count("b")) == (16, 4)
    assert _allocation({"x": 1, "y": 1, "z": 1}, 2) == {"x": 1, "y": 1, "z": 0}


def _sample(root, out, *extra: str) -> int:
    argv = ["review", "sample", "--input", str(root), "--metric", "correct", "--n", "200"]
    return main([*argv, "--seed", "5", "--output", str(out), *extra])


def test_cli_writes_a_blinded_queue_csv_and_page(make_input, tmp_path, capsys):
    """The queue records seed and evidence sha256; CSV and page name neither policy."""
    root = make_input()
    out = tmp_path / "q" / "queue.json"
    assert _sample(root, out) == 0
    queue = ReviewQueue.model_validate_json(out.read_bytes())
    assert (queue.seed, len(queue.items), queue.population) == (5, 200, 200)
    assert queue.evidence[0].path == "evidence/results.csv"
    for suffix in (".csv", ".html"):
        text = out.with_suffix(suffix).read_text()
        assert "cand" not in text.replace("candidate", "") and "base" not in text
    page = out.with_suffix(".html").read_text()
    assert "http://" not in page and "https://" not in page and "r0001" in page
    assert '["item_id,label_a,label_b"]' in page  # the download is a labels file
    assert "drew 200 of 200" in capsys.readouterr().out
    before = out.read_bytes()
    assert _sample(root, out, "--seed", "6") == 64  # an existing queue is never redrawn
    assert out.read_bytes() == before


def test_cli_refuses_too_many_items_and_unknown_metric(make_input, tmp_path):
    """--n beyond the population and an unknown metric are usage errors (64)."""
    root = make_input()
    assert _sample(root, tmp_path / "q.json", "--n", "201") == 64
    argv = ["review", "sample", "--input", str(root), "--metric", "nope", "--n", "5"]
    assert main([*argv, "--seed", "1", "--output", str(tmp_path / "q.json")]) == 64


def _labelled_input(make_input, tmp_path):
    """An input whose contract names a drawn queue (n = 300, seed 5) and its labels."""
    data, human_cand, human_base = judge_favours_candidate()
    root = make_input(data=data)
    out = root / "review" / "queue.json"
    argv = ["review", "sample", "--input", str(root), "--metric", "correct", "--n", "300"]
    assert main([*argv, "--seed", "5", "--output", str(out)]) == 0
    queue = ReviewQueue.model_validate_json(out.read_bytes())
    truth = {"candidate": human_cand, "baseline": human_base}
    rows = list(csv.DictReader(io.StringIO(out.with_suffix(".csv").read_text())))
    items = {i.item_id: i for i in queue.items}
    for row in rows:
        item = items[row["item_id"]]
        k = int(item.example_id[2:])
        row["label_a"], row["label_b"] = (truth[role][k] for role in item.shown)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    (root / "review" / "labels.csv").write_text(buf.getvalue())
    contract = yaml.safe_load((root / "contract.yaml").read_text())
    contract["quality_metrics"][0]["human_labels"] = {
        "file": "review/labels.csv",
        "queue": "review/queue.json",
    }
    (root / "contract.yaml").write_text(yaml.safe_dump(contract, sort_keys=False))
    return root


def _decide(root, out):
    run_job(root, out, on_stage=lambda event, **fields: None)
    return orjson.loads((out / "decision.json").read_bytes())


def test_labelled_queue_decides_the_run(make_input, tmp_path):
    """Draw, label the CSV as reviewers would, name it in the contract: the gate uses PPI++."""
    decision = _decide(_labelled_input(make_input, tmp_path), tmp_path / "out")
    gate = next(
        g for g in decision["candidates"][0]["gates"] if g["id"] == "noninferiority:correct"
    )
    assert gate["method"].startswith("ppi++") and gate["status"] == "fail"
    assert gate["details"]["labelled_n"] == 300 and gate["details"]["labels_missing"] == 0


def _swap_example(queue: dict) -> None:
    drawn = {i["example_id"] for i in queue["items"]}
    width = len(queue["items"][0]["example_id"]) - 2
    undrawn = next(f"ex{k:0{width}d}" for k in range(1000) if f"ex{k:0{width}d}" not in drawn)
    queue["items"][0]["example_id"] = undrawn


def _reverse_shown(queue: dict) -> None:
    for item in queue["items"]:
        item["shown"] = item["shown"][::-1]


def _unknown_example(queue: dict) -> None:
    queue["items"][3]["example_id"] = "no-such-example"


@pytest.mark.parametrize(
    ("edit", "code", "pointer"),
    [
        (_swap_example, "review-queue-not-the-draw", "items[0].example_id"),
        (_reverse_shown, "review-queue-not-the-draw", "items[0].shown"),
        (_unknown_example, "review-queue-example-unknown", "items[3].example_id"),
    ],
)
def test_an_edited_queue_blocks(make_input, tmp_path, edit, code, pointer):
    """The queue is re-derived from its seed: an edited item or blinding order BLOCKs, located."""
    root = _labelled_input(make_input, tmp_path)
    path = root / "review" / "queue.json"
    queue = orjson.loads(path.read_bytes())
    edit(queue)
    path.write_bytes(orjson.dumps(queue))
    decision = _decide(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    text = orjson.dumps(decision).decode()
    assert code in text and pointer in text


@pytest.mark.parametrize("taken", [".csv", ".html"])
def test_cli_refuses_when_the_csv_or_page_exists(make_input, tmp_path, taken):
    """A file beside QUEUE (evidence named evals.csv, an old page) is never overwritten."""
    root = make_input()
    out = tmp_path / "evals.json"
    victim = out.with_suffix(taken)
    victim.write_text("keep me\n")
    assert _sample(root, out) == 64
    assert victim.read_text() == "keep me\n" and not out.exists()


@pytest.mark.parametrize("name", ["queue.csv", "queue.html", "queue", "queue.JSON"])
def test_cli_refuses_an_output_not_ending_in_json(make_input, tmp_path, capsys, name):
    """--output q/queue.csv would be written as JSON then overwritten by the CSV: refused."""
    root = make_input()
    assert _sample(root, tmp_path / name) == 64
    assert "review-output-suffix" in capsys.readouterr().err
    assert not any(p.name.startswith("queue") for p in tmp_path.iterdir())


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(-(2**70))])
def test_cli_refuses_a_seed_outside_64_bits(make_input, tmp_path, capsys, seed):
    """A negative or too large seed is a usage error (64), not a crash (70)."""
    root = make_input()
    assert _sample(root, tmp_path / "q.json", "--seed", seed) == 64
    assert "review-seed-range" in capsys.readouterr().err
    assert _sample(root, tmp_path / "q.json", "--seed", str(2**64 - 1), "--n", "5") == 0


def test_a_labels_field_past_the_csv_limit_blocks_located(make_input, tmp_path):
    """A labels row with a 200,000-character field BLOCKs naming the file and row (not exit 70)."""
    root = _labelled_input(make_input, tmp_path)
    with (root / "review" / "labels.csv").open("a") as fh:
        fh.write("x" * 200_000 + ",1.0,1.0\n")
    decision = _decide(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    text = orjson.dumps(decision).decode()
    assert "labels-unreadable" in text and "review/labels.csv row 302" in text


def test_cli_reports_an_unwritable_queue_as_73(make_input, tmp_path, capsys):
    """A QUEUE whose directory cannot be made is exit 73 (listed in --help), not a crash."""
    root = make_input()
    (tmp_path / "file").write_text("")
    assert _sample(root, tmp_path / "file" / "sub" / "q.json", "--n", "5") == 73
    assert "output-not-writable" in capsys.readouterr().err
