"""A LiveKit Agents voice agent, written as LiveKit's examples write one, for callproof.

An AgentServer with one rtc_session entrypoint, an AgentSession of
Silero VAD, speech-to-text, the OpenAI plugin's LLM and text-to-speech,
and an Agent whose tools are function tools: livekit-agents 1.8.9 from
PyPI, used as shipped. Only the parts LiveKit leaves to its user are ours,
each a subclass of LiveKit's own base class, so that the agent runs
offline:

- speech-to-text: PocketSphinxSTT (stt.STT, batch recognition; the session
  runs it on the VAD's segments), pocketsphinx from PyPI with the English
  model its wheel carries; or, with --stt ear --stt-url URL, EarSTT (a
  streaming stt.STT) on callproof's earstt, a scripted stand-in for a
  cloud STT that recognizes only callproof's own cached utterances (the
  room input then at 8 kHz without gain control, so the caller's samples
  reach it unchanged);
- text-to-speech: FliteTTS (tts.TTS), the flite binary;
- the model: openai.LLM with base_url pointing at agents/pipecat's
  fake_llm.py, a scripted stand-in for the cloud model.

Its end_call tool waits for the words said with it to play out, then
leaves the room, as LiveKit's hang-up examples do (they delete the room;
leaving it is enough here, and callproof reads it as the hang-up).

The one thing an agent changes to be tested by callproof: its tools POST
to the call's tools URL with its bearer token, read from the job's
metadata (callproof's start object), or from the caller's participant
attributes (docs/INTEROP.md, "LiveKit Agents"). Its tools over HTTP are
the call's catalogue (tools.catalog; update_order alone without one), each
a function tool; each write is handled as the Pipecat bot's careful
handler does (settle: a grace a barge-in cancels, a read first, one
Idempotency-Key per function call kept on its retries, a bounded timeout,
at most two retries, a read back before the model hears the result, and an
honest done, failed or unconfirmed result).

With --tools mcp the agent has no tool code but end_call: LiveKit's own
MCPToolset takes the call's tools from its MCP URL (the start object's
tools.mcpUrl) with the same token (mcp_tools below).

Two configurations of each write (over MCP, of every tool listed), as
they meet the caller barging in (core scenario int-05: "stop" while the
backend holds the write):

- careful (the default): the tool waits for its grace and its requests
  only while the turn is not interrupted
  (SpeechHandle.wait_if_not_interrupted), and the caller starting to speak
  interrupts the turn: the write is given up, its connection closed, and
  nothing commits; the model hears "cancelled";
- flawed (--no-interrupt-tools): the tool calls disallow_interruptions()
  first, so the write runs on through the caller's "stop" or correction
  and commits.

Jobs run as threads (one process for every call), the worker's load
threshold is off and its load is the calls it runs, not the machine's
CPU: LiveKit's defaults refuse jobs on a machine as busy as a test's
(the worker above 0.7, the server at 1). Run it as LiveKit's examples run:

    python agent.py --llm-url http://127.0.0.1:PORT/v1 [--no-interrupt-tools] [--tools mcp] [--agent-name NAME]
        [--write-grace SECONDS (2)] [--stt ear --stt-url URL] start

with LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET in the
environment. It prints "registered NAME" on stdout once the server has
registered the worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import subprocess
import sys
import tempfile
import threading
import wave
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from pocketsphinx import Decoder

from livekit import rtc
from livekit.agents import (
    DEFAULT_API_CONNECT_OPTIONS,
    mcp,
    Agent,
    AgentServer,
    AgentSession,
    APIConnectOptions,
    JobContext,
    JobExecutorType,
    JobProcess,
    RunContext,
    UserStateChangedEvent,
    cli,
    function_tool,
    get_job_context,
    llm,
    stt,
    tts,
    utils,
)
from livekit.agents.voice import SpeechHandle, room_io
from livekit.agents.types import NOT_GIVEN, NotGivenOr
from livekit.plugins import openai, silero

logger = logging.getLogger("callproof-agent")

SPHINX_RATE = 16000  # the bundled model's rate
WRITE_GRACE = 2.0  # default --write-grace: seconds between the model's call and a write


def parse_args() -> argparse.Namespace:
    """Our flags; the rest of the command line is LiveKit's CLI (start, dev…)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--llm-url", required=True, help="the OpenAI-compatible server's /v1 URL")
    p.add_argument("--agent-name", default="callproof-stock", help="the name explicit dispatch uses")
    p.add_argument("--no-interrupt-tools", dest="interrupt_tools", action="store_false",
                   help="the flawed configuration: update_order disallows interruptions")
    p.add_argument("--write-grace", type=float, default=WRITE_GRACE,
                   help="http: seconds a write waits after the model's call, in which a barge-in cancels it")
    p.add_argument("--voice", default="kal16", help="flite's voice")
    p.add_argument("--tools", choices=["http", "mcp"], default="http",
                   help="http: update_order posts to the call's tools URL; mcp: LiveKit's MCPToolset on its MCP URL")
    p.add_argument("--stt", choices=["pocketsphinx", "ear"], default="pocketsphinx",
                   help="pocketsphinx: batch recognition in the agent; ear: callproof's earstt at --stt-url (a scripted fake cloud STT)")
    p.add_argument("--stt-url", default="", help="--stt ear: the service's ws://HOST:PORT/v1/listen")
    args, rest = p.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    return args


