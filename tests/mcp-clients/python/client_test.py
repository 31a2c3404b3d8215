"""The official MCP Python SDK as a client of the real `toolhost serve`, over stdio or HTTP.

Usage: client_test.py TOOLHOST_BINARY {stdio|http}

Checks, each printed as `ok: ...` (the first failure raises and exits non-zero): the
handshake, the tool list (titles, schemas, annotations), a call of every filesystem tool,
approvals through elicitation (and the refusal without it), bad arguments, a path outside the
workspace, progress notifications and cancellation (the command's process is killed). Over
HTTP also: DNS rebinding protection (Host, Origin), the bearer token and the size limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

FS_TOOLS = ["Read", "Write", "Edit", "ListDir", "Glob", "Grep"]


def ok(what: str) -> None:
    print(f"ok: {what}", flush=True)


def check(condition: bool, what: str, detail: object = "") -> None:
    if not condition:
        raise AssertionError(f"FAILED: {what}\n{detail}")
    ok(what)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@contextlib.contextmanager
def http_server(binary: str, workspace: Path, *extra: str, env: dict[str, str] | None = None):
    """Starts `toolhost serve --http 0` and yields its URL (printed on stderr)."""
    process = subprocess.Popen(
        [binary, "--workspace", str(workspace), "serve", "--http", "0", *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        if "http://" not in line:
            raise AssertionError(f"no URL from toolhost serve --http: {line!r}")
        yield line[line.index("http://") :].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stdout is not None
        check(process.stdout.read() == "", "HTTP mode writes nothing to stdout")


@contextlib.asynccontextmanager
async def connect(binary: str, transport: str, workspace: Path, url: str | None, confirm: bool):
    """A client session; with `confirm` it declares elicitation and accepts every request."""
    confirmations: list[str] = []

    async def accept(_context, params: types.ElicitRequestParams) -> types.ElicitResult:
        confirmations.append(params.message)
        return types.ElicitResult(action="accept", content={})

    callback = accept if confirm else None
    if transport == "stdio":
        server = StdioServerParameters(command=binary, args=["--workspace", str(workspace), "serve"])
        streams = stdio_client(server)
    else:
        assert url is not None
        streams = streamable_http_client(url)
    async with streams as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            yield session, confirmations


async def tool_calls(binary: str, transport: str, workspace: Path, url: str | None) -> None:
    async with connect(binary, transport, workspace, url, confirm=True) as (session, confirmations):
        init = await session.initialize()
        check(init.server_info.name == "toolhost", f"{transport}: initialize names the server")
        check(init.protocol_version == "2025-11-25", f"{transport}: negotiates 2025-11-25", init.protocol_version)
        check(init.capabilities.tools is not None and init.capabilities.tools.list_changed, "tools.listChanged")

        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        check(all(name in tools for name in FS_TOOLS), "every filesystem tool is listed", list(tools))
        read = tools["Read"]
        check(read.title == "Read file", "the label is the title", read.title)
        check(read.input_schema["required"] == ["path"], "inputSchema is the parameters schema", read.input_schema)
        check(read.annotations is not None and read.annotations.read_only_hint is True, "readOnlyHint")
        write = tools["Write"]
        check(write.annotations is not None and write.annotations.read_only_hint is False, "Write is not read-only")

        result = await session.call_tool("Write", {"path": "notes/hello.txt", "content": "hello world\nsecond line\n"})
        check(not result.is_error, "Write runs once the user accepts", text_of(result))
        check(len(confirmations) == 1 and "Write" in confirmations[0], "Write asked through elicitation", confirmations)
        check((workspace / "notes/hello.txt").read_text() == "hello world\nsecond line\n", "the file is written")

        result = await session.call_tool("Read", {"path": "notes/hello.txt"})
        check(not result.is_error and "hello world" in text_of(result), "Read returns the content", text_of(result))
        check(len(confirmations) == 1, "Read (safe) asks nobody", confirmations)

        result = await session.call_tool("Edit", {"path": "notes/hello.txt", "old_string": "world", "new_string": "there"})
        check(not result.is_error, "Edit runs", text_of(result))
        check("hello there" in (workspace / "notes/hello.txt").read_text(), "the file is edited")

        result = await session.call_tool("ListDir", {"path": "notes"})
        check(not result.is_error and "hello.txt" in text_of(result), "ListDir lists the file", text_of(result))
        result = await session.call_tool("Glob", {"pattern": "*.txt"})
        check(not result.is_error and "hello.txt" in text_of(result), "Glob finds the file", text_of(result))
        result = await session.call_tool("Grep", {"pattern": "hello", "output_mode": "content"})
        check(not result.is_error and "hello there" in text_of(result), "Grep finds the line", text_of(result))
        if result.structured_content is not None:
            check(isinstance(result.structured_content, dict), "structuredContent is an object")

        result = await session.call_tool("Read", {})
        check(result.is_error and "path" in text_of(result), "bad arguments: an isError result naming the parameter", text_of(result))
        result = await session.call_tool("Read", {"path": "notes/hello.txt", "offset": "first"})
        check(result.is_error and "offset" in text_of(result), "a wrong type names the parameter", text_of(result))
        result = await session.call_tool("Read", {"path": "/etc/passwd"})
        check(result.is_error and "root:" not in text_of(result), "a path outside the workspace is refused", text_of(result))
        try:
            result = await session.call_tool("Reed", {"path": "x"})
            check(False, "an unknown tool is the JSON-RPC error -32602", result)
        except MCPError as error:
            check(
                error.code == -32602 and "Read" in error.message,
                "an unknown tool is the JSON-RPC error -32602 and suggests the right one",
                error.message,
            )

        # Progress: Bash streams its output as updates.
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        command = "for i in 1 2 3; do echo line$i; sleep 0.2; done"
        result = await session.call_tool("Bash", {"command": command}, progress_callback=on_progress)
        check(not result.is_error and "line3" in text_of(result), "Bash runs once accepted", text_of(result))
        check(len(seen) >= 2, "updates arrive as notifications/progress", seen)
        progresses = [progress for progress, _, _ in seen]
        check(progresses == sorted(set(progresses)), "progress increases", progresses)
        check(any(message and "line1" in message for _, _, message in seen), "progress carries the output", seen)

        # Cancellation: abandoning the call sends notifications/cancelled; the process dies.
        pid_file = workspace / "sleep.pid"
        with anyio.move_on_after(30) as scope:
            async with anyio.create_task_group() as group:

                async def sleeper() -> None:
                    await session.call_tool("Bash", {"command": "sleep 60 & echo $! > sleep.pid; wait"})

                group.start_soon(sleeper)
                for _ in range(200):
                    if pid_file.exists() and pid_file.read_text().strip():
                        break
                    await anyio.sleep(0.05)
                group.cancel_scope.cancel()
        check(not scope.cancelled_caught, "the call could be cancelled")
        pid = int(pid_file.read_text().strip())
        for _ in range(100):
            if not process_alive(pid):
                break
            await anyio.sleep(0.05)
        check(not process_alive(pid), "notifications/cancelled kills the command's processes", pid)
        result = await session.call_tool("Read", {"path": "notes/hello.txt"})
        check(not result.is_error, "the session goes on after a cancellation")

    async with connect(binary, transport, workspace, url, confirm=False) as (session, _):
        await session.initialize()
        result = await session.call_tool("Write", {"path": "refused.txt", "content": "x"})
        check(result.is_error and "--yes" in text_of(result) and "--allow 'Write(/refused.txt)'" in text_of(result), "without elicitation the refusal says how to allow", text_of(result))
        check(not (workspace / "refused.txt").exists(), "the refused call wrote nothing")


async def modern_protocol(binary: str, transport: str, workspace: Path, url: str | None) -> None:
    """The SDK's default `Client` probes `server/discover` and speaks the stateless 2026-07-28."""
    if transport == "stdio":
        server = StdioServerParameters(command=binary, args=["--workspace", str(workspace), "serve"])
    else:
        server = url
    async with Client(server) as client:
        check(client.protocol_version == "2026-07-28", f"{transport}: server/discover negotiates 2026-07-28", client.protocol_version)
        tools = {tool.name for tool in (await client.list_tools()).tools}
        check(set(FS_TOOLS) <= tools, "2026-07-28: every filesystem tool is listed", tools)
        result = await client.call_tool("Read", {"path": "notes/hello.txt"})
        check(not result.is_error and "hello there" in text_of(result), "2026-07-28: Read returns the content", text_of(result))
        result = await client.call_tool("Read", {})
        check(result.is_error and "path" in text_of(result), "2026-07-28: bad arguments name the parameter", text_of(result))


