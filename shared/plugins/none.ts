/**
 * What `#agent-runner/plugins` resolves to outside a bundle (unit tests, tsx):
 * no plugins. Bundles alias the import to a generated module that imports the
 * plugin modules the configuration names (infra/bundle.ts).
 */
export const BUNDLED_PLUGINS: readonly unknown[] = [];
