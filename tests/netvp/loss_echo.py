"""Random loss with nftables and a timed echo client, shared by the NetVP loss tests and
bench/netvp_loss_bench.py. The functions run in the caller's namespace; the command line
(`python3 loss_echo.py client|server ...`) is what runs inside the lab's namespaces.

The loss rule is the one of issue 12: `ip protocol tcp numgen random mod 100 < P drop` on the
input and output hooks of one namespace (`tc netem` is not available on these machines)."""
import hashlib
import json
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

TABLE = "vtoe_loss"


def nft_missing() -> str:
    """Why loss cannot be applied here, or "" when it can."""
    if shutil.which("nft") is None:
        return "nft is not installed (apt-get install nftables; scripts/install-deps.sh does)"
    return ""


def add_loss(netns: str, percent: int):
    """Drops `percent` % of the TCP packets entering and leaving `netns`, each at random."""
    rule = f"ip protocol tcp numgen random mod 100 < {percent} counter drop"
    script = (f"add table inet {TABLE}\n"
              f"add chain inet {TABLE} input {{ type filter hook input priority 0; }}\n"
              f"add chain inet {TABLE} output {{ type filter hook output priority 0; }}\n"
              f"add rule inet {TABLE} input {rule}\n"
              f"add rule inet {TABLE} output {rule}\n")
    subprocess.run(["ip", "netns", "exec", netns, "nft", "-f", "-"], input=script, text=True,
                   check=True, capture_output=True)


def dropped(netns: str) -> dict:
    """Packets the loss rule dropped so far: {"input": n, "output": n}."""
    out = subprocess.run(["ip", "netns", "exec", netns, "nft", "-j", "list", "table", "inet",
                          TABLE], check=True, capture_output=True, text=True).stdout
    counts = {}
    for item in json.loads(out)["nftables"]:
        rule = item.get("rule")
        if rule:
            for expr in rule["expr"]:
                if "counter" in expr:
                    counts[rule["chain"]] = expr["counter"]["packets"]
    return counts


def pattern(n: int, salt: int) -> bytes:
    """Deterministic, non-repeating-looking payload (a SHA-256 counter stream)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(struct.pack("!II", salt, i)).digest() * 64
        i += 1
    return bytes(out[:n])


# Offsets in Linux's struct tcp_info (include/uapi/linux/tcp.h).
_TCPI_OPTIONS, _TCPI_TOTAL_RETRANS = 5, 100
_TCPI_OPTS = {1: "timestamps", 2: "sack", 4: "wscale"}


def set_congestion(sock, cc: str):
    """Linux congestion control `cc` on `sock` ("" keeps the namespace's default). Per socket,
    since a namespace's default may only name the host's allowed ones; root may pick any
    available algorithm for its own sockets."""
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def congestion_of(sock) -> str:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()


def echo_client(host: str, port: int, nbytes: int, salt: int = 1, timeout: float = 60,
                cc: str = "") -> dict:
    """Sends `nbytes` to an echo server while reading them back, half-closes after the last
    byte and reads until the server closes. Returns the wall time from the established
    connection to the end of the stream (the handshake is timed apart: a lost SYN or SYN-ACK
    costs Linux's or the server's 1 s initial RTO, the same for any server), whether every byte
    came back unchanged, and Linux's view of the connection."""
    data = pattern(nbytes, salt)
    got = bytearray()
    t_connect = time.monotonic()
    s = socket.socket()
    set_congestion(s, cc)
    s.settimeout(timeout)
    s.connect((host, port))
    t0 = time.monotonic()

    def send():
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        got += chunk
    elapsed = time.monotonic() - t0
    sender.join(timeout)
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    cc_used = congestion_of(s)
    s.close()
    opts = info[_TCPI_OPTIONS]
    first_bad = next((i for i, (a, b) in enumerate(zip(got, data)) if a != b), None) \
        if got != data else None
    return {"bytes": nbytes, "received": len(got), "intact": bytes(got) == data,
            "first_bad_offset": first_bad, "connect_s": t0 - t_connect, "elapsed_s": elapsed,
            "goodput_mbps": nbytes * 8 / elapsed / 1e6,
            "linux_retransmits": struct.unpack_from("I", info, _TCPI_TOTAL_RETRANS)[0],
            "linux_options": sorted(v for k, v in _TCPI_OPTS.items() if opts & k),
            "linux_congestion": cc_used}


def echo_server(port: int, count: int, cc: str = ""):
    """A Linux echo server for `count` connections, one after the other."""
    ls = socket.socket()
    set_congestion(ls, cc)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(4)
    print("listening", flush=True)
    for _ in range(count):
        c, _ = ls.accept()
        set_congestion(c, cc)
        while True:
            chunk = c.recv(1 << 16)
            if not chunk:
                break
            c.sendall(chunk)
        c.close()


def run_client_in(netns: str, host: str, port: int, nbytes: int, salt: int = 1,
                  timeout: float = 60, cc: str = "") -> dict:
    """echo_client() inside `netns`; its result as a dict."""
    p = subprocess.run(["ip", "netns", "exec", netns, sys.executable, __file__, "client", host,
                        str(port), str(nbytes), str(salt), str(timeout), cc],
                       capture_output=True, text=True, timeout=timeout + 30)
    if p.returncode != 0:
        raise RuntimeError(f"echo client failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def start_server_in(netns: str, port: int, count: int, cc: str = "") -> subprocess.Popen:
    """echo_server() inside `netns`; returns once it listens."""
    p = subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, __file__, "server",
                          str(port), str(count), cc], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "listening"
    return p


if __name__ == "__main__":
    if sys.argv[1] == "client":
        host, port, n, salt, tmo = sys.argv[2:7]
        cc = sys.argv[7] if len(sys.argv) > 7 else ""
        print(json.dumps(echo_client(host, int(port), int(n), int(salt), float(tmo), cc)))
    elif sys.argv[1] == "server":
        echo_server(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "")