ARGS = parse_args()


class Decoders:
    """Idle pocketsphinx decoders, one per call at a time: loading one takes
    a second or two, so they are kept."""

    def __init__(self) -> None:
        self._idle: list[Decoder] = []
        self._lock = threading.Lock()

    def get(self) -> Decoder:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return Decoder(samprate=SPHINX_RATE, loglevel="FATAL")

    def put(self, d: Decoder) -> None:
        with self._lock:
            self._idle.append(d)


DECODERS = Decoders()


class PocketSphinxSTT(stt.STT):
    """Batch recognition of one VAD segment with pocketsphinx's bundled US
    English model (open dictation)."""

    def __init__(self) -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=False, interim_results=False))

    @property
    def model(self) -> str:
        return "pocketsphinx en-us"

    @property
    def provider(self) -> str:
        return "pocketsphinx"

    @staticmethod
    def _decode(pcm: bytes) -> str:
        d = DECODERS.get()
        try:
            d.start_utt()
            d.process_raw(pcm, full_utt=True)
            d.end_utt()
            hyp = d.hyp()
            return hyp.hypstr if hyp else ""
        finally:
            DECODERS.put(d)

    async def _recognize_impl(
        self,
        buffer: utils.AudioBuffer,
        *,
        language: NotGivenOr[str] = NOT_GIVEN,
        conn_options: APIConnectOptions,
    ) -> stt.SpeechEvent:
        frame = rtc.combine_audio_frames(buffer)
        pcm = frame.data.tobytes()
        if frame.sample_rate != SPHINX_RATE or frame.num_channels != 1:
            resampler = rtc.AudioResampler(frame.sample_rate, SPHINX_RATE, num_channels=frame.num_channels)
            out = [*resampler.push(frame), *resampler.flush()]
            pcm = b"".join(f.data.tobytes() for f in out)
            if frame.num_channels != 1:  # keep the first channel
                import array

                samples = array.array("h", pcm)
                pcm = samples[:: frame.num_channels].tobytes()
        text = await asyncio.to_thread(self._decode, pcm)
        logger.info("heard: %r", text)
        return stt.SpeechEvent(
            type=stt.SpeechEventType.FINAL_TRANSCRIPT,
            alternatives=[stt.SpeechData(text=text, language="en")],
        )


EAR_RATE = 8000  # the caller's rate: earstt takes its frames unresampled


class EarSTT(stt.STT):
    """A streaming speech-to-text service reached over a WebSocket, as a
    LiveKit user adds a cloud STT: the caller's audio goes out as 16-bit
    PCM at 8 kHz, and each final transcript comes back as a
    FINAL_TRANSCRIPT. Its server here is callproof's earstt
    (agents/earstt/doc.go has the protocol), a SCRIPTED FAKE standing in
    for the cloud service: it recognizes only callproof's own cached
    utterances, by their 20 ms μ-law frames, so the session's audio input
    runs at 8 kHz (--stt ear sets the room input's sample_rate) and the
    stream resamples nothing."""

    def __init__(self, url: str) -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=True, interim_results=False))
        self._url = url

    @property
    def model(self) -> str:
        return "callproof earstt"

    @property
    def provider(self) -> str:
        return "callproof"

    async def _recognize_impl(
        self,
        buffer: utils.AudioBuffer,
        *,
        language: NotGivenOr[str] = NOT_GIVEN,
        conn_options: APIConnectOptions,
    ) -> stt.SpeechEvent:
        raise NotImplementedError("earstt streams: use stream()")

    def stream(
        self,
        *,
        language: NotGivenOr[str] = NOT_GIVEN,
        conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
    ) -> EarStream:
        return EarStream(stt=self, url=self._url, conn_options=conn_options)


