import type { IncomingMessage } from "node:http";

/** Reads a Chat Completions request body and returns the text of its last user message ("" if none). */
export async function lastUserText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { messages?: { role: string; content: unknown }[] };
  const user = [...(body.messages ?? [])].reverse().find((m) => m.role === "user");
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
}
