"""The `mcp` package's client against `utter mcp` (stdio) or a running
`utter serve`'s /mcp (streamable HTTP).

Run by crates/cli/tests/serve.rs: python mcp_client.py UTTER_BIN|MCP_URL SPEECH_WAV
Prints `ok: ...` per check and `RESULT {json}` last.
"""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what, flush=True)


async def main(utter, wav):
    # A URL: the client's streamable-HTTP transport; else the stdio one.
    server = utter if utter.startswith("http") else StdioServerParameters(command=utter, args=["mcp"])
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check({"transcribe_file", "list_models"} <= set(tools), f"tools: {sorted(tools)}")
        check(tools["transcribe_file"].input_schema["required"] == ["path"], "transcribe_file takes a path")

        models = await client.call_tool("list_models", {})
        listed = json.loads(models.content[0].text)
        check(any(m["name"] == "whisper-tiny.en" for m in listed), "list_models lists the installed models")

        result = await client.call_tool("transcribe_file", {"path": wav, "language": "en"})
        check(not result.is_error, "transcribe_file succeeds")
        text = result.content[0].text
        check(len(text.split()) > 5, f"transcribe_file: {text!r}")

        srt = await client.call_tool("transcribe_file", {"path": wav, "format": "srt"})
        check(" --> " in srt.content[0].text, "transcribe_file as srt")

        missing = await client.call_tool("transcribe_file", {"path": "/no/such/file.wav"})
        check(missing.is_error and "not a file" in missing.content[0].text,
              f"a missing file is a tool error: {missing.content[0].text}")
        print("RESULT " + json.dumps({"text": text}), flush=True)


asyncio.run(main(*sys.argv[1:3]))
