// Package toolimport turns an agent's tool definitions into a callproof
// catalogue (scenarios.CatalogFile), for `callproof init`.
//
// Three pure parsers read the definitions an agent already has: OpenAI
// function-calling tools (ParseOpenAI: the Chat Completions shape and the
// flat Realtime/Responses shape), an MCP tools/list result (ParseMCP) and an
// OpenAPI 3 document in JSON or YAML (ParseOpenAPI). Each maps argument
// schemas to callproof's types and refuses what cannot be one value.
// Infer then guesses what the definitions do not say (effect, table, key
// argument, consequential flag), and Write prints the catalogue with every
// guess marked for review. Nothing here reads files or the network, and the
// output is a function of the input alone.
package toolimport
