// node:http for the modules that use it at run time (the server, webhook deliveries, the MCP client's fetch).
// Taken with process.getBuiltinModule, not `import … from 'node:http'`: an ES import of a built-in copies its
// exports, which reads node:http's lazy WebSocket, CloseEvent and MessageEvent getters and so loads the whole of
// Node's bundled undici (~40 ms of CPU at every start before the first /health, issue 38, bench part a). The
// module object is the same one; type-only imports of node:http are erased and cost nothing.
export const http = process.getBuiltinModule('node:http');
