"""The small program the wizard runs on the GPU host (`python3 -c <this file> COMMAND ...`).

Standard library only, Python >= 3.8, no file is installed on the host: the client sends this
source text with every command. Every command prints one JSON document on stdout, except `follow`,
which streams the raw bytes of a run's log. Runs live in `~/.cache/sglang-wizard/runs/RUN_ID/`:

    argv.json        the argv after `python -m sglang.launch_server`, secret flag values `***`
    env.json         non-secret env vars set for the server
    profile.toml     copy of the profile, secrets masked   command.sh  readable command (masked)
    meta.json        run id, python, port, workdir, creation time
    start.py         reads the files above and the secrets (JSON on its stdin, a pipe from this
                     helper: no secret is ever written to a file), starts the server with the
                     profile's python and copies its output to `log` with secret values masked
    pid              process group id (the wrapper shell's pid, group leader)
    server_pid       the server's own pid      server_exit.json  its exit code or signal
    log              stdout + stderr of the server (secret values masked)
    exit_code        written by the wrapper when the server exits
    stopping.json    written by `stop` before it signals the server (a stop is under way)
    stopped.json     written by `stop` (signals used, processes left)

A container run (`[container]` profile) keeps the same files; `start.py` is then CONTAINER_START_PY
(run by the host's python): it starts the container detached (`container.json`: the runtime's
words, masked), hands the secrets to it through a FIFO (never a file, never the container's
config; CONTAINER_BOOT inside masks them in SGLang's output before the runtime logs it),
copies the runtime's log stream (`RUNTIME logs -f`) to `log` with secret values masked,
and when the container ends records its exit code and removes it. `stop` stops the container.
"""

import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

RUNS_ROOT = os.path.join(os.path.expanduser("~"), ".cache", "sglang-wizard", "runs")
TB_MARKER = b"Traceback (most recent call last):"
OOM_MARKERS = (
    b"CUDA out of memory",
    b"OutOfMemoryError",
    b"Not enough memory",
    b"CUBLAS_STATUS_ALLOC_FAILED",
    b"cudaErrorMemoryAllocation",
)
EXIT_NOT_FOUND = 3

#: Shared by the start scripts: `masked` puts *** over every secret value (`values`, longest
#: first) in a chunk of log bytes; `hold_back` is how many trailing bytes may begin a secret and
#: wait for the next chunk. Spliced in where `#MASKING#` stands.
MASKING_PY = r"""def masked(data):
    for value in values:
        data = data.replace(value, b"***")
    return data
def hold_back(data):
    # the longest end of data that may be the start of a secret: kept until more arrives
    keep = 0
    for value in values:
        for size in range(min(len(value) - 1, len(data)), keep, -1):
            if value.startswith(data[-size:]):
                keep = size
                break
    return keep
"""


START_PY = r"""import json, os, select, signal, sys
# Run by the profile's python ($1 of the wrapper); argv[1] is that python exactly as configured.
here = os.path.dirname(os.path.abspath(__file__))
python = sys.argv[1]
with open(os.path.join(here, "argv.json")) as f:
    argv = json.load(f)
env = dict(os.environ)
with open(os.path.join(here, "env.json")) as f:
    env.update(json.load(f))
# Secrets arrive on stdin (a pipe from the ssh session), never from a file.
raw = sys.stdin.buffer.read()
secret = json.loads(raw.decode("utf-8")) if raw.strip() else {}
env.update(secret.get("env") or {})
for index, value in (secret.get("argv") or {}).items():
    argv[int(index)] = value
values = sorted({v.encode() for v in secret.get("mask") or [] if len(v) >= 4}, key=len, reverse=True)
env.setdefault("PYTHONUNBUFFERED", "1")
# The server's argv travels in the environment of the exec, so `ps` never shows a secret flag;
# the bootstrap removes it before SGLang starts (its children do not inherit it).
env["SGLANG_WIZARD_ARGV"] = json.dumps(argv)
boot = ("import json, os, runpy, sys; sys.argv = ['-m'] + json.loads(os.environ.pop('SGLANG_WIZARD_ARGV')); "
        "runpy._run_module_as_main('sglang.launch_server')")
read_end, write_end = os.pipe()
devnull = os.open(os.devnull, os.O_RDONLY)
pid = os.fork()
if pid == 0:
    os.dup2(devnull, 0)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(read_end)
    os.close(write_end)
    try:
        os.execvpe(python, [python, "-c", boot], env)
    except OSError as exc:
        os.write(2, ("cannot run %s: %s\n" % (python, exc)).encode())
        os._exit(127)
os.close(write_end)
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, signal.SIG_IGN)  # the log filter outlives the server to drain its output
with open(os.path.join(here, "server_pid.tmp"), "w") as f:
    f.write(str(pid))
os.replace(os.path.join(here, "server_pid.tmp"), os.path.join(here, "server_pid"))
out = sys.stdout.buffer
pending = b""
status = None
#MASKING#
while True:
    ready, _, _ = select.select([read_end], [], [], 0.5 if status is None else 0)
    data = os.read(read_end, 65536) if ready else b""
    if data:
        pending += data
        keep = hold_back(pending) if values else 0
        chunk, pending = (pending[: len(pending) - keep], pending[len(pending) - keep :]) if keep else (pending, b"")
        out.write(masked(chunk))
        out.flush()
        continue
    if ready or status is not None:
        break  # end of output, or the server is gone and nothing more is waiting
    done, status_code = os.waitpid(pid, os.WNOHANG)
    if done:
        status = status_code
if status is None:
    status = os.waitpid(pid, 0)[1]
out.write(masked(pending))
out.flush()
record = {"pid": pid, "code": None, "signal": None}
if os.WIFSIGNALED(status):
    record["signal"] = os.WTERMSIG(status)
else:
    record["code"] = os.WEXITSTATUS(status)
with open(os.path.join(here, "server_exit.json.tmp"), "w") as f:
    json.dump(record, f)
os.replace(os.path.join(here, "server_exit.json.tmp"), os.path.join(here, "server_exit.json"))
sys.exit(128 + record["signal"] if record["signal"] else record["code"])
"""
START_PY = START_PY.replace("#MASKING#\n", MASKING_PY)

