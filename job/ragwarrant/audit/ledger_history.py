"""A run's ledger entry, and the ledger's history rendered from those entries.

``build_entry`` selects what the ledger keeps of one run's ``decision.json`` and ``record_run``
appends it (``audit.ledger.append_entry``, the chain). ``show_history`` renders the entries per
contract and policy (``ragwarrant ledger show``), and ``drifting_slices`` flags a slice whose
abstention rate rose over the last runs (early drift).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ragwarrant.audit.ledger import (
    LEDGER_SCHEMA_VERSION,
    Ledger,
    append_entry,
    is_marker,
)
from ragwarrant.digests import sha256_bytes
from ragwarrant.errors import InputError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# ---------------------------------------------------------------------------------------------
# What the ledger keeps of a run.

_BOUND_FIELDS = (
    "metric",
    "slice",
    "statistic",
    "estimate",
    "lower_bound",
    "upper_bound",
    "threshold",
)
_ABSTENTION_FIELDS = (
    "policy_id",
    "slice",
    "abstention_rate",
    "disagreement_rate",
    "n_abstained",
    "n_with_samples",
    "n_judged",
)


def _failed(gates: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(g.get("id")) for g in gates if g.get("status") == "fail"]


def _candidate_entry(c: Mapping[str, Any]) -> dict[str, Any]:
    gates = c.get("gates") or []
    return {
        "policy_id": c.get("policy_id"),
        "class": c.get("class", c.get("decision_class")),
        "reasons": list(c.get("reasons") or []),
        "tested_on": c.get("tested_on"),
        "paired_n": c.get("paired_n"),
        "failed_gates": _failed(gates),
        "bounds": [
            {
                "id": g.get("id"),
                "status": g.get("status"),
                **{k: g[k] for k in _BOUND_FIELDS if g.get(k) is not None},
            }
            for g in gates
            if g.get("lower_bound") is not None or g.get("upper_bound") is not None
        ],
    }


def build_entry(
    decision: Mapping[str, Any], manifest_sha256: str, contract_sha256: str
) -> dict[str, Any]:
    """Select what the ledger keeps of one run (without ``seq``/``prev_hash``/``entry_hash``).

    Args:
        decision: ``decision.json`` as a dict (``Decision.model_dump(mode="json", by_alias=True)``;
            a candidate's class under ``class``, or ``decision_class``).
        manifest_sha256: sha256 hex of the bytes of ``manifest.json`` as written.
        contract_sha256: sha256 hex of the contract file.

    Returns:
        The entry: run id, time (the decision's ``finished_at``), contract id/version/sha256,
        evidence class, run class and exit code, selected policy, per candidate its class,
        reasons, paired n, failed gate ids (blockers) and every gate with a confidence bound,
        run-level failed gates, the error code of an ERROR run, the abstention records (of
        ``corroboration.rates``: policy, slice — null is every example —, abstention and
        disagreement rates and their counts, sorted by policy and slice; null without
        corroboration), and the manifest's sha256.
    """
    contract = decision.get("contract") or {}
    rates = (decision.get("corroboration") or {}).get("rates")
    abstention = None
    if rates is not None:
        kept = ({k: r.get(k) for k in _ABSTENTION_FIELDS} for r in rates)
        abstention = sorted(kept, key=lambda r: (str(r["policy_id"]), str(r["slice"])))
    error = decision.get("error")
    entry: dict[str, Any] = {
        "ledger_schema": LEDGER_SCHEMA_VERSION,
        "run_id": decision.get("run_id"),
        "time": decision.get("finished_at") or decision.get("started_at"),
        "contract": {
            "id": contract.get("id"),
            "version": contract.get("version"),
            "sha256": contract_sha256,
        },
        "evidence_class": decision.get("evidence_class"),
        "run_class": decision.get("run_class"),
        "exit_code": decision.get("exit_code"),
        "selected_policy": decision.get("selected_policy"),
        "candidates": [_candidate_entry(c) for c in decision.get("candidates") or []],
        "run_failed_gates": _failed(decision.get("run_gates") or []),
        "error": {"type": error.get("type"), "code": error.get("code")} if error else None,
        "abstention": abstention,
        "manifest_sha256": manifest_sha256,
    }
    if decision.get("look") is not None:
        entry["look"] = decision["look"]
    return entry


def record_run(
    ledger_path: Path,
    output_dir: Path,
    private_key: Ed25519PrivateKey | None = None,
    *,
    since_seq: int = 0,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Append the ledger entry of a completed run; return the entry as written.

    Reads ``decision.json`` and ``manifest.json`` back from ``output_dir`` (so the entry hashes
    exactly what was published). Call after the manifest is written.

    Args:
        ledger_path: the ledger file (``--ledger FILE``).
        output_dir: the run's output directory.
        private_key: the run's signing key; the entry is then signed (``append_entry``).
        since_seq: as ``append_entry``: the tip the run's look was resolved at.
        check: as ``append_entry``: refuses the append when its look went stale.

    Raises:
        OutputError: the ledger cannot be written, or its tail is damaged.
        RagwarrantError: whatever ``check`` raises.
        InternalError: the decision holds NaN or Infinity (``append_entry``).
    """
    decision = orjson.loads((output_dir / "decision.json").read_bytes())
    manifest_sha256 = sha256_bytes((output_dir / "manifest.json").read_bytes())
    contract_sha256 = str((decision.get("contract") or {}).get("sha256") or "")
    entry = build_entry(decision, manifest_sha256, contract_sha256)
    return append_entry(ledger_path, entry, private_key, since_seq=since_seq, check=check)


# ---------------------------------------------------------------------------------------------
# History and drift.


@dataclass(frozen=True)
class DriftFlag:
    """A slice whose abstention rate rose over the last ``window`` runs.

    Attributes:
        contract_id, policy_id, slice: where.
        rates: the last ``window`` abstention rates, oldest first (fractions in [0, 1]).
        rise: last − first of ``rates``.
    """

    contract_id: str
    policy_id: str
    slice: str
    rates: tuple[float, ...]
    rise: float


def _abstention_series(
    entries: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, str, str], list[tuple[str, str, float]]]:
    """(contract, policy, slice) → [(time, run_id, abstention_rate)] in ledger order."""
    series: dict[tuple[str, str, str], list[tuple[str, str, float]]] = {}
    for e in entries:
        cid = str((e.get("contract") or {}).get("id"))
        for r in e.get("abstention") or []:
            rate = r.get("abstention_rate")
            if rate is None:
                continue
            key = (
                cid,
                str(r.get("policy_id")),
                str(r.get("slice") if r.get("slice") is not None else "(all)"),
            )
            series.setdefault(key, []).append(
                (str(e.get("time")), str(e.get("run_id")), float(rate))
            )
    return series


def drifting_slices(
    entries: Sequence[Mapping[str, Any]], *, window: int = 3, min_rise: float = 0.02
) -> list[DriftFlag]:
    """Flag slices whose abstention rate rose at every one of the last ``window`` runs.

    A slice is flagged when its last ``window`` recorded rates are strictly increasing and the
    last exceeds the first by at least ``min_rise`` (absolute, as a fraction): a rising abstention
    rate in one slice is early drift, visible before aggregate quality scores move.

    Args:
        entries: ledger entries in ledger (time) order.
        window: number of most recent runs that must each rise; at least 2.
        min_rise: smallest total rise (fraction) worth a flag.
    """
    flags = []
    for (cid, pid, slice_), points in sorted(_abstention_series(entries).items()):
        if len(points) < window:
            continue
        rates = tuple(p[2] for p in points[-window:])
        if (
            all(b > a for a, b in zip(rates, rates[1:], strict=False))
            and rates[-1] - rates[0] >= min_rise
        ):
            flags.append(DriftFlag(cid, pid, slice_, rates, rates[-1] - rates[0]))
    return flags


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:+.4g}"
    return str(x)


