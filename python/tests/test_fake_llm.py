"""agents/pipecat/fake_llm.py --mode conversation: what the scripted fake
model does with a conversation (read_conversation), request by request.
It understands nothing; these pin its rules (the module's comment)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("fake_llm", ROOT / "agents" / "pipecat" / "fake_llm.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fake_llm"] = mod
    spec.loader.exec_module(mod)
    return mod


fake = _load()


def fn(name, props, required=()):
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": {"type": "object", "properties": props, "required": list(required)}}}


ORDER = {"type": "string", "pattern": r"^\d{4}$"}
TOOLS = [
    fn("get_order", {"order_number": ORDER}, ["order_number"]),
    fn("update_order", {"order_number": ORDER, "delivery_date": {"type": "string", "format": "date"},
                        "quantity": {"type": "integer"}}, ["order_number"]),
    fn("ship_order", {"order_number": ORDER}, ["order_number"]),
    fn("get_shipment", {"shipment_id": {"type": "string"}}, ["shipment_id"]),
    fn("end_call", {}),
]
ASK = "Hi, I'd like to change the delivery date on order 5590 to December 3."


def user(text):
    return {"role": "user", "content": text}


def call(cid, name, args):
    return {"role": "assistant", "tool_calls": [{"id": cid, "type": "function",
                                                 "function": {"name": name, "arguments": json.dumps(args)}}]}


def result(cid, content):
    return {"role": "tool", "tool_call_id": cid, "content": content if isinstance(content, str) else json.dumps(content)}


def done(key, before, after):
    return {"ok": True, "outcome": "done", "before": before,
            "record": {"table": "orders", "key": key, "version": 2, "fields": after}}


def decide(*messages, tools=TOOLS):
    return fake.read_conversation([{"role": "system", "content": "orders"}, *messages], tools)


def test_request_calls_the_tool_its_words_name_with_values_by_shape():
    assert decide(user(ASK)) == ("call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-03"}, None))
    assert decide(user("Hi, please change the quantity on order 5590 to 2.")) == (
        "call", ("update_order", {"order_number": "5590", "quantity": 2}, None))
    assert decide(user("Hi, please ship order 5590 today.")) == ("call", ("ship_order", {"order_number": "5590"}, None))


def test_a_request_without_a_value_to_change_is_asked_about():
    got = decide(user("Hi, I'd like to change the delivery date on order 5590"))
    assert got == ("say", "What would you like to change on order 5590?")
    got = decide(user("Hi, I'd like to change the delivery date on order 5590"), user("to December 3."))
    assert got == ("call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-03"}, None))


def test_a_correction_replaces_the_value_of_its_shape():
    got = decide(user(ASK), call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"}),
                 result("c1", "CANCELLED"), user("Sorry, I meant order 5599."))
    assert got == ("call", ("update_order", {"order_number": "5599", "delivery_date": "2026-12-03"}, None))
    got = decide(user("Hi, please change the quantity on order 5590 to 2."), user("Sorry, make that 4."))
    assert got == ("call", ("update_order", {"order_number": "5590", "quantity": 4}, None))


def test_a_running_write_is_waited_for():
    c = call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"})
    assert decide(user(ASK), c, result("c1", "IN_PROGRESS"), user("Wait, stop, don't change anything.")) == ("nothing", None)
    started = {"type": "async_tool", "status": "running", "tool_call_id": "c1", "description": "running"}
    assert decide(user(ASK), c, result("c1", started), user("Wait, stop.")) == ("nothing", None)


def test_a_landed_write_is_confirmed_with_what_was_read_back():
    c = call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"})
    r = result("c1", done("5590", {"delivery_date": "2026-12-01"}, {"delivery_date": "2026-12-03", "quantity": "1"}))
    want = ("say", "Done. Order 5590 now has delivery date December 3.")
    assert decide(user(ASK), c, r) == want
    assert decide(user(ASK), c, r, user("Yes, that's right, go ahead.")) == want  # confirmed again, not redone
    ship = call("c2", "ship_order", {"order_number": "5590"})
    made = result("c2", {"ok": True, "outcome": "done", "record": {"table": "shipments", "key": "shipments-1",
                                                                     "fields": {"order_number": "5590"}}})
    assert decide(user("Please ship order 5590."), ship, made) == ("say", "Done. Order 5590 has been shipped.")


def test_a_failed_or_unverified_write_is_said_so():
    c = call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"})
    assert decide(user(ASK), c, result("c1", {"ok": False, "outcome": "failed"})) == (
        "say", "Sorry, I couldn't update order 5590. Nothing was changed.")
    assert decide(user(ASK), c, result("c1", {"ok": False, "outcome": "unconfirmed"})) == (
        "say", "Sorry, I can't confirm yet whether order 5590 went through.")


def test_a_stop_puts_a_landed_write_back_and_says_nothing_changed():
    c = call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"})
    stop = user("Wait, stop, don't change anything.")
    assert decide(user(ASK), c, result("c1", "CANCELLED"), stop) == (
        "say", "Okay, I won't make any change. Nothing was changed on order 5590.")
    # cancel_on_interruption=False: the result arrives after the stop, as
    # Pipecat's developer message.
    final = {"role": "developer", "content": json.dumps({
        "type": "async_tool", "status": "finished", "tool_call_id": "c1", "description": "final",
        "result": json.dumps(done("5590", {"delivery_date": "2026-12-01"}, {"delivery_date": "2026-12-03"}))})}
    started = result("c1", {"type": "async_tool", "status": "running", "tool_call_id": "c1", "description": "running"})
    back = ("call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-01"}, None))
    assert decide(user(ASK), c, started, stop, final) == back
    c2 = call("c2", "update_order", {"order_number": "5590", "delivery_date": "2026-12-01"})
    r2 = result("c2", done("5590", {"delivery_date": "2026-12-03"}, {"delivery_date": "2026-12-01"}))
    assert decide(user(ASK), c, started, stop, final, c2, r2) == (
        "say", "Okay, I won't make any change. Nothing was changed on order 5590.")


def test_a_corrected_record_is_put_back_before_the_new_write():
    c = call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"})
    r = result("c1", done("5590", {"delivery_date": "2026-12-01"}, {"delivery_date": "2026-12-03"}))
    got = decide(user(ASK), c, r, user("Sorry, I meant order 5599."))
    assert got == ("call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-01"}, None))
    # A new value for the same record is simply written (int-01).
    got = decide(user(ASK), c, r, user("Wait, make that December 7 instead."))
    assert got == ("call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-07"}, None))


def test_it_reads_any_tools_schemas_and_nothing_else():
    tools = [fn("lookup_booking", {"booking_number": {"type": "string", "pattern": r"^\d{4}$"}}),
             fn("reschedule_booking", {"booking_number": {"type": "string", "pattern": r"^\d{4}$"},
                                       "new_date": {"type": "string", "description": "YYYY-MM-DD"}}, ["booking_number"])]
    got = decide(user("Please move booking 1234 to the new date March 4."), tools=tools)
    assert got == ("call", ("reschedule_booking", {"booking_number": "1234", "new_date": "2026-03-04"}, None))
    assert decide(user("Please change my date to March 4."), tools=tools) == ("say", "Which booking number is that?")
    # Not the caller's words: Pipecat's note of a turn without words, and
    # anything after end_call.
    assert decide({"role": "developer", "content": "The user said nothing recognizable."}) == ("nothing", None)
    assert decide(user(ASK), call("e", "end_call", {}), user("Hello?")) == ("nothing", None)


def test_it_is_stateless():
    messages = [user(ASK), call("c1", "update_order", {"order_number": "5590", "delivery_date": "2026-12-03"}),
                result("c1", "CANCELLED"), user("Sorry, make that December 5.")]
    assert decide(*messages) == decide(*messages) == (
        "call", ("update_order", {"order_number": "5590", "delivery_date": "2026-12-05"}, None))


def test_the_bots_documented_numbers_are_its_constants():
    """docs/INTEROP.md, "The bot's tool handling": each `NAME` (VALUE)
    there is bot.py's module constant of that name."""
    import ast
    import re

    tree = ast.parse((ROOT / "agents" / "pipecat" / "bot.py").read_text())
    consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}
    doc = (ROOT / "docs" / "INTEROP.md").read_text()
    sec = doc.split("### The bot's tool handling", 1)[1].split("\n### ", 1)[0]
    found = re.findall(r"`([A-Z_]+)` \(([\d.]+)(?: s)?[;:,)]", sec)
    assert {n for n, _ in found} >= {"WRITE_GRACE", "TOOL_TIMEOUT", "RETRIES", "RETRY_BACKOFF", "POLL_EVERY",
                                     "POLLS", "VERIFY_READS"}
    for name, value in found:
        assert float(value) == consts[name], name