# $1 = python, $2 = run dir. The wrapper is the process group leader; it ignores HUP like nohup,
# and traps TERM/INT so that it survives a stop long enough to record the server's exit code.
WRAPPER_SH = r"""echo $$ > "$2/pid.tmp" && mv "$2/pid.tmp" "$2/pid"
trap '' HUP
trap 'true' TERM INT
"$1" "$2/start.py" "$1"
code=$?
echo "$code" > "$2/exit_code.tmp" && mv "$2/exit_code.tmp" "$2/exit_code"
"""


CONTAINER_START_PY = r"""import errno, json, os, select, signal, subprocess, sys, time
# The host's python runs this in the run's process group (see WRAPPER_SH); it outlives a stop
# long enough to record the container's exit code and remove it.
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "container.json")) as f:
    box = json.load(f)
runtime, name = box["runtime"], box["name"]
env = dict(os.environ)
with open(os.path.join(here, "env.json")) as f:
    env.update(json.load(f))  # plain values: the container gets them by name (-e NAME)
env.setdefault("PYTHONUNBUFFERED", "1")
raw = sys.stdin.buffer.read()
secret = json.loads(raw.decode("utf-8")) if raw.strip() else {}
values = sorted({v.encode() for v in secret.get("mask") or [] if len(v) >= 4}, key=len, reverse=True)
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, signal.SIG_IGN)
out = sys.stdout.buffer
#MASKING#
def note(text):
    out.write(("[sglang-wizard] %s\n" % text).encode())
    out.flush()
def inspect(field):
    done = subprocess.run(runtime + ["inspect", "--format", "{{" + field + "}}", name],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    return done.stdout.decode().strip() if done.returncode == 0 else None
def record_exit(code):
    with open(os.path.join(here, "server_exit.json.tmp"), "w") as f:
        json.dump({"pid": None, "code": code, "signal": None, "container": name}, f)
    os.replace(os.path.join(here, "server_exit.json.tmp"), os.path.join(here, "server_exit.json"))
fifo = os.path.join(here, "secrets")
handoff = bool(secret.get("env") or secret.get("argv") or secret.get("mask"))
if handoff:
    os.mkfifo(fifo, 0o600)  # a pipe: the secrets never rest in a file
run = runtime + ["run"] + box["run_args"]
if handoff:
    run += ["-v", fifo + ":" + box["secrets_path"] + ":ro"]
run += [box["image"]] + box["inner"]
started = subprocess.run(run, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
if started.returncode != 0:
    note("%s run failed (exit %d):" % (runtime[0], started.returncode))
    out.write(masked(started.stdout))
    out.flush()
    record_exit(started.returncode)
    if handoff:
        os.unlink(fifo)
    sys.exit(started.returncode if 0 < started.returncode < 256 else 125)
if handoff:
    payload = json.dumps({"env": secret.get("env") or {}, "argv": secret.get("argv") or {},
                          "mask": secret.get("mask") or []}).encode()
    deadline = time.time() + float(box.get("handoff_timeout_s", 600))
    next_check = time.time() + 1
    fd = None
    while fd is None:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.time() > deadline:
                note("the container did not read its secrets within the time allowed")
                break
            if time.time() >= next_check:
                next_check = time.time() + 1
                if inspect(".State.Running") != "true":
                    break  # it ended before reading them: its log says why
            time.sleep(0.02)
    if fd is not None:
        os.set_blocking(fd, True)
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
        os.close(fd)
    os.unlink(fifo)
pid = inspect(".State.Pid")
if pid and pid.isdigit():
    with open(os.path.join(here, "server_pid.tmp"), "w") as f:
        f.write(pid)
    os.replace(os.path.join(here, "server_pid.tmp"), os.path.join(here, "server_pid"))
pending = b""
received = 0  # bytes of the runtime's log stream copied so far
for attempt in range(100):
    # `logs -f` ends when the container does; if it ends before (the runtime's log reader was
    # restarted), follow again and skip what was copied: the stream replays the same bytes
    read_end, write_end = os.pipe()
    logs = subprocess.Popen(runtime + ["logs", "-f", name], stdin=subprocess.DEVNULL,
                            stdout=write_end, stderr=write_end, env=env)
    os.close(write_end)
    skip = received
    while True:
        data = os.read(read_end, 65536)
        if not data:
            break
        if skip:
            dropped = min(skip, len(data))
            data, skip = data[dropped:], skip - dropped
            if not data:
                continue
        received += len(data)
        pending += data
        keep = hold_back(pending) if values else 0
        chunk, pending = (pending[: len(pending) - keep], pending[len(pending) - keep :]) if keep else (pending, b"")
        out.write(masked(chunk))
        out.flush()
    os.close(read_end)
    logs.wait()
    if inspect(".State.Running") != "true":
        break
    time.sleep(min(0.2 * (attempt + 1), 5))
out.write(masked(pending))
out.flush()
waited = subprocess.run(runtime + ["wait", name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
words = waited.stdout.decode().split()
code = int(words[-1]) if words and words[-1].lstrip("-").isdigit() else None
if code is None:
    state = inspect(".State.ExitCode")
    code = int(state) if state and state.lstrip("-").isdigit() else -1
record_exit(code)
subprocess.run(runtime + ["rm", "-f", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
sys.exit(code if 0 <= code < 256 else 1)
"""
CONTAINER_START_PY = CONTAINER_START_PY.replace("#MASKING#\n", MASKING_PY)

