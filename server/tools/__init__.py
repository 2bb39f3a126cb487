"""Every MCP tool knowhow serves: `knowledge` (search, read, curate and record what agents
learned) and `browser` (drive Chromium, each call recorded as a step by `browser_steps`), each
a `spec` (contract and handler) whose handler works on the server's state.

Tools sit above everything they use: the state, the recording of steps and the browser
automation in `server.browser`, which knows nothing of tools or of the state.
"""