def process_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        # Gone before the open, or between the open and the read (ESRCH).
        return False
    return stat.split(")")[-1].split()[0] != "Z"


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()


def http_safety(binary: str, workspace: Path) -> None:
    with http_server(binary, workspace) as url:
        port = url.split(":")[2].split("/")[0]
        check(post(url, INITIALIZE, {}) == 200, "a plain loopback request is served")
        check(post(url, INITIALIZE, {"Host": "evil.example"}) == 403, "a foreign Host is refused (DNS rebinding)")
        check(post(url, INITIALIZE, {"Origin": "http://evil.example"}) == 403, "a foreign Origin is refused")
        check(post(url, INITIALIZE, {"Origin": f"http://localhost:{port}"}) == 200, "the server's own origin is served")
        big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
        check(post(url, big, {}) == 413, "a body over the size limit gets 413")
    with http_server(binary, workspace, "--token-env", "TOOLHOST_TEST_TOKEN", env={"TOOLHOST_TEST_TOKEN": "s3cret-token"}) as url:
        check(post(url, INITIALIZE, {}) == 401, "without the bearer token: 401")
        check(post(url, INITIALIZE, {"Authorization": "Bearer wrong"}) == 401, "a wrong token: 401")
        check(post(url, INITIALIZE, {"Authorization": "Bearer s3cret-token"}) == 200, "the right token is served")
    refused = subprocess.run(
        [binary, "--workspace", str(workspace), "serve", "--http", "0.0.0.0:0"], capture_output=True, text=True, timeout=10
    )
    check(refused.returncode != 0 and "bearer token" in refused.stderr, "a non-loopback address needs a token", refused.stderr)


async def main(binary: str, transport: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        if transport == "stdio":
            await tool_calls(binary, transport, workspace, None)
            await modern_protocol(binary, transport, workspace, None)
        else:
            with http_server(binary, workspace) as url:
                await tool_calls(binary, transport, workspace, url)
                await modern_protocol(binary, transport, workspace, url)
            http_safety(binary, workspace)
    print(f"python sdk over {transport}: all checks passed", flush=True)


if __name__ == "__main__":
    started = time.monotonic()
    anyio.run(main, sys.argv[1], sys.argv[2])
    print(f"({time.monotonic() - started:.1f}s)")
