"""The SLURM profile on a real SLURM: a single-node cluster on this machine (slurmctld, slurmd,
munge, from the system's packages, installed here when missing and root may), three experiments
run through workflow/profiles/slurm with their simulation batches grouped into one cluster job,
and the results equal to a local run's byte for byte (the raw batches too, but for the wall
time each replication took).

Skipped, with the reason, where SLURM is missing and cannot be installed (not root, no
apt-get) or will not start."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import apt_install, copy_workflow

pytestmark = [pytest.mark.slow, pytest.mark.slurm]
BIN = Path(sys.executable).parent
EXPERIMENTS = ["zhou91-fig1", "barak96-fig2", "solsona-fig4"]   # 6 simulation batches at smoke scale
DAEMONS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged")
# The job steps' srun reads the default path only (the executor strips SLURM_* from their
# environment, SLURM_CONF included), so the test cluster's configuration goes there, marked.
SLURM_CONF = Path("/etc/slurm/slurm.conf")
MARK = "# numa-lb-repro test cluster (tests/test_slurm.py)"
CONF = MARK + """
ClusterName=numa-lb-test
SlurmctldHost={host}(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=3600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _install() -> str:
    """'' once slurmctld, slurmd and munged are here, else why they cannot be."""
    return "" if all(Path(d).exists() for d in DAEMONS) else apt_install(["slurm-wlm", "munge"])


def _munge_answers() -> bool:
    """Whether a munged answers on its socket (a socket file alone may be left by a dead one)."""
    return subprocess.run(["munge", "-n"], capture_output=True, timeout=30).returncode == 0


def _munge() -> None:
    """munged as the munge user, its socket in /run/munge (no init system starts it here);
    --force takes over the socket and lock files a killed munged left behind."""
    if _munge_answers():
        return
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    for path in ("/run/munge", "/etc/munge", "/var/lib/munge", "/var/log/munge"):
        if Path(path).exists():
            shutil.chown(path, "munge", "munge")
            for sub in Path(path).rglob("*"):
                shutil.chown(sub, "munge", "munge")
    subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged", "--force"], check=True, timeout=60)
    if not _munge_answers():
        raise OSError("munged started but does not answer on /run/munge/munge.socket.2")


def _memory_mb() -> int:
    kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
              if line.startswith("MemTotal"))
    return kb // 1024 * 9 // 10


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node SLURM; yields the environment that reaches it."""
    reason = _install()
    if reason:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    conf = SLURM_CONF
    if conf.exists() and MARK not in conf.read_text():
        pytest.skip(f"{conf} holds this machine's own SLURM configuration; the test does not replace it")
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(
        CONF.format(host=socket.gethostname().split(".")[0], dir=folder, cpus=os.cpu_count(), memory=_memory_mb())
    )
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    env["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    try:
        try:
            _munge()
            for daemon in DAEMONS[:2]:
                subprocess.run([daemon, "-f", str(conf)], env=env, check=True, timeout=60)
        except (subprocess.SubprocessError, OSError, KeyError, LookupError) as err:
            pytest.skip(f"SLURM would not start here: {err}")
        _wait_idle(env, folder)
        yield env
    finally:        # the daemons stop and the marked configuration goes, however the test ends
        for name in ("slurmd", "slurmctld"):
            pid = folder / f"{name}.pid"
            if pid.exists():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid.read_text()), signal.SIGTERM)
        conf.unlink()


def _wait_idle(env: dict, folder: Path) -> None:
    deadline = time.monotonic() + 60
    while "idle" not in subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout:
        if time.monotonic() > deadline:
            pytest.fail(f"the SLURM node never became idle: {(folder / 'slurmd.log').read_text()[-2000:]}")
        time.sleep(1)


def _run(cwd: Path, env: dict, *args) -> subprocess.CompletedProcess:
    targets = [f"results/{e}/summary.csv" for e in EXPERIMENTS]
    config = ["--config", "scale=smoke", "experiments=[" + ",".join(EXPERIMENTS) + "]"]
    return subprocess.run([str(BIN / "snakemake"), *targets, *args, *config], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1800)


def _cluster_jobs(env) -> set[str]:
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], env=env, capture_output=True, text=True).stdout
    return set(out.split())


def test_the_slurm_profile_groups_batches_and_gives_the_local_results(slurm, tmp_path):
    local = _run(copy_workflow(tmp_path / "local"), slurm, "--cores", "2")
    assert local.returncode == 0, local.stderr[-3000:]
    before = _cluster_jobs(slurm)
    cluster = _run(copy_workflow(tmp_path / "cluster"), slurm, "--profile", "workflow/profiles/slurm",
                   "--slurm-status-command", "squeue", "--slurm-no-account",
                   "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5")
    assert cluster.returncode == 0, cluster.stderr[-4000:]
    batches = sorted(p.relative_to(tmp_path / "cluster") for p in (tmp_path / "cluster/results/raw").rglob("*.parquet"))
    assert len(batches) == 6
    # six batches, ten to a group: one cluster job; the aggregations ran here (localrules)
    assert len(_cluster_jobs(slurm) - before) == 1
    for batch in batches:     # every value but the measured wall time of each replication
        here, there = (pq.read_table(tmp_path / where / batch) for where in ("cluster", "local"))
        assert here.drop(["wall_time"]).equals(there.drop(["wall_time"])), batch
        assert here.schema.metadata == there.schema.metadata, batch       # the fingerprint
    for exp in EXPERIMENTS:
        for name in ("summary.csv", "claims.csv", "replications.csv"):
            assert (tmp_path / f"cluster/results/{exp}/{name}").read_bytes() == \
                   (tmp_path / f"local/results/{exp}/{name}").read_bytes(), (exp, name)
