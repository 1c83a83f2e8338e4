import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/browser/**/*.test.ts'],
    // Browser tests start Chromium + Vite and run WGSL on SwiftShader (software): slow but real.
    // Generous: SwiftShader on 2 cores shared by two Chromium instances is slow, and a busy
    // machine can triple a browser test's time. No test asserts a duration.
    testTimeout: 300_000,
    hookTimeout: 240_000,
    // Two cores: more workers than that only makes Chromium instances fight.
    maxWorkers: 2,
  },
});
