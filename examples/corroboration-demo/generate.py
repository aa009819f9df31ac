"""Write the corroboration demo's evidence: a fictional shop's FAQ, answered by two policies.

Every question, passage and response below was written for this example (the shop "Brightwell",
its "Lumo", "Aurora" and "Breeze" products and all their facts are invented). The script is
deterministic: running it twice writes identical bytes.

    .venv/bin/python examples/corroboration-demo/generate.py

It plants, and then checks with ragwarrant's own deterministic checks, what README.md describes:
six answers of the candidate in the `orders` slice that add claims the context does not support
while the judge scores them as faithful, two examples per policy whose three judge samples
disagree, one fabricated citation, one honest refusal and one irrelevant retrieval.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ragwarrant.corroborators.calibration import load_calibration
from ragwarrant.corroborators.checks import check_example

HERE = Path(__file__).resolve().parent

PRODUCTS = [
    "Lumo kettle",
    "Lumo toaster",
    "Aurora desk lamp",
    "Aurora floor lamp",
    "Breeze fan",
    "Breeze heater",
]
COLOURS = ["slate grey", "sage green", "warm white", "matte black", "dune beige", "ocean blue"]
REGIONS = ["the UK", "Ireland", "France", "Germany", "Spain", "Italy"]

# Product facts: (question, passage, grounded answer), parameterised by product index i.
PRODUCT_FACTS = [
    (
        "How many years of warranty does the {p} have?",
        "The {p} comes with a {w}-year warranty that covers parts and labour.",
        "The {p} has a {w}-year warranty covering parts and labour.",
    ),
    (
        "How many watts does the {p} draw?",
        "At full power the {p} draws {watts} watts from the mains.",
        "The {p} draws {watts} watts at full power.",
    ),
    (
        "How heavy is the {p}?",
        "The {p} weighs {kg} kilograms without its packaging.",
        "Without packaging the {p} weighs {kg} kilograms.",
    ),
    (
        "Which colours does the {p} come in?",
        "The {p} is sold in {c1} and {c2}.",
        "You can buy the {p} in {c1} or {c2}.",
    ),
    (
        "How long is the power cable of the {p}?",
        "The {p} ships with a {m}-metre power cable.",
        "The {p} has a {m}-metre power cable.",
    ),
]
ORDER_FACTS = [
    (
        "How many working days does delivery to {r} take?",
        "Orders shipped to {r} arrive within {d} working days of dispatch.",
        "Orders to {r} arrive within {d} working days of dispatch.",
    ),
    (
        "How many days do I have to return an order from {r}?",
        "Customers in {r} may return unused items within {ret} days of delivery.",
        "In {r} you may return unused items within {ret} days of delivery.",
    ),
    (
        "How much is standard shipping to {r}?",
        "Standard shipping to {r} costs {fee} euros and is free above 60 euros.",
        "Standard shipping to {r} costs {fee} euros, and it is free for orders above 60 euros.",
    ),
    (
        "How many days does a refund to {r} take?",
        "Refunds for customers in {r} reach the original card within {rf} days of the return "
        "arriving.",
        "Refunds in {r} reach the original card within {rf} days after the return arrives.",
    ),
    (
        "What hours is phone support open for {r}?",
        "Phone support for {r} is open from {h1} to {h2} on weekdays.",
        "Phone support for {r} is open from {h1} to {h2} on weekdays.",
    ),
]
DISTRACTOR = "Brightwell gift cards never expire and can be used online or in any Brightwell shop."

# Claims the context does not support, appended to six candidate answers in the orders slice.
INVENTED = [
    "Premium members also get free express courier delivery on the same evening by electric van.",
    "Loyalty members can extend this period through the mobile app and receive bonus vouchers.",
    "Courier drivers additionally collect parcels from lockers at railway stations every Sunday.",
    "Customers paying by voucher additionally receive cashback credited monthly into "
    "loyalty wallets.",
    "Weekend callers are redirected toward chatbot assistants trained by volunteer "
    "engineers overseas.",
    "Members receive priority handling whenever warehouse staff process seasonal "
    "promotional bundles.",
]


def _product_row(i: int, k: int) -> dict[str, str]:
    p = PRODUCTS[i]
    params = {
        "p": p,
        "w": 2 + i % 3,
        "watts": 800 + 150 * i,
        "kg": f"{1.2 + 0.4 * i:.1f}",
        "c1": COLOURS[i],
        "c2": COLOURS[(i + 2) % 6],
        "m": f"{1.0 + 0.25 * i:.2f}",
    }
    q, ctx, ans = (s.format(**params) for s in PRODUCT_FACTS[k])
    return {"question": q, "context": ctx, "answer": ans}


def _order_row(i: int, k: int) -> dict[str, str]:
    r = REGIONS[i]
    params = {
        "r": r,
        "d": 2 + i,
        "ret": 14 + 2 * i,
        "fee": 3 + i,
        "rf": 5 + i,
        "h1": f"{8 + i % 2}am",
        "h2": f"{5 + i % 3}pm",
    }
    q, ctx, ans = (s.format(**params) for s in ORDER_FACTS[k])
    return {
        "question": q[0].upper() + q[1:],
        "context": ctx[0].upper() + ctx[1:],
        "answer": ans[0].upper() + ans[1:],
    }


def build_rows() -> list[dict[str, object]]:
    """Every (policy, example) row of the evidence file, baseline first."""
    examples = []
    for k in range(5):
        for i in range(6):
            examples.append(("product", f"prod-{k}{i}", _product_row(i, k)))
    for k in range(5):
        for i in range(6):
            examples.append(("orders", f"ord-{k}{i}", _order_row(i, k)))
    rows: list[dict[str, object]] = []
    invented = iter(INVENTED)
    for policy, cost_scale in (("baseline-large", 1.0), ("candidate-small", 0.45)):
        for n, (topic, ex_id, fact) in enumerate(examples):
            contexts = [fact["context"], DISTRACTOR]
            response = fact["answer"]
            quotes: list[str] = []
            samples = [0.92, 0.92, 0.92]
            relevance = 0.9
            correct = 0.0 if n % 7 == 3 else 1.0  # the same correctness for both policies
            if policy == "candidate-small" and topic == "orders" and n % 5 == 1 and n < 60:
                response = (
                    f"{response} {next(invented)}"  # planted: judge says faithful, lexically not
                )
            if (
                n in (32, 47)
                and policy == "candidate-small"
                or n == 12
                and policy == "baseline-large"
            ):
                samples = [0.95, 0.2, 0.9]  # planted: the judge's samples disagree -> ABSTAIN
            if n == 40 and policy == "baseline-large":
                samples = [0.95, 0.3, 0.9]
            if n == 7 and policy == "candidate-small":
                quotes = [
                    "Every Brightwell appliance is covered for accidental damage for ten years."
                ]
            if n == 3 and policy == "baseline-large":
                response = "The provided documents do not say how heavy it is."
                samples, relevance = [0.1, 0.1, 0.1], 0.2
            if n == 20 and policy == "candidate-small":
                contexts = [DISTRACTOR]  # planted: the retriever missed the relevant passage
                response = (
                    "Brightwell gift cards never expire and can be used online or in any shop."
                )
                relevance = 0.1
            rows.append(
                {
                    "example_id": ex_id,
                    "policy": policy,
                    "topic": topic,
                    "question": fact["question"],
                    "response": response,
                    "contexts": json.dumps(contexts, ensure_ascii=False),
                    "cited_quotes": json.dumps(quotes, ensure_ascii=False) if quotes else "",
                    "correct": correct,
                    "faithfulness": round(sum(samples) / 3, 4),
                    "faithfulness_s1": samples[0],
                    "faithfulness_s2": samples[1],
                    "faithfulness_s3": samples[2],
                    "answer_relevancy": relevance,
                    "cost_usd": round(cost_scale * (0.0021 + 0.0003 * (n % 9)), 6),
                }
            )
    return rows


def check_plantings(rows: list[dict[str, object]]) -> dict[str, int]:
    """Run the deterministic checks on every row; return counts per policy and finding."""
    threshold = load_calibration().thresholds["hybrid"]
    counts: dict[str, int] = {}
    for r in rows:
        ch = check_example(
            str(r["question"]),
            str(r["response"]),
            json.loads(str(r["contexts"])),
            json.loads(str(r["cited_quotes"])) if r["cited_quotes"] else [],
            lexical_gate="hybrid",
            lexical_threshold=threshold,
            context_relevance_floor=0.25,
            answer_relevance=float(r["answer_relevancy"]),  # type: ignore[arg-type]
        )
        for name, hit in (
            ("unsupported", ch.supported is False),
            ("refusal", ch.honest_refusal),
            ("fabricated", ch.fabricated_citation),
            ("retrieval-failed", ch.retrieval == "fail"),
        ):
            if hit:
                key = f"{r['policy']}:{r['topic']}:{name}"
                counts[key] = counts.get(key, 0) + 1
    return counts


def render_csv(rows: list[dict[str, object]]) -> str:
    """The evidence file's text (CSV, LF line ends)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main() -> None:
    """Write evidence/results.csv and verify the plantings are what README.md says."""
    rows = build_rows()
    counts = check_plantings(rows)
    expected = {
        "candidate-small:orders:unsupported": 6,
        "candidate-small:product:unsupported": 1,  # the fabricated citation
        "candidate-small:product:fabricated": 1,
        "candidate-small:product:retrieval-failed": 1,
        "baseline-large:product:refusal": 1,
    }
    if counts != expected:
        raise SystemExit(f"plantings differ from README.md: {counts}")
    (HERE / "evidence" / "results.csv").write_text(render_csv(rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows; plantings: {counts}")


if __name__ == "__main__":
    main()