class EarStream(stt.RecognizeStream):
    def __init__(self, *, stt: EarSTT, url: str, conn_options: APIConnectOptions) -> None:
        super().__init__(stt=stt, conn_options=conn_options, sample_rate=EAR_RATE)
        self._url = url

    async def _run(self) -> None:
        url = f"{self._url}?encoding=linear16&sample_rate={EAR_RATE}&channels=1"
        async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:

            async def send() -> None:
                rates = set()
                async for data in self._input_ch:
                    if isinstance(data, rtc.AudioFrame):
                        if data.sample_rate not in rates:
                            rates.add(data.sample_rate)
                            logger.info("earstt: audio at %d Hz, %d channel(s)", data.sample_rate, data.num_channels)
                        await ws.send_bytes(data.data.tobytes())
                await ws.send_str(json.dumps({"type": "close_stream"}))

            async def recv() -> None:
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        continue
                    m = json.loads(msg.data)
                    if m.get("type") == "speech_started":
                        self._event_ch.send_nowait(stt.SpeechEvent(type=stt.SpeechEventType.START_OF_SPEECH))
                    elif m.get("type") == "transcript" and m.get("is_final"):
                        text = m.get("text", "")
                        logger.info("heard: %r", text)
                        if text:
                            self._event_ch.send_nowait(stt.SpeechEvent(
                                type=stt.SpeechEventType.FINAL_TRANSCRIPT,
                                alternatives=[stt.SpeechData(text=text, language="en")],
                            ))
                        self._event_ch.send_nowait(stt.SpeechEvent(type=stt.SpeechEventType.END_OF_SPEECH))

            tasks = [asyncio.create_task(send()), asyncio.create_task(recv())]
            try:
                await asyncio.gather(*tasks)
            finally:
                await utils.aio.gracefully_cancel(*tasks)


class FliteTTS(tts.TTS):
    """Speaks with the flite binary (a WAV file per sentence)."""

    def __init__(self, voice: str = "kal16") -> None:
        super().__init__(capabilities=tts.TTSCapabilities(streaming=False), sample_rate=16000, num_channels=1)
        self._voice = voice

    @property
    def model(self) -> str:
        return "flite " + self._voice

    @property
    def provider(self) -> str:
        return "flite"

    def synthesize(
        self, text: str, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS
    ) -> tts.ChunkedStream:
        return FliteStream(tts=self, input_text=text, conn_options=conn_options)


class FliteStream(tts.ChunkedStream):
    async def _run(self, output_emitter: tts.AudioEmitter) -> None:
        voice = self._tts._voice  # type: ignore[attr-defined]
        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            proc = await asyncio.create_subprocess_exec(
                "flite", "-voice", voice, "-t", self.input_text, "-o", f.name,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )
            _, err = await proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"flite: {err.decode(errors='replace')}")
            with wave.open(f.name) as w:
                rate, pcm = w.getframerate(), w.readframes(w.getnframes())
        output_emitter.initialize(
            request_id=utils.shortuuid(), sample_rate=rate, num_channels=1, mime_type="audio/pcm"
        )
        output_emitter.push(pcm)
        output_emitter.flush()


