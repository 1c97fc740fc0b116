"""A Pipecat phone bot, written as a Pipecat user writes one, for callproof.

It answers Twilio Media Streams on /ws with Pipecat 1.x parts used as
shipped: FastAPIWebsocketTransport with TwilioFrameSerializer, Silero VAD,
OpenAILLMService and functions registered with register_function. Only
the services Pipecat leaves to its user are ours, each a subclass of
Pipecat's own base class, so that the bot runs offline:

- speech-to-text (--stt): EarSTT (STTService), a streaming STT over a
  WebSocket as a cloud STT is reached, here callproof's earstt
  (agents/earstt: a SCRIPTED FAKE that recognizes only callproof's own
  cached utterances, at --stt-url); or PocketSphinxSTT
  (SegmentedSTTService), pocketsphinx from PyPI with the English model its
  wheel carries (the default, needing nothing else);
- text-to-speech: FliteTTS (TTSService), the flite binary;
- the model: OpenAILLMService with base_url pointing at fake_llm.py, a
  scripted stand-in for the cloud model.

The same /ws route answers Pipecat's eval wire (what the runner's /ws
serves an eval harness, e.g. `callproof run --transport pipecat-eval`):
the runner's parse_telephony_websocket recognizes the harness's
eval-connect message and create_transport builds the eval transport,
whose RTVI events the harness reads.

The one thing a bot changes to be tested by callproof: its tool handler
posts to the tools URL and bearer token of the call (toolsBaseUrl,
toolsToken). Over Twilio they arrive in the start's customParameters,
which Pipecat's runner hands the bot as the call's body; over the eval
wire, in an RTVI client-message "start" the bot reads in its
on_client_message handler. Over SmallWebRTC (POST /api/offer, served
with Pipecat's SmallWebRTCRequestHandler as its runner serves it) they
arrive in the offer's request_data, the runner's per-call body. With --tools mcp the bot has no tool code
but a read-back: Pipecat's own MCPClient takes the call's tools from its MCP URL
(toolsMcpUrl) with the same token and makes the calls, and a write is read
back through the call's read tool before the model hears it landed
(mcp_read_back).

Its own tools (--tools http) are the call's catalogue (toolsCatalog), and
each write is handled as a careful Pipecat user handles one
(careful_write: a grace a barge-in cancels, a read first, one
Idempotency-Key per function call kept on its retries, bounded retries,
a read back before the model hears the result, and an honest result when
the write did not verifiably land; docs/INTEROP.md, "The bot's tool
handling").

    python bot.py --port 0 --llm-url http://127.0.0.1:PORT/v1 [--no-cancel-on-interruption] [--tools mcp]
        [--write-grace SECONDS (2)]
        [--stt ear --stt-url ws://127.0.0.1:PORT/v1/listen (callproof agent ear-stt)]
        [--twilio-api http://127.0.0.1:PORT (auto_hang_up through callproof's stub of Twilio's REST API)]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import wave

import aiohttp
import uvicorn
from fastapi import BackgroundTasks, FastAPI, WebSocket
from loguru import logger
from pocketsphinx import Decoder

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.audio.utils import create_stream_resampler
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    EndWorkerFrame,
    ErrorFrame,
    FunctionCallResultProperties,
    StartFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.evals.transport import EvalTransportParams
from pipecat.processors.frameworks.rtvi import RTVIFunctionCallReportLevel, RTVIObserverParams
from pipecat.runner.types import SmallWebRTCRunnerArguments, WebSocketRunnerArguments
from pipecat.runner.utils import create_transport, parse_telephony_websocket
from pipecat.transcriptions.language import Language
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.mcp_service import MCPClient, StreamableHttpParameters
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.settings import STTSettings, TTSSettings
from pipecat.services.stt_service import SegmentedSTTService, STTService
from pipecat.services.tts_service import TTSService
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.request_handler import (
    IceCandidate,
    SmallWebRTCPatchRequest,
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.utils.time import time_now_iso8601

SPHINX_RATE = 16000  # the bundled model's rate


class Decoders:
    """Idle pocketsphinx decoders, one per call at a time: loading one
    holds the interpreter for a second or two, so they are kept."""

    def __init__(self):
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


class PocketSphinxSTT(SegmentedSTTService):
    """Transcribes each VAD segment with pocketsphinx's bundled US English
    model (open dictation). Build it off the event loop
    (asyncio.to_thread): it may load a decoder."""

    @property
    def wants_wav_segments(self) -> bool:
        return False

    def __init__(self, **kwargs):
        super().__init__(
            settings=STTSettings(model="pocketsphinx en-us", language=Language.EN),
            **kwargs,
        )
        self._decoder = DECODERS.get()
        self._resampler = create_stream_resampler()

    async def cleanup(self):
        await super().cleanup()
        if self._decoder is not None:
            DECODERS.put(self._decoder)
            self._decoder = None

    def _decode(self, pcm: bytes) -> str:
        self._decoder.start_utt()
        self._decoder.process_raw(pcm, full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp else ""

    async def run_stt(self, audio: bytes):
        # Segments come at the pipeline's input rate (8 kHz from the phone).
        audio = await self._resampler.resample(audio, self.sample_rate, SPHINX_RATE)
        text = await asyncio.to_thread(self._decode, audio)
        logger.info(f"heard: {text!r}")
        if text:
            yield TranscriptionFrame(text, self._user_id, time_now_iso8601())


class EarSTT(STTService):
    """A streaming speech-to-text service reached over a WebSocket, as a
    Pipecat user adds a cloud STT: every audio frame of the caller is sent
    as it comes (16-bit PCM at the pipeline's 8 kHz), and each final
    transcript the service sends back is pushed as a TranscriptionFrame.
    Its server here is callproof's earstt (agents/earstt/doc.go has the
    protocol), a SCRIPTED FAKE standing in for the cloud service: it
    recognizes only callproof's own cached utterances, by their 20 ms
    μ-law frames, so the caller's audio must reach it unresampled and
    whole from the stream's start (its frames are counted from the first
    byte sent)."""

    def __init__(self, url: str, **kwargs):
        super().__init__(settings=STTSettings(model="callproof earstt", language=Language.EN), **kwargs)
        self._url = url
        self._sent = 0
        self._session: aiohttp.ClientSession | None = None
        self._ws = None
        self._reader = None

    async def start(self, frame: StartFrame):
        await super().start(frame)
        if self.sample_rate != 8000:
            await self.push_error(f"EarSTT: the pipeline's input is {self.sample_rate} Hz; earstt takes the caller's 8000", fatal=True)
            return
        self._session = aiohttp.ClientSession()
        try:
            self._ws = await self._session.ws_connect(f"{self._url}?encoding=linear16&sample_rate=8000&channels=1")
        except aiohttp.ClientError as e:
            await self.push_error(f"EarSTT: {self._url}: {e}", exception=e, fatal=True)
            return
        self._reader = self.create_task(self._read())

    async def stop(self, frame: EndFrame):
        await super().stop(frame)
        await self._close()

    async def cancel(self, frame: CancelFrame):
        await super().cancel(frame)
        await self._close()

    async def _close(self):
        if self._ws is not None and not self._ws.closed:
            with contextlib.suppress(Exception):
                await self._ws.send_str(json.dumps({"type": "close_stream"}))
                await self._ws.close()
        if self._reader is not None:
            await self.cancel_task(self._reader)
            self._reader = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def run_stt(self, audio: bytes):
        if self._ws is not None and not self._ws.closed:
            await self._ws.send_bytes(audio)
            self._sent += len(audio)
        yield None

    async def _read(self):
        try:
            await self._read_messages()
        finally:
            logger.info(f"earstt: stream closed ({self._ws.close_code}) after {self._sent // 2} samples sent")

    async def _read_messages(self):
        async for msg in self._ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            m = json.loads(msg.data)
            if m.get("type") == "transcript" and m.get("is_final"):
                text = m.get("text", "")
                logger.info(f"heard: {text!r}")
                if text:
                    await self.push_frame(
                        TranscriptionFrame(text, self._user_id, time_now_iso8601(), Language.EN, result=m, finalized=True)
                    )
            elif m.get("type") == "speech_started":
                logger.debug(f"speech started at {m.get('start')} s of the stream")


class FliteTTS(TTSService):
    """Speaks with the flite binary (a WAV file per sentence)."""

    def __init__(self, voice: str = "kal16", **kwargs):
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            settings=TTSSettings(model=None, voice=voice, language=None),
            **kwargs,
        )
        self._voice = voice
        self._resampler = create_stream_resampler()

    async def run_tts(self, text: str, context_id: str):
        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            proc = await asyncio.create_subprocess_exec(
                "flite", "-voice", self._voice, "-t", text, "-o", f.name,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )
            _, err = await proc.communicate()
            if proc.returncode != 0:
                yield ErrorFrame(error=f"flite: {err.decode(errors='replace')}")
                return
            with wave.open(f.name) as w:
                rate, pcm = w.getframerate(), w.readframes(w.getnframes())
        pcm = await self._resampler.resample(pcm, rate, self.sample_rate)
        chunk = self.sample_rate // 10 * 2  # 100 ms
        for i in range(0, len(pcm), chunk):
            yield TTSAudioRawFrame(pcm[i : i + chunk], self.sample_rate, 1, context_id=context_id)


# The order desk's catalogue as callproof describes it (effect, table,
# key_arg), for a call whose data carries none: update_order alone.
ORDER_DESK = [{"name": "update_order", "effect": "update", "table": "orders", "key_arg": "order_number",
               "args": [{"name": "order_number", "type": "string", "required": True},
                        {"name": "delivery_date", "type": "date"}, {"name": "quantity", "type": "string"}]}]


END_CALL = FunctionSchema(
    name="end_call",
    description="Hang up, once the caller has what they called for.",
    properties={},
    required=[],
)


async def end_call(params: FunctionCallParams):
    """Hangs up: the goodbye queued ahead is spoken first, then the
    pipeline ends and the transport closes the caller's stream."""
    await params.result_callback({"ok": True}, properties=FunctionCallResultProperties(run_llm=False))
    await params.llm.push_frame(EndWorkerFrame(reason="the bot hung up"))


