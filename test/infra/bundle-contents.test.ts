import { buildSync, type Metafile } from "esbuild";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FUNCTION_SPECS, type FunctionKey } from "../../infra/functions";
import { REPO_ROOT } from "../../infra/lambdas";

/** The functions that call a model; every other bundle must not carry a model SDK. */
const MODEL_FUNCTIONS: readonly FunctionKey[] = ["attempt"];
const MODEL_SDKS = ["node_modules/openai/", "node_modules/@anthropic-ai/sdk/"];

/** What each entry pulls in, from esbuild's metafile (the bundler infra/bundle.ts uses, same resolution). */
function inputsOf(entries: Record<string, string>): Record<string, string[]> {
  const result = buildSync({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(REPO_ROOT, file)])),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    outdir: "/nonexistent-out",
    write: false,
    metafile: true,
    logLevel: "silent",
    absWorkingDir: REPO_ROOT,
  });
  const metafile = result.metafile as Metafile;
  return Object.fromEntries(
    Object.values(metafile.outputs)
      .filter((output) => output.entryPoint)
      .map((output) => [Object.keys(entries).find((name) => join(REPO_ROOT, entries[name]).endsWith(output.entryPoint!))!, Object.keys(output.inputs)]),
  );
}

describe("what the function bundles pull in", () => {
  const entries = Object.fromEntries(Object.values(FUNCTION_SPECS).map((spec) => [spec.key, spec.entry]));
  const inputs = inputsOf(entries);

  it.each(Object.keys(entries).filter((key) => !MODEL_FUNCTIONS.includes(key as FunctionKey)))("%s carries no model SDK (it never calls a model)", (key) => {
    const sdkFiles = inputs[key].filter((file) => MODEL_SDKS.some((sdk) => file.includes(sdk)));
    expect(sdkFiles).toEqual([]);
  });

  it("the attempt bundle still carries the model SDKs it calls", () => {
    expect(inputs.attempt.some((file) => file.includes("node_modules/openai/"))).toBe(true);
  });
});

/**
 * A function bundle split as infra/bundle.ts splits it: what its index.mjs evaluates at import, i.e. the
 * inputs of the entry output and of every chunk reachable from it through static imports; and all of it.
 */
function staticInputs(key: FunctionKey): { eager: string[]; all: string[] } {
  const result = buildSync({
    entryPoints: { index: join(REPO_ROOT, FUNCTION_SPECS[key].entry) },
    bundle: true,
    splitting: true,
    chunkNames: "chunk-[hash]",
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    outdir: "/nonexistent-out",
    outExtension: { ".js": ".mjs" },
    write: false,
    metafile: true,
    logLevel: "silent",
    absWorkingDir: REPO_ROOT,
  });
  const outputs = (result.metafile as Metafile).outputs;
  // Chunks of dynamic imports name an entry point too (the module imported): the entry is the handler's.
  const entry = Object.keys(outputs).find((file) => outputs[file].entryPoint === FUNCTION_SPECS[key].entry)!;
  const reached = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (reached.has(file)) continue;
    reached.add(file);
    for (const imported of outputs[file].imports) if (imported.kind === "import-statement" && !imported.external) pending.push(imported.path);
  }
  const inputsOfOutputs = (files: Iterable<string>) => [...files].flatMap((file) => Object.keys(outputs[file].inputs));
  return { eager: inputsOfOutputs(reached), all: inputsOfOutputs(Object.keys(outputs)) };
}

describe("the attempt bundle loads its SDKs on first use (shared/providers/lazy-sdk.ts, the MCP connection)", () => {
  const { eager, all } = staticInputs("attempt");

  it("the eager part is the handler's own code and what it needs at import (sanity of the walk)", () => {
    expect(eager).toContain(FUNCTION_SPECS.attempt.entry);
    expect(eager.some((file) => file.includes("node_modules/@aws-sdk/client-dynamodb/"))).toBe(true);
  });
  const LAZY_SDKS = [...MODEL_SDKS, "node_modules/@modelcontextprotocol/sdk/", "node_modules/ajv/"];

  it.each(LAZY_SDKS)("%s is in a lazily imported chunk, not evaluated by the import", (sdk) => {
    expect(all.some((file) => file.includes(sdk))).toBe(true);
    const eagerSdkFiles = eager.filter((file) => file.includes(sdk));
    // classify.ts's `instanceof` checks keep the SDKs' error classes (core/error and its helpers) eager.
    const allowed = eagerSdkFiles.filter((file) => !/\/(core\/error|internal\/errors)\.mjs$/.test(file));
    expect(allowed).toEqual([]);
  });
});