#: Run inside the container as its command (`python -c CONTAINER_BOOT ARGV...`, %r: the FIFO's
#: path): reads the secrets from the FIFO, then runs SGLang's launcher. With secret values to
#: mask, SGLang runs as its child in its own process group and the boot copies SGLang's output to
#: the container's stdout with the values replaced by `***`: the runtime's own log file (docker's
#: json-file, podman's ctr.log) never holds them (SGLang logs its server_args, API key included).
#: TERM/INT/HUP from the init (`--init` passes `stop`'s signal to its child, this boot) go on to
#: SGLang's process group; the boot exits with SGLang's status.
CONTAINER_BOOT = r"""import json, os, runpy, signal, sys
argv = sys.argv[1:]
path = %r
secret = {}
if os.path.exists(path):
    with open(path, "rb") as f:
        raw = f.read()
    secret = json.loads(raw.decode("utf-8")) if raw.strip() else {}
env = dict(os.environ)
env.update(secret.get("env") or {})
for index, value in (secret.get("argv") or {}).items():
    argv[int(index)] = value
values = sorted({v.encode() for v in secret.get("mask") or [] if len(v) >= 4}, key=len, reverse=True)
if not values:
    os.environ.update(env)
    sys.argv = ["-m"] + argv
    runpy._run_module_as_main("sglang.launch_server")
    sys.exit(0)
env["SGLANG_WIZARD_ARGV"] = json.dumps(argv)
boot = ("import json, os, runpy, sys; sys.argv = ['-m'] + json.loads(os.environ.pop('SGLANG_WIZARD_ARGV')); "
        "runpy._run_module_as_main('sglang.launch_server')")
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(read_end)
    os.close(write_end)
    try:
        os.execve(sys.executable, [sys.executable, "-c", boot], env)
    finally:
        os._exit(127)
os.close(write_end)
del env, secret
def forward(number, frame):
    try:
        os.killpg(pid, number)
    except OSError:
        pass
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, forward)
out = os.fdopen(1, "wb", buffering=0)
pending = b""
#MASKING#
while True:
    data = os.read(read_end, 65536)
    if not data:
        break
    pending += data
    keep = hold_back(pending)
    chunk, pending = (pending[: len(pending) - keep], pending[len(pending) - keep :]) if keep else (pending, b"")
    out.write(masked(chunk))
out.write(masked(pending))
status = os.waitpid(pid, 0)[1]
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
"""
CONTAINER_BOOT = CONTAINER_BOOT.replace("#MASKING#\n", MASKING_PY)


def emit(document):
    sys.stdout.write(json.dumps(document))
    sys.stdout.write("\n")
    sys.stdout.flush()


def fail(message, code=1):
    sys.stderr.write(message + "\n")
    sys.exit(code)


def check_run_id(run_id):
    if not run_id or "/" in run_id or run_id.startswith("."):
        fail(f"invalid run id: {run_id!r}", 2)


def run_dir_of(run_id):
    check_run_id(run_id)
    path = os.path.join(RUNS_ROOT, run_id)
    if not os.path.isdir(path):
        fail(f"no run {run_id} on this host (looked in {path})", EXIT_NOT_FOUND)
    return path


