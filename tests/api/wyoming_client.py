"""The `wyoming` package's AsyncTcpClient against `utter serve --wyoming`.

Run by crates/cli/tests/serve_protocols.rs: python wyoming_client.py HOST PORT SPEECH_WAV
Prints `ok: ...` per check and `RESULT {json}` last.
"""

import asyncio
import json
import sys
import wave

from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what, flush=True)


async def transcribe(host, port, wav_path, name):
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Transcribe(name=name, language="en").event())
        with wave.open(wav_path, "rb") as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
            while frames := w.readframes(1024):
                await client.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=frames).event())
        await client.write_event(AudioStop().event())
        kinds, chunks = [], []
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout=120)
            if event is None or event.type == "error":
                raise AssertionError(f"the utterance got no transcript: {event}")
            kinds.append(event.type)
            if TranscriptChunk.is_type(event.type):
                chunks.append(TranscriptChunk.from_event(event).text)
            if Transcript.is_type(event.type):
                return kinds, chunks, Transcript.from_event(event).text


async def main(host, port, wav_path):
    port = int(port)
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await asyncio.wait_for(client.read_event(), timeout=30))
    check(len(info.asr) == 1 and info.asr[0].installed, "describe: one installed ASR program")
    models = {m.name: m for m in info.asr[0].models}
    check("whisper-tiny.en" in models and models["whisper-tiny.en"].languages == ["en"],
          f"describe: the installed models with their languages: {sorted(models)}")
    check(info.asr[0].supports_transcript_streaming, "describe: streaming transcripts")

    kinds, chunks, text = await transcribe(host, port, wav_path, "whisper-tiny.en")
    check(kinds[0] == "transcript-start" and kinds[-2:] == ["transcript-stop", "transcript"]
          and "transcript-chunk" in kinds, f"streamed: {kinds}")
    check(" ".join(c.strip() for c in chunks) == text, "the chunks make the transcript")
    check(len(text.split()) > 5, f"transcript: {text!r}")
    print("RESULT " + json.dumps({"text": text}), flush=True)


asyncio.run(main(*sys.argv[1:4]))
