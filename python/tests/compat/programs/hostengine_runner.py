"""Runs commands against a private nv-hostengine: meant to be started inside a network
namespace of its own (``unshare -rn``), where 127.0.0.1:5555 belongs to nobody else. Brings
the loopback up, starts the host engine given in the spec (a fresh one for each command
with "fresh": true), waits until it listens, runs each command in turn (with its
environment, directory and timeout), stops the host engine, and prints the commands'
results as JSON.

    unshare -rn python hostengine_runner.py SPEC.json
    python hostengine_runner.py SPEC.json      # with "namespace": false, on the host's 5555
    SPEC: {"hostengine": [argv...], "env": {...}, "port": 5555, "fresh": false,
           "commands": [{"argv": [...], "env": {...}, "cwd": "...", "timeout": 60}, ...]}
"""

import json
import socket
import subprocess
import sys
import time


def wait_for(port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def start(spec: dict) -> "subprocess.Popen[bytes]":
    engine = subprocess.Popen(spec["hostengine"], env=spec["env"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    if not wait_for(spec.get("port", 5555), 30):
        stop(engine)
        raise SystemExit(json.dumps({"error": "the host engine did not listen within 30 s"}))
    return engine


def stop(engine: "subprocess.Popen[bytes]") -> None:
    engine.terminate()
    try:
        engine.wait(15)
    except subprocess.TimeoutExpired:
        engine.kill()
        engine.wait(10)


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    if spec.get("namespace", True):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True, timeout=10)
    results = []
    engine = None
    fresh = spec.get("fresh", False)
    try:
        for c in spec["commands"]:
            # fresh: a host engine of its own for each command, so that the samples one
            # program made DCGM cache do not show up in the next one's since-last-call reads.
            if engine is None:
                engine = start(spec)
            try:
                p = subprocess.run(c["argv"], env=c["env"], cwd=c["cwd"], capture_output=True, text=True,
                                   timeout=c.get("timeout", 60))
                results.append({"rc": p.returncode, "out": p.stdout, "err": p.stderr})
            except subprocess.TimeoutExpired as e:
                results.append({"rc": None, "out": str(e.stdout), "err": "timed out: %s" % e})
            if fresh:
                stop(engine)
                engine = None
    finally:
        if engine is not None:
            stop(engine)
    print(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
