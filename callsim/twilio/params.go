package twilio

// Custom parameters the caller puts in Twilio's start.customParameters
// (strings only, as Twilio allows): where the call's tools are. An agent
// behind a Twilio Media Streams server reads them from the start frame the
// way a production bot reads its TwiML <Parameter>s.
const (
	ParamCallID       = "callproofCallId" // the call's id, as in the history
	ParamToolsBaseURL = "toolsBaseUrl"    // POST {toolsBaseUrl}/{tool} with a JSON object of arguments
	ParamToolsToken   = "toolsToken"      // Authorization: Bearer <toolsToken>
	ParamToolsCatalog = "toolsCatalog"    // the tool catalogue as JSON ([]trace.ToolSpec)
	ParamCallDate     = "callDate"        // the call's date, YYYY-MM-DD (start.callDate)
	ParamTimeZone     = "timeZone"        // the call's IANA time zone (start.timeZone)
	ParamToolsMCPURL  = "toolsMcpUrl"     // the same tools as an MCP server (start.tools.mcpUrl); absent when there is none
)
