"""The official MCP Python SDK as a client of the real `toolhost serve`, over stdio or HTTP.

Usage: client_test.py TOOLHOST_BINARY {stdio|http}

Checks, each printed as `ok: ...` (the first failure raises and exits non-zero): the
handshake, the tool list (titles, schemas, annotations), a call of every filesystem tool,
approvals through elicitation (and the refusal without it), bad arguments, a path outside the
workspace, progress notifications and cancellation (the command's process is killed). Over
HTTP also: DNS rebinding protection (Host, Origin), the bearer token and the size limit.
Besides tools: slash commands and skills as prompts (expanded as `chat` expands them), the
workspace's files and the skills' files as resources (a path a deny rule names is neither
listed, read nor completed), resource templates, completions, and `listChanged` when a
command file appears.
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

# Every `toolhost serve` of these checks refuses Read of this file.
DENIED = "secret.txt"
GLOBAL_FLAGS = ["--deny", f"Read(./{DENIED})"]


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
        [binary, "--workspace", str(workspace), *GLOBAL_FLAGS, "serve", "--http", "0", *extra],
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
async def connect(
    binary: str, transport: str, workspace: Path, url: str | None, confirm: bool, notifications: list[str] | None = None
):
    """A client session; with `confirm` it declares elicitation and accepts every request.
    The methods of the notifications it receives go to `notifications`."""
    confirmations: list[str] = []

    async def on_message(message) -> None:
        if notifications is not None and not isinstance(message, Exception):
            notifications.append(message.method)

    async def accept(_context, params: types.ElicitRequestParams) -> types.ElicitResult:
        confirmations.append(params.message)
        return types.ElicitResult(action="accept", content={})

    callback = accept if confirm else None
    if transport == "stdio":
        server = StdioServerParameters(command=binary, args=["--workspace", str(workspace), *GLOBAL_FLAGS, "serve"])
        streams = stdio_client(server)
    else:
        assert url is not None
        streams = streamable_http_client(url)
    async with streams as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback, message_handler=on_message) as session:
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


def write_catalog(workspace: Path) -> None:
    """Two slash commands, a skill with a second file, a file to read and a denied one."""
    (workspace / ".toolhost/commands").mkdir(parents=True)
    (workspace / ".toolhost/commands/review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: [file] [focus]\n---\n"
        "Review $1 with a focus on $2.\n\nThe guide: @guide.md\n"
    )
    (workspace / ".toolhost/commands/note.md").write_text("Take this note: $ARGUMENTS\n")
    (workspace / ".toolhost/skills/tidy").mkdir(parents=True)
    (workspace / ".toolhost/skills/tidy/SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidies things up\n---\nTidy $ARGUMENTS, then see checklist.md.\n"
    )
    (workspace / ".toolhost/skills/tidy/checklist.md").write_text("- sort\n- trim\n")
    (workspace / "guide.md").write_text("Be kind and precise.\n")
    (workspace / DENIED).write_text("the password\n")


def prompt_text(result: types.GetPromptResult) -> str:
    return "\n".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))


async def prompts_and_resources(binary: str, transport: str, workspace: Path, url: str | None) -> None:
    notifications: list[str] = []
    async with connect(binary, transport, workspace, url, confirm=True, notifications=notifications) as (session, _):
        init = await session.initialize()
        caps = init.capabilities
        check(caps.prompts is not None and caps.prompts.list_changed, f"{transport}: prompts.listChanged", caps)
        check(caps.resources is not None and caps.resources.list_changed, "resources.listChanged", caps)
        check(caps.completions is not None, "completions are declared", caps)
        check(caps.logging is None, "no logging capability (deprecated in 2026-07-28)", caps)

        prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
        check({"review", "note", "tidy"} <= set(prompts), "slash commands and skills are prompts", list(prompts))
        review = prompts["review"]
        check(review.description == "Review a file", "a command's description", review.description)
        check([a.name for a in review.arguments or []] == ["file", "focus"], "argument-hint names $1 and $2", review.arguments)
        check([a.name for a in prompts["note"].arguments or []] == ["arguments"], "$ARGUMENTS is one argument", prompts["note"].arguments)

        got = prompt_text(await session.get_prompt("review", {"file": "src/main.rs", "focus": "error handling"}))
        check("Review src/main.rs with a focus on error handling." in got, "positional arguments are substituted", got)
        check('<file path="guide.md">' in got and "Be kind and precise." in got, "@file is read as chat reads it", got)
        got = prompt_text(await session.get_prompt("note", {"arguments": "buy milk, then bread"}))
        check(got.strip() == "Take this note: buy milk, then bread", "$ARGUMENTS is the raw string", got)
        got = prompt_text(await session.get_prompt("tidy", {"arguments": "the README"}))
        check("Tidy the README, then see checklist.md." in got and "Base directory for this skill:" in got, "a skill's prompt", got)
        for name, arguments in (("nope", {}), ("review", {"colour": "red"})):
            try:
                await session.get_prompt(name, arguments)
                check(False, f"prompts/get {name} {arguments} is refused")
            except MCPError as error:
                check(error.code == -32602, f"prompts/get {name} {arguments}: -32602", error.message)

        resources = {resource.uri: resource for resource in (await session.list_resources()).resources}
        root = workspace.resolve()
        guide_uri = f"file://{root}/guide.md"
        check(guide_uri in resources, "workspace files are resources", list(resources))
        check(resources[guide_uri].mime_type == "text/markdown", "with a MIME type", resources[guide_uri])
        check(not any(DENIED in uri for uri in resources), "a denied file is not listed", list(resources))
        check({"skill://tidy/SKILL.md", "skill://tidy/checklist.md"} <= set(resources), "skill files are resources", list(resources))
        read = await session.read_resource(guide_uri)
        check(read.contents[0].text == "Be kind and precise.\n", "a workspace file is read", read)
        read = await session.read_resource("skill://tidy/checklist.md")
        check(read.contents[0].text == "- sort\n- trim\n", "a skill file is read", read)
        for uri in (f"file://{root}/{DENIED}", "file:///etc/passwd", f"file://{root}/../../etc/passwd", "skill://tidy/../../x"):
            try:
                result = await session.read_resource(uri)
                check(False, f"{uri} cannot be read", result)
            except MCPError as error:
                check(error.code in (-32002, -32602) and "password" not in error.message, f"{uri} cannot be read", error.message)

        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        file_template = f"file://{root}/{{+path}}"
        check({file_template, "skill://{skill}/{+path}", "session://{id}"} <= templates, "resource templates", templates)

        async def completions(ref, name: str, value: str, context: dict[str, str] | None = None) -> list[str]:
            return (await session.complete(ref, {"name": name, "value": value}, context)).completion.values

        files = types.ResourceTemplateReference(uri=file_template)
        check(await completions(files, "path", "gui") == ["guide.md"], "a template's path completes")
        check(DENIED not in await completions(files, "path", ""), "a denied file is not completed")
        skills = types.ResourceTemplateReference(uri="skill://{skill}/{+path}")
        check(await completions(skills, "skill", "ti") == ["tidy"], "skill names complete")
        values = await completions(skills, "path", "", {"skill": "tidy"})
        check(values == ["SKILL.md", "checklist.md"], "a skill's files complete, given the skill", values)
        values = await completions(types.PromptReference(name="review"), "file", "gu")
        check(values == ["guide.md"], "a prompt's file argument completes with files", values)
        try:
            await completions(types.PromptReference(name="nope"), "x", "")
            check(False, "completing an unknown prompt is refused")
        except MCPError as error:
            check(error.code == -32602, "completing an unknown prompt: -32602", error.message)

        (workspace / ".toolhost/commands/later.md").write_text("Later: $ARGUMENTS\n")
        for _ in range(100):
            if "notifications/prompts/list_changed" in notifications:
                break
            await anyio.sleep(0.1)
        check("notifications/prompts/list_changed" in notifications, "a new command file: prompts/list_changed", notifications)
        check("notifications/resources/list_changed" in notifications, "and resources/list_changed", notifications)
        names = {prompt.name for prompt in (await session.list_prompts()).prompts}
        check("later" in names, "the new command is listed", names)


async def modern_protocol(binary: str, transport: str, workspace: Path, url: str | None) -> None:
    """The SDK's default `Client` probes `server/discover` and speaks the stateless 2026-07-28."""
    if transport == "stdio":
        server = StdioServerParameters(command=binary, args=["--workspace", str(workspace), *GLOBAL_FLAGS, "serve"])
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
        write_catalog(workspace)
        if transport == "stdio":
            await tool_calls(binary, transport, workspace, None)
            await prompts_and_resources(binary, transport, workspace, None)
            await modern_protocol(binary, transport, workspace, None)
        else:
            with http_server(binary, workspace) as url:
                await tool_calls(binary, transport, workspace, url)
                await prompts_and_resources(binary, transport, workspace, url)
                await modern_protocol(binary, transport, workspace, url)
            http_safety(binary, workspace)
    print(f"python sdk over {transport}: all checks passed", flush=True)


if __name__ == "__main__":
    started = time.monotonic()
    anyio.run(main, sys.argv[1], sys.argv[2])
    print(f"({time.monotonic() - started:.1f}s)")
