"""What a node does when a task must wait for a message and when a message arrives (section 5.3).

- ``rr``: the plain local scheduler (Algorithm 1): a receiver blocks at once; a message only
  wakes a blocked receiver to the bottom of the RQ. The reference the others depart from.
- ``sdca``: the share dynamic coscheduling algorithm (Algorithm 2). On a message for a task
  that is not running, the task moves forward in the RQ, overtaking one task at a time while it
  has more pending messages than that task and that task has been overtaken fewer than
  ``overtake_cap`` times (each overtaken task counts one more); the running task is the RQ's
  top, so a receiver that overtakes it too takes the CPU at once (Goto DISPATCH), and the
  running task goes to the bottom of the RQ as Algorithm 1 says.
- ``dynamic``: Sobalvarro's demand-based rule: on a message for task l, while task e runs, l
  takes the CPU if executed(l) + ``share`` < executed(e) (CPU time executed so far).
- ``implicit``: spin-block: a task that needs a message that has not arrived keeps the CPU for
  up to ``spin`` (at most to its slice end), takes the message if it arrives meanwhile, and
  blocks otherwise; messages never reorder the RQ.
"""

from __future__ import annotations

import numpy as np

from simcore.models import Parameter, select
from simcore.models.registry import register
from simcore.vocabulary.domains import COUNT, NONNEGATIVE, POSITIVE

MODEL = "cosched"


class CoschedPolicy:
    """The plain round robin of Algorithm 1; subclasses change ``spin`` or ``on_message``."""

    name = "base"
    HYPERPARAMETERS: dict[str, Parameter] = {}
    spin = 0.0

    def __init__(self, params: dict, rng: np.random.Generator):
        self.hp = select(f"{MODEL} policy '{self.name}'", self.HYPERPARAMETERS, params)
        self.rng = rng

    def on_message(self, node, t) -> None:
        """A message arrived for ``t``, which is now in the RQ while another task holds the CPU."""


@register(MODEL, "rr")
class RoundRobin(CoschedPolicy):
    """Algorithm 1 alone."""


@register(MODEL, "sdca")
class Sdca(CoschedPolicy):
    """Move the receiver forward by its pending messages; dispatch it if it overtakes the running task."""

    HYPERPARAMETERS = {"overtake_cap": Parameter(
        5, "SDCA: how many times a task may be overtaken in the RQ before no one can overtake it "
           "(the paper names the rule, not its value).", COUNT)}

    def on_message(self, node, t) -> None:
        rq, cap = node.rq, self.hp["overtake_cap"]
        k = rq.index(t)
        while k > 0 and self._overtakes(t, rq[k - 1], cap):
            rq[k - 1].overtaken += 1
            rq[k - 1], rq[k] = t, rq[k - 1]
            k -= 1
        if k == 0 and self._overtakes(t, node.running, cap):
            node.running.overtaken += 1
            node.preempt_for(t)

    @staticmethod
    def _overtakes(t, other, cap: int) -> bool:
        return t.pending > other.pending and other.overtaken < cap


@register(MODEL, "dynamic")
class Dynamic(CoschedPolicy):
    """Preempt in favour of the receiver when it has executed clearly less than the running task."""

    HYPERPARAMETERS = {"share": Parameter(
        0.1, "DYNAMIC: the receiver l takes the CPU from e if executed(l) + share < executed(e) "
             "(section 5.3: 0.1).", NONNEGATIVE)}

    def on_message(self, node, t) -> None:
        if node.executed_now(t) + self.hp["share"] < node.executed_now(node.running):
            node.preempt_for(t)


@register(MODEL, "implicit")
class Implicit(CoschedPolicy):
    """Spin for a missing message before blocking."""

    HYPERPARAMETERS = {"spin": Parameter(
        0.01, "IMPLICIT: how long a receiver spins for a missing message before it blocks "
              "(section 5.3: 0.01).", POSITIVE)}

    def __init__(self, params: dict, rng: np.random.Generator):
        super().__init__(params, rng)
        self.spin = self.hp["spin"]
