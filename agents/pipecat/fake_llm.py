"""A SCRIPTED FAKE of an OpenAI-compatible chat-completions server.

It stands in for the cloud model behind the Pipecat bot (bot.py) and
understands nothing: it acts on the caller's last words by one rule each,
so a test knows what the bot will do. On POST /v1/chat/completions
(streamed, as Pipecat's OpenAILLMService asks):

- the last message a tool result: when it is no success (Pipecat's note
  that the call was cancelled or failed), say --nothing-reply; else say --confirm, or --restore-reply when
  the call it answers carried --restore-args; with --hang-up, the
  confirmation comes with a call of end_call;
- the caller's last words contain "stop", "wait" or "don't" (a barge-in):
  when the last update_order carried --request-args and landed (its
  result in the context is a success, not a call still running or
  cancelled), call update_order(--restore-args), putting it back;
  otherwise say --nothing-reply;
- any other words: call update_order(--request-args) when no update_order
  ran yet; otherwise say --anything-else;
- the last message neither the caller's words nor a tool result (Pipecat's
  developer note that a turn had no words it recognized, as when its
  speech-to-text falls behind), or any request whose conversation holds
  its end_call: say nothing.

Each request and what the fake did is appended to --log as a JSON line.
It prints "listening on http://HOST:PORT/v1" once it is serving.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from aiohttp import web


def last_user_text(messages: list[dict]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            return c or ""
    return ""


STOP_WORDS = ("stop", "wait", "don't")


def last_update(messages: list[dict]) -> dict | None:
    """The arguments of the last update_order the model called, if any."""
    call = last_update_call(messages)
    return json.loads(call["function"]["arguments"] or "{}") if call else None


def last_update_call(messages: list[dict]) -> dict | None:
    for m in reversed(messages):
        for tc in reversed(m.get("tool_calls") or []):
            if tc.get("function", {}).get("name") == "update_order":
                return tc
    return None


def landed(messages: list[dict]) -> bool:
    """Whether the last update_order has a successful result in the
    context (not one still running, cancelled or failed)."""
    call = last_update_call(messages)
    if call is None:
        return False
    return any(m.get("role") == "tool" and m.get("tool_call_id") == call.get("id") and succeeded(m)
               for m in messages)


def succeeded(tool_message: dict) -> bool:
    """A tool result the backend answered with ok (not Pipecat's note that
    the call was cancelled or failed). Over MCP the result is the answer's
    text, which Pipecat encodes once more: a JSON string holding it; and
    LiveKit's MCPToolset passes the answer's content item itself, a JSON
    object whose "text" holds it."""
    try:
        result = json.loads(tool_message.get("content") or "")
        if isinstance(result, str):
            result = json.loads(result)
        if isinstance(result, dict) and result.get("type") == "text" and isinstance(result.get("text"), str):
            result = json.loads(result["text"])
    except (TypeError, ValueError):
        return False
    return isinstance(result, dict) and result.get("ok") is True


def ended(messages: list[dict]) -> bool:
    """Whether the model already called end_call in this conversation.
    Read from the context, not kept by the fake: a test places a call
    again (callproof run --resume) on the same fake, and the new call's
    conversation has not ended."""
    return any(tc.get("function", {}).get("name") == "end_call"
               for m in messages for tc in (m.get("tool_calls") or []))


def answered_args(messages: list[dict]) -> dict:
    """The arguments of the tool call the last tool message answers."""
    tool_id = messages[-1].get("tool_call_id")
    for m in reversed(messages):
        for tc in m.get("tool_calls") or []:
            if tc.get("id") == tool_id:
                return json.loads(tc["function"]["arguments"] or "{}")
    return {}


class Fake:
    def __init__(self, args):
        self.args = args
        self.request_args = json.loads(args.request_args)
        self.restore_args = json.loads(args.restore_args)
        self.calls = 0

    def decide(self, messages: list[dict]) -> tuple[str, object]:
        last = messages[-1] if messages else {}
        if ended(messages) or last.get("role") not in ("user", "tool"):
            return "nothing", None
        if last.get("role") == "tool":
            if not succeeded(last):
                return "say", self.args.nothing_reply
            if answered_args(messages) == self.restore_args:
                return "say", self.args.restore_reply
            if self.args.hang_up:
                return "say+end", self.args.confirm
            return "say", self.args.confirm
        words = last_user_text(messages).lower().split()
        done = last_update(messages)
        if any(w in words for w in STOP_WORDS):
            if done == self.request_args and landed(messages):
                return "call", self.restore_args
            return "say", self.args.nothing_reply
        if done is None:
            return "call", self.request_args
        return "say", self.args.anything_else

    def chunk(self, delta: dict, finish: str | None = None) -> bytes:
        c = {"id": "fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(c).encode() + b"\n\n"

    async def completions(self, request: web.Request) -> web.StreamResponse:
        req = await request.json()
        messages = req.get("messages") or []
        what, payload = self.decide(messages)
        with open(self.args.log, "a") as f:
            f.write(json.dumps({"last": messages[-1] if messages else None, "do": what, "with": payload}) + "\n")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Fake": "scripted fake model"})
        await resp.prepare(request)
        if what == "call":
            self.calls += 1
            tc = {"index": 0, "id": f"call_{self.calls}", "type": "function",
                  "function": {"name": "update_order", "arguments": json.dumps(payload)}}
            await resp.write(self.chunk({"role": "assistant", "tool_calls": [tc]}))
            await resp.write(self.chunk({}, "tool_calls"))
        elif what == "nothing":
            await resp.write(self.chunk({"role": "assistant"}))
            await resp.write(self.chunk({}, "stop"))
        elif what == "say+end":
            self.calls += 1
            tc = {"index": 0, "id": f"call_{self.calls}", "type": "function",
                  "function": {"name": "end_call", "arguments": "{}"}}
            await resp.write(self.chunk({"role": "assistant", "content": payload}))
            await resp.write(self.chunk({"tool_calls": [tc]}))
            await resp.write(self.chunk({}, "tool_calls"))
        else:
            await resp.write(self.chunk({"role": "assistant", "content": payload}))
            await resp.write(self.chunk({}, "stop"))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


async def serve(args) -> None:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", Fake(args).completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"listening on http://{args.host}:{port}/v1", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    p = argparse.ArgumentParser(description="A scripted fake OpenAI-compatible chat server.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--log", required=True)
    p.add_argument("--request-args", required=True)
    p.add_argument("--restore-args", required=True)
    p.add_argument("--confirm", required=True)
    p.add_argument("--restore-reply", required=True)
    p.add_argument("--nothing-reply", default="Okay, I won't change anything.")
    p.add_argument("--hang-up", action="store_true", help="end the call after the confirmation")
    p.add_argument("--anything-else", default="Is there anything else?")
    asyncio.run(serve(p.parse_args()))


if __name__ == "__main__":
    main()
