"""Noninferiority decided on the judge-corrected bound when the contract names human labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson

from ragwarrant.audit.summary import more_data_text
from ragwarrant.cli import main
from ragwarrant.contract import ReleaseContract
from ragwarrant.digests import sha256_file
from ragwarrant.evidence.index import build_index
from ragwarrant.gates.candidate import evaluate_candidate
from ragwarrant.gates.ppi import gate_corrected
from ragwarrant.inputs import read_inputs, take_evidence
from ragwarrant.outputs import GateResult, GateStatus
from ragwarrant.pipeline import run_job
from ragwarrant.review import HumanLabelSet
from ragwarrant.review.sample import draw, evidence_digests, population
from tests.conftest import base_contract
from tests.evidence.test_index import evidence_table

N, DRAWN = 1200, 300


def judge_favours_candidate(seed: int = 0) -> tuple[dict, np.ndarray, np.ndarray]:
    """A judge that scores the candidate like the baseline, while reviewers see a 15-point loss.

    Returns the evidence arrays and the human 0/1 scores (candidate, baseline) of every example.
    """
    rng = np.random.default_rng(seed)
    base = (rng.random(N) < 0.8).astype(float)
    cand = np.where(rng.random(N) < 0.9, base, (rng.random(N) < 0.8).astype(float))  # a tie
    human_base = base.copy()
    human_cand = np.where(rng.random(N) < 0.15, 0.0, cand)  # reviewers: 15 % more failures
    task = np.array(["a" if i % 2 else "b" for i in range(N)])
    doc = np.array([f"d{i}" for i in range(N)])
    cost = rng.gamma(4.0, 0.01, N)
    data = {
        "base": {"correct": base, "cost_usd": cost, "task": task, "doc": doc},
        "cand": {"correct": cand, "cost_usd": cost * 0.5, "task": task, "doc": doc},
    }
    return data, human_cand, human_base


def write_review(
    root: Path,
    human_cand,
    human_base,
    *,
    missing: int = 0,
    extra: bool = False,
    metric="correct",
    labels_seed: int = 11,
    blank_losses: bool = False,
):
    """A queue of DRAWN random examples (``review sample``'s draw, seed 11) and the reviewers'
    labels CSV (of the draw of ``labels_seed``; ``blank_losses`` leaves both cells empty where
    the candidate's label is below the baseline's), in the input dir."""
    inputs = read_inputs(root)
    pop = population(take_evidence(inputs), inputs.contract, "correct", "base", "cand")
    digests = evidence_digests(inputs.contract, [(d.path, d.sha256) for d in inputs.digests])
    meta = ("correct", "base", "cand")
    queue = draw(pop, n=DRAWN, seed=11, stratify=False, meta=meta, evidence=digests)
    labelled = draw(pop, n=DRAWN, seed=labels_seed, stratify=False, meta=meta, evidence=digests)
    rows = ["item_id,label_a,label_b"]
    for k, item in enumerate(labelled.items):
        i = int(item.example_id[2:])
        values = {"candidate": human_cand[i], "baseline": human_base[i]}
        blank = k < missing or (blank_losses and human_cand[i] < human_base[i])
        a, b = ("", "") if blank else (values[item.shown[0]], values[item.shown[1]])
        rows.append(f"{item.item_id},{a},{b}")
    if extra:
        rows.append("zzz,1,0")
    queue = queue.model_copy(update={"metric": metric})
    (root / "review").mkdir()
    (root / "review" / "queue.json").write_bytes(orjson.dumps(queue.model_dump(mode="json")))
    (root / "review" / "labels.csv").write_text("\n".join(rows) + "\n")


def with_labels(c: dict) -> None:
    c["quality_metrics"][0]["human_labels"] = {
        "file": "review/labels.csv",
        "queue": "review/queue.json",
    }
    c["protected_slices"] = [{"value": "a", "min_paired_n": 30}]


def _run(root: Path, out: Path) -> dict:
    run_job(root, out, on_stage=lambda event, **fields: None)
    return orjson.loads((out / "decision.json").read_bytes())


def _gates(decision: dict) -> dict[str, dict]:
    return {g["id"]: g for g in decision["candidates"][0]["gates"]}


def test_judge_only_promotes_the_loss_the_labels_reveal(make_input, tmp_path):
    """Without labels the biased judge PROMOTEs; with them the corrected bound fails the gate."""
    data, hc, hb = judge_favours_candidate()
    plain = _run(make_input(data=data), tmp_path / "plain")
    assert plain["run_class"] == "PROMOTE"
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb)
    decided = _run(root, tmp_path / "out")
    gates = _gates(decided)
    overall, in_slice = gates["noninferiority:correct"], gates["noninferiority:correct@a"]
    assert decided["run_class"] == "REJECT"
    for g in (overall, in_slice):
        assert g["method"].startswith("ppi++")
        assert g["details"]["judge_only_status"] == "pass"
        assert g["details"]["judge_only_lower_bound"] > -0.05
        assert g["upper_bound"] < -0.05
        assert g["status"] == "fail"
        # the bound that proves the loss is cited: the upper one, below -margin
        cited = f"judge-corrected (PPI++) upper bound {g['upper_bound']:+.4g} < -margin"
        assert cited in g["reason"]
        assert g["details"]["judge_bias"] > 0.1
        assert 0 <= g["details"]["ppi_lambda"] <= 1
    assert overall["details"]["labelled_n"] == DRAWN
    assert overall["details"]["labels_outside_test"] == 0
    assert in_slice["details"]["labels_outside_test"] == DRAWN - in_slice["details"]["labelled_n"]
    assert overall["details"]["judged_n"] == N
    assert 0 < in_slice["details"]["labelled_n"] < DRAWN
    report = (tmp_path / "out" / "report.md").read_text()
    assert "judge-corrected (PPI++) upper bound" in report and "judge-only" in report


def test_labels_sha256_in_the_manifest(make_input, tmp_path):
    """The labels file and its queue are inputs: their sha256 are in manifest.json."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb)
    _run(root, tmp_path / "out")
    manifest = orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())
    inputs = {d["path"]: d["sha256"] for d in manifest["inputs"]}
    assert inputs["review/labels.csv"] == sha256_file(root / "review" / "labels.csv")
    assert inputs["review/queue.json"] == sha256_file(root / "review" / "queue.json")


