"""Write a TruLens 2.x OTel-mode records-and-feedback table (OTel tracing is the default).

Run in a throwaway venv with ``trulens==2.16.0`` (never the project's): ``python
generate_trulens_otel.py trulens_otel_records_and_feedback.csv trulens_otel_expected.json``.
The expected file holds the library's own reading: ``get_records_and_feedback()``'s Token F1.
"""

import json
import os
import sys
import time

import pandas as pd
import trulens.core
from trulens.apps.app import TruApp
from trulens.core import Feedback, TruSession
from trulens.core.otel.instrument import instrument

os.environ.pop("TRULENS_OTEL_TRACING", None)


class RAG:
    """A toy app whose answers differ per policy."""

    def __init__(self, policy: str) -> None:
        self.policy = policy

    @instrument()
    def query(self, question: str) -> str:
        if self.policy == "candidate":
            return "The handbook says " + question.lower()
        return "I do not know"


def token_f1(output: str) -> float:
    return min(1.0, len(output) / 60.0)


def main(csv_path: str, expected_path: str) -> None:
    session = TruSession()
    session.reset_database()
    f = Feedback(token_f1, name="Token F1").on_output()
    questions = [f"What is policy number {i}?" for i in range(1, 6)]
    for policy in ("baseline", "candidate"):
        app = TruApp(RAG(policy), app_name="acme-handbook-rag", app_version=policy, feedbacks=[f])
        for q in questions:
            with app:
                app.app.query(q)
        session.force_flush()
        app.compute_feedbacks()
    session.force_flush()
    time.sleep(1)
    df, _ = session.get_records_and_feedback()
    df.to_csv(csv_path, index=False)
    expected = {
        "writer": f"trulens {trulens.core.__version__}, pandas {pd.__version__}",
        "token_f1": {f"{r.app_version}|{r.input}": r["Token F1"] for _, r in df.iterrows()},
    }
    with open(expected_path, "w", encoding="utf-8") as fh:
        json.dump(expected, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
