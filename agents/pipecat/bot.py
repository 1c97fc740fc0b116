"""A Pipecat phone bot, written as a Pipecat user writes one, for callproof.

It answers Twilio Media Streams on /ws with Pipecat 1.x parts used as
shipped: FastAPIWebsocketTransport with TwilioFrameSerializer, Silero VAD,
OpenAILLMService and a function registered with register_function. Only
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
arrive in the offer's request_data, the runner's per-call body. With --tools mcp the bot has no tool code:
Pipecat's own MCPClient takes the call's tools from its MCP URL
(toolsMcpUrl) with the same token.

    python bot.py --port 0 --llm-url http://127.0.0.1:PORT/v1 [--no-cancel-on-interruption] [--tools mcp]
        [--stt ear --stt-url ws://127.0.0.1:PORT/v1/listen (callproof agent ear-stt)]
        [--twilio-api http://127.0.0.1:PORT (auto_hang_up through callproof's stub of Twilio's REST API)]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
        yield None

    async def _read(self):
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


UPDATE_ORDER = FunctionSchema(
    name="update_order",
    description="Change an order's delivery date or quantity.",
    properties={
        "order_number": {"type": "string"},
        "delivery_date": {"type": "string", "description": "YYYY-MM-DD"},
        "quantity": {"type": "string"},
    },
    required=["order_number"],
)


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


def tool_handler(call: dict):
    """A Pipecat function that calls the call's tool over HTTP, at the
    tools URL and token in the call's data (read when the tool runs: over
    the eval wire they arrive once the pipeline runs). As a careful
    handler does: the write carries an Idempotency-Key (one per function
    call: Pipecat's tool_call_id), and a write that succeeded is read back
    (get_order) before the model hears its result, so the bot confirms
    what the backend holds."""

    async def handler(params: FunctionCallParams):
        body = {k: str(v) for k, v in dict(params.arguments).items() if v not in (None, "")}
        base = call.get("toolsBaseUrl", "").rstrip("/")
        headers = {"Authorization": f"Bearer {call.get('toolsToken', '')}"}
        async with aiohttp.ClientSession() as s:
            write = dict(headers, **{"Idempotency-Key": f"pipecat-{params.tool_call_id}"})
            async with s.post(f"{base}/{params.function_name}", json=body, headers=write) as r:
                result = await r.json(content_type=None)
                logger.info(f"{params.function_name} {body} -> {r.status}")
            if isinstance(result, dict) and result.get("ok") is True and "order_number" in body:
                async with s.post(f"{base}/get_order", json={"order_number": body["order_number"]}, headers=headers) as r:
                    result["read_back"] = await r.json(content_type=None)
                    logger.info(f"get_order -> {r.status}")
        await params.result_callback(result)

    return handler


async def mcp_tools(call: dict, llm: OpenAILLMService, context: LLMContext, cancel: bool) -> None:
    """Takes the call's tools from its MCP endpoint with Pipecat's
    MCPClient and offers them, with end_call, to the model. Each is
    registered explicitly only to set cancel_on_interruption (the schemas
    carry their handlers, which Pipecat would register by itself)."""
    client = MCPClient(server_params=StreamableHttpParameters(
        url=call["toolsMcpUrl"], headers={"Authorization": f"Bearer {call['toolsToken']}"},
    ))
    tools = await client.tools()
    for schema in tools.standard_tools:
        llm.register_function(schema.name, schema.handler, cancel_on_interruption=cancel)
    context.set_tools(ToolsSchema(standard_tools=[*tools.standard_tools, END_CALL]))
    logger.info(f"MCP tools: {[s.name for s in tools.standard_tools]}")


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
        llm.register_function(
            "update_order",
            tool_handler(call),
            cancel_on_interruption=args.cancel_on_interruption,
        )
        context.set_tools(ToolsSchema(standard_tools=[UPDATE_ORDER, END_CALL]))
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
            if args.tools == "mcp":
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