def catalogue(call: dict) -> list[dict]:
    """The call's tools as callproof describes them (toolsCatalog: name,
    description, effect, table, key_arg, args), else ORDER_DESK."""
    raw = call.get("toolsCatalog")
    try:
        tools = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        tools = None
    return tools if isinstance(tools, list) and tools else ORDER_DESK


def schema(spec: dict) -> FunctionSchema:
    """One catalogue tool as the model is offered it (JSON Schema)."""
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
    return FunctionSchema(name=spec["name"], description=spec.get("description") or spec["name"],
                          properties=props, required=required)


# How the handler treats the backend (careful_write). A timeout or a lost
# answer leaves a write's outcome open; so does an empty 200, a 202 or an
# answer naming another record: each is settled by reading the record back.
TOOL_TIMEOUT = 4.0  # seconds one tool request may take
RETRIES = 2  # tries after the first, on a 5xx, 409, 429, timeout or lost answer
RETRY_BACKOFF = 0.2  # seconds before a retry
POLL_EVERY = 0.15  # seconds between reads while an accepted (202) write settles
POLLS = 40  # reads while it settles
VERIFY_READS = 3  # reads of a 200's record before it counts as not landed
WRITE_GRACE = 2.0  # default --write-grace: seconds between the model's call and the write


class Backend:
    """The call's tools over HTTP: POST {toolsBaseUrl}/{tool} with the
    call's bearer token, one connection per request (no connection reuse
    that could send a request twice behind the handler's back)."""

    def __init__(self, call: dict, session: aiohttp.ClientSession):
        self.base = call.get("toolsBaseUrl", "").rstrip("/")
        self.headers = {"Authorization": f"Bearer {call.get('toolsToken', '')}"}
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
                logger.info(f"{tool} {args} key={key or '-'} -> {r.status}")
                return r.status, body
        except (asyncio.TimeoutError, aiohttp.ClientError) as e:
            logger.info(f"{tool} {args} key={key or '-'} -> {type(e).__name__}")
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


