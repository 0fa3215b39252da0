"""Benchmark (not a test), issue 28: the vocabulary as a correction after the
engine. Real recordings — LibriVox (pocketsphinx-testdata) and Asterisk's
English prompts (asterisk-core-sounds-en-g722, read by a voice artist, Allison Smith; the
references are the scripts she read) — transcribed by each model with and
without a vocabulary of the names and terms in them plus unrelated entries
(distractors). Counts, per model:

- fixes: listed words in the reference that come out right (spelled as
  listed) only with the vocabulary;
- misses: listed words in the reference still wrong with it;
- false replacements: words the vocabulary changed that were right without
  it (an entry written where the reference has no such word);
- WER without and with the vocabulary.

Issue 40 adds recordings where a listed word is heard as an everyday word
("clubs" as "close", "caller" as "color", "caret" as "carrot"): pocketsphinx's
card recordings and more Asterisk prompts (their script, core-sounds-en.txt
of asterisk-core-sounds-en 1.6.1), plus prompts where such an everyday word
is right and must stay ("close parenthesis", "call waiting", "please hold").
The second table is those recordings alone. `UTTER_BIN` runs another build
(the one before a change) for a before/after in one run of the machine.

    cargo build -p utter-cli
    python3 tests/bench/vocabulary_fix.py
"""
import os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantization import UTTER, edits, words  # noqa: E402

UTTER = os.environ.get("UTTER_BIN", UTTER)

LIBRIVOX = "/usr/share/pocketsphinx/test/data/librivox"
ASTERISK = "/usr/share/asterisk/sounds/en_US_f_Allison"
MODELS = ["whisper-tiny.en", "whisper-base", "moonshine-tiny-en", "moonshine-base-en"]
VOCABULARY = ["ill-disposed", "Dashwood", "Asterisk", "Inter-Asterisk Exchange", "Digium", "IAX",
              "PBX", "IVR", "voicemail",
              # heard as everyday words (issue 40)
              "clubs", "caller", "caret", "comma", "colon", "DAHDI",
              # distractors: nothing in the recordings is any of these
              "Kubernetes", "PostgreSQL", "GitHub", "Tauri", "Mattermost", "Siobhan", "Grafana",
              "Terraform", "OAuth", "Nguyen", "WebAssembly"]
# The scripts of asterisk-core-sounds-en 1.6.1 (core-sounds-en.txt).
PROMPTS = {
    "demo-abouttotry": "I am about to attempt an Inter-Asterisk Exchange connection to a demonstration server located at Digium. In order for this to work you must already be connected to the Internet. Please wait a moment while I attempt to make the connection.",
    "demo-nogo": "I am afraid I was unable to create a connection to the Digium demonstration Asterisk server. You may find some helpful debugging information on the Asterisk console.",
    "demo-moreinfo": "Asterisk is an Open Source full-featured PBX and IVR platform that runs on the linux operating system. For more information, visit www.asterisk.org.",
    "demo-thanks": "Goodbye. Thank you for trying out the Asterisk Open Source PBX.",
    "demo-congrats": "Congratulations. You have successfully installed and executed the Asterisk open source PBX. You have also installed a set of sample sounds and configuration files that should help you to get started. Like a normal PBX you will navigate this demonstration by dialing digits. If you are using a console channel driver instead of a real phone you can use the dial, answer, and hang up commands to simulate the actions of a standard telephone.",
    "demo-instruct": "If you would like to learn more technical information about Asterisk dial 2 now. If you'd like to test out the voice over IP capabilities of Asterisk you can dial 500 to attempt an Inter-Asterisk Exchange or IAX connection to a demonstration server at Digium. In order for this test to work you will need to be connected to the Internet and have at least a 28.8 kilobit modem. To execute an echo test dial 600. This test is most useful when you have connected to this Asterisk server from a remote location. The sample configuration also has a single user with extension 1234 and password 4242. That user is configured to ring the console when their extension is dialed. If you dial 1234 you can try to ring the console. If the console is busy or unavailable you will be given the option to leave voicemail. To check voice mail for the user dial extension 8500 to enter the voicemail system. Finally, you can press the pound key to disconnect from the PBX.",
}
# Issue 40: a listed word heard as an everyday word, and everyday words that
# are right (the same script).
EVERYDAY = {
    "spy-dahdi": "DAHDI",
    "letters/ascii94": "caret",
    "letters/ascii44": "comma",
    "letters/ascii58": "colon",
    "priv-callpending": "I have a caller waiting, who introduces themselves as:",
    "queue-thereare": "You are currently caller number",
    "priv-callee-options": "Dial 1 if you wish this caller to reach you directly now, and in the future.  Dial 2 if you wish to send this caller to voicemail now and forevermore.  Dial 3 to send this caller to the torture menus, now and forevermore.  Dial 4 to send this caller to a polite \"don't call\" menu, now and forevermore.  Dial 5 to allow this caller to come straight thru to you in the future, but just this once, send them to voicemail.",
    "screen-callee-options": "You have these options: Dial 1 if you wish to immediately connect to the incoming call.  Dial 2 if you wish to send this caller to voicemail.  Dial 3 to send this caller to the torture menus.  Dial 4 to send this caller to a polite \"don't call\" menu.",
    "letters/ascii41": "close parenthesis",
    "call-waiting": "Call waiting.",
    "cannot-complete-as-dialed": "Your call cannot be completed as dialed.",
    "please-try-call-later": "Please try your call again later.",
    "followme/pls-hold-while-try": "please hold while I try to locate the person you are calling",
    "queue-holdtime": "The estimated hold time is currently",
    "confbridge-locked": "The conference is now locked.",
}
CARDS = "/usr/share/pocketsphinx/test/data/cards"