def _run_line(e: Mapping[str, Any]) -> str:
    c = e.get("contract") or {}
    blockers = e.get("run_failed_gates")
    return (
        f"    {e.get('time')}  {e.get('run_id')}  {str(e.get('run_class')):<12} "
        f"evidence={e.get('evidence_class') or '-'}  "
        f"contract={c.get('version')}@{str(c.get('sha256'))[:12]}"
        + (f"  run-blockers={','.join(blockers)}" if blockers else "")
        + (f"  error={e['error'].get('code')}" if e.get("error") else "")
    )


def _candidate_detail(cand: Mapping[str, Any]) -> str:
    """Blockers, or the tightest noninferiority bound (smallest margin over its threshold)."""
    if cand.get("failed_gates"):
        return "blockers/failed: " + ",".join(cand["failed_gates"])
    ni = [b for b in cand.get("bounds") or [] if b.get("lower_bound") is not None]
    if not ni:
        return ""
    tight = min(ni, key=lambda b: b["lower_bound"] - (b.get("threshold") or 0.0))
    return (
        f"tightest {tight.get('id')}: LCB {_fmt(tight.get('lower_bound'))} "
        f"vs {_fmt(tight.get('threshold'))}"
    )


@dataclass(frozen=True)
class _HistoryView:
    """How ``show_history`` renders each contract's runs: the policy shown (None: every
    policy), the drift window and the drift flags of the ledger."""

    policy: str | None
    window: int
    flags: Sequence[DriftFlag]

    def contract_lines(self, cid: str, runs: Sequence[Mapping[str, Any]]) -> list[str]:
        """The contract's runs, each policy's class over time, the abstention rates by slice."""
        lines = [f"contract {cid} ({len(runs)} run{'s' if len(runs) != 1 else ''})", "  runs:"]
        lines += [_run_line(e) for e in runs]
        return lines + self._policy_lines(runs) + self._abstention_lines(cid, runs)

    def _policy_lines(self, runs: Sequence[Mapping[str, Any]]) -> list[str]:
        policies: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
        for e in runs:
            for cand in e.get("candidates") or []:
                pid = str(cand.get("policy_id"))
                if self.policy in (None, pid):
                    policies.setdefault(pid, []).append((e, cand))
        lines = []
        for pid, rows in policies.items():
            classes = " -> ".join(str(cand.get("class")) for _, cand in rows)
            lines.append(f"  policy {pid}: {classes}")
            for e, cand in rows:
                n = cand.get("paired_n")
                lines.append(
                    f"    {e.get('time')}  {e.get('run_id')}  {str(cand.get('class')):<12} "
                    f"n={n if n is not None else '-'}  {_candidate_detail(cand)}".rstrip()
                )
        return lines

    def _abstention_lines(self, cid: str, runs: Sequence[Mapping[str, Any]]) -> list[str]:
        series = [
            (k, v) for k, v in _abstention_series(runs).items() if self.policy in (None, k[1])
        ]
        if not series:
            return []
        flagged = {(f.contract_id, f.policy_id, f.slice): f for f in reversed(self.flags)}
        lines = ["  abstention rate by slice (oldest -> newest):"]
        for (_, pid, slice_), points in sorted(series):
            rates = "  ".join(f"{p[2]:.3f}" for p in points)
            flag = flagged.get((cid, pid, slice_))
            mark = (
                f"  <- EARLY DRIFT: rose in each of the last {self.window} runs (+{flag.rise:.3f})"
                if flag
                else ""
            )
            lines.append(f"    {pid} / {slice_}: {rates}{mark}")
        return lines