def careful_write(call: dict, spec: dict, tools: list[dict], grace: float):
    """A Pipecat function for one of the call's writes, as a careful user
    writes it (docs/INTEROP.md, "The bot's tool handling"):

    - it waits grace seconds first: the model's read-back is said, and a
      caller who stops or corrects it in that time interrupts the bot, so
      Pipecat (cancel_on_interruption=True) cancels the handler before
      anything is sent;
    - it reads the record first (the values it held: "before", so the
      model can put it back), sends the write with an Idempotency-Key, one
      per function call (pipecat-{tool_call_id}), and reads the record
      back: only a record holding the write's values is a success, never
      the write's own answer (a 202, an empty 200, another record);
    - on a timeout, a lost answer or an empty 200 that did not land it
      retries with the same key (a replay, if the first got through); on
      a 5xx, 409 or 429 that the read shows did not land, with a new key
      (pipecat-{id}-rN: the backend keeps the error under the old one);
      a create (no record to read first) is retried with a new key only
      after a 503 or 429, which say nothing was done; at most RETRIES
      retries;
    - it tells the model what it knows: {"ok": true, "outcome": "done",
      "record": …, "before": …}, or "ok": false with outcome "failed" (the
      backend said no and the record shows no change) or "unconfirmed"
      (it could not find out)."""
    kn = spec.get("key_arg") or None
    readers = [t for t in tools if t.get("effect") == "read"]
    read = next((t for t in readers if t.get("table") == spec.get("table")), None)
    targets = spec.get("effect") in ("update", "cancel", "delete")

    async def handler(params: FunctionCallParams):
        args = {k: str(v) for k, v in dict(params.arguments).items() if v not in (None, "")}
        await asyncio.sleep(grace)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
            result = await settle(Backend(call, s), params.tool_call_id, args)
        logger.info(f"{spec['name']} {args}: {result.get('outcome')}")
        await params.result_callback(result)

    async def settle(b: Backend, call_id: str, args: dict) -> dict:
        def failed(why: str) -> dict:
            return {"ok": False, "outcome": "failed", "error": why}

        def unconfirmed(why: str) -> dict:
            return {"ok": False, "outcome": "unconfirmed", "error": why}

        verify = targets and kn in args and read is not None
        before = None
        if verify:
            rec, _ = await b.read(read, args[kn])
            before = (rec or {}).get("fields")
        base = key = f"pipecat-{call_id}"
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

    return handler


