"""How messages reach the MCP server and what a client may cost it: `stdio` (every line answered,
malformed ones with a JSON-RPC error), `http` (who may talk: Host, Origin, the bearer token, and
no binding off loopback without one), `http_limits` (how many connections slow clients may hold,
and for how long) and `log_limit` (a log no flood of requests can fill).

`server.app` wires them to the SDK's transports. Nothing here knows the tools or the server's
state. Nothing is imported here, so importing one module loads that one only (the CLI loads
`http` for its error class, and none of the others).
"""