def asterisk(tmp, name):
    wav = os.path.join(tmp, name.replace("/", "_") + ".wav")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "g722", "-i", os.path.join(ASTERISK, name + ".g722"),
                    "-ar", "16000", "-ac", "1", wav], check=True)
    return wav


def everyday(tmp):
    """The issue-40 recordings: (name, wav, reference)."""
    out = []
    for line in open(os.path.join(CARDS, "cards.transcription")):
        text, ident = line.rsplit(" (", 1)
        ident = ident.strip().rstrip(")")
        text = text.replace("<s>", "").replace("</s>", "").strip()
        out.append(("cards/" + ident, os.path.join(CARDS, ident + ".wav"), text))
    for name, text in EVERYDAY.items():
        out.append((name, asterisk(tmp, name), text))
    return out


def recordings(tmp):
    out = []
    for line in open(os.path.join(LIBRIVOX, "transcription")):
        text, ident = line.rsplit(" (", 1)
        text = text.replace("<s>", "").replace("</s>", "").strip()
        text = text.replace("ill disposed", "ill-disposed").replace("dashwood", "Dashwood")
        out.append((ident.strip().rstrip(")"), os.path.join(LIBRIVOX, ident.strip().rstrip(")") + ".wav"), text))
    for name, text in PROMPTS.items():
        out.append((name, asterisk(tmp, name), text))
    return out


def count(entry, text):
    """Occurrences of `entry`, spelled as listed, as whole words."""
    return len(re.findall(r"(?<![\w-])" + re.escape(entry) + r"(?![\w-])", text))


CACHE = {}


def transcribe(model, wav, extra):
    key = (model, wav, tuple(extra))
    if key not in CACHE:
        CACHE[key] = subprocess.run([UTTER, "transcribe", "--model", model, "--language", "en", *extra, wav],
                                    capture_output=True, text=True, check=True).stdout
    return CACHE[key]


def table(title, recs, vocab):
    print(f"\n{title} ({os.path.basename(UTTER)} = {UTTER})\n")
    print("| model | listed words in the references | right without | right with | fixes | misses | false replacements | WER without | WER with |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model in MODELS:
        listed = right_without = right_with = false = 0
        err_without = err_with = n_words = 0
        for name, wav, ref in recs:
            without, with_ = transcribe(model, wav, []), transcribe(model, wav, ["--vocab-file", vocab])
            for entry in VOCABULARY:
                in_ref = count(entry, ref)
                listed += in_ref
                right_without += min(in_ref, count(entry, without))
                right_with += min(in_ref, count(entry, with_))
                false += max(0, count(entry, with_) - max(in_ref, count(entry, without)))
            r = words(ref)
            n_words += len(r)
            err_without += edits(r, words(without))
            err_with += edits(r, words(with_))
            if without != with_:
                print(f"<!-- {model} {name}: {without.strip()!r} -> {with_.strip()!r} -->", file=sys.stderr)
        print(f"| {model} | {listed} | {right_without} | {right_with} | {max(0, right_with - right_without)} | "
              f"{listed - right_with} | {false} | {100 * err_without / n_words:.1f} % | {100 * err_with / n_words:.1f} % |")
        sys.stdout.flush()


def main():
    tmp = tempfile.mkdtemp(prefix="utter-vocab-")
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(VOCABULARY) + "\n")
    new = everyday(tmp)
    table("Heard as everyday words (issue 40)", new, vocab)
    table("All recordings", recordings(tmp) + new, vocab)


if __name__ == "__main__":
    main()
