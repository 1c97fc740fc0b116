// A real third-party voice agent for callproof's interop test: the OpenAI
// Agents SDK's Twilio transport (TwilioRealtimeTransportLayer) behind a
// plain `ws` server. Each Twilio Media Streams connection gets its own
// RealtimeAgent + RealtimeSession, connected to the Realtime server named by
// REALTIME_URL (in tests, callproof's fake in agents/realtime). The agent
// has one tool, update_order, that POSTs to the tools URL the caller passed
// in Twilio's start.customParameters. With --tools mcp (or TOOLS=mcp) it
// has no tool code of its own: it takes the call's tools from callproof's
// MCP endpoint (toolsMcpUrl) with the SDK's MCPServerStreamableHttp. See
// docs/INTEROP.md.
//
// Usage: REALTIME_URL=ws://127.0.0.1:PORT/v1/realtime node server.mjs [--port N]
// [--tools http|mcp] (or PORT=N, TOOLS=…). Port 0 picks a free one;
// "listening <port>" goes to stdout once the server accepts connections.
// Logs go to stderr.

import { WebSocketServer } from 'ws';
import { MCPServerStreamableHttp } from '@openai/agents';
import { RealtimeAgent, RealtimeSession, tool } from '@openai/agents/realtime';
import { TwilioRealtimeTransportLayer } from '@openai/agents-extensions';
import { z } from 'zod';

// The customParameters entries of Twilio's start that carry the call's
// tools (callproof's native start.tools.baseUrl and start.tools.token).
const PARAM_TOOLS_URL = 'toolsBaseUrl';
const PARAM_TOOLS_TOKEN = 'toolsToken';
const PARAM_TOOLS_MCP_URL = 'toolsMcpUrl'; // start.tools.mcpUrl

// Every wait is bounded: a stuck peer must not hold a call (or the process)
// open forever.
const CONNECT_TIMEOUT_MS = 5_000; // the Realtime WebSocket and its first session.update
const START_TIMEOUT_MS = 5_000; // a tool call waiting for Twilio's start
const TOOL_TIMEOUT_MS = 10_000; // one tool POST, headers and body
const SHUTDOWN_GRACE_MS = 2_000; // SIGTERM: then exit even if sockets linger

function log(...args) {
  console.error(`[openai-twilio ${new Date().toISOString()}]`, ...args);
}

function parseArgs(argv, env) {
  let port = env.PORT ?? '0';
  let realtimeUrl = env.REALTIME_URL ?? '';
  let tools = env.TOOLS ?? 'http';
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port' && i + 1 < argv.length) port = argv[++i];
    else if (argv[i] === '--tools' && i + 1 < argv.length) tools = argv[++i];
    else if (argv[i] === '--realtime-url' && i + 1 < argv.length) realtimeUrl = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const n = Number(port);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`bad port ${port}`);
  if (!/^wss?:\/\//.test(realtimeUrl)) throw new Error('REALTIME_URL (ws:// or wss://) is required');
  if (tools !== 'http' && tools !== 'mcp') throw new Error(`bad --tools ${tools}: http or mcp`);
  return { port: n, host: env.HOST ?? '127.0.0.1', realtimeUrl, tools };
}

// withTimeout rejects when p has not settled within ms.
function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

// updateOrderTool mirrors update_order of callproof's built-in order domain
// (agents/catalog.go). Strict tool schemas make every field required, so
// the optional ones are nullable; nulls are dropped before the POST because
// the mock backend refuses a null value.
function updateOrderTool(call) {
  return tool({
    name: 'update_order',
    description: "Change an order's delivery date and/or quantity.",
    parameters: z.object({
      order_number: z.string().regex(/^\d{4}$/).describe('four-digit order number'),
      delivery_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).nullable().describe('YYYY-MM-DD'),
      quantity: z.number().int().nullable(),
    }),
    async execute(args, _ctx, details) {
      const params = await withTimeout(call.started, START_TIMEOUT_MS, 'twilio start');
      const base = params[PARAM_TOOLS_URL];
      if (!base) return `error: no ${PARAM_TOOLS_URL} in start.customParameters`;
      const body = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));
      const headers = { 'Content-Type': 'application/json' };
      if (params[PARAM_TOOLS_TOKEN]) headers.Authorization = `Bearer ${params[PARAM_TOOLS_TOKEN]}`;
      // The model's call_id names this call: a retry of it repeats the key.
      const callId = details?.toolCall?.callId;
      if (callId) headers['Idempotency-Key'] = `oa-${callId}`;
      const url = `${base.replace(/\/+$/, '')}/update_order`;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(TOOL_TIMEOUT_MS),
        });
        const text = await res.text();
        log(`call ${call.id}: update_order ${JSON.stringify(body)} -> ${res.status}`);
        return `HTTP ${res.status}: ${text}`;
      } catch (err) {
        log(`call ${call.id}: update_order failed: ${err.message}`);
        return `error: ${err.message}`;
      }
    },
  });
}

