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
to the call's tools URL with its bearer token (update_order, as a careful
tool does, with an Idempotency-Key and its write read back), read from the job's
metadata (callproof's start object), or from the caller's participant
attributes (docs/INTEROP.md, "LiveKit Agents").

With --tools mcp the agent has no tool code but end_call: LiveKit's own
MCPToolset takes the call's tools from its MCP URL (the start object's
tools.mcpUrl) with the same token (mcp_tools below).

Two configurations of update_order (or, over MCP, of every tool listed),
the tool whose write callproof holds while the caller barges in (core
scenario int-05):

- careful (the default): the tool waits for its request only while the
  turn is not interrupted (SpeechHandle.wait_if_not_interrupted), and the
  caller starting to speak interrupts the turn: the request is cancelled,
  its connection closed, and nothing commits;
- flawed (--no-interrupt-tools): the tool calls disallow_interruptions()
  first, so the request runs on through the caller's "stop" and commits.

Jobs run as threads (one process for every call), the worker's load
threshold is off and its load is the calls it runs, not the machine's
CPU: LiveKit's defaults refuse jobs on a machine as busy as a test's
(the worker above 0.7, the server at 1). Run it as LiveKit's examples run:

    python agent.py --llm-url http://127.0.0.1:PORT/v1 [--no-interrupt-tools] [--tools mcp] [--agent-name NAME] start

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


def parse_args() -> argparse.Namespace:
    """Our flags; the rest of the command line is LiveKit's CLI (start, dev…)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    p.add_argument("--llm-url", required=True, help="the OpenAI-compatible server's /v1 URL")
    p.add_argument("--agent-name", default="callproof-stock", help="the name explicit dispatch uses")
    p.add_argument("--no-interrupt-tools", dest="interrupt_tools", action="store_false",
                   help="the flawed configuration: update_order disallows interruptions")
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
            return json.dumps({"ok": False, "error": "cancelled: the caller interrupted"})
        return request.result()


class Desk(Agent):
    """The agent: end_call, and the tools it is given (over MCP)."""

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


class OrderDesk(Desk):
    """The agent with its tools over HTTP: update_order, a function tool
    that calls the call's tool."""

    def __init__(self, guard: Guard, tools_url: str, token: str) -> None:
        super().__init__(guard)
        self._tools_url = tools_url.rstrip("/")
        self._token = token

    async def _write(self, name: str, body: dict, key: str) -> str:
        """POSTs the write with an Idempotency-Key (one per function call),
        and reads a write that succeeded back (get_order) before the model
        hears its result, so the agent confirms what the backend holds."""
        headers = {"Authorization": f"Bearer {self._token}"}
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{self._tools_url}/{name}", json=body,
                              headers=dict(headers, **{"Idempotency-Key": key})) as r:
                result = await r.json(content_type=None)
                logger.info("%s %s -> %s", name, body, r.status)
            if isinstance(result, dict) and result.get("ok") is True and "order_number" in body:
                async with s.post(f"{self._tools_url}/get_order", json={"order_number": body["order_number"]},
                                  headers=headers) as r:
                    result["read_back"] = await r.json(content_type=None)
                    logger.info("get_order -> %s", r.status)
        return json.dumps(result)

    @function_tool
    async def update_order(
        self,
        context: RunContext,
        order_number: str,
        delivery_date: str | None = None,
        quantity: str | None = None,
    ) -> str:
        """Change an order's delivery date or quantity.

        Args:
            order_number: the order's number
            delivery_date: the new delivery date, YYYY-MM-DD
            quantity: the new quantity
        """
        body = {"order_number": order_number, "delivery_date": delivery_date, "quantity": quantity}
        body = {k: str(v) for k, v in body.items() if v not in (None, "")}
        key = f"livekit-{context.function_call.call_id}"
        return await self.guard.run(context, f"update_order {body}",
                                    lambda: self._write("update_order", body, key))


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
    if not tools_url:  # or from the caller's attributes
        caller = await ctx.wait_for_participant()
        tools_url = caller.attributes.get("callproof.tools_url", "")
        token = caller.attributes.get("callproof.token", "")
        mcp_url = caller.attributes.get("callproof.mcp_url", "")
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
    )
    guard = Guard(ARGS.interrupt_tools)
    if ARGS.tools == "mcp":
        mcp_list, toolset = await mcp_tools(mcp_url, token, guard)
        ctx.add_shutdown_callback(toolset.aclose)
        agent: Desk = Desk(guard, mcp_list)
    else:
        agent = OrderDesk(guard, tools_url, token)
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
