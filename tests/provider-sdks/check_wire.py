"""Checks toolhost's model-API wire against the official Python SDKs' own types.

Run with the test venv's python (tests/mcp-clients/setup.sh pins `openai` and `anthropic`),
one JSON object on stdin:

    {"api": "openai-responses" | "anthropic",
     "requests": [<request body>, ...],
     "events": [{"event": "<SSE event name>", "data": <payload>}, ...]}

Each request body is validated against the SDK's streaming create-params type, each event's
payload (`data`) against the SDK's stream-event union, with pydantic's `TypeAdapter`; the
event's name must be its `type`. The SDKs themselves check neither (they send params as
given and build events without validating), so the checks are made stricter than pydantic's
defaults where the wire must be exact:

- a TypedDict drops keys it does not declare, and the SDKs' models keep them as extras: every
  key of the input that the validated value lost, or kept only as an extra, is reported, so
  a misspelt key fails;
- `Iterable[...]` members validate lazily: they are walked, so their items are checked too
  (up to the first invalid one);
- the SDKs' unions are discriminated by `type` in their own metadata, which pydantic does
  not read, so it tries every member: the errors of the members whose `type` did not match
  are left out.

Exits 0 when everything matches; otherwise 1, with one line per problem on stderr naming the
item (`request 2`, `event 7 (response.output_item.done)`), the JSON path and the problem.
"""

import json
import sys
from collections.abc import Iterator

from pydantic import BaseModel, TypeAdapter, ValidationError

# How many problems are printed; the rest are counted.
SHOWN_PROBLEMS = 40

# SSE events the SDK's stream reads apart from its event union: Anthropic's keep-alive
# `ping`, which `anthropic._streaming` skips by name.
SKIPPED_EVENTS = {"anthropic": {"ping"}, "openai-responses": set()}


def adapters(api):
    """The (request, event) type adapters of `api`, from the SDK's own types."""
    if api == "openai-responses":
        from openai.types.responses.response_create_params import (
            ResponseCreateParamsStreaming,
        )
        from openai.types.responses.response_stream_event import ResponseStreamEvent

        return TypeAdapter(ResponseCreateParamsStreaming), TypeAdapter(ResponseStreamEvent)
    if api == "anthropic":
        from anthropic.types.message_create_params import MessageCreateParamsStreaming
        from anthropic.types.raw_message_stream_event import RawMessageStreamEvent

        return TypeAdapter(MessageCreateParamsStreaming), TypeAdapter(RawMessageStreamEvent)
    raise SystemExit(f"check_wire: unknown api {api!r}: openai-responses or anthropic")


def pointer(path):
    return "/" + "/".join(str(step) for step in path)


def located(given, error):
    """Where a pydantic error is: its JSON path in `given`, and the SDK type it was checked
    as (the last union member its location names, such as `ToolSearchCall`), or None."""
    path, member, value = (), None, given
    loc = error["loc"]
    for number, step in enumerate(loc):
        missing_field = error["type"] == "missing" and number == len(loc) - 1
        if isinstance(value, dict) and (step in value or missing_field):
            path, value = path + (step,), value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            path, value = path + (step,), value[step]
        elif isinstance(step, str) and step.isidentifier():
            member = step
    return path, member


def validation_problems(error, given, path):
    """pydantic's errors for `given` (at `path`), at their JSON paths. A union reports every
    member it tried; those whose `type` literal did not match, or which want another JSON
    type, are noise beside the one that fitted, and are left out while one did."""
    errors = error.errors()
    type_errors = [
        e for e in errors if e["type"] == "literal_error" and e["loc"][-1:] == ("type",)
    ]
    mismatched = [e["loc"][:-1] for e in type_errors]
    relevant = [
        e
        for e in errors
        if not any(e["loc"][: len(m)] == m for m in mismatched)
        and not (e["type"].endswith("_type") and located(given, e)[1] == e["loc"][-1])
    ]
    # When no member fitted, what they wanted of `type` says the most.
    shown = relevant or type_errors or errors
    lines = {}
    for e in shown:
        at, member = located(given, e)
        where = pointer(path + at)
        if relevant and member:
            where += f" (as {member})"
        elif not relevant:
            where += f": {json.dumps(e['input'])[:120]} fits no type of the union"
        lines.setdefault(where, []).append(e["msg"])
    for where, messages in lines.items():
        yield f"{where}: {'; '.join(dict.fromkeys(messages))}"


def lost_keys(given, validated, path=()):
    """The problems of `validated` against the `given` JSON: keys the type does not declare
    (dropped from a TypedDict, or a model's extras), and the errors of lazily validated
    items."""
    if isinstance(validated, BaseModel):
        for key in validated.model_extra or {}:
            model = type(validated).__name__
            yield f"{pointer(path + (key,))}: unknown key: {model} has no such field"
        for name, field in type(validated).model_fields.items():
            key = field.alias or name
            if isinstance(given, dict) and key in given:
                yield from lost_keys(given[key], getattr(validated, name), path + (key,))
    elif isinstance(validated, dict) and isinstance(given, dict):
        for key, value in given.items():
            if key in validated:
                yield from lost_keys(value, validated[key], path + (key,))
            else:
                yield f"{pointer(path + (key,))}: unknown key: the SDK's type has no such field"
    elif isinstance(validated, (list, tuple)) and isinstance(given, list):
        for index, (value, item) in enumerate(zip(given, validated)):
            yield from lost_keys(value, item, path + (index,))
    elif isinstance(validated, Iterator) and isinstance(given, list):
        for index, value in enumerate(given):
            try:
                item = next(validated)
            except ValidationError as error:
                # The iterator stops at its first invalid item; its errors start at its index.
                yield from validation_problems(error, given, path)
                return
            yield from lost_keys(value, item, path + (index,))


def problems(adapter, value):
    try:
        validated = adapter.validate_python(value)
    except ValidationError as error:
        yield from validation_problems(error, value, ())
        return
    yield from lost_keys(value, validated)


def main():
    wire = json.load(sys.stdin)
    api = wire["api"]
    request_adapter, event_adapter = adapters(api)
    found = []
    for number, body in enumerate(wire["requests"], 1):
        found += [f"request {number}: {problem}" for problem in problems(request_adapter, body)]
    for number, event in enumerate(wire["events"], 1):
        name, data = event["event"], event["data"]
        item = f"event {number} ({name})"
        if name in SKIPPED_EVENTS[api]:
            continue
        if data.get("type") != name:
            found.append(f"{item}: /type: {data.get('type')!r} is not the event's name")
        found += [f"{item}: {problem}" for problem in problems(event_adapter, data)]
    if not found:
        return 0
    for problem in found[:SHOWN_PROBLEMS]:
        print(problem, file=sys.stderr)
    if len(found) > SHOWN_PROBLEMS:
        print(f"... and {len(found) - SHOWN_PROBLEMS} more", file=sys.stderr)
    print(f"check_wire: {api}: {len(found)} mismatches with the SDK's types", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