class Guard:
    """How a tool call meets the caller barging in, in either
    configuration (careful: interrupt_tools), for the tools over HTTP and
    over MCP alike."""

    def __init__(self, interrupt_tools: bool) -> None:
        self.interrupt_tools = interrupt_tools
        # the turns whose tool calls are running: the session's current
        # speech is None once a turn's words are generated, its tools
        # still running, so the barge-in finds them here
        self._running: set[SpeechHandle] = set()

    def interrupt(self) -> None:
        """The caller started to speak: interrupt the turns whose tool
        calls are running."""
        for speech in list(self._running):
            if not speech.interrupted and speech.allow_interruptions:
                logger.info("interrupting turn %s: the caller speaks", speech.id)
                speech.interrupt()

    async def run(self, context: RunContext, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """Runs a tool's request: careful, only while its turn is not
        interrupted (the request is cancelled, its connection closed, when
        the caller barges in); flawed, with the turn's interruptions
        disallowed, so it runs on through "stop"."""
        if not self.interrupt_tools:
            # The flaw: the write runs on whatever the caller says.
            context.disallow_interruptions()
            return await call()
        request = asyncio.ensure_future(call())
        self._running.add(context.speech_handle)
        try:
            await context.speech_handle.wait_if_not_interrupted([request])
        finally:
            self._running.discard(context.speech_handle)
        if not request.done():
            # The caller barged in: give the write up (its connection
            # closes) rather than let it land after "stop".
            request.cancel()
            await asyncio.gather(request, return_exceptions=True)
            logger.info("%s cancelled: the caller interrupted", what)
            return json.dumps({"ok": False, "outcome": "cancelled", "error": "cancelled: the caller interrupted"})
        return request.result()


class Desk(Agent):
    """The agent: end_call, and the call's tools it is given (over HTTP,
    http_tools; over MCP, mcp_tools)."""

    def __init__(self, guard: Guard, tools: list | None = None) -> None:
        super().__init__(instructions="You change orders with update_order.", tools=tools or [])
        self.guard = guard

    @function_tool
    async def end_call(self, context: RunContext) -> None:
        """Hang up, once the caller has what they called for."""
        # The words said with this call first, then leave the room: to
        # callproof, the agent leaving is its hang-up.
        await context.wait_for_playout()
        logger.info("ending the call: leaving the room")
        await get_job_context().room.disconnect()


# The order desk's catalogue as callproof describes it (effect, table,
# key_arg), for a call whose data carries none: update_order alone.
ORDER_DESK = [{"name": "update_order", "effect": "update", "table": "orders", "key_arg": "order_number",
               "args": [{"name": "order_number", "type": "string", "required": True},
                        {"name": "delivery_date", "type": "date"}, {"name": "quantity", "type": "string"}]}]


def catalogue(raw: object) -> list[dict]:
    """The call's tools as callproof describes them (name, description,
    effect, table, key_arg, args), else ORDER_DESK."""
    try:
        tools = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        tools = None
    return tools if isinstance(tools, list) and tools else ORDER_DESK


def raw_schema(spec: dict) -> dict:
    """One catalogue tool as the model is offered it (a raw function
    tool's JSON schema)."""
    props = {}
    for a in spec.get("args") or []:
        p: dict = {"type": {"integer": "integer", "number": "number"}.get(a.get("type"), "string")}
        if a.get("type") == "date":
            p["format"] = "date"
        if a.get("pattern"):
            p["pattern"] = a["pattern"]
        if a.get("enum"):
            p["enum"] = a["enum"]
        desc = a.get("description") or ("YYYY-MM-DD" if a.get("type") == "date" else "")
        if desc:
            p["description"] = desc
        props[a["name"]] = p
    required = [a["name"] for a in spec.get("args") or [] if a.get("required")]
    return {"name": spec["name"], "description": spec.get("description") or spec["name"],
            "parameters": {"type": "object", "properties": props, "required": required}}


# How a write treats the backend (careful_write), as the Pipecat bot's
# handler does. A timeout or a lost answer leaves a write's outcome open;
# so does an empty 200, a 202 or an answer naming another record: each is
# settled by reading the record back.
TOOL_TIMEOUT = 4.0  # seconds one tool request may take
RETRIES = 2  # tries after the first, on a 5xx, 409, 429, timeout or lost answer
RETRY_BACKOFF = 0.2  # seconds before a retry
POLL_EVERY = 0.15  # seconds between reads while an accepted (202) write settles
POLLS = 40  # reads while it settles
VERIFY_READS = 3  # reads of a 200's record before it counts as not landed


class Backend:
    """The call's tools over HTTP: POST {tools_url}/{tool} with the call's
    bearer token, one connection per request (no connection reuse that
    could send a request twice behind the handler's back)."""

    def __init__(self, tools_url: str, token: str, session: aiohttp.ClientSession) -> None:
        self.base = tools_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}
        self.s = session

    async def post(self, tool: str, args: dict, key: str = "") -> tuple[int | None, object]:
        """The status (None: timed out or the answer was lost) and the
        JSON answer (None: empty or not JSON)."""
        headers = dict(self.headers, **({"Idempotency-Key": key} if key else {}))
        try:
            async with self.s.post(f"{self.base}/{tool}", json=args, headers=headers,
                                   timeout=aiohttp.ClientTimeout(total=TOOL_TIMEOUT)) as r:
                text = await r.text()
                try:
                    body = json.loads(text) if text.strip() else None
                except ValueError:
                    body = None
                logger.info("%s %s key=%s -> %s", tool, args, key or "-", r.status)
                return r.status, body
        except (asyncio.TimeoutError, aiohttp.ClientError) as e:
            logger.info("%s %s key=%s -> %s", tool, args, key or "-", type(e).__name__)
            return None, None

    async def read(self, tool: dict | None, key: str) -> tuple[dict | None, bool]:
        """The record tool (a read) returns for key, and whether the read
        answered at all; a record with another key is none."""
        if tool is None or not tool.get("key_arg"):
            return None, False
        status, body = await self.post(tool["name"], {tool["key_arg"]: key})
        rec = body.get("record") if isinstance(body, dict) and body.get("ok") is True else None
        if status == 200 and isinstance(rec, dict) and rec.get("key") == key:
            return rec, True
        return None, status is not None and status < 500


