"""What a run did, read from the proxy's log and the workspace, and why a miss missed.

The failure modes, in the order they are tried:
  destroyed data  a fixture file the task must not touch changed or went, or a file it edits
                  lost most of its lines
  loop limit      the proxy's request limit, the agent's own turn limit, or the time limit
  malformed call  most calls (or the last) had arguments that are not JSON, a tool name that was
                  not offered, or came back as an argument/schema error
  gave up         no tool call at all, or an empty answer or a refusal
  wrong tool      tools were called, but none of the kinds that can do the task
  wrong answer    the right kind of tool, and still the check failed
  agent error     the agent ended with an error of its own (the provider failing, a crash)
"""

import json
import re
from pathlib import Path

KIND = {"read": "read", "grep": "grep", "glob": "glob", "find": "glob", "listdir": "ls", "ls": "ls",
        "edit": "edit", "multiedit": "edit", "write": "write", "bash": "bash"}

# Words of the argument errors of both agents (toolhost: "invalid arguments", schema errors;
# pi: "Validation failed", "must have required property").
ARG_ERROR = re.compile(r"invalid (arguments|input|parameters)|validation failed|must have required|"
                       r"missing (required|field)|not valid json|unknown tool|tool .* not found|"
                       r"expected .* (got|found)|unknown field", re.I)
REFUSAL = re.compile(r"\b(i (can(no|')t|am unable|'m unable|do not have access)|unable to (access|read))", re.I)


def read_log(path: Path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_results(request):
    """The tool results a request carries: (text, is_error) in order (OpenAI or Anthropic)."""
    out = []
    for msg in (request or {}).get("messages") or []:
        if msg.get("role") == "tool":
            content = msg.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            out.append((content or "", False))
        elif msg.get("role") == "user" and isinstance(msg.get("content"), list):
            for part in msg["content"]:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    content = part.get("content")
                    if isinstance(content, list):
                        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
                    out.append((content or "", bool(part.get("is_error"))))
    return out


def offered_tools(request):
    names = set()
    for tool in (request or {}).get("tools") or []:
        names.add((tool.get("function") or {}).get("name") or tool.get("name") or "")
    return names


def summarize(records):
    """Requests, tokens and tool calls of one run, from its proxy log."""
    calls, prompt, output, cached, model_s = [], 0, 0, 0, 0.0
    offered = set()
    limit = False
    for rec in records:
        if rec.get("limit"):
            limit = True
            continue
        offered |= offered_tools(rec.get("request"))
        resp = rec.get("response") or {}
        usage = resp.get("usage") or {}
        prompt += int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0) + \
            int(usage.get("cache_read_input_tokens") or 0)
        output += int(usage.get("completion_tokens") or usage.get("output_tokens") or 0)
        cached += int(usage.get("cache_n") or usage.get("cache_read_input_tokens") or 0)
        model_s += (rec.get("t_end") or 0) - (rec.get("t_start") or 0)
        for call in resp.get("tool_calls") or []:
            try:
                args = json.loads(call.get("arguments") or "{}")
                parsed = isinstance(args, dict)
            except ValueError:
                args, parsed = None, False
            calls.append({"name": call.get("name", ""), "args": args if parsed else call.get("arguments"),
                          "parsed": parsed})
    for call in calls:
        call["offered"] = call["name"] in offered
    results = tool_results((records[-1] if records else {}).get("request"))
    # A result belongs to the call of the same position (both agents answer calls in order).
    for call, (text, is_error) in zip(calls, results):
        call["error"] = is_error or bool(ARG_ERROR.search(text[:300]))
        call["arg_error"] = bool(ARG_ERROR.search(text[:300]))
        call["result"] = text[:200]
    answered = [r for r in records if not r.get("limit")]
    return {"requests": len(answered), "prompt_tokens": prompt, "output_tokens": output,
            "cached_tokens": cached, "model_seconds": round(model_s, 1), "calls": calls,
            "limit": limit, "upstream_errors": sum(1 for r in answered if (r.get("status") or 0) >= 400)}


def changed_fixture_files(task, ws: Path):
    """Fixture files that should have stayed and did not, and edited files that lost most lines."""
    bad = []
    for rel, content in task.files.items():
        p = ws / rel
        now = p.read_text(errors="replace") if p.is_file() else None
        if rel not in task.changes:
            if now != content:
                bad.append(f"{rel} {'removed' if now is None else 'changed'}")
        else:
            before = [line for line in content.splitlines() if line.strip()]
            after = [line for line in (now or "").splitlines() if line.strip()]
            if len(before) >= 3 and len(after) * 2 < len(before):
                bad.append(f"{rel} cut from {len(before)} to {len(after)} lines")
    return bad


def kind_of(name):
    return KIND.get(name.lower(), name.lower())


def failure_mode(task, passed, run, summary, ws: Path):
    """(mode, detail) of a run: ("pass", why) when it passed."""
    if passed:
        return "pass", ""
    destroyed = changed_fixture_files(task, ws)
    if destroyed:
        return "destroyed data", "; ".join(destroyed)
    if summary["limit"] or run.get("timed_out") or run.get("max_turns"):
        why = "time limit" if run.get("timed_out") else "request limit"
        return "loop limit", f"{why} after {summary['requests']} requests"
    calls = summary["calls"]
    bad = [c for c in calls if not c["parsed"] or not c["offered"] or c.get("arg_error")]
    if calls and bad and (len(bad) * 2 >= len(calls) or bad[-1] is calls[-1]):
        c = bad[-1]
        what = "arguments not JSON" if not c["parsed"] else ("tool not offered" if not c["offered"] else "argument error")
        return "malformed call", f"{what}: {c['name']} {str(c['args'])[:80]}"
    answer = (run.get("answer") or "").strip()
    if summary["upstream_errors"] and not calls:
        return "agent error", f"{summary['upstream_errors']} requests failed upstream"
    if not calls:
        return "gave up", f"no tool call; answered {answer[:80]!r}"
    kinds = {kind_of(c["name"]) for c in calls}
    if not kinds & task.needs:
        return "wrong tool", f"called {sorted(kinds)}, needs one of {sorted(task.needs)}"
    if run.get("rc") not in (0, None) and not answer:
        return "agent error", f"exit {run.get('rc')}"
    if not answer or REFUSAL.search(answer):
        return "gave up", f"answered {answer[:80]!r}"
    return "wrong answer", ""