def test_the_livekit_agent_writes_with_the_bots_numbers():
    """docs/INTEROP.md, "The stock agent": agents/livekit/agent.py handles
    its writes as bot.py does, with the same constants."""
    import ast

    def consts(path):
        tree = ast.parse(path.read_text())
        return {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}

    bot, agent = consts(ROOT / "agents" / "pipecat" / "bot.py"), consts(ROOT / "agents" / "livekit" / "agent.py")
    for name in ("WRITE_GRACE", "TOOL_TIMEOUT", "RETRIES", "RETRY_BACKOFF", "POLL_EVERY", "POLLS", "VERIFY_READS"):
        assert agent.get(name) == bot[name], name


# --- keys (either mode) ------------------------------------------------------
#
# A write whose offered schema has an idempotency_key (the MCP endpoint's
# consequential tools, docs/PROTOCOL.md "Tools over MCP") is keyed as a
# careful model keys it: a retry of the same write carries the key it was
# sent with, another write a new one, and neither the key nor the state
# version counts as one of the write's own arguments.

KEY, VERSION = fake.KEY_ARG, fake.VERSION_ARG
MCP_TOOLS = [fn("update_order", {"order_number": ORDER, "delivery_date": {"type": "string", "format": "date"},
                                 "quantity": {"type": "integer"}, KEY: {"type": "string", "maxLength": 255},
                                 VERSION: {"type": "integer"}}, ["order_number"])]
