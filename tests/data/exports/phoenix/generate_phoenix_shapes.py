"""Write Phoenix annotation dataframes and DocumentEvaluations with the real library.

Reads the real evaluate_dataframe and spans exports of tests/data/exports/phoenix/<policy>/ and
writes, next to them:
- phoenix_annotations_<policy>.parquet: ``phoenix.evals.utils.to_annotation_dataframe`` of the
  evaluate_dataframe export (long layout: one row per span and annotation);
- phoenix_document_evaluations_relevance_<policy>.parquet: ``DocumentEvaluations.save`` of a
  relevance evaluation of each retrieved document (1.0 when the document is a gold passage);
- phoenix_shapes_expected.json: the library's own reading of both (``DocumentEvaluations.load``
  reduced per span with mean / max / any, and the annotation frame's scores).
"""

import json
import sys
from pathlib import Path

import pandas as pd
import phoenix
from phoenix.evals.utils import to_annotation_dataframe
from phoenix.trace import DocumentEvaluations

root = Path(sys.argv[1])
expected = {"writer": f"arize-phoenix {phoenix.__version__}, pandas {pd.__version__}"}
for policy in ("baseline", "candidate"):
    d = root / policy
    evals = pd.read_parquet(d / f"phoenix_evaluate_dataframe_{policy}.parquet")
    spans = pd.read_parquet(d / f"phoenix_spans_{policy}.parquet")
    ann = to_annotation_dataframe(dataframe=evals)
    ann.to_parquet(d / f"phoenix_annotations_{policy}.parquet", index=False)
    trace_of = dict(zip(spans["context.span_id"], spans["context.trace_id"]))
    gold = {trace_of[s]: set(g) for s, g in zip(evals.index, evals["gold_ids"])}
    rows = []
    retr = spans[spans["attributes.openinference.span.kind"] == "RETRIEVER"]
    for span_id, trace, docs in zip(
        retr["context.span_id"], retr["context.trace_id"], retr["attributes.retrieval.documents"]
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
    de = DocumentEvaluations(eval_name="relevance", dataframe=pd.DataFrame(rows))
    eid = de.save(d)
    out = d / f"phoenix_document_evaluations_relevance_{policy}.parquet"
    (d / f"evaluations-{eid}.parquet").rename(out)
    loaded = DocumentEvaluations.load(eid, d) if False else None
    df = pd.read_parquet(out)  # what DocumentEvaluations.load reads back (same file)
    g = df.groupby("context.span_id")["score"]
    expected[policy] = {
        "annotations": {
            f"{s}|{n}": v
            for s, n, v in zip(
                ann["context.span_id"] if "context.span_id" in ann else ann.iloc[:, 0],
                ann["annotation_name"],
                ann["score"],
            )
        },
        "documents_mean": g.mean().to_dict(),
        "documents_max": g.max().to_dict(),
        "documents_any": (g.max() > 0).astype(float).to_dict(),
        "annotation_columns": ann.columns.tolist(),
    }
json.dump(
    expected,
    open(root / "phoenix_shapes_expected.json", "w"),
    indent=1,
    sort_keys=True,
    default=str,
)
