"""The SAN walker's registers, slot by slot.

Generated from ``simcore/san/layout.yaml``
by ``python -m simcore.core.layout``: do not edit; edit the table and run that command
(tests/test_slot_layout.py checks that the two match).

A trajectory's registers are two small buffers, W (int64) and F (float64), kept between the
kernel's calls so that a step resumes where it returned to Python (its phase).
"""

from __future__ import annotations

# W (int64): its header
W_PHASE = 0      # the step's phase: TOP, OBSERVE, REFRESH or LAST (walk_kernel)
W_PTR = 1        # the next uniform of U to use
W_FILLED = 2     # observation times whose measures are written
W_STEPS = 3      # events fired
W_FIRED = 4      # the event fired last
W_POS = 5        # the next rate the step refreshes (a position in the event's list of rates it changes)
W_MISS = 6       # the event whose rate is not yet known (NEED_RATE)
W_STOPEARLY = 7  # 1: the walk ends once no automaton a measure reads can move
W_DRAWS = 8      # the most uniforms a step may draw: the time, the event and one per participant
W_SIZE = 9       # slots of W's header

# F (float64): its header
WF_NOW = 0      # the clock
WF_NEXT = 1     # the next observation time (inf: none)
WF_HORIZON = 2  # the last observation time
WF_TOTAL = 3    # the step's total rate
WF_SIZE = 4     # slots of F's header


def dims() -> dict:
    """Each block's (rows, width) for ``layout``'s sizes, by its offset's name."""
    return {}


#: per block: its buffer, the buffer whose header holds its offset, and its columns' names
BLOCKS = {}
#: per buffer, its header's slots in order
HEADERS = {
    'W':
        ('W_PHASE', 'W_PTR', 'W_FILLED', 'W_STEPS', 'W_FIRED', 'W_POS', 'W_MISS', 'W_STOPEARLY', 'W_DRAWS'),
    'F':
        ('WF_NOW', 'WF_NEXT', 'WF_HORIZON', 'WF_TOTAL'),
}
