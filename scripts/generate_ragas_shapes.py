"""Write two Ragas export shapes the adapters had not seen, with the real library, offline.

Run in a throwaway venv with ``ragas==0.4.3`` (never the project's environment):
``python scripts/generate_ragas_shapes.py tests/data/exports``. It reads the handbook questions,
answers and retrieved passages of ``<root>/ragas/ragas_evaluate_<policy>.csv`` and the question
ids of ``<root>/deepeval/<policy>/test_run_*.json``, and writes, with no LLM call:

- ``ragas/ragas_evaluate_both_policies.csv``: ``ragas.evaluate`` with four non-LLM metrics per
  policy, ``EvaluationResult.to_pandas()``, then what users do to compare two runs: add
  ``question_id`` and ``policy`` columns, concatenate both policies, ``to_csv(index=False)``;
- ``ragas/experiments/handbook-<policy>.csv``: an ``@experiment`` run per policy over a
  ``Dataset`` (``local/csv`` backend) whose rows carry ``question_id``, ``question`` and
  ``reference``; the experiment returns the row, the policy's ``response`` and two
  ``numeric_metric`` scores (``token_f1``, ``gold_context_recall``). The policy is only in the
  run name, as the ``local/csv`` backend writes it: ``experiments/<name>.csv``.
"""

import ast
import asyncio
import json
import re
import sys
from pathlib import Path

import pandas as pd
import ragas
from ragas import Dataset, EvaluationDataset, SingleTurnSample, evaluate, experiment
from ragas.metrics import (
    BleuScore,
    IDBasedContextRecall,
    MetricResult,
    NonLLMStringSimilarity,
    RougeScore,
    numeric_metric,
)

POLICIES = ("baseline", "candidate")


def _handbook(root: Path, policy: str) -> pd.DataFrame:
    frame = pd.read_csv(root / "ragas" / f"ragas_evaluate_{policy}.csv")
    (run,) = (root / "deepeval" / policy).glob("test_run_*.json")
    ids = {
        c["input"]: c["metadata"]["question_id"] for c in json.loads(run.read_text())["testCases"]
    }
    frame["question_id"] = frame["user_input"].map(ids)
    for column in ("retrieved_contexts", "retrieved_context_ids", "reference_context_ids"):
        frame[column] = frame[column].map(ast.literal_eval)
    return frame.sort_values("question_id").reset_index(drop=True)


def _both_policies(root: Path) -> None:
    metrics = [NonLLMStringSimilarity(), RougeScore(), BleuScore(), IDBasedContextRecall()]
    frames = []
    for policy in POLICIES:
        data = _handbook(root, policy)
        samples = [
            SingleTurnSample(
                user_input=r.user_input,
                response=r.response,
                reference=r.reference,
                retrieved_contexts=r.retrieved_contexts,
                retrieved_context_ids=r.retrieved_context_ids,
                reference_context_ids=r.reference_context_ids,
            )
            for r in data.itertuples()
        ]
        result = evaluate(EvaluationDataset(samples=samples), metrics=metrics, show_progress=False)
        frame = result.to_pandas()
        frame.insert(0, "question_id", data["question_id"])
        frame.insert(1, "policy", policy)
        frames.append(frame)
    pd.concat(frames).to_csv(root / "ragas" / "ragas_evaluate_both_policies.csv", index=False)


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", str(text).lower())


@numeric_metric(name="token_f1", allowed_values=(0.0, 1.0))
def token_f1(response: str, reference: str) -> MetricResult:
    """SQuAD-style token F1 of the response against the reference."""
    got, want = _tokens(response), _tokens(reference)
    common = sum(min(got.count(t), want.count(t)) for t in set(got))
    if not common:
        return MetricResult(value=0.0, reason="no shared token")
    precision, recall = common / len(got), common / len(want)
    return MetricResult(value=2 * precision * recall / (precision + recall), reason="token overlap")


@numeric_metric(name="gold_context_recall", allowed_values=(0.0, 1.0))
def gold_context_recall(retrieved: list[str], gold: list[str]) -> MetricResult:
    """Share of gold passages among the retrieved ones."""
    return MetricResult(value=len(set(gold) & set(retrieved)) / len(gold), reason="ids")


async def _experiments(root: Path) -> None:
    out = root / "ragas"
    for policy in POLICIES:
        data = _handbook(root, policy)
        by_id = {r.question_id: r for r in data.itertuples()}
        rows = [
            {"question_id": r.question_id, "question": r.user_input, "reference": r.reference}
            for r in data.itertuples()
        ]
        dataset = Dataset(name="handbook", backend="local/csv", root_dir=str(out), data=rows)

        @experiment()
        async def handbook(row: dict, by_id: dict = by_id) -> dict:
            answer = by_id[row["question_id"]]
            return {
                **row,
                "response": answer.response,
                "token_f1": token_f1.score(
                    response=answer.response, reference=row["reference"]
                ).value,
                "gold_context_recall": gold_context_recall.score(
                    retrieved=answer.retrieved_context_ids, gold=answer.reference_context_ids
                ).value,
            }

        await handbook.arun(dataset, name=f"handbook-{policy}")


if __name__ == "__main__":
    target = Path(sys.argv[1])
    print(f"ragas {ragas.__version__}, pandas {pd.__version__}")
    _both_policies(target)
    # ragas 0.4.3 patches the event loop (nest_asyncio): a fresh loop for the experiments. Its
    # teardown may then raise IndexError (pop from an empty deque) after both files are written.
    asyncio.new_event_loop().run_until_complete(_experiments(target))
