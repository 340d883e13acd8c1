/**
 * Bounds for tests that wait on the local stack. They only end a test that is
 * broken, never decide a healthy one, so they are generous: this 2-core
 * machine is shared by several engineers' test runs, and a stack's start
 * (synth, bundles, deploy onto the emulators) has taken over 90 s under load.
 */

/** `beforeAll` that starts a local stack. */
export const STACK_START_TIMEOUT_MS = 300_000;

/** One run (or a few) on a started stack, until it has ended. */
export const RUN_END_TIMEOUT_MS = 240_000;
