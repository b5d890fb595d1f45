"""A toy model for testing the experiment machinery: policy 'worse' adds a known constant."""

from simcore.models import Metric, Parameter
from simcore.models.registry import register
from simcore.vocabulary.domains import NONNEGATIVE, POSITIVE

PARAMETERS = {"mu": Parameter(10.0, "mean of the exponential metric", POSITIVE),
              "penalty": Parameter(2.0, "what policy 'worse' adds to every replication", NONNEGATIVE)}
METRICS = {"x": Metric("an exponential draw", "positive"), "num": Metric("numerator", "positive"),
           "den": Metric("denominator", "positive"), "events": Metric("events", "nonnegative")}


@register("toy", "base")
class Base:
    pass


@register("toy", "worse")
class Worse:
    pass


def run_replication(params, policies, streams):
    x = float(streams["x"].exponential(params["mu"]))
    den = float(streams["den"].integers(5, 15))
    out = {}
    for policy in policies:
        extra = params["penalty"] if policy == "worse" else 0.0
        out[policy] = {"x": x + extra, "num": (x + extra) * den, "den": den, "events": 1}
    return out
