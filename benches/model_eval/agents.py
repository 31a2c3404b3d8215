"""How the evaluation runs each agent: `toolhost run` and pi, on one model through the proxy.

Both get a fresh HOME, the same workspace path (so the server's prompt cache serves the next
task), no user instructions, the same output-token cap, temperature 0 and the proxy's request
limit. Each returns the answer it printed, its exit status and whether it timed out.
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

# The core tools of each agent, one for one: read, write, edit, shell, text search, file search,
# folder listing.
TOOLHOST_CORE = "Read,Write,Edit,Bash,Grep,Glob,ListDir"
PI_CORE = "read,write,edit,bash,grep,find,ls"

BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "USER": "root", "LOGNAME": "root",
            "SHELL": "/bin/bash", "TERM": "dumb", "LANG": "C.UTF-8", "NO_COLOR": "1"}


def tool_path(opts):
    """PATH for both agents: pi's grep and find run `rg` and `fd` (and try to download them, which
    fails offline: "ripgrep (rg) is not available"); Debian names fd `fdfind`, so a link named
    fd is put in a folder of the scratch space, first on the PATH."""
    bin_dir = Path(opts.scratch) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    fd = shutil.which("fd") or shutil.which("fdfind")
    link = bin_dir / "fd"
    if fd and not link.exists():
        link.symlink_to(fd)
    return f"{bin_dir}:{BASE_ENV['PATH']}"


def proxy_base(opts, run_id):
    base = f"http://127.0.0.1:{opts.proxy_port}/r/{run_id}"
    return base if opts.api == "anthropic" else base + "/v1"


def run_command(cmd, env, cwd, timeout, out_dir: Path):
    start = time.monotonic()
    with open(out_dir / "stdout", "wb") as out, open(out_dir / "stderr", "wb") as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
    seconds = time.monotonic() - start
    (out_dir / "command.json").write_text(json.dumps(cmd))
    return proc.returncode, timed_out, seconds


def run_toolhost(opts, task, run_id, ws: Path, home: Path, out_dir: Path):
    config = home / "eval-config.toml"
    config.write_text(f"""[agent]
provider = "eval"
max_iterations = {opts.max_requests}

[providers.eval]
api = "{opts.api}"
base_url = "{proxy_base(opts, run_id)}"
model = "{opts.model}"
context_window = {opts.context_window}
max_output_tokens = {opts.max_tokens}
temperature = {opts.temperature}
connect_timeout = 10
first_byte_timeout = {opts.timeout}
idle_timeout = {opts.timeout}
request_timeout = {opts.timeout}
max_retries = 0
""")
    cmd = [opts.toolhost_bin, "--workspace", str(ws), "--config", str(config),
           "--mode", "bypassPermissions", "run", "--output-format", "json"]
    if opts.toolhost_tools != "all":
        cmd += ["--tools", TOOLHOST_CORE if opts.toolhost_tools == "core" else opts.toolhost_tools]
    cmd.append(task.prompt)
    env = dict(BASE_ENV, HOME=str(home), PATH=tool_path(opts))
    rc, timed_out, seconds = run_command(cmd, env, ws, opts.timeout, out_dir)
    answer, subtype = "", ""
    try:
        result = json.loads((out_dir / "stdout").read_text() or "{}")
        answer, subtype = result.get("result") or "", result.get("subtype") or ""
    except ValueError:
        answer = (out_dir / "stdout").read_text(errors="replace")
    return {"rc": rc, "timed_out": timed_out, "seconds": seconds, "answer": answer,
            "max_turns": subtype == "error_max_turns"}


def run_pi(opts, task, run_id, ws: Path, home: Path, out_dir: Path):
    agent_dir = home / "pi-agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    api = "anthropic-messages" if opts.api == "anthropic" else "openai-completions"
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"eval": {
        "baseUrl": proxy_base(opts, run_id), "api": api, "apiKey": "eval-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": opts.model, "name": opts.model, "reasoning": False,
                    "contextWindow": opts.context_window, "maxTokens": opts.max_tokens}]}}}, indent=2))
    # pi compacts when fewer than reserveTokens (16384 by default) are left of the context
    # window: with a 16k model that is every turn. Keep room for one answer, as toolhost does.
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 2 * opts.max_tokens}}))
    cli = Path(opts.peers_dir) / "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
    cmd = ["node", str(cli), "-p", "--no-session", "--provider", "eval", "--model", opts.model]
    if opts.pi_tools != "all":
        cmd += ["--tools", PI_CORE if opts.pi_tools == "core" else opts.pi_tools]
    cmd.append(task.prompt)
    env = dict(BASE_ENV, HOME=str(home), PATH=tool_path(opts), PI_CODING_AGENT_DIR=str(agent_dir), PI_OFFLINE="1", PI_TELEMETRY="0")
    rc, timed_out, seconds = run_command(cmd, env, ws, opts.timeout, out_dir)
    answer = (out_dir / "stdout").read_text(errors="replace").strip()
    return {"rc": rc, "timed_out": timed_out, "seconds": seconds, "answer": answer, "max_turns": False}


AGENTS = {"toolhost": run_toolhost, "pi": run_pi}


def version_of(opts, agent):
    try:
        if agent == "toolhost":
            out = subprocess.run([opts.toolhost_bin, "--version"], capture_output=True, text=True, timeout=20)
            return out.stdout.strip()
        pkg = Path(opts.peers_dir) / "node_modules/@mariozechner/pi-coding-agent/package.json"
        return "pi " + json.loads(pkg.read_text())["version"]
    except (OSError, ValueError, subprocess.SubprocessError):
        return "?"
