#!/usr/bin/env python3
"""A ringside fuzz campaign as a Slurm array job, on a real Slurm (TAP).

Starts munged, slurmctld and slurmd from Debian's packages, in the
foreground as children of this test, configured here in a temporary
directory (loopback addresses, free ports, a munge key made here, this
machine's CPUs as slurmd -C reports them, root as SlurmUser).  Submits
docs/examples/ringside-fuzz.sbatch with sbatch --array=0-(N-1), each
task one shard of the same seed on one CPU; requeues task 0 once it has
recorded a case (as preemption or a lost node would), so that it runs
again and resumes its shard; waits for the array; merges
the shards with ringside report --merge; checks that every case of every
shard is there exactly once and that the report calls the campaign
complete (and names a shard left out).  Everything it started is stopped
at the end, also on failure.

Needs root (the daemons and the jobs run as root here), slurmctld,
slurmd, slurm-client and munge installed (scripts/install-deps.sh test),
RINGSIDE_BIN, and the QEMU fork, kernel and initramfs ringside fuzz uses.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SBATCH = os.path.join(ROOT, "docs", "examples", "ringside-fuzz.sbatch")
SHARDS, CASES, SEED = 2, 12, 4242
TESTS = "panic-task,panic-softirq,panic-hardirq"
n = 0
failed = 0
t_start = time.monotonic()


def check(ok, what, detail=""):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and detail:
        print("# " + str(detail)[-3000:].replace("\n", "\n# "))
    sys.stdout.flush()


missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "squeue",
                       "scontrol", "sinfo") if not shutil.which(p)]
if os.geteuid() != 0 or missing:
    print("1..0 # SKIP %s" % ("needs root" if os.geteuid() else
                              "not installed: " + " ".join(missing)))
    sys.exit(0)

ringside = os.environ["RINGSIDE_BIN"]
d = tempfile.mkdtemp(prefix="ringside-slurm-")
host = socket.gethostname()
conf = os.path.join(d, "slurm.conf")
env = dict(os.environ, SLURM_CONF=conf)
daemons = []                 # Popen of what we started, stopped at the end


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, env=env,
                          timeout=timeout)


def start(name, args):
    log = open(os.path.join(d, name + ".out"), "w")
    p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                         start_new_session=True)
    daemons.append((name, p))
    return p


def tail(name, lines=15):
    try:
        with open(os.path.join(d, name), errors="replace") as fh:
            return "== %s\n%s" % (name, "".join(fh.readlines()[-lines:]))
    except OSError:
        return ""


def leftovers():
    """Processes still running from this test's directory (job steps)."""
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                argv = open("/proc/%s/cmdline" % pid, "rb").read()
            except OSError:
                continue
            if d.encode() in argv:
                pids.append(int(pid))
    return pids


def teardown(job):
    if job:
        run(["scancel", job])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and \
                run(["squeue", "-h", "-j", job]).stdout.strip():
            time.sleep(0.5)
    for name, p in reversed(daemons):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for pid in leftovers():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def write_config():
    munge = os.path.join(d, "munge")
    os.mkdir(munge, 0o700)
    os.mkdir(os.path.join(d, "sock"), 0o755)
    with open(os.path.join(munge, "munge.key"), "wb") as fh:
        fh.write(os.urandom(1024))
    os.chmod(os.path.join(munge, "munge.key"), 0o600)
    for sub in ("state", "spool", "log"):
        os.mkdir(os.path.join(d, sub))
    # This machine as slurmd sees it: CPUs, sockets, cores, threads.
    hw = subprocess.run(["slurmd", "-C"], capture_output=True, text=True,
                        timeout=30).stdout.splitlines()[0]
    node = re.sub(r"^NodeName=\S+", "NodeName=%s NodeAddr=127.0.0.1" % host,
                  hw)
    node = re.sub(r"RealMemory=\d+", "RealMemory=1000", node)
    with open(conf, "w") as fh:
        fh.write("""\
ClusterName=ringsidetest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/sock/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerParameters=sched_interval=1
MinJobAge=600
KillWait=5
{node} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""".format(host=host, d=d, ctld_port=free_port(), d_port=free_port(),
           node=node))
    return munge