/** The AWS clients besides DynamoDB: built on first use (shared/aws/clients.ts), so never evaluated at import. */
const LAZY_CLIENTS = [
  "node_modules/@aws-sdk/client-sqs/",
  "node_modules/@aws-sdk/client-sfn/",
  "node_modules/@aws-sdk/client-apigatewaymanagementapi/",
  "node_modules/@aws-sdk/client-secrets-manager/",
  "node_modules/@aws-sdk/client-lambda/",
];

describe("AWS clients other than DynamoDB load on first use (issue 15, import times)", () => {
  const split = Object.fromEntries(Object.values(FUNCTION_SPECS).map((spec) => [spec.key, staticInputs(spec.key)]));

  it.each(Object.keys(split))("%s evaluates no SQS, Step Functions, WebSocket management, Secrets Manager or Lambda client at import", (key) => {
    expect(split[key].eager.filter((file) => LAZY_CLIENTS.some((client) => file.includes(client)))).toEqual([]);
  });

  it("the functions that call them still bundle them, as lazy chunks", () => {
    expect(split["rest-api"].all.some((file) => file.includes("node_modules/@aws-sdk/client-sqs/"))).toBe(true);
    expect(split.dispatcher.all.some((file) => file.includes("node_modules/@aws-sdk/client-sfn/"))).toBe(true);
    expect(split.attempt.all.some((file) => file.includes("node_modules/@aws-sdk/client-apigatewaymanagementapi/"))).toBe(true);
    expect(split["ws-api"].all.some((file) => file.includes("node_modules/@aws-sdk/client-lambda/"))).toBe(true);
  });

  it("the authorizer bundles no client but DynamoDB, not even lazily", () => {
    expect(split.authorizer.all.filter((file) => LAZY_CLIENTS.some((client) => file.includes(client)))).toEqual([]);
  });

  it("the authorizer evaluates zod's mini build, not classic zod (shared/aws/api-keys.ts)", () => {
    expect(split.authorizer.eager.some((file) => file.includes("node_modules/zod/v4/mini/"))).toBe(true);
    expect(split.authorizer.all.filter((file) => file.includes("node_modules/zod/v4/classic/"))).toEqual([]);
  });

  it("rest-api parses its OpenAPI document only when asked for it", () => {
    expect(split["rest-api"].all).toContain("docs/openapi.json");
    expect(split["rest-api"].eager).not.toContain("docs/openapi.json");
  });
});

describe("what `npm start` loads before it synthesizes", () => {
  it("its static import graph holds neither aws-cdk-lib nor a model SDK (synthesis is a dynamic import, in a child process or cached)", () => {
    const graph = buildSync({
      entryPoints: [join(REPO_ROOT, "infra/local/main.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
      outfile: "/nonexistent-out/main.mjs",
      // Left unbundled (the synthesis path would pull in all of it); imports of it still show in the graph.
      external: ["esbuild", "fsevents", "aws-cdk-lib", "aws-cdk-lib/*", "constructs"],
      absWorkingDir: REPO_ROOT,
    }).metafile!;
    const entry = Object.keys(graph.inputs).find((file) => file.endsWith("infra/local/main.ts"))!;
    const reached = new Set<string>();
    const cdkImports: string[] = [];
    const pending = [entry];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (reached.has(file)) continue;
      reached.add(file);
      for (const imported of graph.inputs[file]?.imports ?? []) {
        if (imported.kind === "dynamic-import") continue;
        if (imported.external) {
          if (/^(aws-cdk-lib|constructs)(\/|$)/.test(imported.path)) cdkImports.push(`${file} -> ${imported.path}`);
        } else pending.push(imported.path);
      }
    }
    expect(cdkImports).toEqual([]);
    expect([...reached].filter((file) => MODEL_SDKS.some((sdk) => file.includes(sdk)))).toEqual([]);
  });
});
