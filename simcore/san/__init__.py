"""Stochastic Automata Networks: model description, Kronecker descriptor, transient and steady-state solvers.

    from simcore.san import San, Rate, Descriptor, transient, steady_state, reward_vector
    san = load_san("model.yaml")                    # or San() built in Python
    desc = Descriptor(san)                          # factors, functions, reachable states
    sol = transient(desc, [0, 1, 2], eps=1e-10, measures={"busy": reward_vector(desc, "Cpu == Busy")})
    ss = steady_state(desc, method="gmres")         # or "power"; ss.pi, ss.residual
"""

from simcore.san.descriptor import Descriptor, StateSpace
from simcore.san.expr import ExprError, compile_expr
from simcore.san.measures import expectation, indicator, probability, reward_vector
from simcore.san.model import Rate, San, SanError, load_san
from simcore.san.solve import Steady, Transient, poisson_window, residual, steady_state, transient

__all__ = ["Descriptor", "ExprError", "Rate", "San", "SanError", "StateSpace", "Steady", "Transient",
           "compile_expr", "expectation", "indicator", "load_san", "poisson_window", "probability",
           "residual", "reward_vector", "steady_state", "transient"]