def test_missing_labels_are_counted(make_input, tmp_path):
    """Drawn items without labels are counted in the gate, not dropped silently."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb, missing=40)
    g = _gates(_run(root, tmp_path / "out"))["noninferiority:correct"]
    assert (g["details"]["labels_drawn"], g["details"]["labels_missing"]) == (DRAWN, 40)
    assert g["details"]["labelled_n"] == DRAWN - 40
    assert g["details"]["labels_imputed"] == 40


def test_withheld_losses_do_not_promote(make_input, tmp_path):
    """Blanking exactly the labels that show a loss cannot help the candidate: the missing
    pairs are imputed adversarially, and report.md names labels_missing."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb, blank_losses=True)
    decision = _run(root, tmp_path / "out")
    g = _gates(decision)["noninferiority:correct"]
    assert decision["run_class"] == "REJECT" and g["status"] == "fail"
    assert g["details"]["labels_missing"] == g["details"]["labels_imputed"] > 0
    assert "labels_missing:" in (tmp_path / "out" / "report.md").read_text()


def test_labels_of_another_draw_block(make_input, tmp_path):
    """Labels written for another draw's items do not answer this queue (item ids carry the
    draw's tag), even though both draws number their items r0001..."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb, labels_seed=12)
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    assert "review/labels.csv row 2: item_id is not an item" in orjson.dumps(decision).decode()


def test_a_label_outside_the_draw_blocks(make_input, tmp_path):
    """A label for an item that is not in the queue BLOCKs the run, naming file, row, column."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb, extra=True)
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    text = orjson.dumps(decision).decode()
    assert "label-outside-draw" in text
    assert f"review/labels.csv row {DRAWN + 2}: item_id" in text


