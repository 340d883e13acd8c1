import { execFileSync } from "node:child_process";
import { until } from "./until";

const TMUX = process.env.TMUX_BIN ?? "/usr/bin/tmux";

/**
 * A detached tmux session running one command in a fixed-size terminal:
 * keys go in with `type`/`press`, the screen comes back with `screen()`.
 * Waits are for what the screen shows (never for a time).
 */
export class TmuxSession {
  private constructor(readonly name: string) {}

  static start(name: string, command: string[], env: Record<string, string>, size = { cols: 140, rows: 45 }): TmuxSession {
    const assignments = Object.entries(env).map(([key, value]) => `${key}=${shellQuote(value)}`);
    const line = ["env", "-i", ...assignments, ...command.map(shellQuote)].join(" ");
    execFileSync(TMUX, ["new-session", "-d", "-s", name, "-x", String(size.cols), "-y", String(size.rows), line]);
    // Keep the pane after the command exits, so its last screen can still be read.
    execFileSync(TMUX, ["set-option", "-t", name, "remain-on-exit", "on"]);
    return new TmuxSession(name);
  }

  type(text: string): void {
    execFileSync(TMUX, ["send-keys", "-t", this.name, "-l", text]);
  }

  press(...keys: string[]): void {
    execFileSync(TMUX, ["send-keys", "-t", this.name, ...keys]);
  }

  screen(): string {
    return execFileSync(TMUX, ["capture-pane", "-p", "-J", "-t", this.name], { encoding: "utf8" });
  }

  async waitForScreen(match: (screen: string) => boolean, what: string, timeoutMs = 120_000): Promise<string> {
    let last = "";
    try {
      await until(async () => (match((last = this.screen())) ? true : undefined), what, timeoutMs);
    } catch (error) {
      throw new Error(`${String(error)}\n--- screen ---\n${last}`);
    }
    return last;
  }

  kill(): void {
    try {
      execFileSync(TMUX, ["kill-session", "-t", this.name]);
    } catch {
      // already gone
    }
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
