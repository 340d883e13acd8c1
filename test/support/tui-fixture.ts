import { join } from "node:path";
import type { RecordedFrame } from "./ws-recorder";

/** Frames OpenClaw's TUI exchanged with the local stack (recorded by test/e2e/openclaw-tui.test.ts). */
export const TUI_FIXTURE = join(__dirname, "..", "fixtures", "openclaw", "tui-session.json");

export interface TuiFixture {
  recordedWith: string;
  session: string;
  frames: RecordedFrame[];
}