WANT = {"order_number": "5590", "delivery_date": "2026-12-03"}
BACK = {"order_number": "5590", "delivery_date": "2026-11-28"}


def test_a_new_write_gets_a_new_key_only_when_offered():
    assert fake.keyed([], MCP_TOOLS, "update_order", WANT, "fake-1") == {**WANT, KEY: "fake-1"}
    assert fake.keyed([], TOOLS, "update_order", WANT, "fake-1") == WANT, "the HTTP tool's handler sets the header"
    assert fake.keyed([], [], "update_order", WANT, "fake-1") == WANT


def test_a_retry_of_the_same_write_reuses_its_key():
    msgs = [call("c1", "update_order", {**WANT, KEY: "fake-1"}), result("c1", "CANCELLED by user")]
    assert fake.keyed(msgs, MCP_TOOLS, "update_order", WANT, "fake-2")[KEY] == "fake-1"
    assert fake.keyed(msgs, MCP_TOOLS, "update_order", BACK, "fake-2")[KEY] == "fake-2", "another write"


def test_the_same_arguments_after_another_write_are_a_new_write():
    """Put back, then asked for again: not a retry of the first (its key
    would replay the first answer and change nothing)."""
    msgs = [call("c1", "update_order", {**WANT, KEY: "fake-1"}), result("c1", {"ok": True}),
            call("c2", "update_order", {**BACK, KEY: "fake-2"}), result("c2", {"ok": True})]
    assert fake.keyed(msgs, MCP_TOOLS, "update_order", WANT, "fake-3")[KEY] == "fake-3"


def test_the_key_is_not_one_of_the_writes_arguments():
    assert fake.own_args({**WANT, KEY: "k", VERSION: 2}) == WANT
    msgs = [call("c1", "update_order", {**WANT, KEY: "fake-1"}), result("c1", {"ok": True})]
    assert fake.answered_args(msgs) == WANT
    assert fake.last_update(msgs) == WANT


def test_conversation_mode_fills_no_value_into_the_key_or_the_version():
    """Over MCP the state_version integer takes no small number of the
    caller's, a keyed write that landed is confirmed, not made again, and
    a cancelled one is made again with its key."""
    ask = user("Hi, please change the quantity on order 5590 to 2.")
    want = {"order_number": "5590", "quantity": 2}
    assert decide(ask, tools=MCP_TOOLS) == ("call", ("update_order", want, None))
    c = call("c1", "update_order", {**want, KEY: "fake-1"})
    what, said = decide(ask, c, result("c1", done("5590", {"quantity": "1"}, {"quantity": "2"})), tools=MCP_TOOLS)
    assert what == "say" and said.startswith("Done."), said
    msgs = [ask, c, result("c1", "CANCELLED")]
    assert decide(*msgs, tools=MCP_TOOLS) == ("call", ("update_order", want, None))
    assert fake.keyed(msgs, MCP_TOOLS, "update_order", want, "fake-2")[KEY] == "fake-1"
