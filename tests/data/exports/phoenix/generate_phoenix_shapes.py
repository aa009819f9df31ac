"""Write Phoenix annotation dataframes and DocumentEvaluations with the real library.

Run in a throwaway venv with ``arize-phoenix==20.26.1`` (never the project's):
``python generate_phoenix_shapes.py tests/data/exports/phoenix``. Reads the real
evaluate_dataframe and spans exports of ``<root>/<policy>/`` and writes next to them:

- ``phoenix_annotations_<policy>.parquet``: ``phoenix.evals.utils.to_annotation_dataframe`` of
  the evaluate_dataframe export (long layout: one row per span and annotation name);
- ``phoenix_document_evaluations_relevance_<policy>.parquet``: ``DocumentEvaluations.save`` of a
  relevance evaluation of each retrieved document (1.0 when it is a gold passage);
- ``phoenix_shapes_expected.json``: the library's own reading of both (the annotation frame's
  scores; the saved DocumentEvaluations read back and reduced per span with mean, max, any).
"""

import json
import sys
from pathlib import Path

import pandas as pd
import phoenix
from phoenix.evals.utils import to_annotation_dataframe
from phoenix.trace import DocumentEvaluations


def _documents(spans: pd.DataFrame, evals: pd.DataFrame) -> pd.DataFrame:
    trace_of = dict(zip(spans["context.span_id"], spans["context.trace_id"], strict=True))
    gold = {trace_of[s]: set(g) for s, g in zip(evals.index, evals["gold_ids"], strict=True)}
    retr = spans[spans["attributes.openinference.span.kind"] == "RETRIEVER"]
    rows = []
    for span_id, trace, docs in zip(
        retr["context.span_id"],
        retr["context.trace_id"],
        retr["attributes.retrieval.documents"],
        strict=True,
    ):
        for pos, doc in enumerate(list(docs) if docs is not None else []):
            hit = doc.get("document.id") in gold.get(trace, set())
            rows.append(
                {
                    "context.span_id": span_id,
                    "document_position": pos,
                    "score": 1.0 if hit else 0.0,
                    "label": "relevant" if hit else "irrelevant",
                    "explanation": "gold passage" if hit else "not a gold passage",
                }
            )
    return pd.DataFrame(rows)


def _one_policy(root: Path, policy: str) -> dict:
    d = root / policy
    evals = pd.read_parquet(d / f"phoenix_evaluate_dataframe_{policy}.parquet")
    spans = pd.read_parquet(d / f"phoenix_spans_{policy}.parquet")
    ann = to_annotation_dataframe(dataframe=evals)
    ann.to_parquet(d / f"phoenix_annotations_{policy}.parquet", index=False)
    evals_id = DocumentEvaluations(eval_name="relevance", dataframe=_documents(spans, evals)).save(
        d
    )
    out = d / f"phoenix_document_evaluations_relevance_{policy}.parquet"
    (d / f"evaluations-{evals_id}.parquet").rename(out)
    scores = pd.read_parquet(out).groupby("context.span_id")["score"]
    keys = zip(ann["context.span_id"], ann["annotation_name"], ann["score"], strict=True)
    return {
        "annotations": {f"{s}|{n}": v for s, n, v in keys},
        "documents_mean": scores.mean().to_dict(),
        "documents_max": scores.max().to_dict(),
        "documents_any": (scores.max() > 0).astype(float).to_dict(),
        "annotation_columns": ann.columns.tolist(),
    }


def main(root: Path) -> None:
    expected = {"writer": f"arize-phoenix {phoenix.__version__}, pandas {pd.__version__}"}
    for policy in ("baseline", "candidate"):
        expected[policy] = _one_policy(root, policy)
    with (root / "phoenix_shapes_expected.json").open("w", encoding="utf-8") as fh:
        json.dump(expected, fh, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