def holds(rec: dict | None, args: dict, kn: str | None) -> bool:
    """Whether a record carries the write's values (its key the write's)."""
    if not isinstance(rec, dict):
        return False
    fields = rec.get("fields") or {}
    return all((rec.get("key") == v) if k == kn else (str(fields.get(k)) == v) for k, v in args.items())


async def settle(b: Backend, spec: dict, tools: list[dict], call_id: str, args: dict) -> dict:
    """One write, as a careful tool makes it: it reads the record first
    (the values it held: "before", so the model can put it back), sends the
    write with an Idempotency-Key, one per function call
    (livekit-{call_id}), and reads the record back: only a record holding
    the write's values is a success, never the write's own answer (a 202,
    an empty 200, another record). On a timeout, a lost answer or an empty
    200 that did not land it retries with the same key (a replay, if the
    first got through); on a 5xx, 409 or 429 that the read shows did not
    land, with a new key (livekit-{call_id}-rN: the backend keeps the error
    under the old one); a create (no record to read first) is retried with
    a new key only after a 503 or 429, which say nothing was done; at most
    RETRIES retries. It tells the model what it knows: {"ok": true,
    "outcome": "done", "record": …, "before": …}, or "ok": false with
    outcome "failed" (the backend said no and the record shows no change)
    or "unconfirmed" (it could not find out)."""
    kn = spec.get("key_arg") or None
    readers = [t for t in tools if t.get("effect") == "read"]
    read = next((t for t in readers if t.get("table") == spec.get("table")), None)
    targets = spec.get("effect") in ("update", "cancel", "delete")

    def failed(why: str) -> dict:
        return {"ok": False, "outcome": "failed", "error": why}

    def unconfirmed(why: str) -> dict:
        return {"ok": False, "outcome": "unconfirmed", "error": why}

    verify = targets and kn in args and read is not None
    before = None
    if verify:
        rec, _ = await b.read(read, args[kn])
        before = (rec or {}).get("fields")
    base = key = f"livekit-{call_id}"
    status, seen = None, False
    for attempt in range(RETRIES + 1):
        if attempt:
            await asyncio.sleep(RETRY_BACKOFF)
        status, body = await b.post(spec["name"], args, key)
        answer = body.get("record") if isinstance(body, dict) and body.get("ok") is True else None
        if verify:
            # Read back: the record, not the answer, says whether it landed.
            polls = POLLS if status == 202 else VERIFY_READS if status == 200 and answer else 1
            for i in range(polls):
                if i:
                    await asyncio.sleep(POLL_EVERY)
                rec, seen = await b.read(read, args[kn])
                if holds(rec, args, kn):
                    return {"ok": True, "outcome": "done", "record": rec, "before": before}
            if status == 202:
                return unconfirmed(f"accepted, and {args[kn]} did not show the change")
            if status == 200 and answer:
                return failed(f"answered 200, but {args[kn]} does not hold the change")
            if status is not None and 400 <= status < 500 and status not in (409, 429):
                return failed(f"answered {status}")
            if status is not None and status >= 400 and seen:
                key = f"{base}-r{attempt + 1}"  # a definite error, and nothing landed
            continue
        # A create, or a write with no read: its answer is the evidence.
        if status == 200 and isinstance(answer, dict):
            made = next((t for t in readers if t.get("table") == answer.get("table")), None)
            if made is None:
                return {"ok": True, "outcome": "done", "record": answer}
            rec, _ = await b.read(made, answer.get("key", ""))
            if holds(rec, {k: v for k, v in args.items() if k != kn}, None):
                return {"ok": True, "outcome": "done", "record": rec}
            return unconfirmed(f"{answer.get('key')} does not read back")
        if status == 202:
            return unconfirmed("accepted, not seen to land")
        if status in (429, 503):
            key = f"{base}-r{attempt + 1}"  # refused before it was handled
        elif status is not None and status >= 400:
            return failed(f"answered {status}")
    if status is not None and status >= 400 and (seen or not verify):
        return failed(f"answered {status} {RETRIES + 1} times")
    return unconfirmed("no answer that shows the write landed")


