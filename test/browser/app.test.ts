// The page a visitor opens: "About this GPU" reports the WebGPU adapter and, once opened, runs
// every kernel's self-check, which passes.
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, repoRoot, type OpenedPage } from '../../scripts/lib/browser.mjs';

let opened: OpenedPage;
beforeAll(async () => {
  opened = await openPage('/');
});
afterAll(async () => {
  await opened?.close();
});

describe('app page', () => {
  it('shows the adapter and a passing self-check of every kernel', async () => {
    const { page } = opened;
    await expect(page.getByTestId('adapter').textContent()).resolves.toMatch(/swiftshader|\w+/i);
    // The self-check starts when the folded section is first opened, not on load.
    await page.getByTestId('about-gpu').locator('summary').click();
    const summary = page.getByTestId('selfcheck-summary');
    await summary.waitFor({ timeout: 90_000 });
    for (const kernel of ['logprobs', 'group_advantage', 'policy_loss']) {
      await expect(page.getByTestId(`check-${kernel}`).textContent()).resolves.toContain('pass');
    }
    expect(await summary.textContent()).toContain('All kernels match');
    mkdirSync(`${repoRoot}/test-results`, { recursive: true });
    await page.screenshot({ path: `${repoRoot}/test-results/app-selfcheck.png`, fullPage: true });
    expect(opened.pageErrors).toEqual([]);
  });

  it('explains what to do when WebGPU is missing', async () => {
    const noGpu = await openPage('/', { webgpu: false });
    try {
      const alert = noGpu.page.getByTestId('no-webgpu');
      await alert.waitFor({ timeout: 30_000 });
      const text = await alert.textContent();
      expect(text).toContain('needs WebGPU');
      expect(text).toContain('no GPU adapter');
      expect(text).toContain('--enable-unsafe-webgpu');
      // The memory panel names the missing adapter, not problems with the experiment.
      await noGpu.page.getByTestId('memory-no-webgpu').waitFor({ timeout: 10_000 });
      expect(await noGpu.page.getByTestId('memory-no-webgpu').textContent()).toContain('no WebGPU adapter');
      expect(await noGpu.page.getByTestId('memory').textContent()).not.toMatch(/has no problems|problem/);
      await noGpu.page.screenshot({ path: `${repoRoot}/test-results/app-no-webgpu.png`, fullPage: true });
    } finally {
      await noGpu.close();
    }
  });
});
