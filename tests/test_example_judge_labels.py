"""examples/ragtruth-judge-labels decides as README says: a judge biased toward the candidate
passes the overall gate, the judge-corrected bound on 100 human labels REJECTs."""

from __future__ import annotations

import csv
import json

import orjson
import pytest

from ragwarrant import cli
from ragwarrant.gates.ppi import METHOD
from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "ragtruth-judge-labels"
HUMAN = REPO / "examples" / "ragtruth-generators" / "evidence" / "quality.csv"


@pytest.fixture(scope="module")
def decision(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("ragtruth-judge-labels")
    assert cli.main(["run", "--input", str(EXAMPLE), "--output", str(out)]) == 10
    return orjson.loads((out / "decision.json").read_bytes())


def _gate(decision: dict, gate_id: str) -> dict:
    (cand,) = decision["candidates"]
    return next(g for g in cand["gates"] if g["id"] == gate_id)


def test_rejected_on_the_corrected_bound_where_the_judge_alone_passes(decision):
    """README: judge-only overall estimate +1.4 points, bound -4.1 (pass); corrected -21.9
    points, bounds [-30.4, -13.8] from 100 labels of 219 judged: REJECT."""
    assert decision["run_class"] == "REJECT" and decision["exit_code"] == 10
    g = _gate(decision, "noninferiority:no_hallucination")
    assert g["method"] == METHOD and g["status"] == "fail"
    d = g["details"]
    assert d["judge_only_status"] == "pass"
    assert round(d["judge_only_estimate"], 3) == 0.014
    assert round(d["judge_only_lower_bound"], 3) == -0.041
    assert (d["labelled_n"], d["judged_n"]) == (100, 219)
    assert round(g["estimate"], 3) == -0.219
    assert (round(g["lower_bound"], 3), round(g["upper_bound"], 3)) == (-0.304, -0.138)
    assert d["judge_bias"] > 0.15  # the judge favours the candidate
    assert _gate(decision, "noninferiority:no_hallucination@Data2txt")["status"] == "fail"


def _human_labels() -> dict[tuple[str, str], str]:
    with HUMAN.open(newline="") as fh:
        return {
            (r["example_id"], r["policy_id"]): r["no_hallucination"] for r in csv.DictReader(fh)
        }


def test_labels_are_ragtruths_annotations_of_the_drawn_items():
    """Every label is RAGTruth's human label of the output shown (the committed human example),
    for the 100 items the queue records, drawn among confirmatory examples."""
    queue = json.loads((EXAMPLE / "review" / "queue.json").read_text())
    human = _human_labels()
    policy = {"baseline": queue["baseline"], "candidate": queue["candidate"]}
    with (EXAMPLE / "review" / "labels.csv").open(newline="") as fh:
        labels = {r["item_id"]: (r["label_a"], r["label_b"]) for r in csv.DictReader(fh)}
    assert len(queue["items"]) == len(labels) == 100
    for item in queue["items"]:
        expected = tuple(human[(item["example_id"], policy[role])] for role in item["shown"])
        assert labels[item["item_id"]] == expected


def test_judge_scores_differ_from_the_human_labels_in_the_candidates_favour():
    """The evidence holds the simulated judge's scores, more lenient with the candidate."""
    human = _human_labels()
    lenient = {"gpt-4-0613": 0, "llama-2-70b-chat": 0}
    with (EXAMPLE / "evidence" / "quality.csv").open(newline="") as fh:
        for r in csv.DictReader(fh):
            truth = float(human[(r["example_id"], r["policy_id"])])
            lenient[r["policy_id"]] += float(r["judge_score"]) > truth
    assert lenient["llama-2-70b-chat"] > 3 * lenient["gpt-4-0613"]


def test_committed_example_holds_no_passage_text():
    """Only ids, labels, scores and counts: the reviewer's sheet carries no RAGTruth text."""
    sheet = (EXAMPLE / "review" / "queue.csv").read_text().splitlines()
    assert all(line.endswith(",,,,,,") for line in sheet[1:])
