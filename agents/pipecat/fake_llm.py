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

That is --mode fixed (the default): the arguments are the test's. With
--mode conversation it takes nothing from the test and reads what it is
sent instead (read_conversation, below): the caller's words so far, the
tool calls in the context and their results, and the tools the request
offers (their JSON schemas in the request's `tools`).

A write whose offered schema has an idempotency_key parameter (the MCP
endpoint's consequential tools: docs/PROTOCOL.md, "Tools over MCP") is
keyed as a careful model keys it (keyed, below): a retry of the same write
carries the key it was sent with, any other write a new one.

Each request and what the fake did is appended to --log as a JSON line.
It prints "listening on http://HOST:PORT/v1" once it is serving.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import re
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

# The MCP endpoint's optional arguments of a consequential tool
# (mcptools.ArgIdempotencyKey, mcptools.ArgStateVersion): what carries the
# Idempotency-Key and X-State-Version headers' values over MCP, never one
# of the write's own arguments.
KEY_ARG, VERSION_ARG = "idempotency_key", "state_version"


def own_args(args: dict) -> dict:
    """A tool call's arguments without the key and the version."""
    if not isinstance(args, dict):
        return args
    return {k: v for k, v in args.items() if k not in (KEY_ARG, VERSION_ARG)}


def offers_key(tools: list | None, name: str) -> bool:
    """Whether the request offers tool name with an idempotency_key."""
    for spec in tools or []:
        f = spec.get("function", spec)
        if f.get("name") == name:
            return KEY_ARG in ((f.get("parameters") or {}).get("properties") or {})
    return False


def keyed(messages: list[dict], tools: list | None, name: str, args: dict, fresh: str) -> dict:
    """args with the idempotency_key a careful model gives them, when the
    tool offers one: the key of the tool's last call in the conversation
    when that call had the same arguments (a retry of the same write:
    replayed if it landed, run afresh if it was withdrawn), else fresh, a
    key not used before."""
    if not offers_key(tools, name):
        return args
    key = fresh
    for m in reversed(messages):
        calls = [tc for tc in m.get("tool_calls") or [] if tc.get("function", {}).get("name") == name]
        if calls:
            try:
                last = json.loads(calls[-1]["function"].get("arguments") or "{}")
            except ValueError:
                break
            if own_args(last) == own_args(args) and isinstance(last.get(KEY_ARG), str):
                key = last[KEY_ARG]
            break
    return {**own_args(args), KEY_ARG: key}


def last_update(messages: list[dict]) -> dict | None:
    """The arguments of the last update_order the model called, if any
    (its own: without the key)."""
    call = last_update_call(messages)
    return own_args(json.loads(call["function"]["arguments"] or "{}")) if call else None


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
    """The arguments of the tool call the last tool message answers (its
    own: without the key)."""
    tool_id = messages[-1].get("tool_call_id")
    for m in reversed(messages):
        for tc in m.get("tool_calls") or []:
            if tc.get("id") == tool_id:
                return own_args(json.loads(tc["function"]["arguments"] or "{}"))
    return {}


# --- --mode conversation ----------------------------------------------------
#
# read_conversation is the whole "model" of this mode, and it understands
# nothing. It is stateless: every answer is derived again from the
# request alone (the messages and the offered tools), so two requests with
# the same conversation get the same answer, and a call placed again
# (--resume) starts from nothing. Its rules, the careful reference agent's
# (agents/parse.go, agents/engine.go) put into a model's place:
#
# - Values are taken from the caller's words by their shape only: an ISO
#   or spoken date ("December 3", the year implied), a 4-digit number, a
#   number of 1-3 digits. A value goes to the offered tool's parameter of
#   that shape (a date parameter: format date, "YYYY-MM-DD" in its
#   description or a name ending in "date"; a 4-digit number: a parameter
#   whose pattern accepts one, or a name ending in _number or _id; a small
#   number: an integer parameter). A later value of a shape replaces an
#   earlier one: the caller's correction.
# - The tool is the write the caller's words name: a word of its name that
#   not every write shares ("ship" in ship_order), else a word of its
#   parameters' names ("date", "quantity" for update_order). Tools whose
#   name starts with a reading verb (get, look, read, find, list, search,
#   check, fetch) are reads, never chosen: the bot reads back itself.
# - "don't", "do not", "stop" or "cancel" withdraws the request; "yes" or
#   "go ahead", or a new value or action, puts it back in force.
# - A request with no value for any of its tool's fields but the key
#   ("change the delivery date on order 5590", a turn cut short) is
#   answered with a question, never sent.
# - A write still running (its result not in the context) is waited for:
#   nothing is said or called meanwhile. A write whose result says it
#   landed (ok, with the record the bot read back) and that the request in
#   force no longer wants is put back: the same tool with the values the
#   bot read before it wrote ("before"). Then the request in force is
#   called, unless a call with the same arguments landed (then it is
#   confirmed with the values read back) or failed since the caller last
#   spoke (then that is said: failed, or not confirmed). A call cancelled
#   (Pipecat's CANCELLED) did not land and is made again.
# - A call comes alone, without words: a tool call marks the bot busy
#   until it next speaks (docs/PROTOCOL.md, "Waiting for quiet"), so the
#   caller waits for its answer. Each answer is worded like the reference
#   agents' (agents/phrases.go), from the tool's and parameters' names.

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
IMPLIED_YEAR = 2026  # a spoken date's year, as the reference agents imply it
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
SPOKEN_DATE = re.compile(r"(?i)\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b")
FOUR_DIGITS = re.compile(r"\b\d{4}\b")
SMALL_NUMBER = re.compile(r"\b\d{1,3}\b")
NEGATION = re.compile(r"(?i)\b(don't|don’t|do not|stop|cancel)\b")
PROCEED = re.compile(r"(?i)\b(go ahead|yes)\b")
READ_VERBS = ("get", "look", "read", "find", "list", "search", "check", "fetch")
DATE, FOUR, SMALL = "date", "four-digit number", "small number"


def iso_date(y: int, m: int, d: int) -> str | None:
    try:
        return datetime.date(y, m, d).isoformat()
    except ValueError:
        return None


def hear(text: str) -> dict:
    """One utterance's values by shape, its words, and whether it
    withdraws or affirms the request."""
    values: dict[str, str] = {}
    rest = text
    if m := ISO_DATE.findall(rest):
        if d := iso_date(*map(int, m[-1])):
            values[DATE] = d
        rest = ISO_DATE.sub(" ", rest)
    if m := SPOKEN_DATE.findall(rest):
        month, day = m[-1]
        if d := iso_date(IMPLIED_YEAR, MONTHS.index(month.lower()) + 1, int(day)):
            values[DATE] = d
        rest = SPOKEN_DATE.sub(" ", rest)
    if m := FOUR_DIGITS.findall(rest):
        values[FOUR] = m[-1]
        rest = FOUR_DIGITS.sub(" ", rest)
    if m := SMALL_NUMBER.findall(rest):
        values[SMALL] = str(int(m[-1]))
    words = set(re.findall(r"[a-z]+", text.lower()))
    return {"values": values, "words": words, "negate": bool(NEGATION.search(text)),
            "proceed": bool(PROCEED.search(text))}


class Tool:
    """One offered function, from its JSON schema."""

    def __init__(self, spec: dict):
        f = spec.get("function", spec)
        self.name: str = f.get("name", "")
        self.description: str = f.get("description") or ""
        params = f.get("parameters") or {}
        # The key and the version the MCP endpoint offers carry no value
        # of the caller's (keyed fills in the key).
        self.params: dict = own_args(params.get("properties") or {})
        self.required: list = params.get("required") or []
        self.reads = self.name.split("_")[0].lower() in READ_VERBS

    def shape(self, param: str) -> str | None:
        s = self.params[param] or {}
        desc = (s.get("description") or "").lower()
        if s.get("format") == "date" or "yyyy-mm-dd" in desc or param.endswith("date"):
            return DATE
        pattern = s.get("pattern")
        if pattern:
            try:
                if re.fullmatch(pattern, "1234"):
                    return FOUR
            except re.error:
                pass
        elif param.endswith(("_number", "_id")):
            return FOUR
        if s.get("type") in ("integer", "number"):
            return SMALL
        return None

    def key(self) -> str | None:
        """The parameter naming the record: the 4-digit one."""
        for p in self.params:
            if self.shape(p) == FOUR:
                return p
        return None

    def args(self, slots: dict) -> dict:
        out = {}
        for p, s in self.params.items():
            shape = self.shape(p)
            if shape in slots:
                v = slots[shape]
                out[p] = int(v) if (s or {}).get("type") == "integer" else v
        return out

    def verb(self) -> str:
        return self.name.split("_")[0]

    def noun(self) -> str:
        k = self.key()
        return k.rsplit("_", 1)[0].replace("_", " ") if k else "it"


def offered_writes(tools: list) -> list[Tool]:
    """The offered tools a caller's request can name: not reads, and with
    parameters (end_call has none)."""
    return [t for t in (Tool(s) for s in tools or []) if not t.reads and t.params and t.name]


def named_tool(heard: dict, writes: list[Tool]) -> Tool | None:
    if not writes:
        return None
    common = set.intersection(*(set(t.name.split("_")) for t in writes))
    for t in writes:
        if (set(t.name.split("_")) - common) & heard["words"]:
            return t
    for t in writes:
        names = {w for p in t.params if t.shape(p) != FOUR for w in p.split("_")}
        if names & heard["words"]:
            return t
    return None


def async_payload(content) -> dict | None:
    """Pipecat's async-tool message (cancel_on_interruption=False): a JSON
    object of type async_tool, in a tool or developer message."""
    if not isinstance(content, str) or not content.startswith("{"):
        return None
    try:
        p = json.loads(content)
    except ValueError:
        return None
    return p if isinstance(p, dict) and p.get("type") == "async_tool" else None


def caller_words(m: dict) -> str | None:
    if m.get("role") != "user":
        return None
    c = m.get("content")
    if isinstance(c, list):
        c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
    if not c or async_payload(c):
        return None
    return c


def outcome_of(content) -> dict:
    """A tool result as the model reads it: running, cancelled, or
    settled (done, failed, unconfirmed) with the bot's record and the
    values it read before writing."""
    if content == "IN_PROGRESS":
        return {"status": "running"}
    if isinstance(content, str) and content.startswith("CANCELLED"):
        return {"status": "cancelled"}
    if content == "COMPLETED":
        return {"status": "done"}
    p = async_payload(content)
    if p is not None:
        if p.get("status") == "running" or "result" not in p:
            return {"status": "running"}
        return outcome_of(p["result"])
    try:
        r = json.loads(content or "")
        if isinstance(r, str):  # over MCP: the answer's text, encoded once more
            r = json.loads(r)
    except (TypeError, ValueError):
        return {"status": "failed"}
    if not isinstance(r, dict):
        return {"status": "failed"}
    status = r.get("outcome") or ("done" if r.get("ok") is True else "failed")
    return {"status": status, "record": r.get("record"), "before": r.get("before")}


def spoken(shape: str | None, v) -> str:
    if shape == DATE:
        try:
            d = datetime.date.fromisoformat(str(v))
            return f"{d.strftime('%B')} {d.day}"
        except ValueError:
            pass
    return str(v)


def past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnpt]", verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def describe(tool: Tool, values: dict) -> str:
    parts = [f"{p.replace('_', ' ')} {spoken(tool.shape(p), values[p])}"
             for p in sorted(values, key=lambda p: (tool.shape(p) != DATE, p))
             if p != tool.key() and p in tool.params]
    return " and ".join(parts)


def say_done(tool: Tool, args: dict, record: dict | None) -> str:
    key = args.get(tool.key(), "")
    values = dict(args)
    fields = (record or {}).get("fields") or {}
    if (record or {}).get("key") == str(key):  # what the bot read back
        values.update({p: fields[p] for p in args if p in fields})
    what = describe(tool, values)
    if what:
        return f"Done. {tool.noun().capitalize()} {key} now has {what}."
    return f"Done. {tool.noun().capitalize()} {key} has been {past(tool.verb())}."


def say_nothing_changed(noun: str, key) -> str:
    if not key:
        return "Okay, I won't make any change. Nothing was changed."
    return f"Okay, I won't make any change. Nothing was changed on {noun} {key}."


def read_conversation(messages: list[dict], tools: list) -> tuple[str, object]:
    """What the fake does next (see the rules above): ("call", (tool,
    args, None)), ("say", words) or ("nothing", None)."""
    last = messages[-1] if messages else {}
    if ended(messages):
        return "nothing", None
    if caller_words(last) is None and last.get("role") != "tool" and async_payload(last.get("content")) is None:
        return "nothing", None  # Pipecat's note of a turn without words
    writes = offered_writes(tools)
    by_name = {t.name: t for t in writes}

    # The request in force, from the caller's words in order.
    action, slots, execute, spoke_at = None, {}, False, -1
    outcomes: dict[str, tuple[int, dict]] = {}
    calls: list[tuple[int, str, Tool, dict]] = []
    for i, m in enumerate(messages):
        words = caller_words(m)
        if words is not None:
            spoke_at = i
            h = hear(words)
            if h["negate"]:
                execute = False
                continue
            t = named_tool(h, writes)
            if t is not None:
                action = t.name
            slots.update(h["values"])
            if action and (t is not None or h["values"] or h["proceed"]):
                execute = True
            continue
        for tc in m.get("tool_calls") or []:
            t = by_name.get(tc.get("function", {}).get("name"))
            if t is not None:
                try:
                    args = own_args(json.loads(tc["function"].get("arguments") or "{}"))
                except ValueError:
                    args = {}
                calls.append((i, tc.get("id"), t, args))
        if m.get("role") == "tool" and m.get("tool_call_id"):
            outcomes[m["tool_call_id"]] = (i, outcome_of(m.get("content")))
        elif (p := async_payload(m.get("content"))) is not None and p.get("tool_call_id"):
            outcomes[p["tool_call_id"]] = (i, outcome_of(m.get("content")))

    def status(call_id) -> tuple[int, dict]:
        return outcomes.get(call_id, (-1, {"status": "running"}))

    if any(status(c[1])[1]["status"] == "running" for c in calls):
        return "nothing", None  # its result is still to come
    tool = by_name.get(action) if action else None
    want = tool.args(slots) if tool else {}
    key = want.get(tool.key()) if tool else None

    # What this call's writes changed, record by record: the values before
    # the first of them, and the latest values read back.
    original: dict[tuple[str, str], dict] = {}
    current: dict[tuple[str, str], dict] = {}
    for _, cid, t, args in calls:
        _, o = status(cid)
        rec, before = o.get("record") or {}, o.get("before")
        if o["status"] != "done" or before is None or not rec.get("key"):
            continue
        k = (t.name, rec["key"])
        original.setdefault(k, {p: before.get(p) for p in args if p != t.key()})
        for p in args:
            if p != t.key():
                original[k].setdefault(p, before.get(p))
        current[k] = rec.get("fields") or {}
    for (name, rkey), orig in sorted(original.items()):
        t = by_name[name]
        keep = execute and tool is t and str(key) == rkey
        back = {p: v for p, v in orig.items()
                if v is not None and not (keep and p in want) and str(current[(name, rkey)].get(p)) != str(v)}
        if back:
            args = {t.key(): rkey, **{p: (int(v) if (t.params[p] or {}).get("type") == "integer" else v)
                                       for p, v in back.items()}}
            return "call", (t.name, args, None)

    if tool is None:
        return "say", "How can I help?"
    if not execute:
        # A write with nothing read before it (a create: ship_order) that
        # landed has no values to put back.
        made = [c for c in calls if c[2] is tool and str(c[3].get(tool.key())) == str(key)
                and status(c[1])[1]["status"] == "done" and status(c[1])[1].get("before") is None]
        if made:
            return "say", f"Sorry, I couldn't undo the change on {tool.noun()} {key}."
        return "say", say_nothing_changed(tool.noun(), key)
    missing = [p for p in tool.required if p not in want]
    if missing:
        return "say", f"Which {missing[0].replace('_', ' ')} is that?"
    if any(p != tool.key() for p in tool.params) and not any(p != tool.key() for p in want):
        # A write with something to change but no value for it yet (a
        # turn cut short, "change order 5590"): ask, as the reference
        # agents do, rather than send a write that changes nothing.
        return "say", f"What would you like to change on {tool.noun()} {key}?"
    same = [c for c in calls if c[2] is tool and {k: str(v) for k, v in c[3].items()} == {k: str(v) for k, v in want.items()}]
    if same:
        at, o = status(same[-1][1])
        if o["status"] == "done":
            return "say", say_done(tool, want, o.get("record"))
        if o["status"] == "failed" and at > spoke_at:
            return "say", f"Sorry, I couldn't {tool.verb()} {tool.noun()} {key}. Nothing was changed."
        if o["status"] == "unconfirmed" and at > spoke_at:
            return "say", f"Sorry, I can't confirm yet whether {tool.noun()} {key} went through."
    return "call", (tool.name, want, None)


class Fake:
    def __init__(self, args):
        self.args = args
        if args.mode == "fixed":
            self.request_args = json.loads(args.request_args)
            self.restore_args = json.loads(args.restore_args)
        self.calls = 0
        self.keys = 0  # keys made: each new write's is fake-N

    def decide(self, messages: list[dict], tools: list | None = None) -> tuple[str, object]:
        if self.args.mode == "conversation":
            return read_conversation(messages, tools or [])
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
                return "call", ("update_order", self.restore_args, None)
            return "say", self.args.nothing_reply
        if done is None:
            return "call", ("update_order", self.request_args, None)
        return "say", self.args.anything_else

    def chunk(self, delta: dict, finish: str | None = None) -> bytes:
        c = {"id": "fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(c).encode() + b"\n\n"

    async def completions(self, request: web.Request) -> web.StreamResponse:
        req = await request.json()
        messages = req.get("messages") or []
        what, payload = self.decide(messages, req.get("tools"))
        if what == "call":
            name, args, words = payload
            self.keys += 1
            payload = (name, keyed(messages, req.get("tools"), name, args, f"fake-{self.keys}"), words)
        with open(self.args.log, "a") as f:
            f.write(json.dumps({"last": messages[-1] if messages else None, "do": what, "with": payload}) + "\n")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Fake": "scripted fake model"})
        await resp.prepare(request)
        if what == "call":
            self.calls += 1
            name, args, words = payload
            tc = {"index": 0, "id": f"call_{self.calls}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args)}}
            if words:
                await resp.write(self.chunk({"role": "assistant", "content": words}))
                await resp.write(self.chunk({"tool_calls": [tc]}))
            else:
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
    p.add_argument("--mode", choices=["fixed", "conversation"], default="fixed",
                   help="fixed: the test's --request-args; conversation: read the caller's words and the tools")
    p.add_argument("--request-args", help="fixed: update_order's arguments for the request")
    p.add_argument("--restore-args", help="fixed: update_order's arguments putting it back")
    p.add_argument("--confirm", help="fixed: the confirmation")
    p.add_argument("--restore-reply", help="fixed: the reply once put back")
    p.add_argument("--nothing-reply", default="Okay, I won't change anything.")
    p.add_argument("--hang-up", action="store_true", help="end the call after the confirmation")
    p.add_argument("--anything-else", default="Is there anything else?")
    args = p.parse_args()
    if args.mode == "fixed" and None in (args.request_args, args.restore_args, args.confirm, args.restore_reply):
        p.error("--mode fixed needs --request-args, --restore-args, --confirm and --restore-reply")
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
