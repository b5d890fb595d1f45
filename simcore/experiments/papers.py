"""The papers the artifact reproduces: their ids (a spec's ``paper``), titles and report order."""

from __future__ import annotations

PAPER_TITLES = {
    "amir": "Amir, Awerbuch, Barak, Borgstrom and Keren: an opportunity cost approach to job "
            "assignment and reassignment in a scalable computing cluster",
    "barak96": "Barak, Braverman, Gilderman and Laden (1996): PVM with the MOSIX preemptive "
               "process migration scheme",
    "corr05": "Corr\u00eaa et al. (2005): multilevel load balancing on NUMA machines",
    "mehta": "Mehta and Kanungo: a conservative dynamic load balancer for NUMA multiprocessors",
    "zhou91": "Zhou and Brecht (1991): processor pool-based scheduling for NUMA multiprocessors",
    "solsona": "Solsona et al.: coscheduling in non-dedicated clusters",
}
PAPER_ORDER = ["amir", "barak96", "corr05", "mehta", "zhou91", "solsona"]

