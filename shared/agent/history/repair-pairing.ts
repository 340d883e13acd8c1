/** Step 4 of the history chain: the pairing repair lives in core (one set of rules for history and providers). */
export { MISSING_TOOL_RESULT, repairToolUseResultPairing, RESPONSES_MISSING_RESULT, type PairingOptions, type PairingRepair } from "../../core/tool-pairing";
