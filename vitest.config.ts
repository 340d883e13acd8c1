import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    environment: "node",
    // Only a broken test reaches these: the machine running the suite is shared and loaded (test/support/timeouts.ts).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      CDK_DISABLE_VERSION_CHECK: "1",
      POWERTOOLS_LOG_LEVEL: "SILENT",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
    },
  },
});
