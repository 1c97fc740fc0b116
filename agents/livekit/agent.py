"""A LiveKit Agents voice agent, written as LiveKit's examples write one, for callproof.

An AgentServer with one rtc_session entrypoint, an AgentSession of
Silero VAD, speech-to-text, the OpenAI plugin's LLM and text-to-speech,
and an Agent whose tools are function tools: livekit-agents 1.8.9 from
PyPI, used as shipped. Only the parts LiveKit leaves to its user are ours,
each a subclass of LiveKit's own base class, so that the agent runs
offline:

- speech-to-text: PocketSphinxSTT (stt.STT, batch recognition; the session
  runs it on the VAD's segments), pocketsphinx from PyPI with the English
  model its wheel carries;
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

Two configurations of update_order, the tool whose write callproof holds
while the caller barges in (core scenario int-05):

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

    python agent.py --llm-url http://127.0.0.1:PORT/v1 [--no-interrupt-tools] [--agent-name NAME] start

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

import aiohttp
from pocketsphinx import Decoder

from livekit import rtc
from livekit.agents import (
    DEFAULT_API_CONNECT_OPTIONS,
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
    stt,
    tts,
    utils,
)
from livekit.agents.voice import SpeechHandle
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


class OrderDesk(Agent):
    """The agent: changes orders with update_order, a function tool that
    calls the call's tool over HTTP."""

    def __init__(self, tools_url: str, token: str, interrupt_tools: bool) -> None:
        super().__init__(instructions="You change orders with update_order.")
        self._tools_url = tools_url.rstrip("/")
        self._token = token
        self._interrupt_tools = interrupt_tools
        # the turns whose tool calls are running: the session's current
        # speech is None once a turn's words are generated, its tools
        # still running, so the barge-in finds them here
        self._running: set[SpeechHandle] = set()

    def interrupt_tool_calls(self) -> None:
        for speech in list(self._running):
            if not speech.interrupted and speech.allow_interruptions:
                logger.info("interrupting turn %s: the caller speaks", speech.id)
                speech.interrupt()

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
        if not self._interrupt_tools:
            # The flaw: the write runs on whatever the caller says.
            context.disallow_interruptions()
            return await self._write("update_order", body, key)
        request = asyncio.ensure_future(self._write("update_order", body, key))
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
            logger.info("update_order %s cancelled: the caller interrupted", body)
            return json.dumps({"ok": False, "error": "cancelled: the caller interrupted"})
        return request.result()


    @function_tool
    async def end_call(self, context: RunContext) -> None:
        """Hang up, once the caller has what they called for."""
        # The words said with this call first, then leave the room: to
        # callproof, the agent leaving is its hang-up.
        await context.wait_for_playout()
        logger.info("ending the call: leaving the room")
        await get_job_context().room.disconnect()


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
    tools_url, token = tools.get("baseUrl", ""), tools.get("token", "")
    if not tools_url:  # or from the caller's attributes
        caller = await ctx.wait_for_participant()
        tools_url = caller.attributes.get("callproof.tools_url", "")
        token = caller.attributes.get("callproof.token", "")
    logger.info("call %s: tools at %s", call.get("callId", "?"), tools_url)

    session = AgentSession(
        vad=ctx.proc.userdata["vad"],
        stt=PocketSphinxSTT(),
        llm=openai.LLM(model="fake", base_url=ARGS.llm_url, api_key="not-used-by-the-fake"),
        tts=FliteTTS(ARGS.voice),
        turn_handling={
            "turn_detection": "vad",
            "interruption": {"mode": "vad", "resume_false_interruption": False, "false_interruption_timeout": None},
            "preemptive_generation": {"enabled": False},
        },
    )
    agent = OrderDesk(tools_url, token, ARGS.interrupt_tools)
    if ARGS.interrupt_tools:

        @session.on("user_state_changed")
        def _on_user_state(ev: UserStateChangedEvent) -> None:
            # The caller starting to speak interrupts the turn whose tool
            # call is running (update_order then gives its write up).
            if ev.new_state == "speaking":
                agent.interrupt_tool_calls()

    await session.start(agent=agent, room=ctx.room)


@server.on("worker_registered")
def _registered(worker_id: str, _info: object) -> None:
    print(f"registered {ARGS.agent_name} {worker_id}", flush=True)


if __name__ == "__main__":
    cli.run_app(server)