def test_changed_evidence_blocks(make_input, tmp_path):
    """A queue drawn from other evidence bytes does not answer this run's evidence."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb)
    with (root / "evidence" / "results.csv").open("a") as fh:
        fh.write("\n")
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    assert "review-queue-evidence-changed" in orjson.dumps(decision).decode()


_KW = {"min_labelled": 2, "least_favourable": (0.0, 1.0)}


def _judge_gate(threshold: float = -0.05) -> GateResult:
    return GateResult(
        id="noninferiority:correct",
        kind="noninferiority",
        status=GateStatus.PASS,
        metric="correct",
        estimate=0.0,
        lower_bound=-0.01,
        upper_bound=0.01,
        threshold=threshold,
        alpha=0.05,
        n=N,
        reason="correct: lower bound -0.01 > -margin -0.05",
        method="tango-score",
        details={"units": "pairs"},
    )


def _label_set(ids, cand, base) -> HumanLabelSet:
    return HumanLabelSet(
        metric="correct",
        baseline="base",
        candidate="cand",
        example_ids=tuple(ids),
        candidate_values=np.asarray(cand, dtype=float),
        baseline_values=np.asarray(base, dtype=float),
        drawn=len(ids),
        missing=0,
    )


def test_inconclusive_corrected_gate_says_how_many_more_labels():
    """A corrected bound straddling -margin is INCONCLUSIVE with a count of human labels."""
    rng = np.random.default_rng(3)
    ids = np.array([f"ex{i}" for i in range(N)], dtype=object)
    y_all = rng.normal(0.02, 0.5, N)
    f_all = y_all + rng.normal(0.0, 0.5, N)
    lab = rng.choice(N, 40, replace=False)
    labels = _label_set(ids[lab], y_all[lab], np.zeros(lab.size))
    pair = (f_all, np.zeros(N))
    first = gate_corrected(_judge_gate(), ids, pair, labels, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert first.estimate is not None
    threshold = first.estimate - float(first.details["standard_error"])  # type: ignore[arg-type]
    g = gate_corrected(
        _judge_gate(threshold), ids, pair, labels, sign=1, power=0.8, agree_at=0.5, **_KW
    )
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.more_paired_n is not None and g.more_paired_n > 0
    assert f"about {g.more_paired_n} more human labels would likely resolve it" in g.reason
    assert more_data_text(g).startswith(f"about {g.more_paired_n} more human labels")


def test_too_few_labels_in_a_test_is_inconclusive_not_the_judge():
    """With fewer than 2 labelled examples in the test the judge-only PASS does not stand."""
    ids = np.array([f"ex{i}" for i in range(10)], dtype=object)
    labels = _label_set(["ex1", "zz"], [1.0, 1.0], [0.0, 0.0])
    zeros = (np.zeros(10), np.zeros(10))
    g = gate_corrected(_judge_gate(), ids, zeros, labels, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.details["labelled_n"] == 1 and g.details["judge_only_status"] == "pass"


def test_below_the_minimum_labelled_n_is_inconclusive_with_the_count_needed():
    """Two labels never decide: below min_labelled the corrected gate is INCONCLUSIVE and
    says how many more labels are needed."""
    ids = np.array([f"ex{i}" for i in range(100)], dtype=object)
    labels = _label_set(ids[:2], [0.0, 0.0], [1.0, 1.0])
    judged = (np.zeros(100), np.ones(100))
    kw = _KW | {"min_labelled": 30}
    g = gate_corrected(_judge_gate(), ids, judged, labels, sign=1, power=0.8, agree_at=0.5, **kw)
    assert g.status is GateStatus.INCONCLUSIVE
    assert g.more_paired_n == 28 and "about 28 more human labels are needed" in g.reason


def test_human_delta_is_oriented_by_the_direction():
    """For a lower-is-better metric the human delta is baseline - candidate."""
    ids = np.array([f"ex{i}" for i in range(50)], dtype=object)
    labels = _label_set(ids[:20], np.zeros(20), np.full(20, 0.5))  # candidate lower: better
    judged = (np.zeros(50), np.full(50, 0.5))  # the judge agrees
    up = gate_corrected(
        _judge_gate(), ids, judged, labels, sign=-1, power=0.8, agree_at=0.25, **_KW
    )
    down = gate_corrected(
        _judge_gate(), ids, judged, labels, sign=1, power=0.8, agree_at=0.25, **_KW
    )
    assert (up.estimate, down.estimate) == (0.5, -0.5)
    assert up.details["judge_human_disagreements"] == 0
    assert up.details["judge_human_outputs"] == 40


def test_judge_human_disagreements_are_counted_per_output():
    """Each labelled output the judge classes otherwise than the reviewers counts once."""
    ids = np.array([f"ex{i}" for i in range(10)], dtype=object)
    labels = _label_set(ids[:4], [1, 1, 0, 0], [1, 0, 1, 0])
    judged = (np.array([1, 0, 0, 1] + [1] * 6, float), np.array([1, 0, 0, 0] + [0] * 6, float))
    g = gate_corrected(_judge_gate(), ids, judged, labels, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert (g.details["judge_human_disagreements"], g.details["judge_human_outputs"]) == (3, 8)


def test_a_queue_for_another_metric_blocks(make_input, tmp_path):
    """Labels drawn for another metric do not answer this one."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb, metric="other")
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    assert "review-queue-metric-mismatch" in orjson.dumps(decision).decode()


