"""Runs a terminal program in a pseudo-terminal of 200 x 50 for SECS seconds, then Ctrl-C,
and writes what it drew to stdout (for dcgm-top on a node without tmux; `script` needs a
stdin it can hold open).

    python3 pty_run.py SECS PROGRAM [ARGS...]
"""
import fcntl, os, pty, select, signal, struct, sys, termios, time
secs = float(sys.argv[1]); argv = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    os.execvp(argv[0], argv)
out = bytearray(); end = time.time() + secs; sent = False
while True:
    if not sent and time.time() >= end:
        os.kill(pid, signal.SIGINT); sent = True; end = time.time() + 3
    elif sent and time.time() >= end:
        os.kill(pid, signal.SIGKILL); break
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        out += b
os.waitpid(pid, 0)
sys.stdout.buffer.write(bytes(out))
