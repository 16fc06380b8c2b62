// MCP section (the mcp paths of openapi.yaml): getMcpConfig, saveMcpConfig, testMcpConfig. Thin: one service call
// (src/domain/mcp/config.ts) and a mapper. Credentials are never part of an answer.
import * as mcp from '../domain/mcp/config.ts';
import { toMcpConfig, toMcpTest } from '../domain/mcp/mappers.ts';
import { defineHandlers } from '../http/handler-types.ts';

export const mcpHandlers = defineHandlers({
  async getMcpConfig(_input, { tenant }) {
    const row = await mcp.getConfig(tenant);
    return { status: 200, body: row ? { configured: true, data: toMcpConfig(row) } : { configured: false, data: null } };
  },

  async saveMcpConfig({ body }, { tenant, services }) {
    return { status: 200, body: { data: toMcpConfig(await mcp.saveConfig(tenant, services, body)) } };
  },

  async testMcpConfig({ body }, { tenant, services }) {
    return { status: 200, body: toMcpTest(await mcp.testConfig(tenant, services, body)) };
  },
});
