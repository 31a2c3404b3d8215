#!/usr/bin/env python3
"""Runs the model evaluation: every task, for every agent, on one model through one logging proxy.

See docs/src/model-eval.md. Each run is written to OUT/results.jsonl as soon as it ends (with the
proxy log OUT/logs/RUN.jsonl and the agent's output under OUT/runs/RUN/), and OUT/table.md is
rewritten after every run, so a run stopped half-way keeps what it did.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import agents  # noqa: E402
import classify  # noqa: E402
import report  # noqa: E402
import tasks as task_list  # noqa: E402

TEMPLATES = {"default": "qwen2.5-coder-tools.jinja", "neutral": "qwen2.5-coder-tools-neutral.jinja"}


def parse_args():
    repo = HERE.parent.parent
    ap = argparse.ArgumentParser(description="toolhost and pi on the same model, task by task")
    ap.add_argument("--agents", default="toolhost,pi")
    ap.add_argument("--template", default="default", choices=["default", "neutral", "both", "none"],
                    help="the local server's chat template (restarts ../shared/llm/serve.sh); "
                         "none: use --endpoint as it runs")
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    ap.add_argument("--endpoint", default="http://127.0.0.1:8091",
                    help="model host, up to before /v1 (OpenAI-compatible or Anthropic)")
    ap.add_argument("--api", default="openai-chat", choices=["openai-chat", "anthropic"])
    ap.add_argument("--model", default=os.environ.get("LLM_MODEL", "qwen2.5-coder-1.5b"))
    ap.add_argument("--api-key-env", help="variable holding the endpoint's key (the proxy adds it)")
    ap.add_argument("--toolhost-bin", default=os.environ.get("TOOLHOST_BIN", ""))
    ap.add_argument("--toolhost-tools", default="core", help="core (the seven), all, or a --tools list")
    ap.add_argument("--pi-tools", default="core", help="core (pi's seven built-ins), all (its default), or a list")
    ap.add_argument("--peers-dir", default=os.environ.get("PEERS_DIR", "/var/tmp/agent-peers"))
    ap.add_argument("--llm-dir", default=os.environ.get("LLM_DIR", str(repo.parent / "shared/llm")))
    ap.add_argument("--max-requests", type=int, default=12, help="model requests per run, both agents")
    ap.add_argument("--max-tokens", type=int, default=1024, help="output tokens per request, both agents")
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--context-window", type=int, default=16384)
    ap.add_argument("--timeout", type=int, default=420, help="seconds per run")
    ap.add_argument("--out", default="", help="results folder (default benches/model_eval/results/STAMP-TEMPLATE)")
    ap.add_argument("--scratch", default="/var/tmp/model-eval", help="where the workspace and homes live")
    ap.add_argument("--label", default="", help="the name of a --template none run (e.g. the template the server runs)")
    ap.add_argument("--keep-server", action="store_true", help="leave the llama server running at the end")
    ap.add_argument("--server-nice", type=int, default=int(os.environ.get("LLM_GROUP_NICE", "0")),
                    help="nice value of the llama server's own scheduling group (Linux autogroup); "
                         "negative gives it the CPU before builds running beside it")
    return ap.parse_args()


def serve(opts, action, template=None):
    env = dict(os.environ)
    if template:
        env["LLM_TEMPLATE"] = str(Path(opts.llm_dir) / TEMPLATES[template])
    cmd = ["bash", str(Path(opts.llm_dir) / "serve.sh")] + ([action] if action != "start" else [])
    # Its own session, so the server is its own autogroup: with autogroups the kernel shares the
    # CPU between sessions first, and a plain nice value counts only inside one session.
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, start_new_session=True)
    print(f"   serve.sh {action}: {(proc.stdout.strip().splitlines() or [''])[0]}", file=sys.stderr)
    if proc.returncode != 0 and action == "start":
        sys.exit(f"serve.sh failed:\n{proc.stderr[-2000:]}")
    pid_match = re.search(r"pid (\d+)", proc.stdout)
    if action == "start" and opts.server_nice and pid_match:
        try:
            Path(f"/proc/{pid_match.group(1)}/autogroup").write_text(str(opts.server_nice))
            print(f"   the server's autogroup nice: {opts.server_nice}", file=sys.stderr)
        except OSError as err:
            print(f"   could not set the server's autogroup nice: {err}", file=sys.stderr)


def start_proxy(opts, log_dir: Path):
    port_file = log_dir / "proxy.port"
    port_file.unlink(missing_ok=True)  # a stopped run's port
    cmd = [sys.executable, str(HERE / "proxy.py"), "--upstream", opts.endpoint, "--log-dir", str(log_dir),
           "--port-file", str(port_file), "--temperature", str(opts.temperature),
           "--max-tokens", str(opts.max_tokens), "--max-requests", str(opts.max_requests),
           "--timeout", str(opts.timeout)]
    if opts.api_key_env:
        cmd += ["--api-key-env", opts.api_key_env]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            return proc, int(port_file.read_text())
        time.sleep(0.05)
    proc.kill()
    sys.exit("the logging proxy did not start")


def run_one(opts, template, agent, task, out: Path):
    run_id = f"{template}-{agent}-{task.name}"
    scratch = Path(opts.scratch)
    ws, home = scratch / "ws", scratch / f"home-{agent}"
    for d in (ws, home):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    task_list.write_fixture(task, ws)
    run_dir = out / "runs" / run_id
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    log = out / "logs" / f"{run_id}.jsonl"
    log.unlink(missing_ok=True)
    print(f"== {run_id}: {task.prompt}", file=sys.stderr)
    run = agents.AGENTS[agent](opts, task, run_id, ws, home, run_dir)
    passed, why = task.check(ws, run["answer"])
    summary = classify.summarize(classify.read_log(log))
    mode, detail = classify.failure_mode(task, passed, run, summary, ws)
    if not passed:
        shutil.copytree(ws, run_dir / "ws-after", symlinks=True)
        detail = f"{detail}; {why}" if detail else why
    row = {"template": template, "agent": agent, "task": task.name, "passed": passed, "mode": mode,
           "detail": detail, "answer": run["answer"][:300], "rc": run["rc"], "seconds": round(run["seconds"], 1),
           "tools": [c["name"] for c in summary["calls"]],
           **{k: summary[k] for k in ("requests", "prompt_tokens", "output_tokens", "cached_tokens",
                                      "model_seconds", "upstream_errors")}}
    print(f"   {'pass' if passed else 'FAIL: ' + mode} ({row['requests']} requests, {row['seconds']} s, "
          f"tools {','.join(row['tools']) or '-'}){'' if passed else ': ' + detail[:160]}", file=sys.stderr)
    return row


def main():
    # A stopped run still stops its proxy (and leaves what it wrote).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    opts = parse_args()
    chosen = task_list.by_name(opts.tasks.split(",")) if opts.tasks else task_list.TASKS
    agent_names = [a for a in opts.agents.split(",") if a]
    for a in agent_names:
        if a not in agents.AGENTS:
            sys.exit(f"unknown agent {a!r}; known: {', '.join(agents.AGENTS)}")
    if "toolhost" in agent_names and not os.access(opts.toolhost_bin or "", os.X_OK):
        sys.exit(f"no toolhost binary at {opts.toolhost_bin!r} (--toolhost-bin or TOOLHOST_BIN)")
    if "pi" in agent_names and not (Path(opts.peers_dir) / "node_modules/@mariozechner/pi-coding-agent").is_dir():
        sys.exit(f"pi is not installed under {opts.peers_dir}: copy ../shared/agent-peers there and run its setup.sh")
    templates = ["default", "neutral"] if opts.template == "both" else [opts.template]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for template in templates:
        out = Path(opts.out or HERE / "results" / f"{stamp}-{template}")
        if opts.out and len(templates) > 1:
            out = out / template
        (out / "logs").mkdir(parents=True, exist_ok=True)
        if template != "none":
            serve(opts, "stop")
            serve(opts, "start", template)
        proxy, opts.proxy_port = start_proxy(opts, out / "logs")
        if template == "none" and opts.label:
            template = opts.label
        meta = {"template": template, "endpoint": opts.endpoint, "api": opts.api, "model": opts.model,
                "started": stamp, "temperature": opts.temperature, "max_tokens": opts.max_tokens,
                "max_requests": opts.max_requests, "timeout": opts.timeout,
                "toolhost_tools": opts.toolhost_tools, "pi_tools": opts.pi_tools,
                "versions": {a: agents.version_of(opts, a) for a in agent_names},
                "toolhost_bin": opts.toolhost_bin}
        (out / "meta.json").write_text(json.dumps(meta, indent=2))
        rows = []
        try:
            with open(out / "results.jsonl", "a", encoding="utf-8") as results:
                # Task by task, the agents in turn: a run stopped early still compares them.
                for task in chosen:
                    for agent in agent_names:
                        row = run_one(opts, template, agent, task, out)
                        rows.append(row)
                        results.write(json.dumps(row) + "\n")
                        results.flush()
                        (out / "table.md").write_text(report.render(meta, rows))
        finally:
            proxy.terminate()
            proxy.wait()
        print(report.render(meta, rows))
        print(f"results: {out}", file=sys.stderr)
    if templates != ["none"] and not opts.keep_server:
        serve(opts, "stop")


if __name__ == "__main__":
    main()
