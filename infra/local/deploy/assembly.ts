/**
 * A cloud assembly as `cdk deploy` reads it: manifest.json -> the stack's
 * template and its file assets (asset hash -> folder in the assembly).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CfnTemplate } from "../../synth";

export interface LoadedAssembly {
  dir: string;
  stackName: string;
  template: CfnTemplate;
  /** `<hash>.zip` S3 key (and the bare hash) -> absolute folder of that asset. */
  assetDirs: Map<string, string>;
}

interface Manifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string }; displayName?: string }>;
}

interface AssetManifest {
  files?: Record<string, { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }>;
}

export function loadAssembly(dir: string, stackName?: string): LoadedAssembly {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
  const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === "aws:cloudformation:stack");
  const chosen = stackName ? stacks.find(([id, a]) => id === stackName || a.properties?.stackName === stackName) : stacks[0];
  if (!chosen) throw new Error(`no stack ${stackName ?? ""} in the cloud assembly ${dir}`);
  if (!stackName && stacks.length > 1) throw new Error(`the cloud assembly ${dir} holds ${stacks.length} stacks: name one`);
  const [artifactId, artifact] = chosen;
  const templateFile = artifact.properties?.templateFile ?? `${artifactId}.template.json`;
  const template = JSON.parse(readFileSync(join(dir, templateFile), "utf8")) as CfnTemplate;
  return { dir, stackName: artifact.properties?.stackName ?? artifactId, template, assetDirs: assetDirsOf(dir, artifactId) };
}

function assetDirsOf(dir: string, artifactId: string): Map<string, string> {
  const dirs = new Map<string, string>();
  let assets: AssetManifest;
  try {
    assets = JSON.parse(readFileSync(join(dir, `${artifactId}.assets.json`), "utf8")) as AssetManifest;
  } catch {
    return dirs;
  }
  for (const [hash, file] of Object.entries(assets.files ?? {})) {
    const folder = join(dir, file.source.path);
    dirs.set(hash, folder);
    for (const destination of Object.values(file.destinations)) dirs.set(destination.objectKey, folder);
  }
  return dirs;
}
