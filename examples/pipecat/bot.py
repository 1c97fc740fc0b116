"""An order-desk Pipecat bot, run by Pipecat's development runner, with
the few lines that let callproof test it (marked "callproof:").

callproof hands each call its own tools URL and bearer token (and its
catalogue, its call id and the scenario's parameters) as flat string keys:

- over SmallWebRTC, in the offer's request_data, which the runner gives
  the bot as runner_args.body;
- over Twilio Media Streams, in the start's customParameters, which
  parse_telephony_websocket gives as call_data["body"];
- over the eval wire, in an RTVI client-message "start", read in the
  RTVI processor's on_client_message handler.

The tool handler reads them when it runs, so all three work.

    pip install "pipecat-ai[webrtc,websocket,runner,openai,deepgram,cartesia,silero]"
    python bot.py -t webrtc          # callproof run --transport webrtc --agent http://localhost:7860/api/offer
                                     # (or --signaling pipecat-start --agent http://localhost:7860/start)
    python bot.py -t twilio          # callproof run --transport twilio --agent ws://localhost:7860/ws
                                     # callproof run --transport pipecat-eval --agent ws://localhost:7860/ws

See docs/INTEROP.md, "Pipecat", and agents/pipecat/bot.py for the offline
bot callproof's own tests run.
"""

import os

import aiohttp
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.runner.types import RunnerArguments
from pipecat.runner.utils import create_transport
from pipecat.services.cartesia.tts import CartesiaTTSService
from pipecat.services.deepgram.stt import DeepgramSTTService
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams

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


async def bot(runner_args: RunnerArguments):
    # callproof: the call's data. SmallWebRTC's request_data arrives as the
    # runner's body; the Twilio and eval wires fill it below.
    call: dict = dict(getattr(runner_args, "body", None) or {})

    async def update_order(params: FunctionCallParams):
        # callproof: the call's tools URL and token, read when the tool runs.
        async with aiohttp.ClientSession() as s:
            async with s.post(
                f"{call['toolsBaseUrl'].rstrip('/')}/update_order",
                json={k: str(v) for k, v in params.arguments.items()},
                headers={"Authorization": f"Bearer {call['toolsToken']}"},
            ) as r:
                await params.result_callback(await r.json(content_type=None))

    transport = await create_transport(runner_args, {
        "webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True),
        "twilio": lambda: FastAPIWebsocketParams(audio_in_enabled=True, audio_out_enabled=True),
    })
    # callproof (Twilio): the start's customParameters. With no Twilio
    # account behind the call, build the serializer with
    # TwilioFrameSerializer.InputParams(auto_hang_up=False).
    if getattr(runner_args, "call_data", None) is not None:
        call.update(runner_args.call_data.body or {})

    llm = OpenAILLMService(api_key=os.environ["OPENAI_API_KEY"])
    llm.register_function("update_order", update_order)
    context = LLMContext(
        messages=[{"role": "system", "content": "You change orders with update_order."}],
        tools=ToolsSchema(standard_tools=[UPDATE_ORDER]),
    )
    aggregators = LLMContextAggregatorPair(
        context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    pipeline = Pipeline([
        transport.input(),
        DeepgramSTTService(api_key=os.environ["DEEPGRAM_API_KEY"]),
        aggregators.user(),
        llm,
        CartesiaTTSService(api_key=os.environ["CARTESIA_API_KEY"], voice_id=os.environ["CARTESIA_VOICE_ID"]),
        transport.output(),
        aggregators.assistant(),
    ])
    task = PipelineTask(pipeline, params=PipelineParams())

    @task.rtvi.event_handler("on_client_message")
    async def on_client_message(rtvi, message):
        # callproof: the call's data as an RTVI client-message (every wire
        # carrying RTVI sends it; over the eval wire it is the only way).
        if message.type == "start" and isinstance(message.data, dict):
            call.update(message.data)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport, client):
        await task.cancel()

    await PipelineRunner(handle_sigint=False).run(task)


if __name__ == "__main__":
    from pipecat.runner.run import main

    main()
