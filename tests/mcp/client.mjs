// A line-oriented driver of the official MCP TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned in node/package-lock.json), for
// tests/it/mcp.rs: it starts `monform mcp` over stdio with the SDK's
// StdioClientTransport, initializes, then reads one JSON request per line
// on standard input and writes one JSON answer per line on standard
// output, so the Rust test drives the session step by step (and runs
// `monform approve` in between, as a person in a terminal would).
//
// Usage: node tests/mcp/client.mjs MONFORM_BINARY PROJECT_DIR
// Requests: {"op":"tools"} | {"op":"call","name":...,"arguments":{...}}
//   | {"op":"resources"} | {"op":"read","uri":...} | {"op":"prompts"}
//   | {"op":"prompt","name":...,"arguments":{...}}
// The server inherits this process's environment.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

// The SDK lives in the repository's node/ folder, not beside this script.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(join(root, "node", "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const [binary, project] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: binary,
  args: ["--dir", project, "mcp"],
  env: { ...process.env },
  stderr: "inherit",
});
// The version the handshake agreed on (the SDK hands it to a transport that asks).
let negotiated = null;
transport.setProtocolVersion = (version) => {
  negotiated = version;
};
const client = new Client({ name: "monform-it", version: "1.0.0" });
await client.connect(transport);

const write = (value) => process.stdout.write(JSON.stringify(value) + "\n");
write({
  op: "initialized",
  protocolVersion: negotiated,
  server: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  instructions: client.getInstructions(),
});

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const started = performance.now();
  try {
    let result;
    switch (request.op) {
      case "tools":
        result = await client.listTools();
        break;
      case "call":
        result = await client.callTool({ name: request.name, arguments: request.arguments ?? {} });
        break;
      case "resources":
        result = await client.listResources();
        break;
      case "read":
        result = await client.readResource({ uri: request.uri });
        break;
      case "prompts":
        result = await client.listPrompts();
        break;
      case "prompt":
        result = await client.getPrompt({ name: request.name, arguments: request.arguments ?? {} });
        break;
      default:
        throw new Error(`unknown op ${request.op}`);
    }
    write({ ok: true, ms: performance.now() - started, result });
  } catch (error) {
    write({ ok: false, ms: performance.now() - started, error: String(error?.message ?? error) });
  }
}
await client.close();