def write_file(path, data, mode=0o600):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_text(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def group_members(pgid):
    """Pids of live (non-zombie) processes in process group `pgid`, scanning /proc."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 3:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in (b"Z", b"X"):
            members.append(int(name))
    return sorted(members)


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def run_status(run_id, path):
    meta = {}
    try:
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    pid_text = read_text(os.path.join(path, "pid"))
    pgid = int(pid_text) if pid_text and pid_text.isdigit() else None
    exit_text = read_text(os.path.join(path, "exit_code"))
    members = group_members(pgid) if pgid else []
    stopped = None
    # stopped.json is written when `stop` is done; stopping.json before its first signal, so a
    # follower that sees the server end during a stop already knows it was stopped
    for name in ("stopped.json", "stopping.json"):
        try:
            with open(os.path.join(path, name)) as f:
                stopped = json.load(f)
            break
        except (OSError, ValueError):
            pass
    try:
        log_size = os.path.getsize(os.path.join(path, "log"))
    except OSError:
        log_size = 0
    server_exit = None
    try:
        with open(os.path.join(path, "server_exit.json")) as f:
            server_exit = json.load(f)
    except (OSError, ValueError):
        pass
    exit_code = int(exit_text) if exit_text and exit_text.lstrip("-").isdigit() else None
    ended = server_exit is not None or exit_code is not None
    return {
        "run_id": run_id,
        "run_dir": path,
        "pgid": pgid,
        # the server runs: its group has members and it has not exited (members left after the
        # server's death, e.g. children of a SIGKILLed server, are `leftover`)
        "alive": bool(members) and not ended,
        "processes": members,
        "leftover": members if ended else [],
        "exit_code": exit_code,
        "server_exit": server_exit,
        "stopped": stopped,
        "log_size": log_size,
        "meta": meta,
    }


def tail_offset(log_path, lines):
    """Byte offset where the last `lines` lines of the log begin (0 for a shorter log)."""
    try:
        size = os.path.getsize(log_path)
    except OSError:
        return 0
    if lines <= 0:
        return size
    with open(log_path, "rb") as log:
        end = size
        log.seek(max(0, end - 1))
        if end and log.read(1) == b"\n":
            end -= 1  # the final newline ends the last line, it does not start one
        seen = 0
        position = end
        while position > 0:
            start = max(0, position - 65536)
            log.seek(start)
            block = log.read(position - start)
            index = len(block)
            while True:
                index = block.rfind(b"\n", 0, index)
                if index < 0:
                    break
                seen += 1
                if seen == lines:
                    return start + index + 1
            position = start
    return 0


def kernel_kill_note(pid):
    """What the kernel log says about `pid` being killed (OOM killer), if it is readable."""
    for argv in (["dmesg"], ["journalctl", "-k", "-q", "--no-pager", "-n", "5000"]):
        result = run_capture(argv, timeout=20)
        if result["rc"] != 0:
            continue
        for line in reversed(result["out"].splitlines()):
            if f"process {pid} " in line and ("Killed" in line or "oom" in line.lower()):
                return {"readable": True, "oom": True, "line": line.strip()[-400:]}
        return {"readable": True, "oom": False, "line": ""}
    return {"readable": False, "oom": False, "line": ""}


def cmd_launch():
    spec = json.load(sys.stdin)
    run_id = spec["run_id"]
    check_run_id(run_id)
    python = os.path.expanduser(spec["python"])
    if spec.get("workdir") and not os.path.isdir(os.path.expanduser(spec["workdir"])):
        fail(f"workdir {spec['workdir']} does not exist on the host", 2)
    os.makedirs(RUNS_ROOT, mode=0o700, exist_ok=True)
    path = os.path.join(RUNS_ROOT, run_id)
    os.mkdir(path, 0o700)
    # argv.json holds `***` where a secret flag value goes; secrets stay in memory (see START_PY)
    write_file(os.path.join(path, "argv.json"), json.dumps(spec["argv"]))
    write_file(os.path.join(path, "env.json"), json.dumps(spec.get("env", {})))
    secret = {
        "env": spec.get("secret_env") or {},
        "argv": spec.get("secret_argv") or {},
        "mask": spec.get("secret_mask") or [],
    }
    write_file(os.path.join(path, "profile.toml"), spec.get("profile_toml", ""))
    write_file(os.path.join(path, "command.sh"), spec.get("command_text", ""), 0o700)
    box = spec.get("container")
    if box:
        python = sys.executable  # the host's python runs the container's start script
        box = container_launch(box, spec)
        write_file(os.path.join(path, "container.json"), json.dumps(box))
    write_file(os.path.join(path, "start.py"), CONTAINER_START_PY if box else START_PY)
    meta = {
        "run_id": run_id,
        "python": python,
        "port": spec.get("port"),
        "workdir": spec.get("workdir"),
        "created": time.time(),
        "profile_hash": spec.get("profile_hash"),
    }
    if box:
        meta["container"] = {"name": box["name"], "runtime": box["runtime"], "image": box["image"]}
    write_file(os.path.join(path, "meta.json"), json.dumps(meta))
    workdir = os.path.expanduser(spec.get("workdir") or path)
    log_fd = os.open(os.path.join(path, "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    process = subprocess.Popen(
        ["bash", "-c", WRAPPER_SH, "sglang-wizard-run", python, path],
        stdin=subprocess.PIPE,
        stdout=log_fd,
        stderr=log_fd,
        cwd=workdir,
        start_new_session=True,
        close_fds=True,
    )
    os.close(log_fd)
    stdin = process.stdin
    assert stdin is not None
    try:
        stdin.write(json.dumps(secret).encode("utf-8"))
        stdin.close()
    except BrokenPipeError:
        pass  # the wrapper failed at once: its log and exit code say why
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(path, "pid")) and time.time() < deadline:
        time.sleep(0.01)
    emit(run_status(run_id, path))


def expand_mounts(words):
    """`-v ~/x:/y` with the host's home put in (no shell expands the runtime's words here)."""
    out = list(words)
    for index in range(1, len(out)):
        if out[index - 1] == "-v" and out[index].startswith("~"):
            out[index] = os.path.expanduser(out[index])
    return out


def container_launch(box, spec):
    """container.json: the runtime's words (run args, image) and the command inside the image;
    the container is named after the run (`sglang-wizard-RUN_ID`) unless the spec names it."""
    secrets_path = box.get("secrets_path") or "/run/sglang-wizard/secrets"
    name = box.get("name") or "sglang-wizard-" + spec["run_id"]
    return {
        "runtime": list(box["runtime"]),
        "name": name,
        "run_args": ["--name", name, *expand_mounts(box["run_args"])],
        "image": box["image"],
        "inner": [box["python"], "-c", CONTAINER_BOOT % secrets_path, *list(spec["argv"])],
        "secrets_path": secrets_path,
        "handoff_timeout_s": box.get("handoff_timeout_s", 600),
    }


def group_alive(path):
    """Cheap liveness test of a run's process group (one signal-0 syscall, no /proc scan).

    True while the pid file is not written yet (the run is starting)."""
    pid_text = read_text(os.path.join(path, "pid"))
    if not pid_text or not pid_text.isdigit():
        return True
    try:
        os.killpg(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cmd_follow(run_id, offset, poll_s, tail=None):
    """Stream the log from `offset` (or from the start of its last `tail` lines).

    The first stdout line is a JSON header (`start` offset and the run's status), then the raw
    log bytes; the run's final status is one JSON line on stderr when the stream ends."""
    path = run_dir_of(run_id)
    log_path = os.path.join(path, "log")
    exit_path = os.path.join(path, "exit_code")
    parent = os.getppid()
    out = sys.stdout.buffer
    offset = int(offset)
    if tail is not None and tail != "-":
        offset = max(offset, tail_offset(log_path, int(tail)))
    poll_s = float(poll_s)
    header = {"start": offset, "status": run_status(run_id, path)}
    out.write(json.dumps(header).encode() + b"\n")
    out.flush()
    try:
        follow_bytes(run_id, path, log_path, exit_path, parent, out, offset, poll_s)
    finally:
        sys.stderr.write(json.dumps(run_status(run_id, path)) + "\n")
        sys.stderr.flush()


def follow_bytes(run_id, path, log_path, exit_path, parent, out, offset, poll_s):
    with open(log_path, "rb") as log:
        log.seek(offset)
        finishing = False
        next_scan = time.time() + 5
        while True:
            data = log.read(1 << 20)
            if data:
                out.write(data)
                out.flush()
                continue
            if finishing:
                return
            if os.path.exists(exit_path) or not group_alive(path):
                finishing = True  # drain what was written before the exit, then stop
                continue
            if time.time() >= next_scan:
                # only zombies left (a killed wrapper whose parent does not reap): scan /proc
                next_scan = time.time() + 5
                if not run_status(run_id, path)["alive"] and os.path.exists(
                    os.path.join(path, "pid")
                ):
                    finishing = True
                    continue
            if os.getppid() != parent:
                return  # the ssh session is gone
            time.sleep(poll_s)


def cmd_status(run_id=None, tail=None):
    if run_id:
        path = run_dir_of(run_id)
        status = run_status(run_id, path)
        if tail is not None:
            status["tail_offset"] = tail_offset(os.path.join(path, "log"), int(tail))
        emit(status)
        return
    runs = []
    if os.path.isdir(RUNS_ROOT):
        for name in sorted(os.listdir(RUNS_ROOT)):
            path = os.path.join(RUNS_ROOT, name)
            if os.path.isdir(path):
                runs.append(run_status(name, path))
    emit(runs)


def cmd_prune(older_than_s, dry):
    """Delete run directories whose server ended more than `older_than_s` ago (never a live one)."""
    removed, kept = [], []
    now = time.time()
    if os.path.isdir(RUNS_ROOT):
        for name in sorted(os.listdir(RUNS_ROOT)):
            path = os.path.join(RUNS_ROOT, name)
            if not os.path.isdir(path):
                continue
            status = run_status(name, path)
            if status["processes"]:
                kept.append({"run_id": name, "why": "processes still running"})
                continue
            stamps = [os.path.getmtime(path)]
            for leaf in ("exit_code", "stopped.json", "log", "meta.json"):
                with contextlib.suppress(OSError):
                    stamps.append(os.path.getmtime(os.path.join(path, leaf)))
            age = now - max(stamps)
            if age < older_than_s:
                kept.append({"run_id": name, "why": "newer than the age given"})
                continue
            if not dry:
                shutil.rmtree(path, ignore_errors=True)
            removed.append({"run_id": name, "age_s": age})
    emit({"removed": removed, "kept": kept, "dry": dry})


def gpu_pids(env=None):
    """Pids holding GPU memory per nvidia-smi, or None when nvidia-smi is unavailable."""
    env = env or dict(os.environ)
    if shutil.which("nvidia-smi", path=env.get("PATH")) is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=30,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return sorted(int(x) for x in out.stdout.decode().split() if x.strip().isdigit())


def run_env(path):
    """The environment the server ran with (minus secrets): nvidia-smi is found the same way."""
    env = dict(os.environ)
    try:
        with open(os.path.join(path, "env.json")) as f:
            env.update(json.load(f))
    except (OSError, ValueError):
        pass
    return env


def container_of(status):
    """(runtime argv, name) of a container run, or None."""
    box = (status.get("meta") or {}).get("container")
    return (list(box["runtime"]), box["name"]) if box else None


def container_exists(runtime, name):
    return run_capture([*runtime, "container", "inspect", name], timeout=60)["rc"] == 0


def container_pids(runtime, name):
    """Host pids of the container's processes (its id in their cgroup), [] when it is gone."""
    found = run_capture([*runtime, "inspect", "--format", "{{.Id}}", name], timeout=60)
    ident = found["out"].strip() if found["rc"] == 0 else ""
    if len(ident) < 12:
        return []
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cgroup") as f:
                if ident in f.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return sorted(pids)


def cmd_stop_container(run_id, path, status, timeout_s):
    """`RUNTIME stop -t TIMEOUT` (TERM to the init, which passes it on; KILL after the timeout),
    then wait for the start script to record the exit and remove the container; remove it
    ourselves if it is still there."""
    runtime, name = container_of(status)
    exists = container_exists(runtime, name)
    before = container_pids(runtime, name) if exists else []
    pgid = status["pgid"]
    result = {"run_id": run_id, "pgid": pgid, "was_running": bool(before or status["alive"]),
              "processes_before": before, "container": name}
    killed = False
    if exists:
        grace = max(0, int(float(timeout_s) + 0.999))
        run_capture([*runtime, "stop", "-t", str(grace), name], timeout=grace + 60)
        code = run_capture([*runtime, "inspect", "--format", "{{.State.ExitCode}}", name])
        killed = code["out"].strip() == "137"
    deadline = time.time() + 30  # the start script records the exit code and removes it
    while pgid and group_members(pgid) and time.time() < deadline:
        time.sleep(0.05)
    run_capture([*runtime, "rm", "-f", name], timeout=120)
    removed = not container_exists(runtime, name)
    if pgid and group_members(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    if not os.path.exists(os.path.join(path, "exit_code")):
        write_file(os.path.join(path, "exit_code"), "137\n" if killed else "143\n")
    remaining = [pid for pid in before if os.path.exists(f"/proc/{pid}")]
    remaining += group_members(pgid) if pgid else []
    env = run_env(path)
    holding = gpu_pids(env)
    deadline = time.time() + 10
    while holding and set(holding) & set(before) and time.time() < deadline:
        time.sleep(0.2)
        holding = gpu_pids(env)
    result.update({
        "killed": killed,
        "remaining": sorted(set(remaining)),
        "container_removed": removed,
        "gpu_checked": holding is not None,
        "gpu_holders_left": sorted(set(holding or []) & set(before)),
        "at": time.time(),
    })
    if result["was_running"]:
        write_file(os.path.join(path, "stopped.json"), json.dumps(result))
    emit(result)


def cmd_stop(run_id, timeout_s):
    path = run_dir_of(run_id)
    status = run_status(run_id, path)
    if container_of(status):
        cmd_stop_container(run_id, path, status, timeout_s)
        return
    pgid = status["pgid"]
    before = status["processes"]
    result = {
        "run_id": run_id,
        "pgid": pgid,
        "was_running": bool(before),
        "processes_before": before,
    }
    killed = False
    if pgid and before:
        write_file(os.path.join(path, "stopping.json"), json.dumps({"at": time.time()}))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.time() + float(timeout_s)
        while group_members(pgid) and time.time() < deadline:
            time.sleep(0.05)
        if group_members(pgid):
            killed = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            deadline = time.time() + 10
            while group_members(pgid) and time.time() < deadline:
                time.sleep(0.05)
        deadline = time.time() + 2
        while not os.path.exists(os.path.join(path, "exit_code")) and time.time() < deadline:
            time.sleep(0.02)
        if not os.path.exists(os.path.join(path, "exit_code")):
            write_file(os.path.join(path, "exit_code"), "-9\n" if killed else "-15\n")
    remaining = group_members(pgid) if pgid else []
    env = run_env(path)
    holding = gpu_pids(env)
    deadline = time.time() + 10  # the driver frees memory shortly after the process is gone
    while holding and set(holding) & set(before) and time.time() < deadline:
        time.sleep(0.2)
        holding = gpu_pids(env)
    result.update(
        {
            "killed": killed,
            "remaining": remaining,
            "gpu_checked": holding is not None,
            "gpu_holders_left": sorted(set(holding or []) & set(before)),
            "at": time.time(),
        }
    )
    if before:
        write_file(os.path.join(path, "stopped.json"), json.dumps(result))
    emit(result)


def cmd_inspect(run_id):
    """Find the last traceback (byte offset + text) and out-of-memory lines in the whole log."""
    path = run_dir_of(run_id)
    log_path = os.path.join(path, "log")
    last_tb = None
    oom = []
    offset = 0
    with open(log_path, "rb") as log:
        for number, line in enumerate(log, start=1):
            position = line.find(TB_MARKER)
            if position >= 0:
                last_tb = (offset + position, number)
            for marker in OOM_MARKERS:
                if marker in line:
                    oom.append([number, line[:2000].decode("utf-8", "replace").rstrip()])
                    del oom[:-5]
                    break
            offset += len(line)
        traceback_text = ""
        if last_tb is not None:
            log.seek(last_tb[0])
            traceback_text = log.read(65536).decode("utf-8", "replace")
    status = run_status(run_id, path)
    server_exit = status.get("server_exit") or {}
    kernel = None
    if server_exit.get("signal") == signal.SIGKILL and server_exit.get("pid"):
        kernel = kernel_kill_note(int(server_exit["pid"]))
    emit(
        {
            "run_id": run_id,
            "status": status,
            "kernel": kernel,
            "log_size": offset,
            "traceback_line": last_tb[1] if last_tb else None,
            "traceback_text": traceback_text,
            "oom_lines": oom,
        }
    )


def port_free(port):
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
        finally:
            sock.close()
    return True


def run_capture(argv, env=None, timeout=60, stdin_data=None, merge_stderr=True):
    try:
        done = subprocess.run(
            argv,
            input=stdin_data,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            env=env,
            timeout=timeout,
        )
    except FileNotFoundError as exc:
        return {"rc": 127, "out": f"{argv[0]}: command not found ({exc})"}
    except subprocess.TimeoutExpired:
        return {"rc": 124, "out": f"timed out after {timeout}s"}
    text = done.stdout.decode("utf-8", "replace")
    err = "" if merge_stderr else done.stderr.decode("utf-8", "replace")
    return {"rc": done.returncode, "out": text[-65536:], "err": err[-16384:]}


VERSIONS_PY = r"""import json, sys
info = {"python": sys.version.split()[0], "executable": sys.executable, "sglang": None,
        "error": None, "import_ok": False}
try:
    from importlib.metadata import version
    info["sglang"] = version("sglang")
except Exception:
    pass
if sys.argv[1:] == ["--import"]:
    # what the launch does first: a metadata entry alone does not make SGLang importable
    try:
        import sglang
        import sglang.srt.server_args  # noqa: F401
        info["import_ok"] = True
        info["sglang"] = info["sglang"] or getattr(sglang, "__version__", None)
    except BaseException as exc:
        import traceback
        info["error"] = "%s: %s" % (type(exc).__name__, exc)
        info["traceback"] = traceback.format_exc()[-3000:]
elif info["sglang"] is None:
    try:
        import sglang
        info["sglang"] = getattr(sglang, "__version__", None)
        info["import_ok"] = True
    except Exception as exc:
        info["error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(info))
"""


def python_and_env(spec):
    """The python to use and its environment (the caller's env on top of this one)."""
    env = dict(os.environ)
    env.update(spec.get("env", {}))
    return os.path.expanduser(spec.get("python") or "python3"), env


def python_versions(python, env, do_import=False):
    """Python and SGLang versions of `python` with `env` (an `error` says why SGLang is missing);
    with `do_import`, SGLang's argument module is really imported (`import_ok`)."""
    argv = [python, "-c", VERSIONS_PY] + (["--import"] if do_import else [])
    result = run_capture(argv, env=env, timeout=300, merge_stderr=False)
    try:
        return json.loads(result["out"].strip().splitlines()[-1])
    except (ValueError, IndexError):
        detail = (result.get("err") or "") + result["out"]
        return {"python": None, "sglang": None, "error": detail.strip()[-2000:]}


def check_path(path):
    info = {"path": path, "exists": False, "is_dir": False, "config_json": None, "error": None}
    expanded = os.path.expanduser(path)
    if not os.path.exists(expanded):
        info["error"] = "does not exist"
        return info
    info["exists"] = True
    info["is_dir"] = os.path.isdir(expanded)
    if not info["is_dir"]:
        info["error"] = "is not a directory"
        return info
    config = os.path.join(expanded, "config.json")
    try:
        with open(config) as f:
            data = json.load(f)
    except OSError as exc:
        info["error"] = f"config.json not readable: {exc.strerror}"
        return info
    except ValueError as exc:
        info["error"] = f"config.json is not valid JSON: {exc}"
        return info
    info["config_json"] = {
        "architectures": data.get("architectures"),
        "model_type": data.get("model_type"),
    }
    return info


def cmd_preflight():
    spec = json.load(sys.stdin)
    python, env = python_and_env(spec)
    report = {"versions": python_versions(python, env, do_import=True)}
    report.update(read_gpus(env))
    emit_rest_of_preflight(spec, python, env, report)


def read_gpus(env):
    """The host's GPUs as the vendor tools print them: nvidia-smi (with the compute capability
    where the driver knows the field), else amd-smi, else rocm-smi (raw outputs; the wizard
    parses them: wizard/nvidia_smi.py, wizard/amd_smi.py)."""
    gpus = run_capture(
        env=env,
        argv=[
            "nvidia-smi",
            "--query-gpu=index,name,memory.used,memory.total,uuid,compute_cap",
            "--format=csv,noheader,nounits",
        ],
    )
    if gpus["rc"] != 0 and "compute_cap" in gpus["out"]:
        # drivers before 510 do not know the compute_cap field
        gpus = run_capture(
            env=env,
            argv=[
                "nvidia-smi",
                "--query-gpu=index,name,memory.used,memory.total,uuid",
                "--format=csv,noheader,nounits",
            ],
        )
    if gpus["rc"] == 127:
        amd = run_capture(["amd-smi", "static", "--asic", "--vram"], env=env)
        if amd["rc"] != 127:
            usage = run_capture(["amd-smi", "metric", "--mem-usage"], env=env)
            return {"amd_smi": {"static": amd, "metric": usage}}
        rocm = run_capture(["rocm-smi", "--showproductname", "--showmeminfo", "vram"], env=env)
        if rocm["rc"] != 127:
            return {"rocm_smi": {"info": rocm}}
    apps = run_capture(
        env=env,
        argv=[
            "nvidia-smi",
            "--query-compute-apps=pid,gpu_uuid,used_memory",
            "--format=csv,noheader,nounits",
        ],
    )
    commands = {}
    if apps["rc"] == 0:
        for row in apps["out"].splitlines():
            first = row.split(",")[0].strip()
            if first.isdigit():
                commands[first] = command_line(int(first))
    return {"nvidia_smi": {"gpus": gpus, "apps": apps, "commands": commands}}


def emit_rest_of_preflight(spec, python, env, report):
    port = spec.get("port")
    report["port"] = {"port": port, "free": port_free(int(port)) if port else None}
    report["paths"] = {name: check_path(p) for name, p in (spec.get("paths") or {}).items()}
    os.makedirs(RUNS_ROOT, mode=0o700, exist_ok=True)
    usage = shutil.disk_usage(RUNS_ROOT)
    report["disk"] = {"path": RUNS_ROOT, "free_bytes": usage.free, "total_bytes": usage.total}
    dry_run = spec.get("dry_run")
    if dry_run:
        # The conformance runner (sent as source): SGLang's own argument code on this host.
        report["dry_run"] = run_capture(
            [python, "-c", dry_run["code"], *dry_run.get("args", [])],
            env=env,
            timeout=dry_run.get("timeout", 300),
            stdin_data=dry_run.get("stdin", "").encode(),
            merge_stderr=False,
        )
    emit(report)


def cmd_container_check():
    """The host's side of a container preflight: the runtime runs (`RUNTIME info`), the image is
    there (pulled when asked), the port is free on the host, disk for the run's log."""
    spec = json.load(sys.stdin)
    runtime = list(spec["runtime"])
    report = {"info": run_capture([*runtime, "info"], timeout=120)}
    image = {"name": spec["image"], "present": False, "pulled": False, "pull": None}
    if report["info"]["rc"] == 0:
        found = run_capture([*runtime, "image", "inspect", spec["image"]], timeout=120)
        image["present"] = found["rc"] == 0
        if not image["present"] and spec.get("pull"):
            image["pull"] = run_capture([*runtime, "pull", spec["image"]],
                                        timeout=spec.get("pull_timeout_s", 3600))
            image["present"] = image["pulled"] = image["pull"]["rc"] == 0
    report["image"] = image
    mounts = []
    for source in spec.get("mounts") or []:
        path = os.path.expanduser(source)
        created = False
        if not os.path.exists(path) and source in (spec.get("create") or []):
            with contextlib.suppress(OSError):
                os.makedirs(path, exist_ok=True)  # the HF cache: SGLang would create it too
                created = True
        mounts.append({"source": source, "exists": os.path.exists(path), "created": created})
    report["mounts"] = mounts
    port = spec.get("port")
    report["port"] = {"port": port, "free": port_free(int(port)) if port else None}
    os.makedirs(RUNS_ROOT, mode=0o700, exist_ok=True)
    usage = shutil.disk_usage(RUNS_ROOT)
    report["disk"] = {"path": RUNS_ROOT, "free_bytes": usage.free, "total_bytes": usage.total}
    emit(report)


def cmd_versions():
    """Python and SGLang versions of the given python with the given env (JSON on stdin)."""
    emit(python_versions(*python_and_env(json.load(sys.stdin))))


def hf_cache_dir(env=None):
    """The HF cache SGLang uses on this host: HF_HUB_CACHE, else HF_HOME/hub, else
    ~/.cache/huggingface/hub; `env` (the launch env of the profile) wins over the login env."""
    e = dict(os.environ)
    e.update(env or {})
    if e.get("HF_HUB_CACHE"):
        return os.path.expanduser(e["HF_HUB_CACHE"])
    home = e.get("HF_HOME") or os.path.join(
        e.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "huggingface",
    )
    return os.path.join(os.path.expanduser(home), "hub")


def cached_snapshot(repo_dir):
    """The snapshot of refs/main in an HF cache repo folder, else the newest with a config."""
    snapshots = os.path.join(repo_dir, "snapshots")
    ref = read_text(os.path.join(repo_dir, "refs", "main"))
    if ref and os.path.isfile(os.path.join(snapshots, ref.strip(), "config.json")):
        return os.path.join(snapshots, ref.strip())
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir(snapshots):
            config = os.path.join(snapshots, name, "config.json")
            if os.path.isfile(config):
                found.append((os.path.getmtime(config), os.path.join(snapshots, name)))
    return max(found)[1] if found else None


def resolve_model_path(path, env=None):
    """A folder as given, or a repo id ORG/NAME resolved in this host's HF cache (as SGLang)."""
    root = os.path.expanduser(path)
    if os.path.isdir(root) or path.count("/") != 1 or path.startswith((".", "/", "~")):
        return root
    repo_dir = os.path.join(hf_cache_dir(env), "models--" + path.replace("/", "--"))
    return cached_snapshot(repo_dir) or root


def cmd_list_models():
    """Models on this host: the HF cache (repo ids) and folders holding config.json under roots."""
    spec = json.load(sys.stdin)
    out = []
    cache = hf_cache_dir(spec.get("env"))
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(cache)):
            if name.startswith("models--"):
                snapshot = cached_snapshot(os.path.join(cache, name))
                repo = name[len("models--"):].replace("--", "/", 1)
                out.append({"kind": "cache", "name": repo, "path": snapshot})
    for root in spec.get("roots", []):
        base = os.path.expanduser(root)
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(base))[:500]:
                folder = os.path.join(base, name)
                if os.path.isfile(os.path.join(folder, "config.json")):
                    out.append({"kind": "folder", "name": folder, "path": folder})
    emit({"cache": cache, "models": out})