// mcpTools connects to the call's MCP endpoint, once Twilio's start has
// named it. The SDK cannot set a header per call, so the idempotency key
// goes in _meta (toolMetaResolver), one per tool call, as the HTTP tool's
// key is one per model call id.
async function mcpTools(call) {
  const params = await withTimeout(call.started, START_TIMEOUT_MS, 'twilio start');
  const url = params[PARAM_TOOLS_MCP_URL];
  if (!url) throw new Error(`no ${PARAM_TOOLS_MCP_URL} in start.customParameters`);
  let n = 0;
  const server = new MCPServerStreamableHttp({
    url,
    name: 'callproof',
    timeout: TOOL_TIMEOUT_MS,
    requestInit: { headers: { Authorization: `Bearer ${params[PARAM_TOOLS_TOKEN] ?? ''}` } },
    toolMetaResolver: () => ({ idempotencyKey: `oa-mcp-${call.id}-${++n}` }),
  });
  await withTimeout(server.connect(), CONNECT_TIMEOUT_MS, 'mcp connect');
  call.mcp = server;
  return server;
}

function handleCall(twilioWs, cfg, calls, seq) {
  const call = { id: seq, session: null, ws: twilioWs };
  let resolveStart;
  call.started = new Promise((resolve) => { resolveStart = resolve; });
  calls.add(call);

  // The transport registers its own 'message' listener on the socket in its
  // constructor and re-emits every Twilio frame as a 'twilio_message' on its
  // '*' channel, so listening here, synchronously, cannot miss `start`.
  // (RealtimeSession re-emits it as 'transport_event', but only once
  // connect() has attached its listeners, which is after an await.)
  const transport = new TwilioRealtimeTransportLayer({ twilioWebSocket: twilioWs });
  transport.on('*', (ev) => {
    if (ev?.type !== 'twilio_message' || ev.message?.event !== 'start') return;
    const start = ev.message.start ?? {};
    log(`call ${call.id}: start streamSid=${start.streamSid} callSid=${start.callSid}`);
    resolveStart(start.customParameters ?? {});
  });

  const instructions = 'You change delivery dates and quantities of orders with update_order. Read back before you act.';
  const makeSession = (agent) => new RealtimeSession(agent, {
    transport,
    model: 'gpt-realtime',
    tracingDisabled: true,
    // μ-law both ways must be asked for explicitly: RealtimeSession starts
    // from the SDK's default config, whose explicit 24 kHz PCM formats win
    // over the μ-law the Twilio transport only fills in when a format is
    // missing. Without this the model is told the caller's μ-law is PCM and
    // its PCM replies reach Twilio as if they were μ-law (docs/INTEROP.md).
    config: { audio: { input: { format: { type: 'audio/pcmu' } }, output: { format: { type: 'audio/pcmu' } } } },
  });

  const end = () => {
    if (!calls.delete(call)) return;
    try { call.session?.close(); } catch (err) { log(`call ${call.id}: close: ${err.message}`); }
    call.mcp?.close().catch((err) => log(`call ${call.id}: mcp close: ${err.message}`));
  };
  twilioWs.on('close', () => { log(`call ${call.id}: twilio socket closed`); end(); });
  twilioWs.on('error', (err) => log(`call ${call.id}: twilio socket error: ${err.message}`));

  // Over HTTP the tool is the agent's own code; over MCP the call's tools
  // are listed from its endpoint, which Twilio's start names, so the
  // Realtime session opens once start has come.
  const connect = async () => {
    const agent = cfg.tools === 'mcp'
      ? new RealtimeAgent({ name: 'Order desk', instructions, mcpServers: [await mcpTools(call)] })
      : new RealtimeAgent({ name: 'Order desk', instructions, tools: [updateOrderTool(call)] });
    const session = makeSession(agent);
    call.session = session;
    session.on('error', (ev) => log(`call ${call.id}: session error:`, ev?.error?.message ?? ev?.error ?? ev));
    if (!calls.has(call)) { // the caller left meanwhile
      session.close();
      call.mcp?.close().catch(() => {});
      return;
    }
    await session.connect({ apiKey: 'test', url: cfg.realtimeUrl });
  };
  withTimeout(connect(), CONNECT_TIMEOUT_MS + (cfg.tools === 'mcp' ? START_TIMEOUT_MS : 0), 'realtime connect')
    .then(() => log(`call ${call.id}: realtime connected`))
    .catch((err) => {
      log(`call ${call.id}: ${err.message}`);
      end();
      twilioWs.close(1011, 'realtime connect failed');
    });
}

function main() {
  const cfg = parseArgs(process.argv.slice(2), process.env);
  const calls = new Set();
  let seq = 0;
  const wss = new WebSocketServer({ host: cfg.host, port: cfg.port, maxPayload: 1 << 20 });
  wss.on('connection', (ws) => handleCall(ws, cfg, calls, ++seq));
  wss.on('listening', () => process.stdout.write(`listening ${wss.address().port}\n`));
  wss.on('error', (err) => { log(`server error: ${err.message}`); process.exit(1); });

  let stopping = false;
  const shutdown = (sig) => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: shutting down ${calls.size} call(s)`);
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    for (const call of [...calls]) {
      calls.delete(call);
      try { call.session?.close(); } catch { /* closing anyway */ }
      call.mcp?.close().catch(() => {});
      call.ws.close(1001, 'server shutting down');
    }
    wss.close(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

try {
  main();
} catch (err) {
  log(err.message);
  process.exit(2);
}