def plain_read(call: dict, spec: dict):
    """A Pipecat function for one of the call's reads: the backend's answer."""

    async def handler(params: FunctionCallParams):
        args = {k: str(v) for k, v in dict(params.arguments).items() if v not in (None, "")}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
            status, body = await Backend(call, s).post(spec["name"], args)
        await params.result_callback(body if body is not None else {"ok": False, "status": status})

    return handler


def http_tools(call: dict, llm: OpenAILLMService, context: LLMContext, args) -> None:
    """Offers the call's catalogue to the model, each tool registered with
    its handler: careful_write for a write, plain_read for a read."""
    tools = catalogue(call)
    for spec in tools:
        if spec.get("effect") == "read":
            llm.register_function(spec["name"], plain_read(call, spec))
        else:
            llm.register_function(spec["name"], careful_write(call, spec, tools, args.write_grace),
                                  cancel_on_interruption=args.cancel_on_interruption)
    context.set_tools(ToolsSchema(standard_tools=[*(schema(t) for t in tools), END_CALL]))


async def mcp_tools(call: dict, llm: OpenAILLMService, context: LLMContext, cancel: bool) -> None:
    """Takes the call's tools from its MCP endpoint with Pipecat's
    MCPClient and offers them, with end_call, to the model. Each is
    registered explicitly to set cancel_on_interruption (the schemas carry
    their handlers, which Pipecat would register by itself), and a write
    whose record a read tool of the call can fetch is read back through it
    (mcp_read_back), as the HTTP handler reads its writes back."""
    client = MCPClient(server_params=StreamableHttpParameters(
        url=call["toolsMcpUrl"], headers={"Authorization": f"Bearer {call['toolsToken']}"},
    ))
    tools = await client.tools()
    handlers = {schema.name: schema.handler for schema in tools.standard_tools}
    specs = {t["name"]: t for t in catalogue(call)}
    for schema in tools.standard_tools:
        handler = schema.handler
        spec = specs.get(schema.name) or {}
        read = next((t for t in specs.values() if t.get("effect") == "read" and t.get("table") == spec.get("table")
                     and t.get("key_arg") and t["name"] in handlers), None)
        if spec.get("effect") in ("update", "cancel", "delete") and spec.get("key_arg") and read is not None:
            handler = mcp_read_back(spec, handler, read, handlers[read["name"]])
        llm.register_function(schema.name, handler, cancel_on_interruption=cancel)
    context.set_tools(ToolsSchema(standard_tools=[*tools.standard_tools, END_CALL]))
    logger.info(f"MCP tools: {[s.name for s in tools.standard_tools]}")


def mcp_answer(text) -> object:
    """A tool's answer as MCPClient hands it over: the text of the MCP
    result, the backend's JSON answer (None when it is no JSON)."""
    try:
        answer = json.loads(text) if isinstance(text, str) else text
        if isinstance(answer, str):
            answer = json.loads(answer)
    except ValueError:
        return None
    return answer