def cmd_model_files():
    """The small text files of a model folder (config.json, index, quant configs), as JSON."""
    spec = json.load(sys.stdin)
    root = resolve_model_path(spec["path"], spec.get("env"))
    files = {}
    for name in spec["names"]:
        path = os.path.join(root, name)
        try:
            if os.path.getsize(path) > spec.get("max_bytes", 8 << 20):
                continue
            with open(path, encoding="utf-8") as f:
                files[name] = f.read()
        except (OSError, UnicodeDecodeError):
            continue
    emit({"path": root, "files": files})


def main(argv):
    global RUNS_ROOT
    if len(argv) >= 2 and argv[0] == "--root":
        RUNS_ROOT = os.path.expanduser(argv[1])
        argv = argv[2:]
    if not argv:
        fail("usage: agent [--root DIR] COMMAND ...", 2)
    command, rest = argv[0], argv[1:]
    if command == "launch":
        cmd_launch()
    elif command == "follow":
        cmd_follow(
            rest[0],
            rest[1],
            rest[2] if len(rest) > 2 else "0.1",
            rest[3] if len(rest) > 3 else None,
        )
    elif command == "status":
        cmd_status(rest[0] if rest else None, rest[1] if len(rest) > 1 else None)
    elif command == "prune":
        cmd_prune(float(rest[0]), rest[1] == "dry" if len(rest) > 1 else False)
    elif command == "stop":
        cmd_stop(rest[0], rest[1] if len(rest) > 1 else "30")
    elif command == "inspect":
        cmd_inspect(rest[0])
    elif command == "preflight":
        cmd_preflight()
    elif command == "model-files":
        cmd_model_files()
    elif command == "list-models":
        cmd_list_models()
    elif command == "versions":
        cmd_versions()
    elif command == "container-check":
        cmd_container_check()
    else:
        fail(f"unknown agent command {command!r}", 2)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BrokenPipeError:
        sys.exit(0)
