"""The release contract: what a candidate must show, declared before evaluation.

``load_contract`` (or ``load_contract_source``, which keeps line numbers) is the only reader of a
contract; its models' JSON Schema is committed as ``contracts/contract.schema.json``. The
``check_*`` functions are the contract rules that need the evidence, called by the engine.
"""

from __future__ import annotations

from ragwarrant.contract._document import ParsedDocument, key_path
from ragwarrant.contract._loading import (
    CONTRACT_FILENAMES,
    ContractSource,
    find_contract,
    is_readable_file,
    load_contract,
    load_contract_source,
    load_policy_config,
    resolve_inside,
)
from ragwarrant.contract._models import (
    DOCUMENT_REDUCERS,
    IDENTIFIER_PATTERN,
    AdapterName,
    Claim,
    ClaimKind,
    ClaimSet,
    ColumnMapping,
    ContractModel,
    Corroboration,
    Direction,
    EvidenceSource,
    FindingKind,
    HardDisqualifier,
    HumanLabels,
    MetricKind,
    MissingValuePolicy,
    OperationalMetric,
    PolicyRef,
    ProtectedSlice,
    Publication,
    QualityMetric,
    Sequential,
    Splits,
    Statistics,
    TelemetryReduction,
)
from ragwarrant.contract._release import ReleaseContract, wide_margins
from ragwarrant.contract._runtime import (
    NearMissKind,
    check_directions,
    check_near_misses,
    check_policy_ids,
    check_scales,
    check_splits_declared,
)
from ragwarrant.contract._sanity import (
    HIGHER_IS_BETTER_WORDS,
    LOWER_IS_BETTER_WORDS,
    did_you_mean,
    name_family,
    scale_tolerance,
)

__all__ = [
    "CONTRACT_FILENAMES",
    "DOCUMENT_REDUCERS",
    "HIGHER_IS_BETTER_WORDS",
    "IDENTIFIER_PATTERN",
    "LOWER_IS_BETTER_WORDS",
    "AdapterName",
    "Claim",
    "ClaimKind",
    "ClaimSet",
    "ColumnMapping",
    "ContractModel",
    "ContractSource",
    "Corroboration",
    "Direction",
    "EvidenceSource",
    "FindingKind",
    "HardDisqualifier",
    "MetricKind",
    "MissingValuePolicy",
    "OperationalMetric",
    "ParsedDocument",
    "PolicyRef",
    "ProtectedSlice",
    "Publication",
    "HumanLabels",
    "QualityMetric",
    "ReleaseContract",
    "Sequential",
    "Splits",
    "Statistics",
    "TelemetryReduction",
    "check_directions",
    "check_policy_ids",
    "check_scales",
    "NearMissKind",
    "check_near_misses",
    "check_splits_declared",
    "did_you_mean",
    "find_contract",
    "is_readable_file",
    "key_path",
    "load_contract",
    "load_contract_source",
    "load_policy_config",
    "resolve_inside",
    "name_family",
    "scale_tolerance",
    "wide_margins",
]
