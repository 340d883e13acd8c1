/**
 * Each function's code asset: its cached bundle, the deployed configuration
 * and (for the functions that build prompts) the workspace folder. Staged in
 * content-addressed folders, so an unchanged tree and configuration reuse
 * them, and CDK stages them into the cloud assembly from there.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { DEPLOYED_CONFIG_FILE, type DeployedConfig } from "../shared/config/deployed";
import { BUNDLED_WORKSPACE_DIR, workspaceFiles } from "./agent-config";

export interface StageRequest {
  bundleDir: string;
  deployed: DeployedConfig;
  /** Copied into the asset's `workspace/` folder when set. */
  workspaceDir?: string;
  stagingRoot: string;
}

export function stageFunctionAsset(request: StageRequest): string {
  const workspace = request.workspaceDir ? workspaceFiles(request.workspaceDir) : undefined;
  const configJson = `${JSON.stringify(request.deployed, null, 2)}\n`;
  // The bundle folder's path is stable across rebuilds: its files' identity goes into the digest too.
  const bundleIdentity = readdirSync(request.bundleDir).map((file) => {
    const stat = statSync(join(request.bundleDir, file));
    return `${file}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  });
  const digest = createHash("sha256").update(request.bundleDir).update(bundleIdentity.join("|")).update(configJson).update(JSON.stringify(workspace ?? null)).digest("hex").slice(0, 24);
  const dir = join(request.stagingRoot, digest);
  if (existsSync(join(dir, DEPLOYED_CONFIG_FILE))) return dir;
  const temp = `${dir}.tmp-${randomBytes(6).toString("hex")}`;
  mkdirSync(temp, { recursive: true });
  for (const file of readdirSync(request.bundleDir)) {
    if (file === "inputs.json") continue;
    linkOrCopy(join(request.bundleDir, file), join(temp, file));
  }
  writeFileSync(join(temp, DEPLOYED_CONFIG_FILE), configJson);
  for (const [path, content] of Object.entries(workspace ?? {})) {
    const target = join(temp, BUNDLED_WORKSPACE_DIR, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  try {
    renameSync(temp, dir);
  } catch {
    // A concurrent synth staged the same content first.
    rmSync(temp, { recursive: true, force: true });
  }
  return dir;
}

/** Hard links keep staging cheap; a different filesystem gets a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}
