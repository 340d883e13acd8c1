import { ApiError } from "../../shared/protocol/errors";
import { modelObject } from "../../shared/openai/objects";
import type { AppDeps } from "../../shared/runtime/app-deps";

/**
 * The models a caller may name: the agent (`openclaw:main`, OpenClaw's
 * convention; `openclaw` and `agent:main` work too but are not listed) and
 * the configured `provider/model` chain (a per-request model override).
 */
export function listModels(deps: AppDeps) {
  const models = [modelObject("openclaw:main"), ...[deps.config.model, ...deps.config.fallbackModels].map((id) => modelObject(id, id.split("/")[0]))];
  const unique = [...new Map(models.map((model) => [model.id, model])).values()];
  return { object: "list" as const, data: unique };
}

export function getModel(deps: AppDeps, id: string) {
  const found = listModels(deps).data.find((model) => model.id === id);
  if (!found) throw new ApiError("NOT_FOUND", `The model '${id}' does not exist`, { openaiCode: "model_not_found", param: "model" });
  return found;
}