def mcp_read_back(spec: dict, write, read: dict, reader):
    """A write over MCP that counts only when its record, read back through
    the call's read tool (read, its MCPClient handler reader), holds the
    write's values: up to VERIFY_READS reads POLL_EVERY apart, as the HTTP
    handler reads a 200's record back (careful_write). The model hears
    {"ok": true, "outcome": "done", "record": …} with the record read back,
    or "ok": false, "outcome" "failed" (the backend said no) or
    "unconfirmed", with the write's own answer. The write itself is
    MCPClient's call, keyed by the model (the endpoint's idempotency_key
    argument)."""
    kn = spec["key_arg"]
    names = {a["name"] for a in spec.get("args") or []}

    async def handler(params: FunctionCallParams):
        got = {}

        async def keep(result, properties=None):
            got["answer"] = result

        await write(dataclasses.replace(params, result_callback=keep))
        answer = mcp_answer(got.get("answer"))
        args = {k: str(v) for k, v in dict(params.arguments).items() if k in names and v not in (None, "")}
        if kn not in args:
            await params.result_callback(got.get("answer"))
            return
        for i in range(VERIFY_READS):
            if i:
                await asyncio.sleep(POLL_EVERY)
            seen = {}

            async def keep_read(result, properties=None):
                seen["answer"] = result

            await reader(dataclasses.replace(params, function_name=read["name"], arguments={read["key_arg"]: args[kn]},
                                             result_callback=keep_read))
            body = mcp_answer(seen.get("answer"))
            rec = body.get("record") if isinstance(body, dict) and body.get("ok") is True else None
            if holds(rec, args, kn):
                logger.info(f"{spec['name']} {args}: done (read back over MCP)")
                await params.result_callback({"ok": True, "outcome": "done", "record": rec})
                return
        said_no = isinstance(answer, dict) and answer.get("ok") is False
        outcome = "failed" if said_no else "unconfirmed"
        logger.info(f"{spec['name']} {args}: {outcome} (read back over MCP)")
        await params.result_callback({"ok": False, "outcome": outcome, "answer": answer,
                                      "error": f"{args[kn]} does not hold the change"})

    return handler


async def run_bot(websocket: WebSocket, args) -> None:
    try:
        transport_type, call_data = await parse_telephony_websocket(websocket)
    except ValueError as e:  # a connection that closed before its start
        logger.info(f"no call: {e}")
        return
    if transport_type == "eval":
        call: dict = {}  # filled by the harness's "start" client-message
        transport = await create_transport(
            WebSocketRunnerArguments(websocket=websocket),
            {"eval": lambda: EvalTransportParams(audio_in_enabled=True, audio_out_enabled=True)},
        )
    else:
        call = dict(call_data["body"] or {})
        if args.twilio_api:
            # Pipecat's default, auto_hang_up: the call ends through
            # Twilio's REST API, here callproof's stub (--twilio-api).
            serializer = TwilioFrameSerializer(
                stream_sid=call_data["stream_id"],
                call_sid=call_data["call_id"],
                account_sid=os.environ.get("TWILIO_ACCOUNT_SID", "AC-callproof"),
                auth_token=os.environ.get("TWILIO_AUTH_TOKEN", "not-a-real-token"),
                base_url=args.twilio_api,
            )
        else:
            serializer = TwilioFrameSerializer(
                stream_sid=call_data["stream_id"],
                call_sid=call_data["call_id"],
                params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
            )
        transport = FastAPIWebsocketTransport(
            websocket=websocket,
            params=FastAPIWebsocketParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                add_wav_header=False,
                serializer=serializer,
            ),
        )
    await run_pipeline(transport, transport_type, call, args)


