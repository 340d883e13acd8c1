import * as z from "zod";
import { listSessions } from "../../../shared/aws/sessions";
import { validate } from "../../../shared/http/rest";
import { SERVER_NAME, SERVER_VERSION } from "../../../shared/protocol/frames";
import { DEFAULT_AGENT_ID } from "../../../shared/protocol/limits";
import { owns } from "../../../shared/tenancy/guard";
import { splitModel } from "./session-rows";
import type { Method } from "./types";

/** OpenClaw's `models.list` params (2026.9.6 `ModelsListParamsSchema`); none narrows our short catalog. */
export const ModelsListParamsSchema = z.lazy(() => z
  .object({
    agentId: z.string().min(1).optional(),
    sessionKey: z.string().min(1).optional(),
    authProfileId: z.string().optional(),
    provider: z.string().min(1).optional(),
    includeDetails: z.boolean().optional(),
    includeProviderCapabilities: z.boolean().optional(),
    includeDefaultModels: z.boolean().optional(),
    view: z.string().optional(),
  })
  .strict());

/** The configured model and its fallbacks, as OpenClaw's `ModelChoice` rows `{id, name, provider}`. */
export const modelsListMethod: Method = async (deps, { params }) => {
  const { provider } = validate(ModelsListParamsSchema, params ?? {});
  const refs = [...new Set([deps.config.model, ...deps.config.fallbackModels])];
  const models = refs.map((ref) => {
    const { modelProvider, model } = splitModel(ref);
    return { id: model, name: model, provider: modelProvider };
  });
  return { models: provider ? models.filter((m) => m.provider === provider) : models };
};

export const CommandsListParamsSchema = z.lazy(() => z
  .object({
    sessionKey: z.string().min(1).optional(),
    agentId: z.string().min(1).optional(),
    provider: z.string().min(1).optional(),
    scope: z.enum(["text", "native", "both"]).optional(),
    includeArgs: z.boolean().optional(),
  })
  .strict());

/** The text commands this backend acts on inside a message (shared/run/session-boundary.ts, abort). */
const COMMANDS = [
  { name: "new", description: "Start a new session (the old transcript is kept)", category: "session", acceptsArgs: true },
  { name: "reset", description: "Same as /new", category: "session", acceptsArgs: true },
];

export const commandsListMethod: Method = async (_deps, { params }) => {
  validate(CommandsListParamsSchema, params ?? {});
  return { commands: COMMANDS.map((command) => ({ ...command, source: "native", scope: "text" })) };
};

export const StatusParamsSchema = z.lazy(() => z.object({}).strict());

/** OpenClaw's `status` summary, the parts that mean something here (its TUI prints them for /status). */
export const statusMethod: Method = async (deps, { params, caller }) => {
  validate(StatusParamsSchema, params ?? {});
  const sessions = (await listSessions(deps.db, 1000)).filter((s) => !caller || owns(caller, s));
  return {
    runtimeVersion: `${SERVER_NAME} ${SERVER_VERSION}`,
    linkChannel: { label: "Channels", linked: false },
    heartbeat: { agents: [] },
    channelSummary: [],
    sessions: {
      count: sessions.length,
      defaults: { model: deps.config.model },
      recent: sessions.slice(0, 5).map((s) => ({ key: s.sessionKey, sessionId: s.sessionId, updatedAt: s.updatedAt, age: deps.db.now() - s.updatedAt, model: deps.config.model })),
    },
  };
};

export const ConfigGetParamsSchema = z.lazy(() => z.object({}).strict());

/**
 * A read-only `config.get`: only what a client needs to render (the model,
 * fallbacks, agent id, the Control UI base path OpenClaw's TUI reads). Never
 * a provider key, token or URL with credentials: the snapshot is built from
 * named non-secret fields, not by filtering the configuration.
 */
export const configGetMethod: Method = async (deps, { params }) => {
  validate(ConfigGetParamsSchema, params ?? {});
  const runtimeConfig = {
    agents: { defaults: { model: { primary: deps.config.model, fallbacks: deps.config.fallbackModels } }, list: [{ id: DEFAULT_AGENT_ID }] },
    gateway: { mode: "remote", controlUi: { basePath: "" } },
  };
  return { runtimeConfig, config: runtimeConfig, readOnly: true, ...(deps.configVersion ? { hash: deps.configVersion, configRevisionHash: deps.configVersion } : {}) };
};
