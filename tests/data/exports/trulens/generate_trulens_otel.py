"""Write a TruLens 2.x OTel-mode records-and-feedback table (the default tracing mode)."""

import os
import sys

import pandas as pd

os.environ.pop("TRULENS_OTEL_TRACING", None)
from trulens.apps.app import TruApp
from trulens.core import Feedback, TruSession
from trulens.core.otel.instrument import instrument as otel_instrument

session = TruSession()
session.reset_database()


class RAG:
    def __init__(self, policy):
        self.policy = policy

    @otel_instrument()
    def query(self, question: str) -> str:
        return (
            ("The handbook says " + question.lower())
            if self.policy == "candidate"
            else "I do not know"
        )


def token_f1(output: str) -> float:
    return min(1.0, len(output) / 60.0)


f = Feedback(token_f1, name="Token F1").on_output()
qs = [f"What is policy number {i}?" for i in range(1, 6)]
for policy in ("baseline", "candidate"):
    app = TruApp(RAG(policy), app_name="acme-handbook-rag", app_version=policy, feedbacks=[f])
    for q in qs:
        with app as rec:
            app.app.query(q)
    session.force_flush()
    try:
        app.compute_feedbacks()
    except Exception as e:
        print("compute_feedbacks:", type(e).__name__, e, file=sys.stderr)
session.force_flush()
import time

time.sleep(1)
df, fb = session.get_records_and_feedback()
print(df.columns.tolist(), fb, len(df), file=sys.stderr)
df.to_csv(sys.argv[1], index=False)
import json

import trulens.core

expected = {
    "writer": f"trulens {trulens.core.__version__}, pandas {pd.__version__}",
    "token_f1": {f"{r.app_version}|{r.input}": r["Token F1"] for _, r in df.iterrows()},
}
json.dump(expected, open(sys.argv[2], "w"), indent=1, sort_keys=True)
