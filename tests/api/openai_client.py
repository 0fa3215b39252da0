"""The official `openai` Python SDK against a running `utter serve`.

Run by crates/cli/tests/serve_openai.rs (which starts the server and makes
the audio): python openai_client.py BASE_URL SPEECH_WAV WEBM SPANISH_WAV NOT_AUDIO
Each check prints `ok: ...`; the first failure raises. The last line is
`RESULT {json}` with the texts, for the Rust side to score against the
references and against `utter transcribe`.
"""

import json
import sys

import urllib.error
import urllib.request
import openai

base_url, speech, webm, spanish, not_audio = sys.argv[1:6]
client = openai.OpenAI(base_url=base_url, api_key="any-key", max_retries=0, timeout=300)
result = {}


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what.split("\n")[0][:160], flush=True)


def still_answering():
    ids = [m.id for m in client.models.list().data]
    check("whisper-tiny.en" in ids, "the server still answers (models.list)")


# models
models = client.models.list()
ids = [m.id for m in models.data]
check("whisper-tiny.en" in ids and "whisper-base" in ids, f"models.list() lists the installed models: {ids}")
check(all(m.object == "model" and m.owned_by and m.created > 0 for m in models.data), "each model has object, created, owned_by")
one = client.models.retrieve("whisper-base")
check(one.id == "whisper-base", "models.retrieve(id)")

# every response_format
with open(speech, "rb") as f:
    t = client.audio.transcriptions.create(model="whisper-1", file=f)
check(len(t.text.split()) > 5, f"json (whisper-1 = the default model): {t.text!r}")
result["json"] = t.text

with open(speech, "rb") as f:
    t = client.audio.transcriptions.create(model="whisper-tiny.en", file=f, response_format="text")
check(isinstance(t, str) and t.strip() == result["json"], "text: the same words as json")

with open(speech, "rb") as f:
    srt = client.audio.transcriptions.create(model="whisper-tiny.en", file=f, response_format="srt")
check(srt.startswith("1\n") and " --> " in srt and "," in srt.split("\n")[1], f"srt: {srt.splitlines()[:2]}")

with open(speech, "rb") as f:
    vtt = client.audio.transcriptions.create(model="whisper-tiny.en", file=f, response_format="vtt")
check(vtt.startswith("WEBVTT") and " --> " in vtt, "vtt")

with open(speech, "rb") as f:
    raw = client.audio.transcriptions.with_raw_response.create(
        model="whisper-tiny.en",
        file=f,
        response_format="verbose_json",
        timestamp_granularities=["word", "segment"],
        language="en",
        temperature=0.0,
        prompt="Mister John Dashwood.",
    )
# No model here has word times (the engine times Whisper by segments): said, not silently left out.
notice = raw.headers.get("x-utter-notice") or ""
check("word timestamps" in notice, f"the missing word times are told: {notice!r}")
v = raw.parse()
check(v.language == "english", f"verbose_json language as its English name: {v.language}")
check(6.5 < v.duration < 7.5, f"verbose_json duration: {v.duration}")
check(len(v.segments) >= 1, f"verbose_json segments: {len(v.segments)}")
for s in v.segments:
    check(0 <= s.start < s.end <= v.duration + 0.5 and s.text.strip(), f"segment {s.id}: {s.start}-{s.end} {s.text!r}")
result["verbose"] = v.text

# a browser's WebM/Opus upload
with open(webm, "rb") as f:
    t = client.audio.transcriptions.create(model="whisper-tiny.en", file=("audio.webm", f, "audio/webm"))
result["webm"] = t.text
check(len(t.text.split()) > 5, f"WebM/Opus: {t.text!r}")

# streaming
with open(speech, "rb") as f:
    events = list(client.audio.transcriptions.create(model="whisper-tiny.en", file=f, stream=True))
types = [e.type for e in events]
check(types[-1] == "transcript.text.done" and types[:-1] and all(t == "transcript.text.delta" for t in types[:-1]),
      f"stream: deltas then done: {types}")
deltas = "".join(e.delta for e in events[:-1])
check(events[-1].text == result["json"] and deltas == result["json"], "stream: the deltas and done text = the non-streamed text")

# translation: Spanish speech into English with the multilingual model
with open(spanish, "rb") as f:
    tr = client.audio.translations.create(model="whisper-base", file=f)
result["translation"] = tr.text
words = set(tr.text.lower().replace(".", " ").replace(",", " ").split())
check(len(words & {"the", "all", "are", "please", "wait", "call", "your", "will", "be", "busy", "order"}) >= 3,
      f"translations.create: English out of Spanish: {tr.text!r}")

# bad input: the OpenAI error shape, and the server answers the next request
def expect_error(exc_type, status, code, call, what):
    try:
        call()
    except exc_type as e:
        body = e.body if isinstance(e.body, dict) else {}
        check(e.status_code == status and set(body) >= {"message", "type", "param", "code"} and body["message"],
              f"{what}: {status} {body.get('code')}: {body.get('message')}")
        if code:
            check(body.get("code") == code, f"{what}: code {code}")
        still_answering()
        return
    raise AssertionError(f"{what}: no error")


with open(speech, "rb") as f:
    data = f.read()
expect_error(openai.BadRequestError, 400, "translation_unsupported",
             lambda: client.audio.translations.create(model="whisper-tiny.en", file=("a.wav", data)),
             "translation with an English-only model")
expect_error(openai.NotFoundError, 404, "model_not_found",
             lambda: client.audio.transcriptions.create(model="no-such-model", file=("a.wav", data)),
             "unknown model")
expect_error(openai.BadRequestError, 400, "invalid_audio",
             lambda: client.audio.transcriptions.create(model="whisper-1", file=open(not_audio, "rb")),
             "not audio")
expect_error(openai.BadRequestError, 400, "invalid_audio",
             lambda: client.audio.transcriptions.create(model="whisper-1", file=("empty.wav", b"")),
             "empty file")
expect_error(openai.BadRequestError, 400, "truncated_audio",
             lambda: client.audio.transcriptions.create(model="whisper-1", file=("cut.wav", data[: len(data) // 2])),
             "truncated file")
expect_error(openai.BadRequestError, 400, "unsupported_language",
             lambda: client.audio.transcriptions.create(model="whisper-tiny.en", file=("a.wav", data), language="fr"),
             "a language the model does not know")
expect_error(openai.BadRequestError, 400, None,
             lambda: client.audio.transcriptions.create(model="whisper-1", file=("a.wav", data), response_format="xml"),
             "unknown response_format")

# no `file` part at all (the SDK cannot send that): plain HTTP
def raw(method, path, body=None, content_type=None):
    req = urllib.request.Request(base_url + path, data=body, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


form = (b"--b0\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--b0--\r\n")
status, body = raw("POST", "/audio/transcriptions", form, "multipart/form-data; boundary=b0")
check(status == 400 and body["error"]["param"] == "file" and "file" in body["error"]["message"],
      f"missing file: {body['error']['message']}")
status, body = raw("GET", "/no/such/path")
check(status == 404 and "error" in body, "unknown path: 404 in the error shape")
still_answering()

print("RESULT " + json.dumps(result), flush=True)