async def run_webrtc_bot(connection, body, args) -> None:
    """A SmallWebRTC call, its transport made as the runner makes it."""
    call = dict(body or {})
    transport = await create_transport(
        SmallWebRTCRunnerArguments(webrtc_connection=connection, body=body),
        {"webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True)},
    )
    await run_pipeline(transport, "webrtc", call, args)


async def run_pipeline(transport, transport_type: str, call: dict, args) -> None:
    llm = OpenAILLMService(
        api_key="not-used-by-the-fake",
        base_url=args.llm_url,
        settings=OpenAILLMService.Settings(model="fake"),
    )
    llm.register_function("end_call", end_call)
    context = LLMContext(
        messages=[{"role": "system", "content": "You change orders with update_order."}],
        tools=ToolsSchema(standard_tools=[END_CALL]),
    )
    if args.tools == "http":
        http_tools(call, llm, context, args)
    elif transport_type != "eval":
        await mcp_tools(call, llm, context, args.cancel_on_interruption)
    aggregators = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    if args.stt == "ear" and transport_type != "eval":
        stt = EarSTT(args.stt_url)
    else:
        stt = await asyncio.to_thread(PocketSphinxSTT)
    logger.info(f"call {call.get('callproofCallId', '?')}: stt {type(stt).__name__}")
    pipeline = Pipeline([
        transport.input(),
        stt,
        aggregators.user(),
        llm,
        FliteTTS(voice=args.voice),
        transport.output(),
        aggregators.assistant(),
    ])
    task = PipelineTask(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=8000, audio_out_sample_rate=8000),
        # Function calls reported by name and arguments (Pipecat reports
        # only their ids by default): callproof reads them as tool intents.
        rtvi_observer_params=RTVIObserverParams(function_call_report_level={"*": RTVIFunctionCallReportLevel.FULL}),
    )

    @task.rtvi.event_handler("on_client_message")
    async def on_client_message(rtvi, message):
        if message.type == "start" and isinstance(message.data, dict):
            call.update(message.data)
            if args.tools == "http":
                http_tools(call, llm, context, args)
            elif args.tools == "mcp":
                await mcp_tools(call, llm, context, args.cancel_on_interruption)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport, client):
        await task.cancel()

    await PipelineRunner(handle_sigint=False).run(task)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    p.add_argument("--llm-url", required=True, help="the OpenAI-compatible server's /v1 URL")
    p.add_argument("--no-cancel-on-interruption", dest="cancel_on_interruption", action="store_false",
                   help="register update_order with cancel_on_interruption=False")
    p.add_argument("--tools", choices=["http", "mcp"], default="http",
                   help="http: update_order posts to toolsBaseUrl; mcp: Pipecat's MCPClient at toolsMcpUrl")
    p.add_argument("--write-grace", type=float, default=WRITE_GRACE,
                   help="http: seconds a write waits after the model's call, in which a barge-in cancels it")
    p.add_argument("--voice", default="kal16", help="flite's voice")
    p.add_argument("--stt", choices=["pocketsphinx", "ear"], default="pocketsphinx",
                   help="pocketsphinx: open dictation in the bot; ear: callproof's earstt at --stt-url (a scripted fake cloud STT)")
    p.add_argument("--stt-url", default="", help="--stt ear: the service's ws://HOST:PORT/v1/listen")
    p.add_argument("--twilio-api", default="",
                   help="Twilio: hang up through Twilio's REST API at this base URL (callproof run --twilio-api)")
    args = p.parse_args()
    if args.stt == "ear" and not args.stt_url:
        p.error("--stt ear needs --stt-url")
    DECODERS.put(DECODERS.get())  # the first call finds one loaded (the eval wire's too)
    logger.remove()
    logger.add(sys.stderr, level=os.environ.get("BOT_LOG_LEVEL", "INFO"))
    webrtc = SmallWebRTCRequestHandler()

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        await webrtc.close()  # its peer connections, so that SIGTERM ends the server

    app = FastAPI(lifespan=lifespan)

    @app.websocket("/ws")
    async def ws(websocket: WebSocket):
        await websocket.accept()
        await run_bot(websocket, args)

    @app.post("/api/offer")
    async def offer(request: dict, background_tasks: BackgroundTasks):
        req = SmallWebRTCRequest.from_dict(request)

        async def connected(connection):
            background_tasks.add_task(run_webrtc_bot, connection, req.request_data, args)

        return await webrtc.handle_web_request(request=req, webrtc_connection_callback=connected)

    @app.patch("/api/offer")
    async def candidates(request: dict):
        await webrtc.handle_patch_request(SmallWebRTCPatchRequest(
            pc_id=request["pc_id"], candidates=[IceCandidate(**c) for c in request.get("candidates", [])]))
        return {"status": "success"}

    sock = socket.socket()
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    print(f"listening on ws://{args.host}:{sock.getsockname()[1]}/ws", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=3)).run(sockets=[sock])


if __name__ == "__main__":
    main()