def http_tools(guard: Guard, tools_url: str, token: str, tools: list[dict], grace: float) -> list[llm.RawFunctionTool]:
    """The call's catalogue as function tools over HTTP: careful_write for
    each write, a plain read for each read."""

    def careful_write(spec: dict) -> llm.RawFunctionTool:
        name = spec["name"]

        async def write(args: dict, call_id: str) -> str:
            # The grace first: a caller who stops or corrects the request
            # in that time interrupts the turn (careful), and nothing is
            # sent.
            await asyncio.sleep(grace)
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
                result = await settle(Backend(tools_url, token, s), spec, tools, call_id, args)
            logger.info("%s %s: %s", name, args, result.get("outcome"))
            return json.dumps(result)

        async def run(raw_arguments: dict[str, object], context: RunContext) -> Any:
            args = {k: str(v) for k, v in raw_arguments.items() if v not in (None, "")}
            call_id = context.function_call.call_id  # one key per function call, kept on its retries
            return await guard.run(context, f"{name} {args}", lambda: write(args, call_id))

        return function_tool(run, raw_schema=raw_schema(spec))

    def plain_read(spec: dict) -> llm.RawFunctionTool:
        async def run(raw_arguments: dict[str, object], context: RunContext) -> Any:
            args = {k: str(v) for k, v in raw_arguments.items() if v not in (None, "")}
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
                status, body = await Backend(tools_url, token, s).post(spec["name"], args)
            return json.dumps(body if body is not None else {"ok": False, "status": status})

        return function_tool(run, raw_schema=raw_schema(spec))

    return [plain_read(t) if t.get("effect") == "read" else careful_write(t) for t in tools]


# How long a tool call over MCP may take. LiveKit's default (5 s) is as
# long as core int-05 holds its write: at the default the client's timeout
# raced the backend's commit, sending notifications/cancelled just after
# the write had landed (or, were it first, withdrawing it), and the flawed
# configuration's verdict would hang on that race.
MCP_TIMEOUT = 30.0


async def mcp_tools(url: str, token: str, guard: Guard) -> tuple[list[llm.RawFunctionTool], mcp.MCPToolset]:
    """The call's tools over MCP: LiveKit's own MCPToolset on the call's
    MCP URL with its bearer token, no tool code. Each tool it lists is
    offered as it is but for the configuration's barge-in policy
    (Guard.run), the one thing LiveKit leaves to the agent's author. The
    toolset is the caller's to close."""
    toolset = mcp.MCPToolset(id="callproof", mcp_server=mcp.MCPServerHTTP(
        url=url, transport_type="streamable_http", headers={"Authorization": f"Bearer {token}"},
        client_session_timeout_seconds=MCP_TIMEOUT,
    ))
    await toolset.setup()

    def guarded(tool: llm.RawFunctionTool) -> llm.RawFunctionTool:
        name = tool.info.name

        async def run(raw_arguments: dict[str, object], context: RunContext) -> Any:
            return await guard.run(context, f"{name} {raw_arguments}", lambda: tool(raw_arguments=raw_arguments))

        return function_tool(run, raw_schema=tool.info.raw_schema)

    tools = [guarded(t) for t in toolset.tools if isinstance(t, llm.RawFunctionTool)]
    logger.info("MCP tools: %s", [t.info.name for t in tools])
    return tools, toolset


def call_data(ctx: JobContext) -> dict:
    """callproof's start object: the job's metadata (explicit dispatch), else
    the room's (automatic dispatch)."""
    for raw in (ctx.job.metadata, ctx.room.metadata):
        if raw:
            try:
                return json.loads(raw)
            except ValueError:
                pass
    return {}


