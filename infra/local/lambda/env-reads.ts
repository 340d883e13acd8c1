/**
 * Which reads of absent environment variables are expected. A sandbox records
 * every read of a variable its environment lacks (bootstrap.mjs); tests assert
 * that the only such reads are the runtime's and libraries' optional knobs or
 * our own optional settings, so code that needs configuration its template
 * does not give it (wave 1's `MODEL` read by the intake functions) fails a test.
 */

/**
 * Optional knobs of the Lambda runtime, the AWS SDK, Powertools, Node and the OS user profile.
 * `DEBUG_CLS_HOOKED` and `npm_package_*`: aws-xray-sdk-core (under the Powertools tracer) reads them when it loads.
 */
const RUNTIME_AND_LIBRARY_READS = /^(AWS_|POWERTOOLS_|_X_AMZN_|NODE_|HOME$|HOMEDRIVE$|HOMEPATH$|USERPROFILE$|ENVIRONMENT$|LOG_LEVEL$|FORCE_COLOR$|NO_COLOR$|WATCH_REPORT_DEPENDENCIES$|OPENAI_|ANTHROPIC_|DEBUG$|UNDICI_|JEST_WORKER_ID$|DEBUG_CLS_HOOKED$|npm_package_)/;

/** Our settings a function may lack: shared/config/runtime.ts reads them all; using an absent one throws. */
export const OPTIONAL_SETTINGS: readonly string[] = ["QUEUE_URL", "STATE_MACHINE_ARN", "LOOP_STATE_MACHINE_ARN", "WS_MANAGEMENT_ENDPOINT", "AUTH_TOKEN_SHA256", "PROVIDER_KEYS_SECRET_ARN", "CHANNEL_SECRETS_ARN"];

export function unexpectedEnvReads(reads: Iterable<string>): string[] {
  return [...reads].filter((name) => !RUNTIME_AND_LIBRARY_READS.test(name) && !OPTIONAL_SETTINGS.includes(name)).sort();
}