def test_labels_decide_the_confirmatory_scope_only():
    """The development split's screening stays on the judge; the confirmatory test uses labels."""
    data, hc, hb = judge_favours_candidate()
    table = evidence_table({p: {m: v[m] for m in ("correct", "cost_usd")} for p, v in data.items()})
    c = base_contract()
    c["quality_metrics"][0]["human_labels"] = {"file": "l.csv", "queue": "q.json"}
    contract = ReleaseContract.model_validate(c)
    ids = tuple(f"ex{i}" for i in range(DRAWN))
    labels = HumanLabelSet("correct", "base", "cand", ids, hc[:DRAWN], hb[:DRAWN], DRAWN, 0)
    index = build_index(table)
    scope = np.ones(index.n_examples, bool)
    methods = {}
    for name in ("development", "confirmatory"):
        ev = evaluate_candidate(
            index,
            contract,
            "cand",
            scope,
            config_missing=[],
            scope_name=name,
            labels={"correct": labels},
        )
        methods[name] = next(g.method for g in ev.gates if g.id == "noninferiority:correct")
    assert methods["development"] is not None
    assert not methods["development"].startswith("ppi++")
    assert methods["confirmatory"] == "ppi++ (cross-fitted, score)"


def test_clustered_evidence_is_named_in_the_reason():
    """Where the judge-only test resampled clusters, the reason says the bound does not."""
    ids = np.array([f"ex{i}" for i in range(50)], dtype=object)
    labels = _label_set(ids[:20], np.ones(20), np.ones(20))
    judged = (np.ones(50), np.ones(50))
    clustered = _judge_gate().model_copy(update={"details": {"units": "clusters"}})
    g = gate_corrected(clustered, ids, judged, labels, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert g.reason.endswith("the judge-only test resampled clusters)")
    plain = gate_corrected(
        _judge_gate(), ids, judged, labels, sign=1, power=0.8, agree_at=0.5, **_KW
    )
    assert "clusters" not in plain.reason


def test_a_labels_file_that_is_not_there_blocks(make_input, tmp_path):
    """The contract names labels the input lacks: hard:contract-references fails, the run BLOCKs."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    [gate] = [g for g in decision["run_gates"] if g["id"] == "hard:contract-references"]
    assert gate["status"] == "fail" and "human labels review/labels.csv (correct)" in gate["reason"]


def test_verify_input_rechecks_the_labels(make_input, tmp_path, capsys):
    """verify --input replays the run and catches a labels file edited after it."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb)
    out = tmp_path / "out"
    _run(root, out)
    assert main(["verify", str(out), "--input", str(root)]) == 0
    labels = root / "review" / "labels.csv"
    labels.write_text(labels.read_text().replace("-r0001,", "-r0001, "))
    assert main(["verify", str(out), "--input", str(root), "--no-replay"]) == 65
    assert "review/labels.csv" in capsys.readouterr().out


def test_a_queue_from_a_file_the_run_does_not_read_blocks(make_input, tmp_path):
    """A draw recorded from evidence this run does not read is not this run's draw."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, hc, hb)
    queue = root / "review" / "queue.json"
    queue.write_text(queue.read_text().replace("evidence/results.csv", "evidence/other.csv"))
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    text = orjson.dumps(decision).decode()
    assert "a file this run does not read, evidence/other.csv" in text


def test_inconclusive_beyond_reach_of_labels_asks_for_more_judged_examples():
    """When labelling every judged example would not do, the reason says more are needed."""
    rng = np.random.default_rng(8)
    n_total = 60
    ids = np.array([f"ex{i}" for i in range(n_total)], dtype=object)
    y_all = rng.normal(0.0, 1.0, n_total)
    labels = _label_set(ids[:30], y_all[:30], np.zeros(30))
    pair = (y_all + rng.normal(0.0, 1.0, n_total), np.zeros(n_total))
    first = gate_corrected(_judge_gate(), ids, pair, labels, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert first.estimate is not None
    threshold = first.estimate - 0.5 * float(first.details["standard_error"])  # type: ignore[arg-type]
    g = gate_corrected(
        _judge_gate(threshold), ids, pair, labels, sign=1, power=0.8, agree_at=0.5, **_KW
    )
    assert g.status is GateStatus.INCONCLUSIVE and g.more_paired_n is None
    assert "more judged examples, with labels, are needed" in g.reason


def test_constant_human_labels_block(make_input, tmp_path):
    """Every label the same on both sides (a reviewer who marked everything alike) tells the
    policies nothing: hard:constant-human-labels BLOCKs, where the bound without spread PROMOTEd."""
    data, hc, _ = judge_favours_candidate()
    data["cand"]["correct"] = data["base"]["correct"]  # the judge: a tie, which alone PROMOTEs
    root = make_input(data=data, mutate=with_labels)
    write_review(root, np.ones_like(hc), np.ones_like(hc))
    decision = _run(root, tmp_path / "out")
    gate = _gates(decision)["hard:constant-human-labels:correct"]
    assert decision["run_class"] == "BLOCK" and gate["status"] == "fail"
    assert "the human labels of correct (review/labels.csv) are constant (1)" in gate["reason"]


def test_a_fractional_label_of_a_binary_metric_blocks(make_input, tmp_path):
    """The evidence of ``correct`` is 0/1 (binary, detected): a label of 0.5 is refused, located."""
    data, hc, hb = judge_favours_candidate()
    root = make_input(data=data, mutate=with_labels)
    write_review(root, np.full_like(hc, 0.5), hb)
    decision = _run(root, tmp_path / "out")
    assert decision["run_class"] == "BLOCK"
    text = orjson.dumps(decision).decode()
    assert "label-not-binary" in text and "review/labels.csv row 2: label_" in text


def test_human_deltas_without_spread_never_pass():
    """Varying labels whose deltas are all 0 (every item tied) give a bound with no variance:
    INCONCLUSIVE, not noninferior; all-equal losses beyond the margin still fail."""
    ids = np.array([f"ex{i}" for i in range(100)], dtype=object)
    tied = np.arange(40) % 2
    judged = (np.zeros(100), np.zeros(100))
    g = gate_corrected(
        _judge_gate(), ids, judged, _label_set(ids[:40], tied, tied), sign=1, power=0.8,
        agree_at=0.5, **_KW,
    )  # fmt: skip
    assert g.status is GateStatus.INCONCLUSIVE and g.more_paired_n is None
    assert "the human deltas show no spread (each +0)" in g.reason
    loss = _label_set(ids[:40], np.zeros(40), np.ones(40))
    g = gate_corrected(_judge_gate(), ids, judged, loss, sign=1, power=0.8, agree_at=0.5, **_KW)
    assert g.status is GateStatus.FAIL