def show_history(
    path: Path,
    contract: str | None = None,
    policy: str | None = None,
    *,
    window: int = 3,
    min_rise: float = 0.02,
) -> str:
    """Render the ledger's history as text.

    Per contract: each run's class, then per candidate policy its class over time with its
    blockers or tightest noninferiority bound; then the abstention rate by policy and slice over
    time, with slices rising over the last ``window`` runs flagged as early drift.

    Args:
        path: the ledger file.
        contract: show only this contract id.
        policy: show only this policy id (candidates and abstention rows).

    Raises:
        InputError: the file cannot be read (``ledger-unreadable``), or a line is a JSON object
            without the chain fields of a ledger entry (``ledger-not-an-entry``, naming it).
    """
    ledger = Ledger.read(path)
    problems = ledger.problems()
    alien = next((p for p in problems if p.kind == "missing-field"), None)
    if alien is not None:  # a JSON object without the chain fields: show would render it as one
        raise InputError(
            "ledger-not-an-entry",
            f"{path} line {alien.line} is not a ledger entry: {alien.message}",
            hint="pass the ledger file given to `ragwarrant run --ledger`",
            file=str(path),
            row=alien.line,
        )
    by_contract: dict[str, list[dict[str, Any]]] = {}
    for e in ledger.entries():
        cid = (e.get("contract") or {}).get("id")
        if not is_marker(e) and contract in (None, cid):
            by_contract.setdefault(str(cid), []).append(e)
    entries = [e for runs in by_contract.values() for e in runs]
    lines: list[str] = []
    if problems:
        lines.append(
            f"WARNING: the ledger chain is broken (first: {problems[0]}); history may be incomplete"
        )
    if not entries:
        lines.append("no ledger entries" + (f" for contract {contract}" if contract else ""))
        return "\n".join(lines) + "\n"
    flags = drifting_slices(entries, window=window, min_rise=min_rise)
    view = _HistoryView(policy, window, flags)
    for cid, runs in by_contract.items():
        lines += view.contract_lines(cid, runs)
    return "\n".join(lines) + "\n"
