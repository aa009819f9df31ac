"""Gates: each returns a ``GateResult`` with a stable id, status, statistic, bounds, n and reason.

Gates call ``stats``; ``stats`` never calls back.
"""

from ragwarrant.gates.candidate import CandidateEvaluation, evaluate_candidate

__all__ = ["CandidateEvaluation", "evaluate_candidate"]
