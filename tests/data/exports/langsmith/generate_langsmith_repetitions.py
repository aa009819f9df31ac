"""Write ``langsmith_repetitions_<policy>.csv``: a LangSmith experiment with ``num_repetitions=3``.

Run with langsmith 0.15.1 and pandas in a throwaway venv (never the project's), offline:
``evaluate(..., upload_results=False)`` runs the target and the evaluator locally and
``ExperimentResults.to_pandas()`` returns one row per run, so each dataset example appears three
times under one ``example_id``, each with its own run ``id``. The answers and the baseline
token F1 are those of ``langsmith_experiment_<policy>.csv`` (same dataset example ids); the
evaluator moves each score by -0.02, 0, +0.02 over the three repetitions, as a judge that varies
between runs would.

    python generate_langsmith_repetitions.py langsmith_experiment_baseline.csv baseline \\
        langsmith_repetitions_baseline.csv
"""

import csv
import os
import sys
import uuid
from datetime import UTC, datetime

os.environ["LANGSMITH_TRACING"] = "false"
os.environ.setdefault("LANGSMITH_API_KEY", "offline")
os.environ["LANGSMITH_ENDPOINT"] = "http://127.0.0.1:9"  # loopback: nothing is uploaded

from langsmith import evaluate, schemas  # noqa: E402

SOURCE, POLICY, OUT = sys.argv[1:4]
DATASET = uuid.UUID("8822f72b-641f-554f-8901-3370ef8163ef")

with open(SOURCE, newline="", encoding="utf-8") as fh:
    rows = list(csv.DictReader(fh))
by_question = {r["inputs.question_id"]: r for r in rows}
examples = [
    schemas.Example(
        id=uuid.UUID(r["example_id"]),
        dataset_id=DATASET,
        inputs={"question_id": r["inputs.question_id"], "question": r["inputs.question"]},
        outputs={"answer": r["reference.answer"]},
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    for r in rows
]
judged: dict[str, int] = {}


def target(inputs: dict) -> dict:
    return {"answer": by_question[inputs["question_id"]]["outputs.answer"]}


def token_f1(inputs: dict, outputs: dict) -> dict:
    q = inputs["question_id"]
    judged[q] = judged.get(q, 0) + 1
    score = float(by_question[q]["feedback.token_f1"]) + 0.02 * (judged[q] - 2)
    return {"key": "token_f1", "score": round(min(1.0, max(0.0, score)), 6)}


results = evaluate(
    target,
    data=examples,
    evaluators=[token_f1],
    num_repetitions=3,
    upload_results=False,
    metadata={"policy": POLICY},
    max_concurrency=0,
)
results.to_pandas().to_csv(OUT, index=False)
