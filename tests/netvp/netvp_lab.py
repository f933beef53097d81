"""The NetVP lab for tests: each test makes its own two network namespaces and veth pair (scripts/netvp-lab.sh
with names of its own), runs the simulator in one and real Linux tools in the other, and removes
everything afterwards, pass or fail. Only addresses inside the namespaces are used."""
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "scripts" / "netvp-lab.sh"
TOE_IP = "10.0.0.1"
PEER_IP = "10.0.0.2"


# Under the sanitizer build (VTOE_PRESET=asan) tests whose point is scale run fewer iterations of
# the same code paths, as in tests/integration; VTOE_FULL_SCALE=1 keeps the full counts.
REDUCED = os.environ.get("VTOE_PRESET") == "asan" and os.environ.get("VTOE_FULL_SCALE") != "1"


def scaled(full, sanitized):
    return sanitized if REDUCED else full


def vtoe_binary() -> Path:
    if os.environ.get("VTOE_BIN"):
        return Path(os.environ["VTOE_BIN"])
    return ROOT / "build" / os.environ.get("VTOE_PRESET", "release") / "app" / "vtoe"


def raw_sockets_allowed() -> str:
    if os.geteuid() != 0:
        return "NetVP tests need root (raw sockets and network namespaces)"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    return ""


class Lab:
    def __init__(self, tmp: Path):
        tag = uuid.uuid4().hex[:6]
        self.sim_ns, self.peer_ns = f"vt{tag}s", f"vt{tag}p"
        self.env = dict(os.environ, VTOE_SIM_NS=self.sim_ns, VTOE_PEER_NS=self.peer_ns,
                        VTOE_IF="vtoe0", VTOE_PEER_IF="vtoe-peer0", VTOE_PEER_ADDR=f"{PEER_IP}/24")
        self.tmp = tmp
        self.sim = None
        self.interrupted = False
        subprocess.run([str(LAB), "up"], env=self.env, check=True, capture_output=True, text=True)

    def peer(self, *cmd, **kw):
        """Runs a command in the Linux peer's namespace."""
        return subprocess.run(["ip", "netns", "exec", self.peer_ns, *cmd], **kw)

    def peer_popen(self, *cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.peer_ns, *cmd], **kw)

    def start(self, scenario, *sets, out="out", extra=()):
        """Starts the simulator in its namespace; returns the output directory."""
        self.out = self.tmp / out
        args = ["ip", "netns", "exec", self.sim_ns, str(vtoe_binary()), "run", str(ROOT / scenario),
                "--out", str(self.out), "--quiet", *extra]
        for s in sets:
            args += ["--set", s]
        self.sim = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The simulated TOE answers ARP once it runs.
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.peer("ping", "-c", "1", "-W", "1", TOE_IP, capture_output=True).returncode == 0:
                return self.out
            if self.sim.poll() is not None:
                break
        _, err = self.sim.communicate(timeout=30)
        raise AssertionError(f"the simulated host never answered: {err}")

    def interrupt(self):
        """Ends the run with SIGINT: its results cover the time simulated so far, its status is
        130."""
        self.interrupted = True
        self.sim.send_signal(signal.SIGINT)

    def wait(self, timeout=120):
        _, err = self.sim.communicate(timeout=timeout)
        assert self.sim.returncode == (130 if self.interrupted else 0), err
        res = json.loads((self.out / "results.json").read_text())
        run = json.loads((self.out / "run.json").read_text())
        return res, run

    def down(self):
        if self.sim and self.sim.poll() is None:
            self.sim.kill()
            self.sim.wait()
        subprocess.run([str(LAB), "down"], env=self.env, capture_output=True)
