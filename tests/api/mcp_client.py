"""The `mcp` package's client against `utter mcp` (stdio) or a running
`utter serve`'s /mcp (streamable HTTP).

Run by crates/cli/tests/serve.rs: python mcp_client.py UTTER_BIN|MCP_URL SPEECH_WAV [TOKEN]
Over HTTP, TOKEN is the per-user token /mcp asks for (sent as a Bearer header).
Prints `ok: ...` per check and `RESULT {json}` last.
"""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what, flush=True)


async def main(utter, wav, token=None):
    # A URL: the client's streamable-HTTP transport (with the token, as a
    # client configured with it would send it); else the stdio one.
    if utter.startswith("http"):
        headers = {"Authorization": f"Bearer {token}"} if token else None
        server = streamable_http_client(utter, http_client=create_mcp_http_client(headers=headers))
    else:
        server = StdioServerParameters(command=utter, args=["mcp"])
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


asyncio.run(main(*sys.argv[1:4]))