def campaign(jobs):
    munge = write_config()
    start("munged", ["munged", "-F", "-f",
                     "--socket=%s/sock/munge.socket" % d,
                     "--key-file=%s/munge.key" % munge,
                     "--pid-file=%s/munged.pid" % munge,
                     "--seed-file=%s/munged.seed" % munge,
                     "--log-file=%s/munged.log" % munge])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and \
            not os.path.exists(os.path.join(d, "sock", "munge.socket")):
        time.sleep(0.1)
    start("slurmctld", ["slurmctld", "-D", "-i", "-f", conf])
    start("slurmd", ["slurmd", "-D", "-f", conf, "-N", host])
    state = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = run(["sinfo", "-h", "-N", "-o", "%T"]).stdout.strip()
        if state == "idle":
            break
        time.sleep(0.5)
    t_up = time.monotonic() - t_start
    check(state == "idle", "a single-node Slurm up on loopback (%.1f s)"
          % t_up, "sinfo: %r\n%s%s%s" % (state, tail("slurmctld.out"),
                                         tail("slurmd.out"),
                                         tail("munged.out")))
    if state != "idle":
        return None

    out = os.path.join(d, "fuzz")
    p = run(["sbatch", "--parsable", "--array=0-%d" % (SHARDS - 1),
             "--cpus-per-task=1", "--chdir", d, "--open-mode=append",
             "--output", os.path.join(d, "task-%a.log"),
             "--export=ALL,FUZZ_SEED=%d,FUZZ_CASES=%d,FUZZ_OUT=%s,"
             "RINGSIDE=%s" % (SEED, CASES, out, ringside),
             SBATCH, "--cold", "0", "--tests", TESTS])
    job = p.stdout.strip().split(";")[0]
    jobs.append(job)
    check(p.returncode == 0 and job.isdigit(),
          "sbatch --array=0-%d ringside-fuzz.sbatch: job %s"
          % (SHARDS - 1, job), p.stdout + p.stderr)

    # Task 0 requeued mid-shard: it runs again and goes on where it was.
    t_sub = time.monotonic()
    first = os.path.join(out, "shard-0", "results.jsonl")
    deadline = t_sub + 120
    while time.monotonic() < deadline and not (
            os.path.exists(first) and open(first).read().count("\n") >= 2):
        time.sleep(0.2)
    before = open(first).read().count("\n") if os.path.exists(first) else 0
    rq = run(["scontrol", "requeue", job + "_0"])
    # A requeued job waits (BeginTime) before it runs again: start it
    # sooner, but not within the second its first run was killed in.
    # slurmd revokes the killed job's credential with a time in seconds
    # and refuses a launch whose credential is not newer ("already
    # killed, do not launch batch job"), and the task fails.
    deadline = time.monotonic() + 60
    pending_since = None
    while time.monotonic() < deadline:
        st = run(["squeue", "-h", "-j", job + "_0", "-o", "%T %r"]).stdout
        if st.startswith("PENDING"):
            if pending_since is None:
                pending_since = time.monotonic()
            elif time.monotonic() - pending_since >= 2:
                run(["scontrol", "update", "JobId=%s_0" % job, "StartTime=now"])
        if not st.strip() or st.startswith("RUNNING"):
            break
        time.sleep(0.5)
    check(rq.returncode == 0 and 2 <= before < CASES // SHARDS,
          "task 0 requeued with %d of its %d cases recorded"
          % (before, CASES // SHARDS), rq.stdout + rq.stderr)

    deadline = t_sub + 300
    while time.monotonic() < deadline and \
            run(["squeue", "-h", "-j", job]).stdout.strip():
        time.sleep(1)
    t_job = time.monotonic() - t_sub
    info = run(["scontrol", "show", "job", "-o", job]).stdout
    tasks = {int(m.group(1)): (m.group(2), m.group(3)) for m in re.finditer(
        r"ArrayTaskId=(\d+) .*?JobState=(\S+) .*?ExitCode=(\S+)", info)}
    restarts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
        r"ArrayTaskId=(\d+) .*?Restarts=(\d+)", info)}
    logs = "".join(tail("task-%d.log" % i, 8) for i in range(SHARDS))
    check(sorted(tasks) == list(range(SHARDS)) and
          all(v == ("COMPLETED", "0:0") for v in tasks.values()),
          "every array task completed, exit 0 (%.1f s)" % t_job,
          "%s\n%s%s" % (tasks, logs, tail("log/slurmd.log")))
    check(all(re.search(r"shard=%d/%d .*complete=yes" % (i, SHARDS),
                        tail("task-%d.log" % i, 3)) for i in range(SHARDS)),
          "each task ran its own shard to the end", logs)
    log0 = tail("task-0.log", 100)
    m = re.search(r"resuming: (\d+) cases recorded", log0)
    check(restarts.get(0) == 1 and m and int(m.group(1)) >= before,
          "task 0 ran again (Restarts=%s) and resumed from %s cases"
          % (restarts.get(0), m.group(1) if m else "?"), log0)

    shards = [os.path.join(out, "shard-%d" % i) for i in range(SHARDS)]
    merged = os.path.join(d, "merged.jsonl")
    p = subprocess.run([ringside, "report", "--merge", merged,
                        "--html", os.path.join(d, "report.html")] + shards,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and
          "campaign seed %d, %d shards of %d cases: %d of %d merged, "
          "complete" % (SEED, SHARDS, CASES, CASES, CASES) in p.stdout,
          "ringside report merges the shards: the campaign is complete",
          p.stdout + p.stderr)
    rows = [json.loads(l) for l in open(merged)] if p.returncode == 0 else []
    got = sorted(r["index"] for r in rows)
    check(got == list(range(CASES)) and
          all(r["shard"] == "%d/%d" % (r["index"] % SHARDS, SHARDS) and
              r["seed"] == SEED and r["class"] != "error" for r in rows),
          "every case of every shard exactly once, judged, from its shard "
          "(%s)" % got, rows)
    p = subprocess.run([ringside, "report", shards[0]], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0 and "incomplete; shards missing: 1/%d" % SHARDS
          in p.stdout, "a shard left out is named", p.stdout + p.stderr)


print("1..10")
jobs = []
try:
    campaign(jobs)
finally:
    teardown(jobs[0] if jobs else None)
    check(all(p.poll() is not None for _, p in daemons) and not leftovers(),
          "munged, slurmctld, slurmd and the job's processes all stopped "
          "(%.1f s in all)" % (time.monotonic() - t_start), leftovers())
    if not failed:
        shutil.rmtree(d, ignore_errors=True)

sys.exit(1 if failed else 0)
