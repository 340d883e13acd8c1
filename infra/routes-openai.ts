/**
 * The OpenAI-compatible routes, shared by the CDK stack, the local front
 * door's checks and the OpenAPI document. Pure data.
 */
export interface OpenAIRoute {
  method: "GET" | "POST";
  /** API Gateway resource path. */
  path: string;
}

export const OPENAI_ROUTES: readonly OpenAIRoute[] = [
  { method: "POST", path: "/v1/chat/completions" },
  { method: "GET", path: "/v1/chat/completions/{id}" },
  { method: "POST", path: "/v1/responses" },
  { method: "GET", path: "/v1/responses/{id}" },
  { method: "GET", path: "/v1/models" },
  { method: "GET", path: "/v1/models/{id}" },
];