def prewarm(proc: JobProcess) -> None:
    proc.userdata["vad"] = silero.VAD.load()
    DECODERS.put(DECODERS.get())  # the first call finds a decoder loaded


MAX_CALLS = 50  # the calls the worker's load counts as full


def calls_load(server: AgentServer) -> float:
    """The worker's load as the share of MAX_CALLS calls it runs. LiveKit's
    default is the machine's CPU use, and the server dispatches no job to a
    worker reporting a load of 1 (livekit-server weighs its workers by
    1 - load), which a busy test machine's CPU always is."""
    return min(len(server.active_jobs) / MAX_CALLS, 1.0)


server = AgentServer(job_executor_type=JobExecutorType.THREAD, load_threshold=math.inf, load_fnc=calls_load)
server.setup_fnc = prewarm


@server.rtc_session(agent_name=ARGS.agent_name)
async def entrypoint(ctx: JobContext) -> None:
    await ctx.connect()
    call = call_data(ctx)
    tools = call.get("tools") or {}
    tools_url, token, mcp_url = tools.get("baseUrl", ""), tools.get("token", ""), tools.get("mcpUrl", "")
    catalog: object = tools.get("catalog")
    if not tools_url:  # or from the caller's attributes
        caller = await ctx.wait_for_participant()
        tools_url = caller.attributes.get("callproof.tools_url", "")
        token = caller.attributes.get("callproof.token", "")
        mcp_url = caller.attributes.get("callproof.mcp_url", "")
        catalog = caller.attributes.get("callproof.catalog", "")
    logger.info("call %s: tools at %s", call.get("callId", "?"), mcp_url if ARGS.tools == "mcp" else tools_url)

    session = AgentSession(
        vad=ctx.proc.userdata["vad"],
        stt=EarSTT(ARGS.stt_url) if ARGS.stt == "ear" else PocketSphinxSTT(),
        llm=openai.LLM(model="fake", base_url=ARGS.llm_url, api_key="not-used-by-the-fake"),
        tts=FliteTTS(ARGS.voice),
        turn_handling={
            "turn_detection": "vad",
            "interruption": {"mode": "vad", "resume_false_interruption": False, "false_interruption_timeout": None},
            "preemptive_generation": {"enabled": False},
        },
        # No echo to wait out: the caller's audio is synthesized, never the
        # agent's own played back (LiveKit turns the warmup off itself for
        # its simulations and outbound SIP calls for that reason). With
        # the default, 3 s from the agent's first words, a barge-in then
        # interrupted nothing and the caller's audio reached the STT as
        # silence (core int-01, int-02: the agent spoke on for 2.7 s).
        aec_warmup_duration=None,
    )
    guard = Guard(ARGS.interrupt_tools)
    if ARGS.tools == "mcp":
        mcp_list, toolset = await mcp_tools(mcp_url, token, guard)
        ctx.add_shutdown_callback(toolset.aclose)
        agent: Desk = Desk(guard, mcp_list)
    else:
        agent = Desk(guard, http_tools(guard, tools_url, token, catalogue(catalog), ARGS.write_grace))
    if ARGS.interrupt_tools:

        @session.on("user_state_changed")
        def _on_user_state(ev: UserStateChangedEvent) -> None:
            # The caller starting to speak interrupts the turn whose tool
            # call is running (the tool then gives its request up).
            if ev.new_state == "speaking":
                guard.interrupt()

    logger.info("call %s: stt %s", call.get("callId", "?"), type(session.stt).__name__)
    # earstt hears the caller's 8 kHz frames as they were sent: the room
    # input at 8 kHz, so that nothing on the way resamples them, and
    # without the automatic gain control LiveKit's room input applies by
    # default (it changes every sample).
    room_options = (
        room_io.RoomOptions(audio_input=room_io.AudioInputOptions(sample_rate=EAR_RATE, auto_gain_control=False))
        if ARGS.stt == "ear"
        else NOT_GIVEN
    )
    await session.start(agent=agent, room=ctx.room, room_options=room_options)


@server.on("worker_registered")
def _registered(worker_id: str, _info: object) -> None:
    print(f"registered {ARGS.agent_name} {worker_id}", flush=True)


if __name__ == "__main__":
    cli.run_app(server)
