"""Human review: draw a blinded sample for reviewers, read their labels back against the draw."""

from ragwarrant.review.labels import HumanLabelSet, read_labels
from ragwarrant.review.queue import ReviewQueue, read_queue

__all__ = ["HumanLabelSet", "ReviewQueue", "read_labels", "read_queue"]
